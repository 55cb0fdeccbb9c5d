"""Front-matter ``refs`` (K2): gitignore-style globs naming the code paths a document governs.
Bundles (B1) and search (R5) put documents whose ``refs`` cover a request's ``paths`` first."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pathspec


def normalise_paths(paths: Sequence[str]) -> tuple[str, ...]:
    """Code paths as repository-relative POSIX paths, sorted and without duplicates."""
    cleaned = (p.strip().replace("\\", "/").removeprefix("./").lstrip("/") for p in paths)
    return tuple(sorted({p for p in cleaned if p}))


def covering(refs: Sequence[str], paths: Sequence[str]) -> str | None:
    """Why a document with these ``refs`` governs one of ``paths`` ("refs GLOB covers PATH"),
    or None when it governs none of them. ``paths`` are expected normalised."""
    for glob in refs:
        spec = pathspec.PathSpec.from_lines("gitignore", [glob])
        for path in paths:
            if spec.match_file(path):
                return f"refs {glob} covers {path}"
    return None


def paths_covered(glob: str, paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` (repository-relative, as git prints them) that the ``refs`` glob
    covers, by the rules of :func:`covering`; one compiled regular expression per glob when
    the glob is a plain pattern (drift matches thousands of paths against every glob)."""
    spec = pathspec.PathSpec.from_lines("gitignore", [glob])
    patterns = [p for p in spec.patterns if p.include is not None]
    if len(patterns) == 1 and patterns[0].include and patterns[0].regex is not None:
        match = patterns[0].regex.match
        return [p for p in paths if match(p)]
    return [p for p in paths if spec.match_file(p)]
