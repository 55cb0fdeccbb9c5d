"""The one exception tree of briefd.

Every error briefd raises on purpose derives from :class:`BriefdError`, and its message is a
single line that says what is wrong and what to do about it. Front ends catch the root: the
CLI prints the message and exits non-zero, REST maps each class to a status code, MCP turns it
into an ``isError`` result.

    BriefdError
    ├── ConfigError          a setting in briefd.yaml / BRIEFD_* is unknown or malformed
    ├── SourceError          the knowledge source cannot be read (missing dir, bad git remote)
    ├── IndexNotFoundError   there is no index yet: run ``briefd index``
    ├── StoreError           the SQLite file is unusable (corrupt, newer schema, disk full)
    │   ├── ForeignDatabaseError  the file is not a briefd index (never altered or deleted)
    │   ├── NewerIndexError       a newer briefd made the index (never altered or deleted)
    │   └── StateUnavailableError the shared state (PostgreSQL, ``state.url``) cannot be reached
    ├── QueryError           a search request is malformed (bad FTS5 syntax in advanced mode),
    │                        or a caller's own Atlassian account (X-Atlassian-* headers) refused
    │   └── ScopeError       a requested scope does not exist
    ├── NotFoundError        a requested document does not exist (or is outside the scopes)
    ├── EmbeddingError       the embedding model cannot be loaded or the embedding service failed
    ├── BusyError            an action that runs alone (index rebuild) is already running
    ├── EvalError            an eval query set or dataset is malformed or missing
    ├── ProposalError        a knowledge change proposal was refused or could not be pushed
    │   ├── ProposalRemoteError the git remote or the forge could not be reached or refused
    │   │   └── ForgeServerError  the forge failed on its side (5xx), on any request
    │   ├── ForgeRateLimitedError the forge refused a request for its rate limit (``again``: when
    │   │                         it takes the token's requests again)
    │   ├── ForgeTokenError     the forge refused the token itself (401: expired, revoked)
    │   ├── ForgeAccessError    the forge refused a request on the repository (403, 404)
    │   ├── ProposalConflictError the document changed on the base branch since it was served
    │   └── ProposalsOffError   proposals are off on this server (``proposals.enabled``)
    └── IntegrationError     a live Confluence or Jira lookup failed (refused, unreachable, gone)
        ├── IntegrationOffError     Confluence or Jira is not configured
        ├── RemoteNotFoundError     the issue or page does not exist or is not visible (also a
        │                           NotFoundError)
        └── RateLimitedError        Atlassian asked to slow down: again after one polite retry,
                                    or for longer than the request timeout (not retried)
"""

from __future__ import annotations


class BriefdError(Exception):
    """Root of every deliberate briefd error. Catch this in a front end."""


class ConfigError(BriefdError):
    """A configuration key is unknown or its value has the wrong form."""


class SourceError(BriefdError):
    """The knowledge source cannot be read."""


class IndexNotFoundError(BriefdError):
    """No index exists at the configured database path."""


class StoreError(BriefdError):
    """The index database cannot be used."""


class DamagedIndexError(StoreError):
    """The index file opened but is damaged inside (not a database, malformed) or holds a
    schema briefd cannot bring up: ``--rebuild`` may start it over, unlike a file briefd may not
    read or write, or one another process holds (a plain :class:`StoreError`)."""


class ForeignDatabaseError(StoreError):
    """The index path names another application's database or a non-SQLite file."""


class NewerIndexError(StoreError):
    """The index has a schema newer than this briefd's: it is left as it is, never rebuilt
    (its query log, feedback and proposals cannot be made again from git)."""


class StateUnavailableError(StoreError):
    """The shared state (PostgreSQL) is unreachable: search and bundles go on from the local
    index, state writes fail fast with this error until it answers again."""


class QueryError(BriefdError):
    """A search request cannot be run as given."""


class ScopeError(QueryError):
    """A requested scope is not one the index knows."""


class NotFoundError(BriefdError):
    """A requested document is not in the index (or not in the requested scopes)."""


class EmbeddingError(BriefdError):
    """The embedder cannot produce vectors (model missing, service down, bad response)."""


class EvalError(BriefdError):
    """An evaluation query file or dataset cannot be used."""


class ProposalError(BriefdError):
    """A proposed knowledge change is invalid (path, content) or its branch cannot be pushed."""


class BusyError(BriefdError):
    """An action that must run alone (an index rebuild) is already running: wait and retry."""


class IntegrationError(BriefdError):
    """A live Confluence or Jira lookup failed; the message names the site's answer and the fix
    (credentials, deployment, allow-list). Nothing else in briefd is affected."""


class IntegrationOffError(IntegrationError):
    """A Confluence or Jira lookup was asked for, but that integration is not configured."""


class RemoteNotFoundError(IntegrationError, NotFoundError):
    """The Jira issue or Confluence page does not exist, or the account may not see it."""


class RateLimitedError(IntegrationError):
    """Atlassian answered 429 twice (``Retry-After`` was honoured once), or asked for a wait
    longer than the request timeout (not retried): try again later. ``retry_after``: the
    seconds the site's last ``Retry-After`` asked for (None without one); REST passes it on."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ProposalRemoteError(ProposalError):
    """The proposal's remote could not be fetched from or pushed to (unreachable, refused the
    credentials or the branch), or its forge did not answer at all: the remote's answer is in
    the message (REST 502)."""


class ForgeServerError(ProposalRemoteError):
    """The forge answered with a server error (5xx): no setting of briefd's is wrong; opening
    a pull request, it may have opened it all the same, and every other request would fail
    alike (a sync asks it once)."""


class ForgeRateLimitedError(ProposalError):
    """The forge refused a request for its rate limit, not for the token's permissions:
    ``again`` says when it takes the token's requests again ("after 2030-03-17 17:46:40 UTC")."""

    def __init__(self, message: str, again: str) -> None:
        super().__init__(message)
        self.again = again


class ForgeTokenError(ProposalError):
    """The forge refused the token itself (401: expired, revoked, mistyped): it refuses every
    other request made with it alike, so a caller with more to ask stops at the first."""


class ForgeAccessError(ProposalError):
    """The forge refused a request on the repository (403 without a rate limit: the token
    lacks permission; 404: it may not read the repository, or ``forge.repo`` names another):
    every other request about that repository meets the same, so a caller with more to ask
    stops at the first."""


class ProposalConflictError(ProposalError):
    """The document changed on the proposal's base branch since the commit this server serves
    (a teammate's edit not synced yet): the new content was written against the served text and
    would undo that edit, so nothing is committed (REST 409)."""


class ProposalsOffError(ProposalError):
    """Proposals are off (``proposals.enabled: false``, the default): nothing is written."""
