"""Following the knowledge repository (K3): clone or open the source, fetch and reset an owned
clone, reindex incrementally, record ``sync_state``; polling and the signed webhook trigger it.

Modules: :mod:`~briefd.sources.git` (the git CLI edge), :mod:`~briefd.sources.knowledge` (what the
source is, clone/fetch/reset), :mod:`~briefd.sources.history` (last commit per document),
:mod:`~briefd.sync.runner` (one coalesced sync run), :mod:`~briefd.sync.webhook`,
:mod:`~briefd.sync.poller`.
"""
