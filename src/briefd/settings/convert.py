"""Typed settings from the raw mapping (:mod:`briefd.settings.raw`): each frozen dataclass's
fields are walked, so an unknown key or a malformed value is reported with its full dotted name
and the accepted form, and a list of records (``scopes:``, ``code.repos``) is checked like a
section, record by record (a record class may say ``NON_EMPTY``; a section's or a record's
class may have a ``problem()``, asked once it is built)."""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from briefd.errors import ConfigError
from briefd.settings.names import credential_key_hint, variable_name_problem
from briefd.settings.raw import split_list


def build(cls: type[Any], data: Any, prefix: str, origin: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(
            f"{origin}: {prefix.rstrip('.')}: expected a mapping of settings"
            f"{_section_hint(cls, data, prefix, origin)}"
        )
    fields = {f.name: f for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
    hints = typing.get_type_hints(cls)
    for key in data:
        if key not in fields:
            raise ConfigError(_unknown_key(origin, prefix, str(key), sorted(fields), cls))
    if not prefix:  # the whole settings: a key indented under the wrong section
        _misplaced(cls, data, origin)
    kwargs = {}
    for name, value in data.items():
        if value is None and typing.get_origin(hints[name]) is tuple:
            continue  # a list left empty (its entries commented out) is its default, as a section
        kwargs[name] = _convert(hints[name], value, prefix + name, origin)
    for name, declared in fields.items():
        missing = dataclasses.MISSING
        if (
            name not in kwargs
            and declared.default is missing
            and declared.default_factory is missing
        ):
            raise ConfigError(f"{origin}: {prefix}{name}: required, and missing")
    built = cls(**kwargs)
    check = getattr(built, "problem", None)
    problem = check() if check is not None else None
    if problem:
        raise ConfigError(f"{origin}: {prefix}{problem}")
    return built


def _section_hint(cls: type[Any], value: Any, prefix: str, origin: str) -> str:
    """How to write the section ``prefix`` of ``cls``, given the value ``value`` instead: its
    switch for true or false (``embeddings: false`` was "expected a mapping of settings", and
    nothing said ``enabled``), else where its keys go."""
    names = [f.name for f in dataclasses.fields(cls)]
    if "[" in prefix or not names:  # a record of a list (scopes[0]): its own words
        return ""
    section = prefix.rstrip(".")
    switch = isinstance(value, bool) or str(value).strip().lower() in ("on", "off", "none")
    key = "enabled" if switch and "enabled" in names else names[0]
    shown = "true" if value is True else "false" if switch else "…"
    if origin.startswith("environment variable"):
        name = f"BRIEFD_{section.replace('.', '__')}__{key}".upper()
        return f" (a section; its keys are variables of their own, such as {name}={shown})"
    return f" (a section; its keys go indented under it, such as {section}: {{{key}: {shown}}})"


def text_setting(cls: type[Any], dotted: str) -> tuple[bool, bool]:
    """(is text, is optional) for the setting ``dotted`` of the settings class ``cls``: text is
    a string or a path, optional or not, or a choice of strings. A ``BRIEFD_*`` value for a
    text setting is taken as it is, never read as YAML, which would cut a secret at " #" or
    turn "2.0" into a number."""
    hint = declared(cls, dotted)
    if hint is None:
        return False, False
    args = typing.get_args(hint)
    optional = type(None) in args
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:
            return False, optional
        hint = inner[0]
    if typing.get_origin(hint) is Literal:
        return all(isinstance(a, str) for a in typing.get_args(hint)), optional
    return hint in (str, Path), optional


def declared(cls: type[Any], dotted: str) -> Any:
    """The declared type of the setting ``dotted`` of the settings class ``cls``, or None
    when no setting has that name."""
    hint: Any = cls
    for name in dotted.split("."):
        if not (dataclasses.is_dataclass(hint) and isinstance(hint, type)):
            return None
        hints = typing.get_type_hints(hint)
        if name not in hints:
            return None
        hint = hints[name]
    return hint


_BY_GATE_OFFSET = (
    "'search.gate_offset' replaces it (default 0: the gate fits its threshold to each index, "
    "the offset moves it, and `briefd tune` searches it); remove it, or set that instead"
)
# Keys an earlier briefd read, and what became of them (CHANGELOG): a settings or tuned file
# written for it is told what to write now, not only that the key is unknown.
RETIRED = {
    "search.gate_margin": _BY_GATE_OFFSET,
    "search.gate_soft_margin": _BY_GATE_OFFSET,
    "search.gate_hard_floor": _BY_GATE_OFFSET,
    "search.gate_hard_sigma": _BY_GATE_OFFSET,
    "search.gate_soft_floor": _BY_GATE_OFFSET,
    "search.gate_soft_sigma": _BY_GATE_OFFSET,
    "bundles.issue_share": (
        "nothing replaces it (a bundle's tracker issue is mandatory, whole within hard_limit; a "
        "request's 'hard_limit' reports a bundle it makes too large); remove it"
    ),
}


def _unknown_key(
    origin: str,
    prefix: str,
    key: str,
    known: list[str],
    cls: type[Any],
    placed: Sequence[str] = (),
) -> str:
    """The message for ``prefix + key``, unknown in ``cls``; ``placed``: where the settings
    hold a key of that name instead (dotted from the top: ``db``, ``serve.port``)."""
    retired = RETIRED.get(prefix + key)
    if retired is not None:
        return f"{origin}: '{prefix}{key}' is a setting of an earlier briefd: {retired}"
    defaults = {f.name: str(f.default) for f in dataclasses.fields(cls) if f.name.endswith("_env")}
    unset = f"unset {origin.rpartition(' ')[2]}" if origin.startswith("environment") else ""
    secret = credential_key_hint(key, prefix, defaults, unset or "remove this key")
    if secret is not None:  # not "did you mean 'token_env'?": the secret went there
        return f"{origin}: '{prefix}{key}': {secret}"
    dotted = _dotted_hint(cls, key)
    if dotted is not None and not origin.startswith("environment"):
        return f"{origin}: unknown key '{prefix}{key}'{dotted}"
    nested = _nested_key(cls, key)
    placed = list(placed) or ([] if nested else _sections_holding(cls, key))
    guess = [nested] if nested else _close(key, known)
    hint = f" (did you mean '{prefix}{guess[0]}'?)" if guess else ""
    environment = origin.startswith("environment variable")
    if nested and environment:
        name = "BRIEFD_" + (prefix + nested).replace(".", "__").upper()
        hint = f" (did you mean {name}? a nested key takes a double underscore)"
    elif placed:  # ``port: 9000`` at the top, BRIEFD_PORT: not "did you mean 'code'?"
        hint = _placed_hint(placed, prefix, environment)
    return f"{origin}: unknown key '{prefix}{key}'{hint}; accepted keys: " + ", ".join(
        prefix + k for k in known
    )


def _close(word: str, known: Sequence[str]) -> list[str]:
    """The known name closest to a mistyped ``word`` (at most one). ``difflib`` is imported
    here: only a wrong setting needs it, and every process reading settings (the prompt hook's
    included) would pay for it."""
    import difflib

    return difflib.get_close_matches(word, known, n=1)


def _dotted_hint(cls: type[Any], key: str) -> str | None:
    """`` (…)`` saying how to write ``key``, a section's setting by its dotted name as the
    README's table names it (``search.top_k: 12``), in YAML: indented under its section. YAML
    reads the dotted name as one key, which was answered "did you mean 'search'?"."""
    written, dot, name = key.partition(".")
    hints = typing.get_type_hints(cls)
    sections = [k for k, hint in hints.items() if dataclasses.is_dataclass(hint)]
    close = _close(written, sections)  # ``serach.top_k`` too
    if not (dot and close):
        return None
    section = close[0]
    return (
        f" (a dotted name is nested in the file: '{name}:' goes indented under '{section}:', "
        f"or write {section}: {{{name}: …}})"
    )


def _placed_hint(placed: list[str], prefix: str, environment: bool) -> str:
    """``(did you mean …?)`` naming the keys ``placed`` (dotted from the top), as variables
    for an ``environment`` origin, and where such a key is written."""
    if environment:
        names = ["BRIEFD_" + k.replace(".", "__").upper() for k in placed]
        where = "a section's variable names it after a double underscore"
    else:
        names = [f"'{k}'" for k in placed]
        where = (
            f"it goes at the top, not indented under '{prefix.rstrip('.')}:'"
            if prefix and "." not in placed[0]
            else "a section's setting goes indented under it"
        )
    return f" (did you mean {' or '.join(names)}? {where})"


def _misplaced(cls: type[Any], data: dict[str, Any], origin: str) -> None:
    """Refuse a key indented under the wrong section, naming where it goes: a top-level key
    (``db:`` under ``search:``) or another section's setting (``port:`` under ``search:``)."""
    hints = typing.get_type_hints(cls)
    for name, values in data.items():
        section = hints.get(name)
        if not (dataclasses.is_dataclass(section) and isinstance(values, dict)):
            continue
        known = typing.get_type_hints(section)
        for key in values:
            if not isinstance(key, str) or key in known:
                continue
            others = [k for k in _sections_holding(cls, key) if not k.startswith(f"{name}.")]
            placed = [key] if key in hints else others
            if placed:
                kind = typing.cast(type, section)
                message = _unknown_key(origin, f"{name}.", key, sorted(known), kind, placed)
                raise ConfigError(message)


def _sections_holding(cls: type[Any], key: str) -> list[str]:
    """``section.key`` for each section of ``cls`` with a setting ``key`` (``serve.port`` for
    ``port``), in the order the sections are declared."""
    hints = typing.get_type_hints(cls)
    return [
        f"{name}.{key}"
        for name, section in hints.items()
        if dataclasses.is_dataclass(section) and key in typing.get_type_hints(section)
    ]


def _nested_key(cls: type[Any], key: str) -> str | None:
    """``section.name`` when ``key`` is a section's setting with its ``.`` written as ``_``
    (``search_top_k``, from ``BRIEFD_SEARCH_TOP_K`` with one underscore), else None."""
    hints = typing.get_type_hints(cls)
    for at in (i for i, c in enumerate(key) if c == "_"):
        section = hints.get(key[:at])
        if dataclasses.is_dataclass(section) and key[at + 1 :] in typing.get_type_hints(section):
            return f"{key[:at]}.{key[at + 1 :]}"
    return None


def _convert(hint: Any, value: Any, key: str, origin: str) -> Any:
    if dataclasses.is_dataclass(hint):  # a section left empty (``search:``) is its defaults
        return build(typing.cast(type, hint), {} if value is None else value, key + ".", origin)
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        if bool in args and isinstance(value, bool):
            return value  # ``bool | str``: true and false are choices of their own
        if type(None) in args and (value is None or value is False):
            return None  # YAML reads "off", "no" and "false" as False: for an optional, "none"
        inner = next((a for a in args if a not in (type(None), bool)), bool)
        return _convert(inner, value, key, origin)
    if typing.get_origin(hint) is Literal:
        if value is False and "off" in args:
            return "off"  # YAML reads an unquoted off (and no, false) as False
        if value not in args:
            accepted = " or ".join(repr(a) for a in args)
            raise ConfigError(f"{origin}: {key}: expected {accepted}, got {_shown(value)}")
        return value
    if typing.get_origin(hint) is tuple and dataclasses.is_dataclass(args[0]):
        return _to_records(typing.cast(type, args[0]), value, key, origin)
    if typing.get_origin(hint) is tuple:
        item = typing.get_args(hint)[0]
        if dataclasses.is_dataclass(item):
            return _to_records(typing.cast(type, item), value, key, origin)
        return _to_tuple(value, key, origin)
    converter = _SCALARS.get(hint)
    if converter is None:  # pragma: no cover - a declaration bug, not user input
        raise TypeError(f"unsupported settings type {hint!r} for {key}")
    return converter(value, key, origin)


def _to_tuple(value: Any, key: str, origin: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = split_list(value)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{origin}: {key}: expected a list of strings, got {_shown(value)}")
    return tuple(value)


def _to_records(cls: type[Any], value: Any, key: str, origin: str) -> tuple[Any, ...]:
    """A list of mappings (``scopes:``, ``code.repos``), each built and checked like a settings
    section; a string stands for the first field (``- ../app``), and text is a list of them
    separated by commas, as for a list of text (``BRIEFD_CODE__REPOS=../app, ../web``)."""
    if isinstance(value, str):
        value = split_list(value)
    if not isinstance(value, list | tuple):
        raise ConfigError(f"{origin}: {key}: expected a list, got {_shown(value)}")
    if getattr(cls, "NON_EMPTY", False) and not value:
        raise ConfigError(f"{origin}: {key}: expected a non-empty list of mappings, got {value!r}")
    first = dataclasses.fields(cls)[0].name
    records = tuple(
        item
        if isinstance(item, cls)
        else build(cls, {first: item} if isinstance(item, str) else item, f"{key}[{n}].", origin)
        for n, item in enumerate(value)
    )
    return records  # build() asked each built record its problem()


# whole numbers where 0 would quietly do nothing (embed nothing, rank nothing)
_AT_LEAST_ONE = frozenset(
    {
        "embeddings.batch_size",
        "bundles.candidates",
        "search.top_k",
        "search.candidates",
        "search.vector_candidates",
        "recall.top_k",
        "sync.git_timeout",
        "proposals.git_timeout",
        "chunking.target_tokens",
        "chunking.max_tokens",
        "index.max_file_bytes",
        "recall.max_tokens",
        "recall.max_chars",
        "serve.max_body_bytes",
        "serve.max_streams",
        "state.pool_size",
    }
)
# numbers with a range: a share of something, a weight, a time to wait
_FRACTIONS = frozenset(
    {
        "search.any_term_max_share",
        "search.vector_weight",
        "bundles.min_relative_score",
        "bundles.governed_share",
        "bundles.near_duplicate",
        "recall.common_share",
        "recall.relative_floor",
    }
)
_HEADROOM = ("bundles.headroom", 0.5)  # more kept back than this leaves no room for anything
_NOT_NEGATIVE = frozenset(
    {
        "search.title_weight",
        "search.heading_weight",
        "search.body_weight",
        "search.any_term_weight",
        "search.rrf_vector_weight",
        "search.all_terms_bonus",
        "search.coverage_bonus",
        "recall.max_chance",
        "recall.min_lift",
    }
)
_POSITIVE_SUFFIXES = ("timeout_seconds", "server_timeout", "_seconds", "_minutes", "_hours")


# whole numbers with a largest value: what a socket can have; days back from now that a date
# still reaches (a million days of retention went past year 1 and crashed every index run)
_RANGES = {
    "serve.port": (1, 65535),
    "activity.retention_days": (0, 36_500),
    "bundles.manifest_days": (0, 36_500),
}


def _to_int(value: Any, key: str, origin: str) -> int:
    least, most = _RANGES.get(key, (1 if key in _AT_LEAST_ONE else 0, None))
    wanted = f"from {least} to {most}" if most else f"≥ {least}"
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not least <= value <= (most or value)
    ):
        raise ConfigError(
            f"{origin}: {key}: expected a whole number{_unit(key)} {wanted}, got "
            f"{_shown(value)}{_quoted(value)}{_with_unit(value)}"
        )
    return value


# what a number setting counts, by the end of its name (``sync.interval``: seconds)
_UNITS = (
    ("_bytes", "bytes"),
    ("_days", "days"),
    ("_hours", "hours"),
    ("_minutes", "minutes"),
    ("_tokens", "tokens"),
    ("_seconds", "seconds"),
    ("timeout", "seconds"),
    ("interval", "seconds"),
    ("_window", "seconds"),
)
_NUMBER_AND_UNIT = re.compile(r"\s*[0-9.]+\s*[A-Za-z]+\s*")


def _unit(key: str) -> str:
    """`` of seconds`` (bytes, days…) for a number setting that counts them, else "": the
    accepted form of ``sync.interval`` was "a whole number ≥ 0", and ``5m`` or ``2MB`` the
    guess it left."""
    name = key.rpartition(".")[2]
    return next((f" of {unit}" for end, unit in _UNITS if name.endswith(end)), "")


def _with_unit(value: Any) -> str:
    """Why ``value``, a number written with a unit (``5m``, ``2MB``, ``30s``), is refused."""
    if isinstance(value, str) and _NUMBER_AND_UNIT.fullmatch(value):
        return " (a number alone, without a unit)"
    return ""


def _shown(value: Any) -> str:
    """``value`` in the words the file wrote it in: YAML's null (a key left empty) and its
    booleans (an unquoted off, no, yes, on) were shown as Python's None and False, which no
    one wrote (``interval: off`` was "got False")."""
    if value is None:
        return "an empty value (YAML's null)"
    if isinstance(value, bool):
        word, also = ("true", "yes or on") if value else ("false", "no or off")
        return f"{word} (YAML reads an unquoted {also} as {word} too)"
    return repr(value)


def _quoted(value: Any) -> str:
    """Why ``value``, a number or true/false in quotes (``port: "8484"``, as a template writes
    it), is refused though it reads like one: to YAML it is text."""
    text = value.strip().lower() if isinstance(value, str) else ""
    try:
        number = math.isfinite(float(text))
    except ValueError:
        number = False
    if not number and text not in ("true", "false"):
        return ""
    return " (text: in quotes, YAML reads no number or true/false; write it without them)"


# 1e-3 is text to YAML 1.1, which wants a dot in an exponent's number (1.0e-3)
_EXPONENT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+")


def _to_float(value: Any, key: str, origin: str) -> float:
    if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not _finite(value):
        # .inf is no weight, time or share: a BM25 weight of .inf made every score NaN
        raise ConfigError(
            f"{origin}: {key}: expected a finite number{_unit(key)}, got {_shown(value)}"
            f"{_quoted(value)}{_with_unit(value)}"
        )
    wanted = _float_range(key)
    if wanted is not None and not wanted[1](value):
        raise ConfigError(
            f"{origin}: {key}: expected a number{_unit(key)} {wanted[0]}, got {value!r}"
        )
    return float(value)


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # a whole number too large for a float
        return False


def _float_range(key: str) -> tuple[str, Any] | None:
    """(the range in words, its test) of the number setting ``key``; None: any number."""
    if key in _FRACTIONS:
        return "from 0 to 1", lambda v: 0 <= v <= 1
    if key == _HEADROOM[0]:
        return f"from 0 to {_HEADROOM[1]}", lambda v: 0 <= v <= _HEADROOM[1]
    if key in _NOT_NEGATIVE:
        return "≥ 0", lambda v: v >= 0
    if key.endswith(_POSITIVE_SUFFIXES):
        return "> 0", lambda v: 0 < v < float("inf")
    return None


def _to_bool(value: Any, key: str, origin: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(
            f"{origin}: {key}: expected true or false, got {_shown(value)}{_quoted(value)}"
        )
    return value


def _to_str(value: Any, key: str, origin: str) -> str:
    may_be_empty = key.endswith("_prefix")  # "" is a real choice there: no prefix
    if not isinstance(value, str) or not (value or may_be_empty):
        got = _unshown(value) if _secret_valued(key) and value is not None else _shown(value)
        if key == "source" and isinstance(value, list | tuple):
            raise ConfigError(
                f"{origin}: source: expected one folder or git URL, got {got}; an index has "
                "one knowledge source: put the folders in one folder and name it, or give "
                "each its own settings file and index (`db:`)"
            )
        raise ConfigError(f"{origin}: {key}: expected a non-empty string, got {got}")
    problem = variable_name_problem(value) if key.endswith("_env") else None
    if problem is not None:
        raise ConfigError(f"{origin}: {key}: {problem}")
    return value


def _secret_valued(key: str) -> bool:
    """``key`` holds a secret (``sync.webhook_secret``, ``state.url`` with its password) or
    may have been given one (a ``…_env`` key holds a variable's name, not the token)."""
    return key.endswith(("secret", "_env")) or key == "state.url"


def _unshown(value: Any) -> str:
    """What YAML read ``value`` of a secret as, without the value: a settings error is printed,
    logged and shown to agents, and a secret of digits is still the secret."""
    if isinstance(value, str):
        return "an empty value"
    if isinstance(value, list | tuple | dict):
        kind = "a list" if isinstance(value, list | tuple) else "a mapping"
        return f"{kind} (not shown: it may be the secret)"
    kind = (
        "true or false"
        if isinstance(value, bool)
        else "a number"
        if isinstance(value, int | float)
        else f"a {type(value).__name__}"  # 2024-01-01: a date
    )
    return (
        f"what YAML reads as {kind} (not shown: it may be the secret); "
        "put it in quotes to keep it as text"
    )


def _to_path(value: Any, key: str, origin: str) -> Path:
    """A path setting; a leading ``~`` is the home folder, as given in a file, a variable or
    an option (``--db '~/x.db'`` in an agent config's ``args``: no shell expands it)."""
    if isinstance(value, Path):
        return value.expanduser()
    return Path(_to_str(value, key, origin)).expanduser()


_SCALARS: dict[Any, Any] = {
    int: _to_int,
    float: _to_float,
    bool: _to_bool,
    str: _to_str,
    Path: _to_path,
}
