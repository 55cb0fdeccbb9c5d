"""Settings: ``briefd.yaml`` plus ``BRIEFD_*`` environment overrides → one frozen Settings (O1).

Every key is declared once, as a field of a frozen dataclass below; the loader walks those
declarations, so an unknown key or a malformed value is reported with its full dotted name and
the accepted form. Environment variables name nested keys with a double underscore:
``BRIEFD_SEARCH__TOP_K=12`` sets ``search.top_k``.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from briefd.errors import ConfigError

CONFIG_FILE = "briefd.yaml"
ENV_PREFIX = "BRIEFD_"
# BRIEFD_* variables that are not settings keys.
ENV_NOT_SETTINGS = frozenset({"BRIEFD_CONFIG", "BRIEFD_API_TOKEN"})


@dataclass(frozen=True, slots=True)
class IndexSettings:
    include: tuple[str, ...] = ("**/*.md", "**/*.markdown")
    exclude: tuple[str, ...] = ()
    max_file_bytes: int = 2_000_000


@dataclass(frozen=True, slots=True)
class ChunkingSettings:
    target_tokens: int = 500
    max_tokens: int = 800


@dataclass(frozen=True, slots=True)
class SearchSettings:
    top_k: int = 8
    candidates: int = 50
    title_weight: float = 3.0
    heading_weight: float = 2.0
    body_weight: float = 1.0
    any_term_weight: float = 0.25
    any_term_max_share: float = 0.1
    any_term_min_chunks: int = 2000
    rrf_k: int = 60
    query_mode: Literal["text", "advanced"] = "text"
    mode: Literal["bm25", "vector", "hybrid"] = "hybrid"
    fusion: Literal["score", "rrf"] = "score"
    vector_weight: float = 0.6
    all_terms_bonus: float = 0.2
    rrf_vector_weight: float = 0.25
    vector_candidates: int = 50
    related: int = 3
    typo_tolerance: bool = True
    gate: bool = True
    gate_margin: float = 0.02
    gate_soft_margin: float = -0.02


@dataclass(frozen=True, slots=True)
class VectorSettings:
    blas_threads: int = 1
    ann_threshold: int = 100_000


@dataclass(frozen=True, slots=True)
class EmbeddingsSettings:
    enabled: bool = True
    adapter: Literal["local", "ollama", "openai-compatible", "none"] = "local"
    model: str = "multilingual-e5-small-onnx"
    model_dir: Path = Path(".briefd/models")  # unset: models/ next to the index (db)
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    query_prefix: str | None = None  # ollama / openai-compatible; None: "query: " for e5 models
    passage_prefix: str | None = None
    batch_size: int = 16
    threads: int = 2
    timeout_seconds: float = 60.0


@dataclass(frozen=True, slots=True)
class BundleSettings:
    """Context bundles (B1–B5): how many ranked hits compete for the budget, the tracker
    issue's share, the safety headroom, the near-duplicate threshold and the caches."""

    candidates: int = 16
    # hybrid score fusion: a ranked hit under this share of the best hit's score stays out
    # (golden sets: every expected section scores at least 0.59 of the best; 0 disables)
    min_relative_score: float = 0.35
    issue_share: float = 0.35
    headroom: float = 0.05
    near_duplicate: float = 0.85
    cache_entries: int = 256
    manifest_days: int = 30


@dataclass(frozen=True, slots=True)
class RecallSettings:
    """Prompt-time recall (I8): where the hook asks first, how much it injects, and the
    lexical evidence a BM25-only answer needs (see ``briefd.recall.evidence``)."""

    server: str | None = "http://127.0.0.1:8484"  # null: never ask a server
    server_timeout: float = 2.0
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


@dataclass(frozen=True, slots=True)
class EvalSettings:
    cache_dir: Path = Path(".briefd/eval-cache")


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


@dataclass(frozen=True, slots=True)
class SyncSettings:
    """Following a git knowledge source (K3). ``remote`` is filled from ``source`` when that
    is a git URL; briefd then owns the clone in ``checkout_dir`` (default: ``<db dir>/repo``)."""

    remote: str | None = None
    branch: str | None = None  # default: the remote's default branch
    interval: int = 60  # seconds between polls; 0 = no polling
    webhook_secret: str | None = None
    checkout_dir: Path | None = None
    git_timeout: int = 120  # seconds for one git command


@dataclass(frozen=True, slots=True)
class ProposalSettings:
    """Knowledge change proposals (T1): who authors their commits."""

    author_name: str = "briefd"
    author_email: str = "briefd@localhost"


@dataclass(frozen=True, slots=True)
class ForgeSettings:
    """Where proposals become pull requests (T1). The token comes from ``token_env``."""

    type: Literal["none", "github"] = "none"
    api_url: str = "https://api.github.com"
    repo: str | None = None  # owner/name
    token_env: str = "GITHUB_TOKEN"
    timeout_seconds: float = 20.0


@dataclass(frozen=True, slots=True)
class Settings:
    source: Path | None = None
    db: Path = Path(".briefd/briefd.db")
    default_scopes: tuple[str, ...] = ("domain", "conventions")
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


def load_settings(
    config: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Read the config file (explicit, ``BRIEFD_CONFIG``, or ``./briefd.yaml``), then apply
    ``BRIEFD_*`` variables, then ``overrides`` (dotted keys, e.g. from CLI flags)."""
    env = os.environ if env is None else env
    merged: dict[str, Any] = {}
    path = config or (Path(env["BRIEFD_CONFIG"]) if env.get("BRIEFD_CONFIG") else None)
    if path is None and Path(CONFIG_FILE).is_file():
        path = Path(CONFIG_FILE)
    origin = "settings"
    if path is not None:
        merged = _read_file(path)
        _relative_paths(merged, path.parent)
        origin = str(path)
    settings: Settings = _build(Settings, merged, prefix="", origin=origin)
    for key, value in _env_items(env):
        origin = f"environment variable {_env_name(key)}"
        _set_dotted(merged, key, _parse_env_value(value), origin)
        settings = _build(Settings, merged, prefix="", origin=origin)
    for key, value in (overrides or {}).items():
        if value is not None:
            origin = f"option for {key}"
            _set_dotted(merged, key, value, origin)
            settings = _build(Settings, merged, prefix="", origin=origin)
    return _models_beside_index(settings, merged)


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
    for key, value in overrides.items():
        if value is not None:
            _set_dotted(current, key, value, f"option for {key}")
    built: Settings = _build(Settings, current, prefix="", origin=origin)
    return built


def apply_tuned(settings: Settings, path: Path | None) -> Settings:
    """Lay a tuned recall file (written by ``briefd tune``) over ``settings``: its ``search``
    section only; its ``tuned`` record is information."""
    if path is None:
        return settings
    data = _read_file(path)
    unknown = sorted(set(data) - {"search", "tuned"})
    if unknown:
        raise ConfigError(f"{path}: a tuned file holds 'search' and 'tuned', not '{unknown[0]}'")
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


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}: not valid YAML{where}; fix the syntax") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level")
    return data


_PATH_KEYS = (("source",), ("db",), ("embeddings", "model_dir"), ("eval", "cache_dir"))


def _relative_paths(data: dict[str, Any], base: Path) -> None:
    """Relative paths in a config file are relative to the file, not to the cwd."""
    for *parents, key in _PATH_KEYS:
        section: Any = data
        for name in parents:
            section = section.get(name) if isinstance(section, dict) else None
        if not isinstance(section, dict):
            continue
        value = section.get(key)
        if (
            isinstance(value, str)
            and value
            and not Path(value).is_absolute()
            and not is_git_url(value)
        ):
            section[key] = str(base / value)


def is_git_url(value: str) -> bool:
    """``https://…``, ``ssh://…``, ``file://…`` or scp-like ``git@host:owner/repo.git``."""
    return _GIT_URL.match(value) is not None


_GIT_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[\w.-]+@[\w.-]+:)")


def _git_source(data: dict[str, Any]) -> dict[str, Any]:
    """``source: <git URL>`` moves to ``sync.remote`` (the clone is briefd's own); a directory
    ``source`` replaces an earlier URL."""
    source = data.get("source")
    if source is None:
        return data
    sync = data.get("sync")
    sync = dict(sync) if isinstance(sync, dict) else {}
    if isinstance(source, str) and is_git_url(source):
        sync["remote"] = source
        return {**data, "source": None, "sync": sync}
    if sync.get("remote"):
        sync["remote"] = None
        return {**data, "sync": sync}
    return data


def _env_name(dotted: str) -> str:
    return ENV_PREFIX + dotted.replace(".", "__").upper()


def _env_items(env: Mapping[str, str]) -> list[tuple[str, str]]:
    items = []
    for name, value in sorted(env.items()):
        if not name.startswith(ENV_PREFIX) or name in ENV_NOT_SETTINGS:
            continue
        dotted = name[len(ENV_PREFIX) :].lower().replace("__", ".")
        items.append((dotted, value))
    return items


def _set_dotted(data: dict[str, Any], dotted: str, value: Any, origin: str) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"{origin}: '{part}' is a section, not a value")
        node = child
    node[parts[-1]] = value


def _parse_env_value(raw: str) -> Any:
    try:
        return yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError:
        return raw


def _build(cls: type[Any], data: Any, prefix: str, origin: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: {prefix.rstrip('.')}: expected a mapping of settings")
    if cls is Settings:
        data = _git_source(data)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for key in data:
        if key not in fields:
            raise ConfigError(_unknown_key(origin, prefix, str(key), sorted(fields)))
    kwargs = {}
    for name, value in data.items():
        kwargs[name] = _convert(hints[name], value, prefix + name, origin)
    return cls(**kwargs)


def _unknown_key(origin: str, prefix: str, key: str, known: list[str]) -> str:
    guess = difflib.get_close_matches(key, known, n=1)
    hint = f" (did you mean '{prefix}{guess[0]}'?)" if guess else ""
    return f"{origin}: unknown key '{prefix}{key}'{hint}; accepted keys: " + ", ".join(
        prefix + k for k in known
    )


def _convert(hint: Any, value: Any, key: str, origin: str) -> Any:
    if dataclasses.is_dataclass(hint):
        return _build(typing.cast(type, hint), value, key + ".", origin)
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        if type(None) in args and (value is None or value is False):
            return None  # YAML reads "off", "no" and "false" as False: for an optional, "none"
        inner = next(a for a in args if a is not type(None))
        return _convert(inner, value, key, origin)
    if typing.get_origin(hint) is Literal:
        if value not in args:
            accepted = " or ".join(repr(a) for a in args)
            raise ConfigError(f"{origin}: {key}: expected {accepted}, got {value!r}")
        return value
    if typing.get_origin(hint) is tuple:
        return _to_tuple(value, key, origin)
    converter = _SCALARS.get(hint)
    if converter is None:  # pragma: no cover - a declaration bug, not user input
        raise TypeError(f"unsupported settings type {hint!r} for {key}")
    return converter(value, key, origin)


def _to_tuple(value: Any, key: str, origin: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{origin}: {key}: expected a list of strings, got {value!r}")
    return tuple(value)


# whole numbers where 0 would quietly do nothing (embed nothing, rank nothing)
_AT_LEAST_ONE = frozenset(
    {
        "embeddings.batch_size",
        "bundles.candidates",
        "search.top_k",
        "search.candidates",
        "search.vector_candidates",
        "recall.top_k",
    }
)


def _to_int(value: Any, key: str, origin: str) -> int:
    least = 1 if key in _AT_LEAST_ONE else 0
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigError(f"{origin}: {key}: expected a whole number ≥ {least}, got {value!r}")
    return value


def _to_float(value: Any, key: str, origin: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{origin}: {key}: expected a number, got {value!r}")
    return float(value)


def _to_bool(value: Any, key: str, origin: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{origin}: {key}: expected true or false, got {value!r}")
    return value


def _to_str(value: Any, key: str, origin: str) -> str:
    may_be_empty = key.endswith("_prefix")  # "" is a real choice there: no prefix
    if not isinstance(value, str) or not (value or may_be_empty):
        raise ConfigError(f"{origin}: {key}: expected a non-empty string, got {value!r}")
    return value


def _to_path(value: Any, key: str, origin: str) -> Path:
    if isinstance(value, Path):
        return value
    return Path(_to_str(value, key, origin)).expanduser()


_SCALARS: dict[Any, Any] = {
    int: _to_int,
    float: _to_float,
    bool: _to_bool,
    str: _to_str,
    Path: _to_path,
}
