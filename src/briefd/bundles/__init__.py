"""Context bundles (B1–B8): the smallest sufficient context for a task, inside a token budget,
byte-identical for the same knowledge state."""

from briefd.bundles.model import (
    Bundle,
    BundleCacheStats,
    BundleDelta,
    BundleItem,
    BundleMode,
    BundleRequest,
    DeltaEntry,
    Diagnostics,
    Exclusion,
)

__all__ = [
    "Bundle",
    "BundleCacheStats",
    "BundleDelta",
    "BundleItem",
    "BundleMode",
    "BundleRequest",
    "DeltaEntry",
    "Diagnostics",
    "Exclusion",
]
