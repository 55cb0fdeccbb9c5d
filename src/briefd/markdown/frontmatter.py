"""Front matter (K2): recognised keys, bad YAML reported and never fatal. YAML between
``---`` lines, and as Hugo also writes it: TOML between ``+++`` lines, or a JSON object that
opens the file.

Besides ``title``, ``tags``, ``aliases`` and ``refs``: the relations of :data:`RELATIONS`
(``depends_on: [domain/fees.md]``, ``parent: payment-lifecycle``; a path, a file name or a
``[[wikilink]]``), stored as links of kind ``relation``, and ``always: true`` (B8)."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from typing import Any

import pathspec
import yaml
from rapidfuzz import process
from rapidfuzz.distance import OSA

from briefd.model import FrontMatter
from briefd.text import without_controls

RELATIONS = ("depends_on", "parent", "extends", "implements", "supersedes", "related")
# keys as they are also written (another case, ``-`` or camelCase, a singular) → the key read
_LIKE = {
    **{key: key for key in ("title", "tags", "aliases", "refs", "always", *RELATIONS)},
    "tag": "tags",
    "alias": "aliases",
    "ref": "refs",
    "depends": "depends_on",
    "depend_on": "depends_on",
    "parents": "parent",
}
_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(---|\.\.\.)[ \t]*\r?$", re.MULTILINE)


class _Loader(yaml.SafeLoader):
    """YAML as front matter is written: a plain scalar is the text it reads as, except
    ``true``/``false`` and ``null``/``~``. The YAML 1.1 reading of safe_load made ``title: No``
    the title "False", ``title: 2024-01-05`` a date it refused and ``tags: [1.10]`` the tag "1.1".

    A key written twice in one mapping (``tags:`` twice) keeps the second, as YAML loaders do,
    and is noted in :attr:`twice` (YAML forbids it, and the first value is lost silently)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.twice: list[str] = []

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[str, int] = {}
        for key_node, _ in node.value:  # as written: before ``<<`` merges are flattened in
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE:
                line = key_node.start_mark.line + 2  # the file's line: '---' is line 1
                if key_node.value in seen:
                    self.twice.append(_TWICE.format(key_node.value, seen[key_node.value], line))
                seen[key_node.value] = line
        return super().construct_mapping(node, deep=deep)


_MERGE = "tag:yaml.org,2002:merge"
_TWICE = (
    "front matter key '{}' appears twice (lines {} and {}): YAML keeps only the second; "
    "merge them into one"
)


_Loader.yaml_implicit_resolvers = {}  # its own table, without YAML 1.1's readings
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_Loader.add_implicit_resolver(_MERGE, re.compile(r"^(?:<<)$"), ["<"])
_SWITCHES = {"yes": True, "on": True, "true": True, "no": False, "off": False, "false": False}


@dataclass(frozen=True, slots=True)
class SplitDocument:
    front_matter: FrontMatter
    raw: dict[str, Any]
    body: str
    body_start_line: int  # 1-based line number of the body's first line in the file
    problems: tuple[str, ...]


def split_front_matter(text: str) -> SplitDocument:
    """Separate the front matter from the body; problems are described, never raised."""
    opening = _OPEN.match(text)
    if opening is None:
        return _hugo_front_matter(text) or SplitDocument(FrontMatter(), {}, text, 1, ())
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        problem = "front matter has no closing '---' line; indexed as plain Markdown"
        return SplitDocument(FrontMatter(), {}, text, 1, (problem,))
    yaml_text = text[opening.end() : closing.start()]
    body_offset = closing.end() + 1 if closing.end() < len(text) else closing.end()
    body_start_line = _body_start(text, body_offset)
    body = text[body_offset:]
    raw, unreadable, twice = _load(yaml_text)
    if unreadable is not None:
        return SplitDocument(FrontMatter(), {}, body, body_start_line, (unreadable,))
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):  # no keys (a '---' rule above prose or a list): all text
        return SplitDocument(FrontMatter(), {}, text, 1, (_not_a_mapping(raw),))
    front_matter, problems = _recognise(raw)
    misread = _misspelt(raw) + _commented(yaml_text, raw)
    return SplitDocument(front_matter, raw, body, body_start_line, twice + problems + misread)


_TOML_OPEN = re.compile(r"\A\+\+\+[ \t]*\r?\n")
_TOML_CLOSE = re.compile(r"^\+\+\+[ \t]*\r?$", re.MULTILINE)
# '{', then a key or '}' on its line or the next: one object on one line is front matter too
_JSON_OPEN = re.compile(r'\A\{[ \t]*(?:\r?\n[ \t]*)?(?:"|\})')
_TOML_LINE = re.compile(r"\bline (\d+)")
_LINE_END = re.compile(r"[ \t]*(?:\r?\n|\Z)")


def _hugo_front_matter(text: str) -> SplitDocument | None:
    """Front matter as Hugo (and other static site generators) also write it: TOML between
    ``+++`` lines, or a JSON object that opens the file (None: neither). Read as text, the
    block was a section of its own and its title, tags and relations were lost unsaid."""
    if opening := _TOML_OPEN.match(text):
        closing = _TOML_CLOSE.search(text, opening.end())
        if closing is None:
            problem = "front matter has no closing '+++' line; indexed as plain Markdown"
            return SplitDocument(FrontMatter(), {}, text, 1, (problem,))
        body_offset = closing.end() + 1 if closing.end() < len(text) else closing.end()
        try:
            raw: Any = tomllib.loads(text[opening.end() : closing.start()])
        except (tomllib.TOMLDecodeError, RecursionError) as exc:  # lines of the file: +1
            said = _TOML_LINE.sub(lambda m: f"line {int(m.group(1)) + 1}", str(exc))
            raw = f"front matter is not valid TOML ({said}); indexed without front matter"
    elif _JSON_OPEN.match(text):
        try:
            raw, end = json.JSONDecoder().raw_decode(text)
        except (ValueError, RecursionError) as exc:
            problem = f"front matter is not valid JSON ({exc}); indexed as plain Markdown"
            return SplitDocument(FrontMatter(), {}, text, 1, (problem,))
        if (after := _LINE_END.match(text, end)) is None:
            problem = (
                "front matter's closing '}' is not alone on its line; indexed as plain Markdown"
            )
            return SplitDocument(FrontMatter(), {}, text, 1, (problem,))
        body_offset = after.end()
    else:
        return None
    body, body_start_line = text[body_offset:], _body_start(text, body_offset)
    if isinstance(raw, str):  # why it could not be read
        return SplitDocument(FrontMatter(), {}, body, body_start_line, (raw,))
    front_matter, problems = _recognise(raw)
    return SplitDocument(front_matter, raw, body, body_start_line, problems + _misspelt(raw))


def _body_start(text: str, body_offset: int) -> int:
    """The line of the file the body starts on: after the closing line, also when that line
    ends the file without a line break (the closing '---' was the body's first line)."""
    ended = body_offset == len(text) and not text.endswith("\n")
    return text.count("\n", 0, body_offset) + 1 + ended


NOT_KEYS = "front matter is not a mapping of keys"  # then the block is the document's text


def _not_a_mapping(raw: object) -> str:
    """Why the block between the opening '---' and the next is read as Markdown text: YAML
    reads no ``key: value`` lines in it (text, or a list, under a '---' rule)."""
    kind = "a list" if isinstance(raw, list) else "text"
    return (
        f"{NOT_KEYS} (YAML reads {kind} there, no `key: value` "
        "lines); indexed as plain Markdown, those lines as text: write front matter as "
        "`key: value` lines, or put a blank line above a '---' rule that starts the file"
    )


_KEY_LINE = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(#\S.*))?[ \t]*$")
_ITEM_COMMENT = re.compile(r"^[ \t]+-[ \t]+(#\S.*?)[ \t]*$")


def _commented(yaml_text: str, raw: dict[Any, Any]) -> tuple[str, ...]:
    """A read key whose value, or a list item of it, starts with ``#`` (``tags: #payments``,
    ``- #refunds``): YAML reads a comment there, so the tag, alias or title was lost without a
    word."""
    problems: list[str] = []
    key = None
    for line in yaml_text.split("\n"):
        line = line.rstrip("\r")
        if match := _KEY_LINE.match(line):
            key, written, item = match.group(1), match.group(2), False
            lost = raw.get(key, "") is None
        elif (listed := _ITEM_COMMENT.match(line)) is not None and key is not None:
            written, item = listed.group(1), True
            lost = isinstance(raw.get(key), list) and None in raw[key]
        else:
            if line[:1] not in ("", " ", "\t", "#"):
                key = None  # another kind of line at the top level
            continue
        if written and lost and key in _LIKE.values() and key != "always":
            problems.append(_COMMENTED.format(key, written, _unhashed(key, written, item)))
    return tuple(problems)


_COMMENTED = "front matter '{}': '{}' is a YAML comment, so nothing was read from it; {}"


def _unhashed(key: str, written: str, item: bool) -> str:
    """How to write a value YAML took for a comment: a title or an alias quoted, a tag, a
    glob or a relation's target without its ``#`` (quoted, it would still be no tag)."""
    if key in ("title", "aliases"):
        return f'quote it: "{written}"'
    names = [word.lstrip("#") for word in written.split()] if key == "tags" else [written[1:]]
    shown = f"- {names[0]}" if item and len(names) == 1 else f"{key}: [{', '.join(names)}]"
    return f"write it without '#': {shown}"


def _misspelt(raw: dict[Any, Any]) -> tuple[str, ...]:
    """The keys briefd does not read that are written like one it does (``depends-on``,
    ``Tags``, ``tag``, or one typo away: ``titel``, ``aliasses``, ``tgas``): without a word, the
    title, relation or tag their author meant was missing."""
    problems = []
    for key in raw:
        if not isinstance(key, str) or key in _LIKE.values():
            continue
        shape = re.sub(r"[\s-]+", "_", re.sub(r"(?<=[a-z])(?=[A-Z])", "_", key.strip())).lower()
        meant = _LIKE.get(shape) or _typo_of(shape)
        if meant is not None and meant not in raw:
            problems.append(f"front matter key '{key}' is not read; write it '{meant}'")
    return tuple(problems)


def _typo_of(shape: str) -> str | None:
    """The key read that ``shape`` is one typo away from (a letter left out, added, changed or
    two swapped; two in a key of 8 letters or more), or None. Shorter keys are a team's own
    more often than a typo (``ref`` and ``tag`` are in :data:`_LIKE`)."""
    if len(shape) < 4:
        return None
    edits = 1 if len(shape) < 8 else 2
    found = process.extractOne(shape, _LIKE, scorer=OSA.distance, score_cutoff=edits)
    return None if found is None else _LIKE[found[0]]


def _load(yaml_text: str) -> tuple[Any, str | None, tuple[str, ...]]:
    """The YAML's value, or why it cannot be read (then the value is None), and the keys
    written twice."""
    hint = ""
    if not yaml_text.strip():
        return {}, None, ()
    loader = _Loader(yaml_text)
    try:
        return loader.get_single_data(), None, tuple(loader.twice)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or "syntax error"
        if "[[" in yaml_text:
            hint = '; quote wikilinks in a list: related: ["[[a]]", "[[b]]"]'
    except ValueError as exc:  # a date that does not exist (2024-02-30), a 5,000-digit number
        where, reason = "", str(exc)
    except RecursionError:
        where, reason = "", "nested too deeply"
    finally:
        loader.dispose()
    return (
        None,
        f"front matter is not valid YAML{where} ({reason}); indexed without front matter{hint}",
        (),
    )


def _recognise(raw: dict[str, Any]) -> tuple[FrontMatter, tuple[str, ...]]:
    problems: list[str] = []
    title = raw.get("title")
    title = str(title).lower() if isinstance(title, bool) else title  # as written: true
    if title is not None and not isinstance(title, str | int | float):
        problems.append("front matter 'title' must be a string; ignored")
        title = None
    title = None if title is None else without_controls(str(title))  # "\e", "\0": YAML's
    lists = {}
    for key in ("tags", "aliases", "refs"):
        value, problem = _string_list(raw.get(key), key)
        lists[key] = value
        if problem:
            problems.append(problem)
    lists["refs"] = tuple(glob for glob in lists["refs"] if not _unusable(glob, problems))
    relations: list[tuple[str, str]] = []
    for key in RELATIONS:
        targets, problem = _string_list(_bare_wikilinks(raw.get(key)), key)
        relations += [(key, t) for t in map(_reference, targets) if t]
        if problem:
            problems.append(problem)
    always = raw.get("always", False)
    always = _SWITCHES.get(always.strip().lower(), always) if isinstance(always, str) else always
    if not isinstance(always, bool):
        problems.append("front matter 'always' must be true or false; ignored")
        always = False
    return (
        FrontMatter(
            title=title.strip() or None if title is not None else None,
            tags=lists["tags"],
            aliases=lists["aliases"],
            refs=lists["refs"],
            relations=tuple(relations),
            always=always,
        ),
        tuple(problems),
    )


def _unusable(glob: str, problems: list[str]) -> bool:
    """Whether the ``refs`` entry ``glob`` is no glob gitignore's rules can read (a lone ``!``,
    a Windows path ending in ``\\``), noted in ``problems``: used, it stopped every index
    run's drift check and every search or bundle given ``paths`` with a traceback."""
    try:
        pathspec.PathSpec.from_lines("gitignore", [glob], backend="simple")  # as scan reads it
    except (ValueError, re.error):  # re.error: a range written backwards ([z-a])
        problems.append(
            f"front matter 'refs' entry '{glob}' is not a glob briefd can read; ignored: "
            "separate folders with '/' (src/gateway/**), and put a glob after a '!'"
        )
        return True
    return False


def _bare_wikilinks(value: Any) -> Any:
    """``depends_on: [[glossary]]`` unquoted is YAML for a list in a list (``- [[a]]`` one more
    level): read each such item as the wikilink it was written as. A list that holds itself
    (``depends_on: &a [*a]``, YAML's anchors) stays a list, reported as one."""
    if not isinstance(value, list):
        return value
    items = []
    for item in value:
        seen: set[int] = set()
        while isinstance(item, list) and len(item) == 1 and id(item) not in seen:
            seen.add(id(item))
            item = item[0]
        items.append(item)
    return items


def _reference(value: str) -> str:
    """A relation's target without ``[[…]]`` and a ``|display`` part."""
    inner = value.strip()
    if inner.startswith("[[") and inner.endswith("]]"):
        inner = inner[2:-2]
    return inner.split("|", 1)[0].strip()


def _string_list(value: Any, key: str) -> tuple[tuple[str, ...], str | None]:
    r"""The strings of ``value``, one or a list, without the control characters a quoted YAML
    string may write as escapes (``"\e[31m"``, ``"\0"``): the file's own are out already."""
    if value is None:
        return (), None
    if isinstance(value, str):
        value = value.split(",")
    if isinstance(value, list) and all(isinstance(v, str | int | float | None) for v in value):
        items = (without_controls(str(v)).strip() for v in value if v is not None)
        return tuple(item for item in items if item), None
    return (), f"front matter '{key}' must be a list of strings; ignored"
