"""Which folders of a knowledge source are scopes (K1): the ``scopes:`` rules of briefd.yaml,
today's layout (``domain/``, ``conventions/``, ``projects/<name>/``) by default. Pure.

A rule's ``folder`` is a glob over folder paths relative to the knowledge root: ``*`` matches
one folder name, ``**`` any number of them, ``.`` the root itself. A file belongs to the
first rule with a folder above it that matches (the shallowest such folder), and its scope is
the rule's ``scope`` or, without one, that folder's path (``projects/*`` gives
``projects/payments``).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from os.path import normpath
from pathlib import PurePath

from briefd.settings import ScopeRule, Settings

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the recall hook imports this module
if TYPE_CHECKING:
    from briefd.model import IndexReport

ROOT = "."
OUTSIDE = "outside every scope"  # how a skipped file's reason starts when no scope takes it


@dataclass(frozen=True, slots=True)
class Layout:
    rules: tuple[ScopeRule, ...]

    @classmethod
    def of(cls, settings: Settings) -> Layout:
        return cls(settings.scopes)

    def scope_of(self, path: str) -> str | None:
        """The scope of the file at ``path`` (POSIX, relative to the root), or None."""
        folders = path.split("/")[:-1]
        prefixes = [ROOT] + ["/".join(folders[: n + 1]) for n in range(len(folders))]
        for rule in self.rules:
            pattern = rule.folder.strip("/")
            for prefix in prefixes:
                if folder_matches(pattern, prefix):
                    return rule.scope or prefix
        return None

    def folders(self) -> str:
        """The folders looked in, for messages: ``domain/, conventions/, projects/*/``."""
        return ", ".join(_shown(rule.folder) for rule in self.rules)

    def outside(self, path: str = "") -> str:
        """Why the file at ``path``, outside every scope, is not served (a skipped file's
        reason): with the folder of it a scope names in other letter case, if there is one,
        or the scope folder its name is one letter or two off (``domian/``)."""
        case = self.case_only(path) or self.misspelt(path)
        return f"{self._outside_start()}{case or ADD_FOLDER}"

    def misspelt(self, path: str) -> str | None:
        """The scope folder a folder of ``path`` would be in with one name spelt as a rule
        spells it (``domian/`` or ``domains/`` for ``domain``, ``projets/a`` for
        ``projects/*``): names compared only where the rule writes one out, no glob."""
        parts = path.split("/")[:-1]
        for rule in self.rules:
            names = rule.folder.strip("/").split("/")
            if "**" in names or names == [ROOT] or len(parts) < len(names):
                continue
            for at, name in enumerate(names):
                near = _near(parts[at], name)
                if near and folder_matches(rule.folder.strip("/"), _respelt(parts, names, at)):
                    where = "/".join(parts[: at + 1])
                    meant = "/".join([*parts[:at], name])
                    return (
                        f"{where}/ is close to the scope folder {_shown(rule.folder)} (a typo?): "
                        f"if so, rename it to {meant}/; else {ADD_FOLDER}"
                    )
        return None

    def is_outside(self, reason: str) -> bool:
        """``reason`` is one :meth:`outside` gives (for any file)."""
        return reason.startswith(self._outside_start())

    def case_only(self, path: str) -> str | None:
        """What differs, when the file at ``path`` would be in a scope if folder names were
        compared without letter case and the spaces around them (``Projects/`` for
        ``projects/*``, ``domain /`` for ``domain``): git and briefd compare them exactly, so
        a folder renamed to ``Projects/`` or ``domain /`` leaves every scope."""
        folders = path.split("/")[:-1]
        prefixes = ["/".join(folders[: n + 1]) for n in range(len(folders))]
        for rule in self.rules:
            pattern = rule.folder.strip("/")
            for prefix in prefixes if pattern != ROOT else []:
                if folder_matches(_loose(pattern), _loose(prefix)):
                    return _case_differs(pattern, prefix)
        return None

    def _outside_start(self) -> str:
        return f"{OUTSIDE} ({self.folders()}); not served: "


ADD_FOLDER = "add its folder to 'scopes' in briefd.yaml"


def _near(folder: str, name: str) -> bool:
    """``folder`` is the literal folder name ``name`` misspelt: other, but as long give or take
    two letters, and mostly the same letters (``domian``, ``domains``)."""
    if folder == name or any(c in name for c in "*?[") or len(name) < 4:
        return False
    from difflib import SequenceMatcher  # here: the recall hook imports this module

    return abs(len(folder) - len(name)) <= 2 and SequenceMatcher(None, folder, name).ratio() >= 0.8


def _respelt(parts: Sequence[str], names: Sequence[str], at: int) -> str:
    """The first ``len(names)`` folder names of ``parts`` with the one at ``at`` as written."""
    return "/".join([*parts[:at], names[at], *parts[at + 1 : len(names)]])


def _loose(folder: str) -> str:
    """``folder`` as :meth:`Layout.case_only` compares it: without letter case, nor the spaces
    around each folder name."""
    return "/".join(name.strip().casefold() for name in folder.split("/"))


def _case_differs(pattern: str, folder: str) -> str:
    """How ``folder`` differs from the rule folder ``pattern`` it matches without letter case
    and spaces around names: from its first folder no match of the pattern starts with
    (``Projects/``; ``'domain /'``, quoted, as a space at a name's end shows none)."""
    names, parts = pattern.split("/"), folder.split("/")
    depth = next((d for d in range(1, len(parts) + 1) if not _starts(names, parts[:d])), len(parts))
    spaced = any(part != part.strip() for part in parts)
    shown = "/".join(parts[:depth])
    named = names[depth - 1] if "**" not in names and depth <= len(names) else "*"
    fix = "name that folder as it is in 'scopes' in briefd.yaml"
    if spaced:
        cased = not folder_matches(pattern, "/".join(part.strip() for part in parts))
        how = "letter case and the spaces around a name" if cased else "spaces around a name"
        if not any(c in named for c in "*?["):
            fix = f"rename it to {'/'.join([*parts[: depth - 1], named])}/"
        return (
            f"'{shown}/' differs from the scope folder {_shown(pattern)} only in {how}, and "
            f"folder names must match exactly: {fix}"
        )
    if not any(c in named for c in "*?["):
        written = "/".join([*names[: depth - 1], parts[depth - 1], *names[depth:]])
        fix = (
            f"rename it to {'/'.join([*parts[: depth - 1], named])}/, or write the scope "
            f"folder as {written} in briefd.yaml"
        )
    return (
        f"{shown}/ differs from the scope folder {_shown(pattern)} only in letter case, and "
        f"folder names must match exactly: {fix}"
    )


def _starts(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    """Some folder the glob ``pattern`` matches starts with the names ``parts``."""
    if not parts:
        return True
    if not pattern:
        return False
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_starts(rest, parts[n:]) for n in range(len(parts) + 1))
    return fnmatchcase(parts[0], head) and _starts(rest, parts[1:])


# why a committed document a sparse checkout leaves out is skipped (briefd.sources.scan)
NOT_CHECKED_OUT = (
    "committed, but outside this sparse checkout's folders (git sparse-checkout), so not on "
    "disk and not served; `git sparse-checkout add <folder>` (or `git sparse-checkout "
    "disable`) checks it out"
)


def nothing_indexed(report: IndexReport, settings: Settings) -> str:
    """Why a run indexed no document, and the setting to change."""
    return nothing_found(report.source, [(s.path, s.reason) for s in report.skipped], settings)


def nothing_found(source: str, skipped: Sequence[tuple[str, str]], settings: Settings) -> str:
    """:func:`nothing_indexed` from a stored report: its source and its skipped files (path,
    reason), as the dashboard reads them."""
    layout = Layout.of(settings)
    outside = [path for path, reason in skipped if layout.is_outside(reason)]
    looked = f"looked for {', '.join(settings.index.include)} in {layout.folders()}"
    sparse = sum(reason == NOT_CHECKED_OUT for _, reason in skipped)
    if sparse and not outside:
        return (
            f"indexed 0 documents from {source}: its commit's documents ({sparse}) are outside "
            "this sparse checkout's folders (git sparse-checkout), not on disk; `git "
            "sparse-checkout add <folder>` (or `git sparse-checkout disable`) checks them out"
        )
    if not outside:
        return (
            f"indexed 0 documents from {source}: briefd {looked} and found none; check the "
            "source path, index.include / index.exclude and the 'scopes' setting in briefd.yaml"
        )
    folders = Counter(p.split("/", 1)[0] for p in outside if "/" in p)
    example = "{folder: ., scope: docs, default: true}"
    if folders:
        example = f"{{folder: {folders.most_common(1)[0][0]}, default: true}}"
    if cased := next((r for _, r in skipped if layout.is_outside(r) and ADD_FOLDER not in r), ""):
        return (
            f"indexed 0 documents from {source}: briefd {looked}, and "
            f"{cased.removeprefix(layout.outside('').removesuffix(ADD_FOLDER))}"
        )
    listed = ", ".join(outside[:3]) + (", …" if len(outside) > 3 else "")
    found = (
        "the file it found is" if len(outside) == 1 else f"the {len(outside)} files it found are"
    )
    fix = misplaced_source(source, outside, settings) or (
        f"map their folders to scopes with 'scopes' in briefd.yaml, e.g. scopes: [{example}]"
    )
    return (
        f"indexed 0 documents from {source}: briefd {looked}, and {found} outside those "
        f"folders ({listed}); {fix}"
    )


def misplaced_source(source: str, outside: Sequence[str], settings: Settings) -> str | None:
    """What to give as the source when it is a scope folder itself (``kb/domain``: its files
    are ``domain/…`` from the folder above) or the folder above the knowledge (``.`` where the
    files are ``knowledge/domain/…``), as the files outside every scope show; None when they
    show neither. A rule's folder counts as written out only (``projects`` of ``projects/*``,
    not a glob), so a source kept in ``~/projects/`` is not taken for a scope folder."""
    layout = Layout.of(settings)
    path = PurePath(source)
    for rule in settings.scopes:
        literal = _literal(rule.folder)
        if not literal or path.parts[-len(literal) :] != literal:
            continue
        if any(layout.scope_of("/".join([*literal, p])) for p in outside):
            above = normpath(path.parents[len(literal) - 1])  # sub/../kb: kb
            return (
                f"{source} is itself the folder {_shown('/'.join(literal))} of the scopes: "
                f"give the folder that holds it ({above}) as the source (--source, or source: "
                "in briefd.yaml)"
            )
    held = Counter(
        "/".join(p.split("/")[:depth])
        for depth in (1, 2)
        for p in outside
        if p.count("/") > depth and layout.scope_of(p.split("/", depth)[depth])
    )
    if not held:
        return None
    inside = held.most_common(1)[0][0]
    if settings.sync.remote:  # a git URL source: its clone's root is the source
        return (
            f"the folders of the scopes are inside {inside}/ of the repository: write them with "
            f"{inside}/ in front in 'scopes' in briefd.yaml{_example(inside, settings)}"
        )
    given = normpath(path / inside)
    return (
        f"the folders of the scopes are inside {inside}/: give it ({given}) as the source "
        "(--source, or source: in briefd.yaml)"
    )


def _example(inside: str, settings: Settings) -> str:
    """A rule of ``settings`` written with ``inside/`` in front, for a message (a rule whose
    folder is a glob would name its scopes with ``inside/`` too: none is shown)."""
    rule = next((r for r in settings.scopes if "/".join(_literal(r.folder)) == r.folder), None)
    if rule is None:
        return ""
    named = f"folder: {inside}/{rule.folder}, scope: {rule.scope or rule.folder}"
    return f", e.g. scopes: [{{{named}{', default: true' if rule.default else ''}}}]"


def _literal(folder: str) -> tuple[str, ...]:
    """The folder names a rule's ``folder`` writes out before any glob (``projects`` of
    ``projects/*``; none of ``**/adr`` or ``.``)."""
    names = []
    for name in folder.strip("/").split("/"):
        if name in ("", ROOT) or any(c in name for c in "*?["):
            break
        names.append(name)
    return tuple(names)


def folder_matches(pattern: str, folder: str) -> bool:
    """``folder`` (a path like ``projects/a``, or ``.``) matches the folder glob ``pattern``;
    both compare composed (NFC): a folder a macOS copy names decomposed (``o`` + U+0308) is
    the ``ekipler/ödeme`` a rule names."""
    if pattern == ROOT or folder == ROOT:
        return pattern == folder
    composed = unicodedata.normalize("NFC", folder)
    return _match(unicodedata.normalize("NFC", pattern).split("/"), composed.split("/"))


def _match(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(rest, parts[n:]) for n in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _match(rest, parts[1:])


def in_scopes(scope: str, patterns: Sequence[str]) -> bool:
    """``scope`` is one of ``patterns`` (scope names, or folder globs of unnamed rules)."""
    return any(scope == p or folder_matches(p, scope) for p in patterns)


def _shown(folder: str) -> str:
    folder = folder.strip("/")
    return "the root folder" if folder == ROOT else folder + "/"
