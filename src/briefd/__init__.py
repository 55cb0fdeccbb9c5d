"""briefd: a self-hosted context compiler for AI coding teams.

The public API, for programs that embed briefd instead of calling its CLI, REST or MCP::

    from briefd import Briefd, SearchRequest, load_settings

    with Briefd(load_settings()) as api:
        for hit in api.search(SearchRequest("refund window", top_k=3)).hits:
            print(hit.doc_path, hit.heading)

Names are imported on first use, so ``import briefd`` (and the prompt hook, which lives in
this package) stays as cheap as importing an empty module.
"""

from __future__ import annotations

from briefd.__about__ import __version__

TYPE_CHECKING = False  # not typing's: importing typing would cost the hook ~10 ms
if TYPE_CHECKING:
    from briefd.api import Briefd
    from briefd.bundles.model import Bundle, BundleItem, BundleRequest
    from briefd.errors import (
        BriefdError,
        ConfigError,
        IndexNotFoundError,
        NotFoundError,
        ProposalError,
        QueryError,
        ScopeError,
        SourceError,
    )
    from briefd.model import DocumentView, Hit, IndexReport, SearchResult
    from briefd.proposals.model import Proposal, ProposalRequest
    from briefd.recall.engine import RecallRequest, RecallResult
    from briefd.retrieval.search import SearchRequest
    from briefd.settings import Settings, load_settings
    from briefd.sync.state import SyncReport
    from briefd.team.drift import DriftReport
    from briefd.team.gaps import GapsReport, GapsRequest
    from briefd.team.usage import UsageReport

_HOMES = {
    "Briefd": "briefd.api",
    "Settings": "briefd.settings",
    "load_settings": "briefd.settings",
    "SearchRequest": "briefd.retrieval.search",
    "SearchResult": "briefd.model",
    "Hit": "briefd.model",
    "DocumentView": "briefd.model",
    "IndexReport": "briefd.model",
    "BundleRequest": "briefd.bundles.model",
    "Bundle": "briefd.bundles.model",
    "BundleItem": "briefd.bundles.model",
    "RecallRequest": "briefd.recall.engine",
    "RecallResult": "briefd.recall.engine",
    "ProposalRequest": "briefd.proposals.model",
    "Proposal": "briefd.proposals.model",
    "SyncReport": "briefd.sync.state",
    "BriefdError": "briefd.errors",
    "ConfigError": "briefd.errors",
    "SourceError": "briefd.errors",
    "IndexNotFoundError": "briefd.errors",
    "QueryError": "briefd.errors",
    "ScopeError": "briefd.errors",
    "NotFoundError": "briefd.errors",
    "ProposalError": "briefd.errors",
    "GapsRequest": "briefd.team.gaps",
    "GapsReport": "briefd.team.gaps",
    "DriftReport": "briefd.team.drift",
    "UsageReport": "briefd.team.usage",
}

__all__ = [
    "Briefd",
    "BriefdError",
    "Bundle",
    "BundleItem",
    "BundleRequest",
    "ConfigError",
    "DocumentView",
    "DriftReport",
    "GapsReport",
    "GapsRequest",
    "Hit",
    "IndexNotFoundError",
    "IndexReport",
    "NotFoundError",
    "Proposal",
    "ProposalError",
    "ProposalRequest",
    "QueryError",
    "RecallRequest",
    "RecallResult",
    "ScopeError",
    "SearchRequest",
    "SearchResult",
    "Settings",
    "SourceError",
    "SyncReport",
    "UsageReport",
    "__version__",
    "load_settings",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'briefd' has no attribute '{name}'")
    value = getattr(__import__(home, fromlist=[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
