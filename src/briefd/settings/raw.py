"""The raw settings mapping, before it is checked and typed (:mod:`briefd.settings.convert`):
the YAML file, with its relative paths made relative to it, a git URL as ``source``, and the
``BRIEFD_*`` environment variables (``BRIEFD_SEARCH__TOP_K=12`` sets ``search.top_k``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from briefd.errors import ConfigError

ENV_PREFIX = "BRIEFD_"
# BRIEFD_* variables that are not settings keys.
ENV_NOT_SETTINGS = frozenset({"BRIEFD_CONFIG", "BRIEFD_API_TOKEN"})


def read_file(path: Path, named_by: str | None = None, tuned: str | None = None) -> dict[str, Any]:
    """The settings in ``path``; ``named_by``: the variable that named it (``BRIEFD_CONFIG``,
    set in a shell long ago: an unreadable file says where its path came from); ``tuned``:
    what an unreadable tuned file (``briefd search --config``) is, not a config file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        if tuned is not None:
            raise ConfigError(f"cannot read tuned file {path}: {exc.strerror} ({tuned})") from None
        if named_by is not None:
            raise ConfigError(
                f"cannot read config file {path}, which {named_by} names: {exc.strerror}; "
                f"fix {named_by} or unset it"
            ) from None
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    named = f" (named by {named_by})" if named_by is not None else ""
    problem = not_a_text_file(raw)
    if problem is not None:
        raise ConfigError(f"{path}{named}: {problem}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}{named}: not UTF-8 text; save it as UTF-8") from None
    import yaml  # here, not at the top: a hook without a config file never needs it

    try:
        data = yaml.load(text, strict_loader()) if text.strip() else {}  # a SafeLoader
    except DuplicateKeyError as exc:
        raise ConfigError(
            f"{path}: key '{exc.key}' appears twice (lines {exc.first} and {exc.second}): YAML "
            "would keep only the second; merge them into one"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML{_not_valid(exc, text)}") from None
    line = _unused_anchor(text)
    if line is not None:
        said, fix = _read_as("anchor")
        raise ConfigError(f"{path}: line {line} holds {said}{fix}")
    if data is None:  # comments only (every setting commented out): the defaults
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level")
    return data


def _unused_anchor(text: str) -> int | None:
    """The line of a value YAML read as an anchor that nothing uses, or None: a secret that
    starts with '&' (``webhook_secret: &Xk9…``) became the anchor's name, and the value it
    named was null (the webhook turned off, every delivery answered 401) or the text after a
    space, with no word said."""
    if "&" not in text:
        return None
    import yaml

    anchors: dict[str, int] = {}
    used = set()
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            used.add(event.anchor)
        elif isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
            mark = event.start_mark
            anchors.setdefault(event.anchor, mark.line + 1 if mark is not None else 0)
    lines = [line for anchor, line in anchors.items() if anchor not in used]
    return min(lines) if lines else None


def not_a_text_file(raw: bytes) -> str | None:
    """Why ``raw`` cannot be a YAML settings file, or None: an index given where its settings
    go (``--config .briefd/briefd.db``) was told "not UTF-8 text; save it as UTF-8", and
    UTF-16 text (Windows PowerShell's ``>``) "not valid YAML; fix the syntax"."""
    if raw.startswith(b"SQLite format 3\x00"):
        return (
            "an SQLite database (a briefd index?), not a settings file; an index is named by "
            "--db (or BRIEFD_DB, or 'db:' in the settings), a settings file by --config"
        )
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 text (as Windows PowerShell's '>' writes it); save it as UTF-8"
    if b"\x00" in raw:
        return "a binary file (it holds NUL bytes), not a YAML settings file"
    return None


SYNTAX = "; fix the syntax"


def _not_valid(exc: Exception, text: str) -> str:
    """Where and why ``text`` is not valid YAML, and what to do, after "not valid YAML"."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    fix = yaml_fix(exc, text)
    problem = getattr(exc, "problem", None)  # what the reader found, in its words
    unquoted = _unshown_value(problem)
    if unquoted is not None:
        return f"{where} ({unquoted[0]}){unquoted[1]}"
    if not problem or fix != SYNTAX:  # a tab is named in words of its own
        return where + fix
    context = getattr(exc, "context", None)
    if problem.startswith("but ") and context:  # "but found another document" alone
        problem = f"{context}, {problem}"
    if "another document" in problem:
        fix = "; a settings file is one document: remove that '---' and merge what follows it"
    elif problem.startswith("expected <block end>"):  # YAML's words for a stray indentation
        fix = "; that line is indented as no key above it: line it up with its section's keys"
    elif problem == "mapping values are not allowed here":  # a ': ' where no key can be
        fix = (
            "; a value that holds ': ' goes in quotes, and a key is indented as its section's "
            "other keys, not under the value above it"
        )
    return f"{where} ({problem}){fix}"


# what YAML reads a plain value that starts with one of these characters as; its words quote
# the rest of the value ("found undefined alias 'Xk9…'"), a password's or secret's
_READ_AS = {"alias": ("*", "an alias"), "tag": ("!", "a tag"), "anchor": ("&", "an anchor")}
_QUOTING = re.compile(r"\b(alias|tag|anchor)\b[^']*'")


def _unshown_value(problem: object) -> tuple[str, str] | None:
    """(what the reader found, what to do) for a YAML error whose words would show a value
    of the file (``webhook_secret: *Xk9…`` was "found undefined alias 'Xk9…'", a ``!…`` one
    "could not determine a constructor for the tag '!Xk9…'"), said without it; None for
    any other error."""
    found = _QUOTING.search(problem) if isinstance(problem, str) else None
    return None if found is None else _read_as(found.group(1))


def _read_as(kind: str) -> tuple[str, str]:
    """(what the reader found, what to do) for a value YAML read as ``kind`` (an alias, a
    tag, an anchor), said without the value."""
    start, read_as = _READ_AS[kind]
    return (
        f"a value that starts with '{start}', which YAML reads as {read_as}; not shown, as it "
        "may be a secret",
        f"; put that value in quotes ('{start}…')",
    )


def yaml_fix(exc: Exception, text: str, otherwise: str = SYNTAX) -> str:
    """What to do about a YAML error in ``text``, after its line: a tab where the reader
    stopped (an editor shows it as spaces, so the line looks right) is named, YAML taking none
    to indent or after a ``:``."""
    mark = getattr(exc, "problem_mark", None)
    lines = text.splitlines()
    row, column = (mark.line, mark.column) if mark is not None else (len(lines), 0)
    if row < len(lines) and lines[row][column : column + 1] == "\t":
        return ": a tab, which YAML does not take there; use spaces"
    return otherwise


class DuplicateKeyError(Exception):
    """A key given twice in one YAML mapping, at lines ``first`` and ``second``."""

    def __init__(self, key: object, first: int, second: int) -> None:
        super().__init__(f"key '{key}' appears twice (lines {first} and {second})")
        self.key, self.first, self.second = key, first, second


def strict_loader() -> Any:
    """YAML's safe loader, refusing a key given twice in one mapping (:class:`DuplicateKeyError`):
    YAML keeps the last silently, so a second ``search:`` section would drop the first one's
    settings, and a golden query missing its ``- `` would replace the one before it."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # ``<<: *base``: the loader merges it, the keys written here win
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, str | int | float | bool):
                    continue  # a list as a key: the loader refuses it, with its line
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise DuplicateKeyError(key, seen[key], line)
                seen[key] = line
            return super().construct_mapping(node, deep=deep)

    return Loader


_PATH_KEYS = (
    ("source",),
    ("db",),
    ("embeddings", "model_dir"),
    ("eval", "cache_dir"),
    ("code", "checkout_dir"),
    ("sync", "checkout_dir"),
)


def relative_paths(data: dict[str, Any], base: Path) -> None:
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
            and not Path(value).expanduser().is_absolute()  # ~/kb is the user's, not the file's
            and not is_git_url(value)
        ):
            section[key] = str(base / value)
    _relative_code_repos(data, base)


def _relative_code_repos(data: dict[str, Any], base: Path) -> None:
    """A local ``code.repos`` entry is relative to the file too (a git URL is left alone)."""
    code = data.get("code")
    repos = code.get("repos") if isinstance(code, dict) else None
    if isinstance(code, dict) and isinstance(repos, str):  # ``repos: ../app``: a list of one
        repos = code["repos"] = split_list(repos)
    if not isinstance(repos, list):
        return
    for i, repo in enumerate(repos):
        entry = repo.get("source") if isinstance(repo, dict) else repo
        if not isinstance(entry, str) or not entry or is_git_url(entry):
            continue
        if not Path(entry).expanduser().is_absolute():
            placed = str(base / entry)
            repos[i] = {**repo, "source": placed} if isinstance(repo, dict) else placed


def split_list(text: str) -> list[str]:
    """The entries of a list written as text: ``drafts/**, private/**``."""
    return [v.strip() for v in text.split(",") if v.strip()]


def is_git_url(value: str) -> bool:
    """``https://…``, ``ssh://…``, ``file://…`` or scp-like ``git@host:owner/repo.git``."""
    return _GIT_URL.match(value) is not None


_GIT_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[\w.-]+@[\w.-]+:)")


def git_source(data: dict[str, Any]) -> dict[str, Any]:
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


def env_name(dotted: str) -> str:
    return ENV_PREFIX + dotted.replace(".", "__").upper()


def env_items(env: Mapping[str, str]) -> list[tuple[str, str]]:
    items = []
    for name, value in sorted(env.items()):
        if not name.startswith(ENV_PREFIX) or name in ENV_NOT_SETTINGS:
            continue
        dotted = name[len(ENV_PREFIX) :].lower().replace("__", ".")
        items.append((dotted, value))
    return items


def set_dotted(data: dict[str, Any], dotted: str, value: Any, origin: str) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        if node.get(part) is None:  # absent, or a section left empty in the file
            node[part] = {}
        child = node[part]
        if not isinstance(child, dict):
            raise ConfigError(f"{origin}: '{part}' is a section, not a value")
        node = child
    node[parts[-1]] = value


_INT = re.compile(r"0|[1-9][0-9]*")


def parse_env_value(raw: str, dotted: str = "") -> Any:
    """A ``BRIEFD_*`` value (of the setting ``dotted``) as YAML reads it. Plain numbers,
    ``true``/``false``, absolute paths and http(s) URLs are read without YAML (the same result,
    without its ~15 ms import on the hook's path); anything else goes to YAML. Text YAML cannot
    read is taken as it is, but for a list or mapping left open (``["drafts/**"``): taken as
    text, a list setting read it as one glob that matched nothing, so it is refused (text
    opening a bracket YAML reads otherwise, such as the IPv6 host ``[::1]``, stays text)."""
    text = raw.strip()
    if text in ("true", "false"):
        return text == "true"
    if _INT.fullmatch(text):
        return int(text)
    special = ": " in text or " #" in text or text.endswith(":")
    if text.startswith(("/", "http://", "https://")) and not special:
        return text
    import yaml

    try:
        return yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError as exc:
        problem = str(getattr(exc, "problem", None) or "")
        left_open = "stream end" in problem or "end of stream" in problem
        if not (text.startswith(("[", "{")) and left_open):  # [::1], an IPv6 host, stays text
            return raw
        mark = getattr(exc, "problem_mark", None)
        where = f" at column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(
            f"environment variable {env_name(dotted)}: {dotted}: {raw!r} is not valid YAML{where} "
            f'({problem}); close its brackets and quotes (a list: ["drafts/**", "private/**"])'
        ) from None
