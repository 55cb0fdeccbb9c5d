"""Walk a knowledge source: include/exclude globs, ``.gitignore`` files, scopes (K1, K3)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pathspec

from briefd.errors import SourceError
from briefd.model import SkippedFile

OUTSIDE_SCOPES = "outside every scope (domain/, conventions/, projects/<name>/); not served"


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # POSIX path relative to the source root
    abs_path: Path
    size: int
    mtime: float


def scope_of(path: str) -> str | None:
    """K1: ``domain/…`` and ``conventions/…`` are scopes, ``projects/<name>/…`` too."""
    parts = path.split("/")
    if parts[0] in ("domain", "conventions") and len(parts) > 1:
        return parts[0]
    if parts[0] == "projects" and len(parts) > 2:
        return f"projects/{parts[1]}"
    return None


def scan(
    root: Path, include: tuple[str, ...], exclude: tuple[str, ...], max_bytes: int
) -> tuple[list[SourceFile], list[SkippedFile]]:
    """Files to index (sorted by path) and the candidates that were skipped, with reasons."""
    if not root.is_dir():
        raise SourceError(f"knowledge source {root} is not a directory; pass --source DIR")
    real_root = root.resolve()
    included = pathspec.PathSpec.from_lines("gitignore", include)
    excluded = pathspec.PathSpec.from_lines("gitignore", exclude)
    files: list[SourceFile] = []
    skipped: list[SkippedFile] = []
    ignores: list[tuple[str, pathspec.PathSpec[Any]]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        ignores = [(d, s) for d, s in ignores if rel_dir.startswith(d)]
        gitignore = Path(dirpath) / ".gitignore"
        if gitignore.is_file():
            lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
            ignores.append((rel_dir, pathspec.GitIgnoreSpec.from_lines(lines)))
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".") and not _ignored(ignores, rel_dir + d + "/")
        )
        for name in sorted(filenames):
            rel = rel_dir + name
            if not included.match_file(rel) or excluded.match_file(rel) or _ignored(ignores, rel):
                continue
            try:
                reason = _skip_reason(rel, Path(dirpath) / name, max_bytes, real_root)
                stat = (Path(dirpath) / name).stat() if reason is None else None
            except (OSError, RuntimeError) as exc:  # a symlink loop, a file gone meanwhile
                reason, stat = f"cannot read it ({exc.__class__.__name__}: {exc})", None
            if reason or stat is None:
                shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                skipped.append(SkippedFile(shown, reason or "cannot read it"))
                continue
            files.append(SourceFile(rel, Path(dirpath) / name, stat.st_size, stat.st_mtime))
    files.sort(key=lambda f: f.path)
    return files, skipped


def _ignored(ignores: list[tuple[str, pathspec.PathSpec[Any]]], rel: str) -> bool:
    return any(spec.match_file(rel[len(base) :]) for base, spec in ignores if rel.startswith(base))


OUTSIDE_SOURCE = "symbolic link to a file outside the knowledge source; not served"


def _skip_reason(rel: str, path: Path, max_bytes: int, real_root: Path) -> str | None:
    if scope_of(rel) is None:
        return OUTSIDE_SCOPES
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not valid UTF-8 text; rename the file"
    if path.is_symlink():
        try:
            target = path.resolve()
        except RuntimeError:
            return "symbolic link loop; not served"
        if not target.is_file():
            return "broken symbolic link"
        if not target.is_relative_to(real_root):
            return OUTSIDE_SOURCE
    if not path.is_file():
        return "not a regular file (a pipe, socket or device); not served"
    size = path.stat().st_size
    if size > max_bytes:
        return f"larger than index.max_file_bytes ({size} > {max_bytes} bytes)"
    return None
