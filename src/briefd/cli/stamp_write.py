"""Writing the stamp that lets the next ``briefd index`` with nothing changed exit at once (O4).

:func:`take` stats everything the stamp records *before* the files are hashed (as git does): a
file changed after that keeps a stat the stamp does not hold, so the next run falls through.
:func:`write` stores the stamp atomically beside the index, only when the snapshot is sound:
the index is where :func:`briefd.cli.stamp.locate` looks for it, no recorded path changed in
the last two seconds (a racy edit), no indexed file is a symbolic link loop, no file has merge
conflicts (their ``git add`` changes no stat the stamp holds), the index and its
stamp are not inside the source tree they describe, and git is found the usual way. Anything
else writes no stamp (and removes an old one): the next run hashes, as before.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from briefd.cli.stamp import (
    FORMAT,
    RACY_NS,
    Args,
    config_paths,
    invocation,
    locate,
    signature,
    stamp_path,
)
from briefd.folders import sweep_abandoned
from briefd.settings import Settings
from briefd.sources import tracked
from briefd.sources.layout import Layout
from briefd.sources.scan import IGNORED_LISTED, Rules

GIT_LOCATION = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the stamp will hold of the files, taken before they are hashed."""

    db: str
    invocation: str
    entries: tuple[tuple[str, str], ...]  # (signature, absolute path)
    db_identity: tuple[int, int]


def take(
    settings: Settings, args: Args, env: Mapping[str, str], cwd: Path, racy_ns: int = RACY_NS
) -> Snapshot | None:
    """Stat what decides "nothing to do"; None when no stamp can be trusted for this run
    (``racy_ns``: how recent a change makes a path racy)."""
    root, db = settings.source, locate(args, env, str(cwd))
    digest = invocation(args, env, str(cwd))
    if root is None or db is None or digest is None or any(env.get(k) for k in GIT_LOCATION):
        return None
    try:
        if Path(db).resolve() != settings.db.resolve():
            return None
        if tracked.unmerged(root):  # resolved by `git add` alone: no file stat would change
            return None
        rules = Rules(root, settings.index, Layout.of(settings))
        tree = _tree(root, rules)
        git = _git_paths(root)
        if tree is None or git is None or str(Path(db).resolve().parent) in _resolved(tree):
            return None
        outer = map(str, rules.outer)  # the ignore files above the source, there or not
        paths = [*config_paths(args, env, str(cwd)), *tree, *outer, *git, *_code_paths()]
        started = time.time_ns()
        entries = tuple((signature(p), p) for p in paths)
        st = Path(db).stat()
    except (OSError, RuntimeError, ValueError):
        return None
    if not _sound(entries, started - racy_ns):
        return None
    return Snapshot(db, digest, entries, (st.st_dev, st.st_ino))


def write(
    snapshot: Snapshot, key: str, fingerprint: str, due: float, human: str, json: str
) -> None:
    """Store the stamp beside the index (write, then rename): ``human`` and ``json`` are the
    report as printed, with :data:`SECONDS` where the run's own time goes."""
    lines = [
        FORMAT,
        f"invocation\t{snapshot.invocation}",
        f"db\t{snapshot.db_identity[0]}\t{snapshot.db_identity[1]}",
        f"key\t{key}",
        f"fingerprint\t{fingerprint}",
        f"due\t{due!r}",
        f"lengths\t{len(human)}\t{len(json)}",
        *(f"stat\t{sig}\t{path}" for sig, path in snapshot.entries),
        "end",
    ]
    target = Path(stamp_path(snapshot.db))
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        with partial.open("w", encoding="utf-8", errors="surrogateescape", newline="") as file:
            file.write("\n".join(lines) + "\n" + human + json)
        partial.replace(target)
        sweep_abandoned(target.parent, f"{target.name}.*.partial")  # what a killed run left
    except OSError:  # a read-only index folder: the next run hashes, as before
        partial.unlink(missing_ok=True)


def discard(settings: Settings) -> None:
    """Remove the stamp of an index that no stamp may describe now."""
    try:
        Path(stamp_path(str(settings.db))).unlink(missing_ok=True)
    except OSError:
        return


def _sound(entries: tuple[tuple[str, str], ...], racy_from_ns: int) -> bool:
    """No path unreadable or unprintable in the stamp, none changed since ``racy_from_ns``
    (a same-size edit in the same clock tick would keep its stat)."""
    for sig, path in entries:
        if sig == "?" or "\n" in path or "\t" in path or "\r" in path:
            return False
        if sig != "-":
            mtime, ctime = (int(n) for n in sig.split(":")[3:5])
            if max(mtime, ctime) >= racy_from_ns:
                return False
    return True


def _resolved(paths: list[str]) -> set[str]:
    return {str(Path(p).resolve()) for p in paths}


def _tree(root: Path, rules: Rules) -> list[str] | None:
    """The source's folders the scan enters and the files it may index there (and each
    ``.gitignore``): a file added, removed or renamed changes its folder's stat, an edit its
    own. A candidate that is a symbolic link counts as its target (its folders too: see
    :func:`_link_folders`).
    The folders of the ignored folders the scan looks into for documents links may name
    (:meth:`Rules.ignored_documents`, as far as it looks) count too: a document added there
    changes what a link to it says."""
    found = [str(root.absolute())]
    budget = [IGNORED_LISTED]
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        kept = sorted(d for d in dirnames if not rules.skips_folder(rel_dir + d + "/"))
        for name in sorted(set(dirnames) - set(kept)):
            if not name.startswith(".") and not Path(dirpath, name).is_symlink():
                found += _ignored_folders(Path(dirpath, name), budget)
        dirnames[:] = kept
        found += [str(Path(dirpath, d).absolute()) for d in dirnames]
        for name in sorted(filenames):
            if name != ".gitignore" and not rules.selects(rel_dir + name):
                continue
            path = Path(dirpath, name).absolute()
            hops = _link_folders(path) if path.is_symlink() else []
            if hops is None:
                return None
            found += [*hops, str(path)]
    return found


LINK_HOPS = 40  # as the kernel's limit of symbolic links followed in one lookup (ELOOP)


def _link_folders(path: Path) -> list[str] | None:
    """The folders the symbolic link ``path`` and each link it leads through live in: a link
    is never edited in place, only replaced, which changes its folder's stat; what it leads to
    counts through ``path``'s own signature (``os.stat`` follows it: the target's inode, size
    and times). None for a chain too long to follow (a loop): no stamp."""
    folders: list[str] = []
    here = path
    for _ in range(LINK_HOPS):
        folder = here.parent.resolve()
        folders.append(str(folder))
        try:
            written = here.readlink()
        except OSError:  # not a link (the target) or gone: its folder is recorded
            return folders
        here = folder / written
    return None


def _ignored_folders(folder: Path, budget: list[int]) -> list[str]:
    """The folders of the ignored ``folder`` the scan looks into, with the same budget of
    entries (``budget[0]``, shared over the source) and the same walk."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        budget[0] -= len(dirnames) + len(filenames)
        if budget[0] < 0:
            break
        found.append(str(Path(dirpath).absolute()))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
    return found


def _git_paths(root: Path) -> list[str] | None:
    """What ``git rev-parse HEAD`` at ``root`` reads: the ``.git`` it finds (every folder
    above without one), HEAD, and the ref HEAD names (loose, packed or in a reftable)."""
    paths: list[str] = []
    here = root.resolve()
    for folder in (here, *here.parents):
        dotgit = folder / ".git"
        paths.append(str(dotgit))
        if os.path.lexists(dotgit):
            break
    else:
        return paths  # no repository: the stamp records that none appeared
    gitdir = dotgit
    if dotgit.is_file():
        text = dotgit.read_text(encoding="utf-8").strip()
        if not text.startswith("gitdir: "):
            return None
        gitdir = (folder / text.removeprefix("gitdir: ")).resolve()
    head, commondir = gitdir / "HEAD", gitdir / "commondir"
    if not head.is_file():
        return None
    common = gitdir
    if commondir.is_file():
        common = (gitdir / commondir.read_text(encoding="utf-8").strip()).resolve()
    paths += [str(commondir), str(head), str(common / "reftable" / "tables.list")]
    ref = head.read_text(encoding="utf-8").strip()
    if ref.startswith("ref: refs/"):
        return [*paths, str(common / ref.removeprefix("ref: ")), str(common / "packed-refs")]
    is_hex = ref and all(c in "0123456789abcdef" for c in ref)
    return paths if is_hex else None


def _code_paths() -> Iterator[str]:
    """briefd's own code (a changed chunker or model registry changes what an index run
    does) and the folders packages are installed in (an upgraded model runtime)."""
    package = Path(__file__).resolve().parent.parent
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        yield dirpath
        yield from (str(Path(dirpath, n)) for n in sorted(filenames) if n.endswith(".py"))
    for entry in map(Path, sys.path):
        if entry.name in ("site-packages", "dist-packages") and entry.is_dir():
            yield str(entry)
