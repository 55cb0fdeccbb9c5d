"""What ``briefd init`` says about the files it writes that name this machine's paths, when git
would commit them: the recall hook's files (its Python and script), and an MCP entry over stdio
(the ``briefd`` program, the index and the settings file) in the files a team commits to share
its MCP servers (``.mcp.json``, ``.cursor/``, ``.vscode/``, ``.codex/``)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from briefd.cli.output import console
from briefd.hook.clients import MCP_FILES, Kept, Server

HOOK_NAMED = ("names this machine's Python", "runs a hook their machine does not have")
STDIO_NAMED = (
    "names this machine's paths (its briefd MCP entry over stdio: the program, index and "
    "settings file)",
    "gets an MCP server their machine cannot start (to share one entry, serve briefd for the "
    "team and run `briefd init --url URL`; each teammate can run `briefd init --transport "
    "stdio` on their own machine)",
)


def report_not_ignored(project: Path, path: str, named: tuple[str, str] = HOOK_NAMED) -> None:
    """``path`` (``.claude/settings.local.json``, ``.codex/hooks.json``) holds the hook with
    this machine's Python and script paths (``named``: what it names, and what a teammate
    gets). Claude Code has git ignore its file when it makes it itself, not when init does,
    and nothing ignores Codex's: committed (a ``git add .`` after init), every teammate's
    client runs a hook that does not exist on their machine, on every prompt. Said, not
    fixed: the ignore file is the team's (or ``.git/info/exclude`` this clone's) to edit."""
    how = _git_would_commit(project, path)
    if how is None:
        return
    fix = f"add {path} to .gitignore"
    if how == "tracks":  # run from elsewhere (--project): git names the project
        here = project.resolve() == Path.cwd().resolve()
        git_in = "git" if here else f"git -C {shlex.quote(str(project))}"
        fix = f"`{git_in} rm --cached {path}`, then {fix}"
    console.print(
        f"note: {project / path} {named[0]}, and git {how} it: {fix}, or a teammate who gets "
        f"it through git {named[1]}",
        markup=False,
        soft_wrap=True,
    )


def report_stdio_shared(
    project: Path, chosen: tuple[str, ...], server: Server, kept: list[tuple[str, Kept]]
) -> None:
    """A stdio entry names this machine's ``briefd`` and the index's absolute path (the
    client spawns it in a folder of its own choosing), yet ``.mcp.json``, ``.cursor/``,
    ``.vscode/`` and ``.codex/`` are the files a team commits: a teammate who clones the
    project gets an entry their machine cannot start. Said for each such file git would
    commit (an entry kept as the user wrote it only when it names an absolute path)."""
    theirs = {path: shlex.split(entry.server) for path, entry in kept}
    for name in chosen:
        path = MCP_FILES[name]
        words = theirs.get(path, server)
        if isinstance(words, str) or not any(Path(word).is_absolute() for word in words):
            continue
        report_not_ignored(project, path, STDIO_NAMED)


def _git_would_commit(project: Path, path: str) -> str | None:
    """How git in ``project`` takes the file ``path`` (in the project): "tracks" (committed,
    or staged), "does not ignore" (a ``git add .`` commits it); None when git ignores it, the
    project is no git work tree, there is no git, or no such file."""
    if not (project / path).is_file():
        return None
    git = ["git", "-C", str(project)]
    try:
        ignored = subprocess.run(
            [*git, "check-ignore", "-q", path], capture_output=True, timeout=10
        )
        tracked = subprocess.run(
            [*git, "ls-files", "--error-unmatch", path], capture_output=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):  # no git here: nothing to commit it with
        return None
    if ignored.returncode != 1:  # 0: ignored; 128: not in a git work tree
        return None
    return "tracks" if tracked.returncode == 0 else "does not ignore"
