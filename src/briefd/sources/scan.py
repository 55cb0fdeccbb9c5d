"""Walk a knowledge source: include/exclude globs, ``.gitignore`` files, scopes (K1, K3).

A symbolic link is followed only to a regular file inside the source that these same rules
would index on its own (included, not excluded, not ignored, in a scope, in no hidden
folder such as ``.git/``): a link to ``../.git/config`` or to an ignored ``.env`` is skipped
with its reason, never read. Links to folders are not followed.
"""

from __future__ import annotations

import errno
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pathspec

from briefd.errors import SourceError
from briefd.model import SkippedFile
from briefd.settings import IndexSettings
from briefd.sources import tracked
from briefd.sources.globs import BACKEND, linear_spec
from briefd.sources.layout import NOT_CHECKED_OUT, Layout

OUTSIDE_SOURCE = (
    "symbolic link to a file outside the knowledge source; not served: move or copy the file "
    "into the knowledge source"
)
LINKED_FOLDER = "symbolic link to a folder; not followed (link the files, or move the folder)"
LINKED_INSIDE = (
    "symbolic link to the folder {target}, which is in the knowledge source; not followed: its "
    "documents are read there (when in a scope), not twice"
)
LINKED_OUTSIDE = (
    "symbolic link to a folder outside the knowledge source ({written}); not followed, nor are "
    "links to its files: move the folder into the knowledge source, or give the folder that "
    "holds both as the source"
)
UNREADABLE_FOLDER = "cannot read this folder"
TOO_LARGE = "larger than index.max_file_bytes"
ABSENT_SUBMODULE = (
    "a git submodule that is not checked out, so its documents are not served: briefd's clone "
    "of a git URL source checks out no submodules (move the documents into this repository); "
    "in a checkout of your own, `git submodule update --init` brings them in"
)
COMMITTED_IGNORED = (
    "committed to the repository, but a .gitignore pattern matches it (or its folder), and "
    "briefd serves no file a .gitignore matches, tracked or not; change that pattern, or move "
    "the file"
)
CONFLICTED = (
    "has unresolved merge conflicts (git's <<<<<<< and >>>>>>> lines are in it); resolve them, "
    "then `git add` it"
)
_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # POSIX path relative to the source root
    abs_path: Path
    size: int
    mtime: float
    scope: str


class Rules:
    """What the scan indexes: include/exclude globs, the ``.gitignore`` file of every folder
    (read once), hidden folders and the scope layout, asked of a path relative to the root.

    A source inside a git work tree (``docs/`` of a code repository) also follows what git
    ignores there from outside it: the ``.gitignore`` of each folder above it up to the work
    tree's top, and the repository's ``info/exclude`` (:attr:`outer` lists those files) —
    unless they ignore the source folder itself, which was then chosen on purpose."""

    def __init__(self, root: Path, index: IndexSettings, layout: Layout) -> None:
        self.root = root
        self.layout = layout
        included = pathspec.PathSpec.from_lines(
            "gitignore", map(_composed, index.include), backend=BACKEND
        )
        excluded = pathspec.PathSpec.from_lines(
            "gitignore", map(_composed, index.exclude), backend=BACKEND
        )
        self._included, self._excluded = linear_spec(included), linear_spec(excluded)
        self._exclude = [_composed(glob) for glob in index.exclude]
        self._ignores: dict[str, pathspec.PathSpec[Any] | None] = {}
        found = _outer_ignores(root)
        self.outer = tuple(path for _, path in found)
        specs = [(prefix, spec) for prefix, path in found if (spec := _read_spec(path))]
        chosen = any(prefix and spec.match_file(prefix) for prefix, spec in specs)
        self._outer = [] if chosen else specs
        self._submodules = _submodules(root)

    def absent_submodule(self, rel_dir: str) -> bool:
        """``rel_dir`` (``a/b/``) is a submodule of the work tree that is not checked out (git
        leaves its folder empty), in a scope and not excluded: documents the team sees there
        on the forge, and briefd does not."""
        if rel_dir not in self._submodules or os.path.lexists(self.root / rel_dir / ".git"):
            return False
        composed = _composed(rel_dir)
        if self._excluded.match_file(composed) or self._ignored(rel_dir):
            return False
        return self.layout.scope_of(rel_dir + "index.md") is not None

    def committed_but_ignored(self, rel: str) -> bool:
        """The file ``rel`` (one git tracks) is a document the scan would index, were it not
        for a ``.gitignore``: included, not excluded, in a scope, under no hidden folder."""
        parts = rel.split("/")
        if any(part.startswith(".") for part in parts[:-1]) or self.layout.scope_of(rel) is None:
            return False
        composed = _composed(rel)
        if not self._included.match_file(composed) or self._excluded.match_file(composed):
            return False
        folders = ["/".join(parts[:depth]) + "/" for depth in range(1, len(parts))]
        return any(self._ignored(folder) for folder in folders) or self._ignored(rel)

    def skips_folder(self, rel_dir: str) -> bool:
        """``rel_dir`` (``a/b/``) is hidden or ignored by a ``.gitignore`` above it."""
        name = rel_dir.rstrip("/").rsplit("/", 1)[-1]
        return name.startswith(".") or self._ignored(rel_dir)

    def selects(self, rel: str) -> bool:
        """The file ``rel`` is included, not excluded and not ignored. The globs and the path
        compare composed (NFC): a folder named decomposed (``s`` + U+0327, as macOS writes
        ``ş``) is the ``domain/şirket/**`` that ``index.exclude`` names."""
        composed = _composed(rel)
        if not self._included.match_file(composed) or self._excluded.match_file(composed):
            return False
        return not self._ignored(rel)

    def left_out(self, rel: str) -> str | None:
        """Why the file ``rel``, which ``index.include`` matches, is left out by
        ``index.exclude`` or a ``.gitignore`` (None: it is not, or it is no document)."""
        composed = _composed(rel)
        if not self._included.match_file(composed):
            return None
        if (found := self._excluded.check_file(composed)).include:
            glob = self._exclude[found.index] if found.index is not None else ""
            return f"left out by index.exclude ({glob!r}); remove that pattern to index it"
        if self._ignored(rel):
            return f"ignored by a .gitignore, and briefd indexes no file git ignores; {IGNORED}"
        return None

    def ignored_documents(self, rel_dir: str, left_out: dict[str, str], budget: list[int]) -> None:
        """Add the documents in ``rel_dir`` (``a/b/``), a folder a ``.gitignore`` ignores (not a
        hidden one), to ``left_out`` with why, as :meth:`left_out` names a file ignored by
        name: links and ``briefd doc`` may name them. At most ``budget[0]`` entries are looked
        at over a scan (an ignored ``node_modules/`` is not walked whole)."""
        name = rel_dir.rstrip("/").rsplit("/", 1)[-1]
        linked = (self.root / rel_dir).is_symlink()  # its files are not the source's
        if name.startswith(".") or linked or not self._ignored(rel_dir):
            return
        why = f"in {_shown(rel_dir)}, {IGNORED_FOLDER}; {IGNORED}"
        for dirpath, dirnames, filenames in os.walk(self.root / rel_dir):
            budget[0] -= len(dirnames) + len(filenames)
            if budget[0] < 0:
                return
            inside = Path(dirpath).relative_to(self.root).as_posix() + "/"
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for file in sorted(filenames):
                rel = inside + file
                composed = _composed(rel)
                if self.layout.scope_of(rel) is None or not self._included.match_file(composed):
                    continue
                if not self._excluded.match_file(composed):
                    left_out[_shown(rel)] = why

    def left_out_anyway(self, rel: str) -> bool:
        """Whether ``index.exclude`` or a ``.gitignore`` leaves the file ``rel`` out, whether or
        not ``index.include`` matches it."""
        return self._excluded.match_file(_composed(rel)) or self._ignored(rel)

    def would_index(self, rel: str) -> str | None:
        """Why the file ``rel`` would not be indexed for itself (None: it would be)."""
        folders = rel.split("/")[:-1]
        for depth in range(1, len(folders) + 1):
            if self.skips_folder("/".join(folders[:depth]) + "/"):
                return "in a hidden or ignored folder"
        if not self.selects(rel):
            return "not included, excluded or ignored by index.include / index.exclude / .gitignore"
        if self.layout.scope_of(rel) is None:
            return "outside every scope"
        return None

    def _ignored(self, rel: str) -> bool:
        """Whether git ignores ``rel``: as git decides, the nearest ignore file with a pattern
        matching it (relative to its folder) does — the ``.gitignore`` of its own folder
        first, up to the root's, then those above the source and ``info/exclude`` — so a
        ``!keep.md`` in ``domain/.gitignore`` takes back what a ``*.md`` above ignores."""
        parts = rel.rstrip("/").split("/")
        bases = ["".join(p + "/" for p in parts[:depth]) for depth in range(len(parts))]
        levels = [(base, self._spec(base)) for base in reversed(bases)]
        for base, spec in levels:
            if (
                spec is not None
                and (found := spec.check_file(rel[len(base) :])).include is not None
            ):
                return bool(found.include)
        for prefix, outer in reversed(self._outer):
            if (found := outer.check_file(prefix + rel)).include is not None:
                return bool(found.include)
        return False

    def _spec(self, base: str) -> pathspec.PathSpec[Any] | None:
        if base not in self._ignores:
            self._ignores[base] = _read_spec(self.root / base / ".gitignore")
        return self._ignores[base]


def _read_spec(path: Path) -> pathspec.PathSpec[Any] | None:
    """The patterns of the ignore file ``path`` (None: there is none, or it cannot be read)."""
    try:
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8-sig", errors="replace")  # a BOM, as git skips it
    except OSError:
        return None
    lines = text.splitlines()
    # a line no pattern (a lone '!', a trailing '\'; a range written backwards, [z-a], which
    # matches nothing in git): skipped, as git skips it (not the whole scan stopped)
    # (linear_spec: an author's glob made to backtrack holds no index run)
    try:
        return linear_spec(pathspec.GitIgnoreSpec.from_lines(lines, backend=BACKEND))
    except (ValueError, re.error):
        readable = [line for line in lines if _readable(line)]
        return linear_spec(pathspec.GitIgnoreSpec.from_lines(readable, backend=BACKEND))


def _readable(line: str) -> bool:
    try:
        linear_spec(pathspec.GitIgnoreSpec.from_lines([line], backend=BACKEND))
    except (ValueError, re.error):
        return False
    return True


def _outer_ignores(root: Path) -> list[tuple[str, Path]]:
    """The ignore files git applies to ``root`` from outside it, each with ``root``'s path
    relative to the folder it speaks for (``docs/``): ``info/exclude`` of the work tree's
    repository, then the ``.gitignore`` of every folder from its top down to ``root``'s parent.
    None outside a work tree."""
    try:
        here = root.resolve()
        top = next((d for d in (here, *here.parents) if os.path.lexists(d / ".git")), None)
        if top is None:
            return []
        folders = [here, *here.parents][1 : len(here.relative_to(top).parts) + 1]
        found = [(_below(here, top), _common_dir(top) / "info" / "exclude")]
    except (OSError, RuntimeError, ValueError):
        return []
    return found + [(_below(here, folder), folder / ".gitignore") for folder in reversed(folders)]


def _submodules(root: Path) -> frozenset[str]:
    """The folders (``a/b/``, relative to ``root``) the ``.gitmodules`` of ``root``'s work tree
    names as submodules; none outside a work tree."""
    try:
        here = root.resolve()
        top = next((d for d in (here, *here.parents) if os.path.lexists(d / ".git")), None)
        if top is None or not (top / ".gitmodules").is_file():
            return frozenset()
        text = (top / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except (OSError, RuntimeError):
        return frozenset()
    inside = _below(here, top)
    paths = (m.strip('"').strip("/") + "/" for m in _SUBMODULE_PATH.findall(text))
    return frozenset(p.removeprefix(inside) for p in paths if p.startswith(inside))


def _below(here: Path, folder: Path) -> str:
    inside = here.relative_to(folder).as_posix()
    return "" if inside == "." else inside + "/"


def _common_dir(top: Path) -> Path:
    """The repository folder of the work tree ``top`` that holds ``info/`` (a linked work
    tree's or a submodule's ``.git`` is a file naming it)."""
    dotgit = top / ".git"
    if not dotgit.is_file():
        return dotgit
    text = dotgit.read_text(encoding="utf-8").strip()
    gitdir = (top / text.removeprefix("gitdir:").strip()).resolve()
    commondir = gitdir / "commondir"
    if commondir.is_file():
        return (gitdir / commondir.read_text(encoding="utf-8").strip()).resolve()
    return gitdir


def _composed(text: str) -> str:
    return unicodedata.normalize("NFC", text)


_URL_LIKE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:/|[\w.-]+@[\w.-]+:)")  # a path keeps one /
_CREDENTIALS = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*:/+)[^/\s]*@")  # user:token@, to the last @


def _as_typed(url: str) -> str:
    """A URL as it was typed, where a path made of it kept one ``/`` of ``scheme://``
    (``https:/host/…``, ``file:/srv/…``): shown so, it would be copied into ``source:``
    broken."""
    scheme, sep, rest = url.partition(":/")
    if not sep or rest.startswith("/"):
        return url
    return f"{scheme}:///{rest}" if scheme.lower() == "file" else f"{scheme}://{rest}"


def not_a_directory(root: Path) -> SourceError:
    """The knowledge source ``root`` is no folder: gone (moved, renamed, a disk not mounted),
    something else, or a git URL given as a folder (``--source URL``), told where URLs go."""
    if _URL_LIKE.match(str(root)):
        shown = _CREDENTIALS.sub(r"\1***@", _as_typed(str(root)))  # a token stays unsaid
        return SourceError(
            f"knowledge source {shown} is not a directory: --source takes a folder; to follow a "
            "git repository, put its URL in `source:` (briefd.yaml) or BRIEFD_SOURCE, and "
            "`briefd sync` or `briefd serve` clones it"
        )
    what = "is not a directory" if os.path.lexists(root) else "does not exist"
    address = address_without_scheme(root)
    hint = (
        f"; if {address} is a git repository's address, write it as a URL in `source:` "
        f"(https://{address}), and `briefd sync` or `briefd serve` clones it"
        if address
        else ""
    )
    return SourceError(
        f"knowledge source {root} {what}; pass --source DIR, or point 'source:' in "
        f"briefd.yaml (or BRIEFD_SOURCE) at the knowledge folder{hint}"
    )


_HOST = re.compile(r"^(?=.*[a-z])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}$", re.IGNORECASE)


def address_without_scheme(root: Path) -> str | None:
    """``host/owner/repo`` when the missing part of ``root`` reads as a git address written
    without its scheme (``source: github.com/acme/kb.git``, resolved as a folder beside the
    settings file): its first missing folder is a host name with at least two parts after it."""
    parts = root.parts
    for at in range(len(parts)):
        if not os.path.lexists(Path(*parts[: at + 1])):
            rest = parts[at:]
            if _HOST.match(rest[0]) and len(rest) >= 3 and not rest[0].endswith(".md"):
                return "/".join(rest)
            return None
    return None


IGNORED = "change that pattern to index it"


def scan(
    root: Path, index: IndexSettings, layout: Layout, left_out: dict[str, str] | None = None
) -> tuple[list[SourceFile], list[SkippedFile]]:
    """Files to index (sorted by path) and the candidates that were skipped, with reasons;
    ``left_out`` (when given) gets the documents ``index.exclude`` or a ``.gitignore`` leave
    out, met on the walk (path → why: links may name them; not in ignored folders, which
    the walk does not enter)."""
    if not root.is_dir():
        raise not_a_directory(root)
    rules = Rules(root, index, layout)
    files: list[SourceFile] = []
    skipped: list[SkippedFile] = []

    def unreadable(exc: OSError) -> None:  # os.walk would skip the folder without a word
        rel = Path(exc.filename).relative_to(root).as_posix()
        folder = "" if rel == "." else rel + "/"
        why = f"{UNREADABLE_FOLDER} ({exc.strerror or exc}); give briefd read access to it"
        skipped.append(SkippedFile(_shown(folder) or "./", why))

    conflicted = tracked.unmerged(root)
    budget = [IGNORED_LISTED]
    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        kept = sorted(d for d in dirnames if not rules.skips_folder(rel_dir + d + "/"))
        if left_out is not None:
            for name in sorted(set(dirnames) - set(kept)):
                rules.ignored_documents(rel_dir + name + "/", left_out, budget)
        dirnames[:] = kept
        for name in dirnames:
            if Path(dirpath, name).is_symlink():  # os.walk does not enter it
                linked = _linked_folder(rules, Path(dirpath, name))
                skipped.append(SkippedFile(_shown(rel_dir + name + "/"), linked))
            elif rules.absent_submodule(rel_dir + name + "/"):
                skipped.append(SkippedFile(_shown(rel_dir + name + "/"), ABSENT_SUBMODULE))
        for name in sorted(filenames):
            rel = rel_dir + name
            if not rules.selects(rel):
                if left_out is not None and (why := rules.left_out(rel)):
                    left_out[_shown(rel)] = why
                if _upper_case_suffix(rules, rel):
                    skipped.append(SkippedFile(_shown(rel), UPPER_CASE_SUFFIX))
                elif other := _other_markdown(rules, rel):
                    skipped.append(SkippedFile(_shown(rel), other))
                continue
            found = _examine(rules, rel, Path(dirpath) / name, index.max_file_bytes)
            if isinstance(found, SourceFile) and rel in conflicted:  # kept as last indexed
                found = CONFLICTED
            if isinstance(found, SourceFile):
                files.append(found)
            else:
                skipped.append(SkippedFile(_shown(rel), found))
    seen = {f.path for f in files} | {s.path for s in skipped}
    absent = []
    for rel in tracked.committed(root):
        if rel not in seen and (root / rel).is_file() and rules.committed_but_ignored(rel):
            skipped.append(SkippedFile(_shown(rel), COMMITTED_IGNORED))
        elif rel not in seen and not os.path.lexists(root / rel):
            absent.append(rel)
    skipped += _sparse(root, rules, absent)
    files.sort(key=lambda f: f.path)
    return files, skipped


def _sparse(root: Path, rules: Rules, absent: list[str]) -> list[SkippedFile]:
    """The documents of the commit that are ``absent`` from the work tree because a sparse
    checkout leaves them out (one git call, made only when a committed file is missing):
    without a word they were 'deleted', and a sparse clone said it found no document."""
    if not absent:
        return []
    left_out = tracked.not_checked_out(root)
    return [
        SkippedFile(_shown(rel), NOT_CHECKED_OUT)
        for rel in absent
        if rel in left_out and rules.would_index(rel) is None
    ]


IGNORED_FOLDER = "a folder a .gitignore ignores, and briefd indexes no file git ignores"
IGNORED_LISTED = 1000  # entries of ignored folders a scan looks at for documents links may name


UPPER_CASE_SUFFIX = (
    "its extension is not in lower case, and index.include matches only lower case; rename it "
    "(or add its pattern to index.include)"
)


# Markdown written under another extension than index.include's: MDX (Docusaurus, Nextra…) and
# the older spellings editors and wikis save (GitHub's Markdown extensions)
OTHER_MARKDOWN = frozenset(
    ("mdx", "mdown", "mdwn", "mkd", "mkdn", "mkdown", "markdn", "mdtext", "mdtxt")
)


def _other_markdown(rules: Rules, rel: str) -> str | None:
    """Why ``rel``, Markdown by its extension (``guide.mdx``), is not indexed, when it would
    be as ``.md`` (in a scope, neither excluded nor ignored); None for any other file."""
    stem, dot, suffix = rel.rpartition(".")
    if not (dot and stem) or suffix.lower() not in OTHER_MARKDOWN:
        return None
    if rules.layout.scope_of(rel) is None or not rules.selects(f"{stem}.md"):
        return None
    if rules.left_out_anyway(rel):
        return None
    return (
        f"Markdown by its extension (.{suffix}), which index.include does not match; add "
        f"'**/*.{suffix}' to index.include to index it, or leave it out with index.exclude"
    )


def _upper_case_suffix(rules: Rules, rel: str) -> bool:
    """Whether ``rel`` would be indexed with its extension in lower case (``notes.MD``)."""
    stem, dot, suffix = rel.rpartition(".")
    return (
        bool(dot and stem)
        and suffix != suffix.lower()
        and rules.selects(f"{stem}.{suffix.lower()}")
    )


def _examine(rules: Rules, rel: str, path: Path, max_bytes: int) -> SourceFile | str:
    """The file to index, or why it is skipped."""
    scope = rules.layout.scope_of(rel)
    if scope is None:
        return rules.layout.outside(rel)
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not valid UTF-8 text; rename the file"
    if control := _CONTROL.search(rel):
        return (
            f"its path holds the control character \\x{ord(control.group()):02x}, which would "
            "reach terminals and agents (and Windows checkouts cannot write); rename it"
        )
    try:
        reason = None
        if path.is_symlink():
            reason = _link_reason(rules, path)
            if reason is None:  # read the checked target, not whatever the link says later
                path = path.resolve()
        if reason is None and not path.is_file():
            reason = "not a regular file (a pipe, socket or device); not served"
        stat = path.stat() if reason is None else None
    except (OSError, RuntimeError) as exc:  # a file gone meanwhile
        return f"cannot read it ({exc.__class__.__name__}: {exc})"
    if reason is not None or stat is None:
        return reason or "cannot read it"
    if stat.st_size > max_bytes:
        size = f"({stat.st_size} > {max_bytes} bytes)"
        return f"{TOO_LARGE} {size}: split it, or raise index.max_file_bytes"
    return SourceFile(rel, path, stat.st_size, stat.st_mtime, scope)


def _link_reason(rules: Rules, path: Path) -> str | None:
    """Why the symbolic link ``path`` is not followed (None: its target is a file the scan
    would index for itself)."""
    try:
        target = path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 says a loop so
        return "symbolic link loop; not served"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop; not served"
        return _broken_link(path)
    real_root = rules.root.resolve()
    if not target.is_relative_to(real_root):
        return OUTSIDE_SOURCE
    if not target.is_file():
        return "symbolic link to something that is not a regular file; not served"
    inside = target.relative_to(real_root).as_posix()
    why = rules.would_index(inside)
    if why is not None:
        return f"symbolic link to {_shown(inside)}, which is {why}; not served"
    return None


def _linked_folder(rules: Rules, path: Path) -> str:
    """Why the symbolic link ``path`` to a folder is not entered, and what to do: a folder of
    the source is read where it is; one outside it is not read at all (nor its files through
    links), so linking its files, the old advice, did not help."""
    try:
        target = path.resolve(strict=True)
        real_root = rules.root.resolve()
        written = path.readlink().as_posix()
    except (OSError, RuntimeError):
        return LINKED_FOLDER
    if target.is_relative_to(real_root):
        inside = target.relative_to(real_root).as_posix()
        return LINKED_INSIDE.format(target=_shown(inside + "/" if inside != "." else "./"))
    return LINKED_OUTSIDE.format(written=repr(_shown(written)))


def _broken_link(path: Path) -> str:
    """Why the symbolic link ``path``, whose target is not there, is skipped: the target it
    names (a file moved or renamed since), and what to do."""
    try:
        target = f"{_shown(path.readlink().as_posix())!r} "
    except OSError:
        target = ""
    return (
        f"broken symbolic link: its target {target}does not exist (moved or renamed?); not "
        "served: point the link at the document, or remove it"
    )


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # a newline, tab, ESC… in a file or folder name


def _shown(rel: str) -> str:
    """``rel`` as reports print it: valid UTF-8, control characters written as ``\\x1b``."""
    text = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
