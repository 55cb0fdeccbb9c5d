"""Settings: ``briefd.yaml`` plus ``BRIEFD_*`` environment overrides → one frozen Settings (O1).

Every key is declared once, as a field of a frozen dataclass below; the loader walks those
declarations (:mod:`briefd.settings.convert`), so an unknown key or a malformed value is reported
with its full dotted name and the accepted form. The raw mapping comes from the file and the
environment (:mod:`briefd.settings.raw`): variables name nested keys with a double underscore,
``BRIEFD_SEARCH__TOP_K=12`` sets ``search.top_k``. The sections of reading and searching
the knowledge are :mod:`briefd.settings.retrieval`'s, those of the services briefd talks to
:mod:`briefd.settings.services`'s.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from briefd.errors import ConfigError
from briefd.settings import trust
from briefd.settings.convert import build, declared, text_setting
from briefd.settings.locate import CONFIG_FILE as CONFIG_FILE
from briefd.settings.locate import DEFAULT_DB, DEFAULT_EVAL_CACHE, in_project, project_folder
from briefd.settings.locate import LOCAL_CONFIG as LOCAL_CONFIG
from briefd.settings.locate import config_candidates as config_candidates
from briefd.settings.locate import settings_file as settings_file
from briefd.settings.names import (
    allowed_names_problem,
    bind_host_problem,
    branch_name_problem,
    url_flaw,
    without_account,
)
from briefd.settings.raw import (
    env_items,
    env_name,
    git_source,
    parse_env_value,
    read_file,
    relative_paths,
    set_dotted,
)
from briefd.settings.retrieval import ChunkingSettings as ChunkingSettings
from briefd.settings.retrieval import EmbeddingsSettings as EmbeddingsSettings
from briefd.settings.retrieval import IndexSettings as IndexSettings
from briefd.settings.retrieval import SearchSettings as SearchSettings
from briefd.settings.retrieval import VectorSettings as VectorSettings
from briefd.settings.services import ConfluenceSettings as ConfluenceSettings
from briefd.settings.services import ForgeSettings as ForgeSettings
from briefd.settings.services import JiraSettings as JiraSettings
from briefd.settings.services import StateSettings as StateSettings


@dataclass(frozen=True, slots=True)
class BundleSettings:
    """Context bundles (B1–B8): how many ranked hits compete for the budget, the governing
    documents' share, how far links are followed, the safety headroom, the near-duplicate
    threshold and the caches."""

    candidates: int = 16
    # hybrid score fusion: a ranked hit under this share of the best hit's score stays out
    # (golden sets: every expected section scores at least 0.59 of the best; 0 disables)
    min_relative_score: float = 0.35
    governed_share: float = 0.5  # of the budget, while ranked hits compete for the rest
    linked: int = 8  # sections reached by one link from a document context's target
    second_hop: int = 3  # sections one more link away
    headroom: float = 0.05
    near_duplicate: float = 0.85
    cache_entries: int = 256
    manifest_days: int = 30


@dataclass(frozen=True, slots=True)
class RecallSettings:
    """Prompt-time recall (I8): where the hook asks first, how much it injects, and the
    lexical evidence a BM25-only answer needs (see ``briefd.recall.evidence``)."""

    server: str | None = "http://127.0.0.1:8484"  # null: none; unset: serve.host/serve.port
    server_timeout: float = 2.0
    # the hook answers within this many seconds of its start (`briefd init` gives it 10 s):
    # answering in-process, an embedding service is waited for only until then
    budget_seconds: float = 8.0
    mode: Literal["auto", "bm25", "hybrid"] = "auto"
    max_tokens: int = 1500
    max_chars: int = 10_000
    top_k: int = 4
    scopes: tuple[str, ...] = ()  # (): the configured default scopes
    min_terms: int = 2
    common_share: float = 0.2
    relative_floor: float = 0.4
    max_chance: float = 1.0
    min_lift: float = 3.0
    session_hours: float = 24.0
    weak_z: float = 1.645  # specificity below this: a generic prompt, nothing is injected
    strong_z: float = 3.09  # below this (and ≥ weak_z): at most one short section
    weak_tokens: int = 300  # what that one short section may take
    related: int = 2  # sections linked from the top hits, added as related context (R6)
    daemon: bool = True  # no server answered: a background daemon per index answers (I10)
    idle_minutes: float = 30.0  # the daemon exits after this long without a prompt

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``recall.``), or None."""
        server = (self.server or "off").strip()
        token = "BRIEFD_API_TOKEN, never from the file"
        why = None if server.lower() in ("off", "none", "false") else url_flaw(server, token)
        if why is not None:  # the hook would never ask it, and say nothing
            return (
                f"server: {without_account(server)!r} is not a server URL ({why}); expected "
                "http://host:port or https://host, or null for none"
            )
        if self.strong_z < self.weak_z:
            return (
                f"strong_z: {self.strong_z} is below weak_z ({self.weak_z}); a prompt must be "
                "more specific to get its sections than to get one short one"
            )
        return None


@dataclass(frozen=True, slots=True)
class EvalSettings:
    cache_dir: Path = DEFAULT_EVAL_CACHE


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """``briefd serve`` (I3, I4). The API token is never a setting: it comes from
    ``BRIEFD_API_TOKEN`` only."""

    host: str = "127.0.0.1"
    port: int = 8484
    metrics_auth: bool = True  # false: /metrics stays open even when a token is set
    allowed_hosts: tuple[str, ...] = ()  # extra Host values (DNS-rebinding check)
    allowed_origins: tuple[str, ...] = ()  # extra browser Origins (DNS-rebinding check)
    flush_seconds: float = 5.0  # how often counters and the query log reach SQLite
    # how long a search served (briefd serve, briefd mcp) waits for the local model's query
    # vector before it answers by keywords (retrieval.semantic.serving)
    query_wait_seconds: float = 1.0
    # how long `briefd serve` waits for its index update before it listens, and `briefd mcp`
    # before it answers (a client's start-up wait); a longer update goes on beside them
    index_wait_seconds: float = 20.0
    max_body_bytes: int = 4 * 1024 * 1024  # larger request bodies are refused (413)
    max_streams: int = 16  # open MCP event streams (GET /mcp) at a time; more get 503

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``serve.``), or None: a port no
        socket can have is refused at load, not written by ``briefd init`` into every client's
        configuration and refused only when the server starts."""
        if not 0 < self.port < 65536:
            return f"port: expected a whole number from 1 to 65535, got {self.port}"
        return bind_host_problem(self.host) or allowed_names_problem(
            self.allowed_hosts, self.allowed_origins
        )


@dataclass(frozen=True, slots=True)
class SyncSettings:
    """Following a git knowledge source (K3). ``remote`` is filled from ``source`` when that
    is a git URL; briefd then owns the clone in ``checkout_dir`` (default: ``<db dir>/repo``)."""

    remote: str | None = None
    branch: str | None = None  # default: the remote's default branch
    interval: int = 60  # seconds between polls; 0 = no polling
    webhook_secret: str | None = None
    webhook_window: int = 3600  # seconds a signed delivery is remembered (replays refused)
    checkout_dir: Path | None = None
    git_timeout: int = 120  # seconds for one git command

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``sync.``), or None: a branch git
        cannot name fails every sync with git's words, so it is a settings error instead."""
        why = branch_name_problem(self.branch) if self.branch is not None else None
        if why is None:
            return None
        return (
            f"branch: {self.branch!r} is not a branch name git takes ({why}); write the "
            "branch as `git branch -r` lists it without its remote (e.g. main), or leave it "
            "out to follow the remote's default branch"
        )


@dataclass(frozen=True, slots=True)
class ProposalSettings:
    """Knowledge change proposals (T1): off until ``enabled``; where their branches go
    (``push``: unset, a git URL source gets them and a local checkout keeps them as local
    branches; ``true``, or a remote's name, pushes a checkout's too; ``false`` never pushes);
    who authors their commits."""

    enabled: bool = False
    push: bool | str | None = None
    author_name: str = "briefd"
    author_email: str = "briefd@localhost"
    git_timeout: int = 30  # seconds for one git command of a proposal: an agent is waiting
    branch_prefix: str = "briefd/proposal-"  # a proposal's branch: this + its 8-hex-digit id

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``proposals.``), or None."""
        branch = self.branch_prefix + "0123abcd"
        why = branch_name_problem(branch)
        if why is None:
            return None
        return (
            f"branch_prefix: {self.branch_prefix!r} makes branch names git refuses "
            f"({branch!r}: {why}); use letters, digits and '/', '-', '_', '.'"
        )


@dataclass(frozen=True, slots=True)
class ScopeRule:
    """One ``scopes:`` entry (K1): files under a folder matching ``folder`` (a glob relative to
    the knowledge root: ``*`` is one folder name, ``**`` any depth, ``.`` the root) belong to
    ``scope`` (default: the matched folder's own path); ``default``: searched when a request
    names no scope."""

    NON_EMPTY: ClassVar[bool] = True  # ``scopes: []`` would index nothing

    folder: str
    scope: str | None = None
    default: bool = False

    def problem(self) -> str | None:
        """What is wrong with this rule (after the key ``scopes[n].``), or None."""
        parts = self.folder.strip("/").split("/")
        if self.folder.startswith("/") or ".." in parts or any(p == "" for p in parts):
            return f"folder: expected a folder glob relative to the knowledge root, got {self.folder!r}"
        name = self.scope
        if name is None and self.folder.strip("/") == ".":
            return "scope: the root folder '.' needs a scope name"
        if name is not None and (
            name == "all"
            or name != name.strip().strip("/")
            or "," in name
            or ".." in name.split("/")
        ):
            return f"scope: {name!r} cannot name a scope ('all' is reserved; no commas, no '..')"
        return None


# Today's layout: domain/ and conventions/ for everyone, one scope per projects/<name>/.
DEFAULT_SCOPES = ("domain", "conventions")  # searched when a request names no scope
DEFAULT_LAYOUT = (
    ScopeRule("domain", default=True),
    ScopeRule("conventions", default=True),
    ScopeRule("projects/*"),
)


@dataclass(frozen=True, slots=True)
class ActivitySettings:
    """The query log and usage feedback (T3, T6): how long they are kept (0: for ever) and how
    prompts are stored — ``full`` text, ``hashed`` (a salted hash: still grouped and counted by
    the gaps report) or ``off`` (counts and latency only). Hook prompts, the most personal text
    briefd sees, follow the stricter of ``log_prompts`` and ``log_hook_prompts``."""

    retention_days: int = 30
    log_prompts: Literal["full", "hashed", "off"] = "full"
    log_hook_prompts: Literal["full", "hashed", "off"] = "hashed"

    @property
    def hook_mode(self) -> str:
        """How hook prompts are logged: the stricter of the two settings."""
        return min(self.log_prompts, self.log_hook_prompts, key=("off", "hashed", "full").index)


@dataclass(frozen=True, slots=True)
class CodeRepo:
    """A code repository whose history is checked against documents' ``refs`` (T4): a local
    git checkout (read in place) or a git URL (cloned bare into ``code.checkout_dir``)."""

    source: str
    branch: str | None = None  # default: the checkout's HEAD, the remote's default branch
    name: str | None = None  # default: the directory or repository name


@dataclass(frozen=True, slots=True)
class CodeSettings:
    repos: tuple[CodeRepo, ...] = ()
    checkout_dir: Path | None = None  # default: code/ next to the index


@dataclass(frozen=True, slots=True)
class Settings:
    source: Path | None = None
    db: Path = DEFAULT_DB
    default_scopes: tuple[str, ...] = DEFAULT_SCOPES
    scopes: tuple[ScopeRule, ...] = DEFAULT_LAYOUT
    index: IndexSettings = field(default_factory=IndexSettings)
    chunking: ChunkingSettings = field(default_factory=ChunkingSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    embeddings: EmbeddingsSettings = field(default_factory=EmbeddingsSettings)
    vectors: VectorSettings = field(default_factory=VectorSettings)
    bundles: BundleSettings = field(default_factory=BundleSettings)
    recall: RecallSettings = field(default_factory=RecallSettings)
    eval: EvalSettings = field(default_factory=EvalSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    proposals: ProposalSettings = field(default_factory=ProposalSettings)
    forge: ForgeSettings = field(default_factory=ForgeSettings)
    confluence: ConfluenceSettings = field(default_factory=ConfluenceSettings)
    jira: JiraSettings = field(default_factory=JiraSettings)
    activity: ActivitySettings = field(default_factory=ActivitySettings)
    code: CodeSettings = field(default_factory=CodeSettings)
    state: StateSettings = field(default_factory=StateSettings)
    project_named: trust.ProjectNamed = field(default=trust.USERS_WORD, metadata={"internal": True})

    def problem(self) -> str | None:
        """What is wrong with these settings taken together, or None: an index inside the
        clone of a git URL source, which every sync resets and cleans (``git clean -ffdx``)."""
        clone = self.sync.checkout_dir
        if not self.sync.remote or clone is None:
            return None
        index = self.db.expanduser().resolve()  # ``..`` and links: where the files really are
        if not index.is_relative_to(clone.expanduser().resolve()):
            return None
        return (
            f"sync.checkout_dir: {clone} holds the index ({self.db}), and every sync resets "
            "and cleans that clone of the source, which would delete it; give the clone a "
            f"folder of its own, such as {index.parent / 'repo'} (the default)"
        )


def load_settings(
    config: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    project: Path | None = None,
    command: str | None = None,
    found: bool = False,
    read: Mapping[str, Any] | None = None,
) -> Settings:
    """Read the config file (explicit, ``BRIEFD_CONFIG``, or the first of
    :func:`config_candidates` in the ``project`` folder that exists; None: the one found from
    here, :func:`briefd.settings.locate.project_folder`), then apply ``BRIEFD_*`` variables,
    then ``overrides`` (dotted keys, e.g. from CLI flags). ``command``: the CLI command run,
    named in the hint when a tuned file was given as the settings; ``found``: ``config`` was
    found (the hook's discovery), not named by the user: see ``Settings.project_named``;
    ``read``: the mapping of ``config`` as :func:`read_file` reads it, when the caller has it
    already (the hook remembers it between prompts)."""
    env = os.environ if env is None else env
    merged: dict[str, Any] = {}
    named_by = "BRIEFD_CONFIG" if config is None and env.get("BRIEFD_CONFIG") else None
    project = project_folder(env) if project is None else project
    path, searched = settings_file(config, env, project)
    found = found or searched
    origin = "settings"
    if path is not None:
        merged, origin = _settings_file(path, named_by, command, read), str(path)
    named = trust.of_file(merged, path, found, env)  # before the defaults placed in project
    in_project(merged, project)
    named = named.without(key for key, value in (overrides or {}).items() if value is not None)
    settings = _laid_over(merged, _settings(merged, origin), env, overrides or {})
    settings = dataclasses.replace(settings, project_named=named)
    if (problem := trust.placed_outside_problem(named, settings)) is not None:
        raise ConfigError(problem)
    return _defaults_from_layout(_models_beside_index(settings, merged), merged)


def _settings_file(
    path: Path, named_by: str | None, command: str | None, read: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The raw mapping of the settings file ``path`` (``read``: as read already), its relative
    paths made relative to it; a file from `briefd tune` given as the settings (or pasted into
    them) is refused."""
    merged = copy.deepcopy(dict(read)) if read is not None else read_file(path, named_by)
    if "tuned" in merged and set(merged) <= {"search", "tuned"}:  # the two --config options
        raise ConfigError(
            f"{path} is a file from `briefd tune`; it goes {_tuned_after(command, path)}, "
            "while --config before it names the settings file"
        )
    if "tuned" in merged:  # a tuned file pasted into the settings: its search: may stay
        raise ConfigError(
            f"{path}: 'tuned' is the record `briefd tune` writes beside its search: values, "
            "not a setting; delete that section (the search: values can stay)"
        )
    relative_paths(merged, path.parent)
    return merged


def _laid_over(
    merged: dict[str, Any],
    settings: Settings,
    env: Mapping[str, str],
    overrides: Mapping[str, Any],
) -> Settings:
    """``settings`` (built from ``merged``, the file's) with the ``BRIEFD_*`` variables of
    ``env`` laid over them, then ``overrides``; ``merged`` takes each."""
    failed: ConfigError | None = None  # where the variables stopped building, until they do
    for key, value in env_items(env):
        origin = f"environment variable {env_name(key)}"
        set_dotted(merged, key, _env_value(key, value), origin)
        try:  # a pair checked together (target_tokens, max_tokens) may come in either order
            settings, failed = _settings(merged, origin), None
        except ConfigError as exc:
            failed = failed or exc
    if failed is not None:
        raise failed
    for key, value in overrides.items():
        if value is not None:
            origin = "command-line option"
            set_dotted(merged, key, value, origin)
            settings = _settings(merged, origin)
    return settings


# what turns an optional setting off, as YAML reads these words in the file
OFF_WORDS = frozenset({"", "~", "null", "none", "off", "false", "no"})


def _env_value(dotted: str, raw: str) -> Any:
    """A ``BRIEFD_*`` value: for a text setting the text as it is (``s3cr3t #prod`` stays
    whole, "2.0" stays text; an optional one is turned off by "off", "null", ""…) but for the
    line break a value read from a file ends in; for a true/false setting also ``1`` or ``0``,
    as environment variables often say it; an empty one leaves a list at its default (as a
    list left empty in the file); else as YAML reads it."""
    text, optional = text_setting(Settings, dotted)
    kind = declared(Settings, dotted)
    if raw.strip() in ("0", "1") and kind is bool:
        return raw.strip() == "1"  # as the hook's fast path reads BRIEFD_RECALL__DAEMON=0
    if not raw.strip() and typing.get_origin(kind) is tuple:  # ${VAR:-} in a compose file:
        return None  # no default scope, no document to index, or "expected a non-empty list"
    if not text:  # an empty value turns an optional one off here too (proposals.push)
        return None if optional and not raw.strip() else parse_env_value(raw, dotted)
    raw = raw.rstrip("\r\n")  # a secret file's, a .env's CRLF: never a path's, URL's, secret's
    return None if optional and raw.strip().lower() in OFF_WORDS else raw


def _defaults_from_layout(settings: Settings, merged: Mapping[str, Any]) -> Settings:
    """``scopes:`` rules marked ``default`` give the default scopes — every rule when none is
    marked — unless ``default_scopes`` names them itself (a rule with a wildcard folder and no
    name contributes its glob)."""
    if merged.get("scopes") is None or merged.get("default_scopes") is not None:
        return settings
    marked = [rule for rule in settings.scopes if rule.default] or settings.scopes
    defaults = tuple(rule.scope or rule.folder for rule in marked)
    return dataclasses.replace(settings, default_scopes=tuple(dict.fromkeys(defaults)))


def _models_beside_index(settings: Settings, merged: Mapping[str, Any]) -> Settings:
    """Unless ``embeddings.model_dir`` is set, model files (pulled weights, the built e5 graph)
    live in ``models/`` next to the index, wherever the index is: a hook running in any
    project directory then never leaves a ``.briefd/models`` behind in it."""
    embeddings = merged.get("embeddings")
    if isinstance(embeddings, Mapping) and embeddings.get("model_dir") is not None:
        return settings
    placed = dataclasses.replace(settings.embeddings, model_dir=settings.db.parent / "models")
    return dataclasses.replace(settings, embeddings=placed)


def with_overrides(
    settings: Settings, overrides: Mapping[str, Any], origin: str = "settings"
) -> Settings:
    """A copy of ``settings`` with dotted keys replaced and validated (CLI flags, tuned files)."""
    current = _as_dict(settings)
    named = current.pop("project_named").without(k for k, v in overrides.items() if v is not None)
    for key, value in overrides.items():
        if value is not None:
            set_dotted(current, key, value, origin)
    built: Settings = _settings(current, origin)
    return dataclasses.replace(built, project_named=named)


# the commands whose --config (after the command) takes a file from `briefd tune`
TUNED_COMMANDS = ("search", "bundle", "context", "serve", "mcp", "eval")


def _tuned_after(command: str | None, path: Path) -> str:
    """Where the tuned file ``path`` goes, for the CLI ``command`` the user ran: a server
    started with one was told `briefd search --config …`, a command it never meant."""
    if command in TUNED_COMMANDS:
        return f"after the command (`briefd {command} --config {path} …`)"
    others = ", ".join(TUNED_COMMANDS[1:])
    return f"after a command that reads one (`briefd search --config {path} …`; also {others})"


def apply_tuned(settings: Settings, path: Path | None, command: str | None = None) -> Settings:
    """Lay a tuned recall file (written by ``briefd tune``) over ``settings``: its ``search``
    section only; its ``tuned`` record is information. ``command``: the CLI command run,
    named in the hint when a settings file was given as the tuned file."""
    if path is None:
        return settings
    where = f"`briefd --config FILE {command or 'COMMAND'} …`"
    data = read_file(
        path,
        tuned=f"--config after the command names a file from `briefd tune`; a settings file "
        f"goes before the command: {where}",
    )
    unknown = sorted(set(data) - {"search", "tuned"})
    if unknown:
        raise ConfigError(
            f"{path}: a tuned file holds 'search' and 'tuned', not '{unknown[0]}'; a settings "
            f"file goes before the command (`briefd --config {path} {command or 'COMMAND'} …`)"
        )
    search = data.get("search") or {}
    if not isinstance(search, dict):
        raise ConfigError(f"{path}: 'search' must be a mapping of search settings")
    return with_overrides(settings, {f"search.{k}": v for k, v in search.items()}, str(path))


def _as_dict(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        out[f.name] = _as_dict(value) if dataclasses.is_dataclass(value) else value
    return out


def _settings(data: dict[str, Any], origin: str) -> Settings:
    built: Settings = build(Settings, git_source(data), prefix="", origin=origin)
    return built
