"""The recall engine depends on no front end: not the API that wraps it, not the hook, the CLI
or the service."""

from __future__ import annotations

import ast
from pathlib import Path

import briefd.recall

FRONT_ENDS = ("briefd.api", "briefd.hook", "briefd.cli", "briefd.service")


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_engine_imports_no_front_end() -> None:
    package = Path(briefd.recall.__file__).parent
    upward = {
        f"{path.name}: {name}"
        for path in sorted(package.glob("*.py"))
        for name in imported(path)
        if name.startswith(FRONT_ENDS)
    }
    assert upward == set()
