"""Context bundles (B1–B5): the smallest sufficient context for a task, inside a token budget,
byte-identical for the same knowledge state."""

from briefd.bundles.model import (
    Bundle,
    BundleCacheStats,
    BundleDelta,
    BundleFormat,
    BundleItem,
    BundleRequest,
    DeltaEntry,
    Diagnostics,
    Exclusion,
)

__all__ = [
    "Bundle",
    "BundleCacheStats",
    "BundleDelta",
    "BundleFormat",
    "BundleItem",
    "BundleRequest",
    "DeltaEntry",
    "Diagnostics",
    "Exclusion",
]
