"""Where the settings file and the index are when no option names them: in the project's folder,
which is this folder or, from a subfolder of a git work tree, the nearest one above with the
project's briefd files (:func:`briefd.project.project_dir`, which the prompt hook asks too).
A relative path a settings file holds is relative to that file (:mod:`briefd.settings.raw`);
what is relative to no file — the default index and eval cache — is relative to the project's
folder, so ``cd src/payments && briefd search …`` reads the project's index as its top does.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from briefd.project import CONFIG_NAME, DB_NAME, LOCAL_DIR, project_dir

CONFIG_FILE = CONFIG_NAME
LOCAL_CONFIG = Path(LOCAL_DIR) / CONFIG_FILE
DEFAULT_DB = Path(LOCAL_DIR) / DB_NAME
DEFAULT_EVAL_CACHE = Path(LOCAL_DIR) / "eval-cache"


def config_candidates(env: Mapping[str, str], project: Path = Path()) -> tuple[Path, ...]:
    """Where the settings are looked for when no file is named (``--config``,
    ``BRIEFD_CONFIG``), in order: the project folder's ``briefd.yaml`` and
    ``.briefd/briefd.yaml`` (``project``: this folder by default), then the user's
    ``$XDG_CONFIG_HOME/briefd/briefd.yaml`` (``$HOME/.config``) — the order the prompt hook
    reads them in (:mod:`briefd.hook.discover`) and ``briefd index``'s stamp records
    (:mod:`briefd.cli.stamp`). Without either variable in ``env`` there is no user file."""
    base = env.get("XDG_CONFIG_HOME") or (
        str(Path(env["HOME"]) / ".config") if env.get("HOME") else None
    )
    user = (Path(base) / "briefd" / CONFIG_FILE,) if base else ()
    return (project / CONFIG_FILE, project / LOCAL_CONFIG, *user)


def settings_file(
    config: Path | None, env: Mapping[str, str], project: Path | None = None
) -> tuple[Path | None, bool]:
    """The settings file :func:`briefd.settings.load_settings` reads: ``config``, else
    ``BRIEFD_CONFIG``, else the first of :func:`config_candidates` in ``project`` (None: the
    one found from here) that exists (None: no file); and whether it was found rather than
    named."""
    named = config or (Path(env["BRIEFD_CONFIG"]) if env.get("BRIEFD_CONFIG") else None)
    if named is not None:
        return named.expanduser(), False  # ~ no shell expanded (an env block)
    project = project_folder(env) if project is None else project
    return next((file for file in config_candidates(env, project) if file.is_file()), None), True


def project_folder(env: Mapping[str, str]) -> Path:
    """The project's folder, where the default index and eval cache go: this folder
    (``Path()``) unless it is a subfolder of the project's git work tree, whether or not a
    settings file or an index is named (``--config``, ``BRIEFD_CONFIG``, ``--db``,
    ``BRIEFD_DB``). A linked work tree (``git worktree add``) is its own project here:
    ``briefd index`` there builds its own index, not the main work tree's (which the hook
    reads until it has one)."""
    found = project_dir(env, main_tree=False)
    return Path(found) if found is not None else Path()


def in_project(merged: dict[str, Any], project: Path) -> None:
    """Put the default index and eval cache in the project's folder when no setting names
    them (a folder above this one: with this one, the relative defaults are already it)."""
    if project == Path():
        return
    if merged.get("db") is None:
        merged["db"] = str(project / DEFAULT_DB)
    evaluation = merged.get("eval")
    if evaluation is None:
        merged["eval"] = evaluation = {}
    if isinstance(evaluation, dict) and evaluation.get("cache_dir") is None:
        evaluation["cache_dir"] = str(project / DEFAULT_EVAL_CACHE)
