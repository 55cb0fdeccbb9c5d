"""Where the project is, as git finds its repository: the folder with the project's briefd files
(``briefd.yaml``, ``.briefd/briefd.yaml`` or an index ``.briefd/briefd.db``), from this folder
or from a subfolder of its git work tree. The prompt hook (:mod:`briefd.hook.discover`) and the
settings every command reads (:func:`briefd.settings.load_settings`) ask this one function.

Standard library only, and no git process: a walk up the folders looking for a ``.git`` entry
(the hook imports it on every prompt, ``briefd index`` on every run).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook start-up
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

LOCAL_DIR = ".briefd"
DB_NAME = "briefd.db"
CONFIG_NAME = "briefd.yaml"


def project_dir(
    env: Mapping[str, str],
    start: str | None = None,
    main_tree: bool = True,
    own_index: Callable[[str], bool] | None = None,
) -> str | None:
    """The folder that holds the project's briefd files when ``start`` (default: the working
    directory) is a subfolder of a git work tree (an agent that ran ``cd src/payments``, a user
    who runs briefd as git): the nearest folder up to the work tree's top with a
    ``briefd.yaml``, ``.briefd/briefd.yaml`` or ``.briefd/briefd.db`` (never a ``.briefd``
    folder itself, which is its parent's); with ``main_tree``, in a
    linked work tree without its own index (it is untracked), that folder of the main work tree
    (:func:`_in_main_work_tree`); ``own_index``: whether a folder has its own index (default:
    a ``.briefd/briefd.db``; the hook also reads the ``db`` its settings file names). A
    settings file or an index named (``--config``,
    ``$BRIEFD_CONFIG``, ``--db``, ``$BRIEFD_DB``) changes nothing here: the project is where
    the user works, wherever the file is (a shared ``/etc/briefd/briefd.yaml`` puts no index
    in ``/etc``). None: stay here — this folder is the one, or the folder is in no git work
    tree (a stray ``.briefd`` in a parent folder such as ``/tmp`` never counts)."""
    try:
        here = os.getcwd() if start is None else os.path.abspath(start)
    except OSError:  # the folder was removed
        return None
    found, folder = None, here
    while True:
        # a project's own ``.briefd`` folder (its ``.briefd/briefd.yaml`` would make it look
        # like a project) belongs to the folder above: from there, never ``.briefd/.briefd``
        if found is None and os.path.basename(folder) != LOCAL_DIR and _has_project_files(folder):
            found = folder
        git = os.path.join(folder, ".git")
        if os.path.exists(git):  # the work tree's top
            if (
                main_tree
                and os.path.isfile(git)
                and not (own_index or _default_index)(found or folder)
            ):
                found = _in_main_work_tree(git, found or folder, folder) or found
            return found if found != here else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _default_index(folder: str) -> bool:
    return os.path.exists(os.path.join(folder, LOCAL_DIR, DB_NAME))


def _in_main_work_tree(git_file: str, at: str, top: str) -> str | None:
    """For a linked work tree (``git worktree add``: its ``.git`` is a file naming
    ``<main>/.git/worktrees/<name>``), whose index is untracked and so only in the main work
    tree: folder ``at`` there, when it has the project's briefd files."""
    try:
        with open(git_file, encoding="utf-8") as stream:
            line = stream.readline().strip()
        if not line.startswith("gitdir:"):
            return None
        gitdir = os.path.join(top, line[len("gitdir:") :].strip())
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as stream:
            common = os.path.realpath(os.path.join(gitdir, stream.readline().strip()))
    except (OSError, UnicodeDecodeError):  # a submodule (no commondir), an unreadable file
        return None
    if os.path.basename(common) != ".git":  # a bare repository: no main work tree
        return None
    main = os.path.join(os.path.dirname(common), os.path.relpath(at, top))
    return main if _has_project_files(main) else None


def has_project_files(folder: str) -> bool:
    """Whether ``folder`` holds a project's briefd files (a settings file or an index)."""
    return _has_project_files(folder)


def _has_project_files(folder: str) -> bool:
    local = os.path.join(folder, LOCAL_DIR)
    return (
        os.path.isfile(os.path.join(folder, CONFIG_NAME))
        or os.path.isfile(os.path.join(local, CONFIG_NAME))
        or os.path.exists(os.path.join(local, DB_NAME))
    )


def is_any_interface(host: str) -> bool:
    """``host`` binds every interface: 0.0.0.0 or ::, however written (``0``, ``::0``,
    ``[::]``), which is no name a Host header carries and is reached on 127.0.0.1. Here so the
    hook (which asks the project's own server) and the settings share it; ``ipaddress`` and
    ``socket`` are imported only for a host written with nothing but the characters such an
    address is (``0``, ``.``, ``:``, ``x``), which no name is."""
    bare = host.strip("[]")
    if bare.strip("0.:xX"):
        return False
    import ipaddress

    try:
        return ipaddress.ip_address(bare).is_unspecified
    except ValueError:
        pass
    import socket

    try:
        return socket.inet_aton(bare) == bytes(4)  # the shorthands 0, 0.0, 0x0
    except OSError:
        return False
