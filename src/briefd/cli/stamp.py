"""``briefd index`` with nothing changed, answered from a stamp before anything else loads (O4).

The last index run that found (or left) the index complete writes ``<db>.stamp`` beside
the index (:mod:`briefd.cli.stamp_write`): the stat of everything that decides "nothing to do"
— the config file, each folder and indexed file of the source, the git HEAD and the ref it
names, the installed packages and briefd's own code — a digest of the invocation (options,
working directory, Python, ``BRIEFD_*`` / ``GIT_*`` environment), the index's identity and
source key, when upkeep is next due, and the report to print. When every stat still matches,
:func:`answer` prints that report and the process exits: no settings, no YAML, no hashing,
no git. Any difference, or any doubt, goes on to :mod:`briefd.cli.index_fast` (hash, compare)
and then the full command.

A file edited in place with the same size within one tick of the file system clock keeps its
stat; like git, the writer refuses a stamp while any recorded entry changed in the last
:data:`RACY_NS` (so a racy edit always falls through). The standard library only: this runs
on every ``briefd index`` from git hooks, cron and CI, so not even pathlib or json (paths
are strings, the stamp a few tab-separated lines).
"""

from __future__ import annotations

import os
import sys
import time

from briefd.project import CONFIG_NAME as CONFIG_FILE
from briefd.project import DB_NAME, LOCAL_DIR, project_dir

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

FORMAT = "briefd-stamp 1"
SUFFIX = ".stamp"
DEFAULT_DB = os.path.join(LOCAL_DIR, DB_NAME)  # as Settings.db (this path loads no settings)
RACY_NS = 2_000_000_000
GLOBAL_OPTIONS = ("--db", "--config")
INDEX_OPTIONS = ("--source",)
ENV_PREFIXES = ("BRIEFD_", "GIT_")
ENV_NAMES = ("HOME", "XDG_CONFIG_HOME")  # where the user's settings file is
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this briefd's code

Args = dict[str, str | bool]


def index_args(argv: Sequence[str]) -> Args | None:
    """``{db, config, source, json}`` when ``argv`` is ``[--db X] [--config Y] index
    [--source DIR] [--json]``; None for anything else (--rebuild, --help, other commands)."""
    found: Args = {"json": False}
    items = iter(argv)
    command = False
    for arg in items:
        name, eq, inline = arg.partition("=")
        allowed = INDEX_OPTIONS if command else GLOBAL_OPTIONS
        if arg == "index" and not command:
            command = True
        elif command and arg == "--json":
            found["json"] = True
        elif name in allowed:
            value = inline if eq else next(items, None)
            if not value or name.removeprefix("--") in found:  # given twice: the full command
                return None
            found[name.removeprefix("--")] = value
        else:
            return None
    return found if command else None


def project(env: Mapping[str, str], cwd: str) -> str:
    """The folder ``load_settings`` looks for the settings file and the default index in with
    these options (as ``settings.locate.project_folder``): ``cwd``, or from a subfolder of a git
    work tree the nearest folder above with the project's briefd files, a settings file or an
    index named or not."""
    return project_dir(env, cwd, main_tree=False) or cwd


def config_paths(args: Args, env: Mapping[str, str], cwd: str) -> list[str]:
    """The settings files ``load_settings`` looks for with these options, in its order (as
    ``settings.config_candidates``): the one named, else the project folder's (:func:`project`)
    ``briefd.yaml``, ``.briefd/briefd.yaml`` and the user's. The stamp records each one's stat
    or absence, so one that appears or changes is noticed."""
    named = args.get("config") or env.get("BRIEFD_CONFIG")
    if named:
        return [os.path.join(cwd, os.path.expanduser(str(named)))]
    folder = project(env, cwd)
    found = [os.path.join(folder, CONFIG_FILE), os.path.join(folder, LOCAL_DIR, CONFIG_FILE)]
    home = env.get("HOME")
    base = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else None)
    return found + ([os.path.join(base, "briefd", CONFIG_FILE)] if base else [])


def config_path(args: Args, env: Mapping[str, str], cwd: str) -> str:
    """The settings file ``load_settings`` reads for these options: the first of
    :func:`config_paths` that exists, else the first (then its absence is what counts)."""
    paths = config_paths(args, env, cwd)
    return next((path for path in paths if os.path.isfile(path)), paths[0])


def locate(args: Args, env: Mapping[str, str], cwd: str) -> str | None:
    """Where the index is for these options, without loading settings: ``--db``,
    ``BRIEFD_DB``, a top-level ``db:`` of the settings file, or the default. The writer
    stores a stamp only where this agrees with the loaded settings, so a guess that is wrong
    for some unusual YAML only means no stamp. None: no guess at all."""
    named = args.get("db") or env.get("BRIEFD_DB")
    if named:
        return os.path.join(cwd, os.path.expanduser(str(named)))
    config = config_path(args, env, cwd)
    try:
        with open(config, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError:
        named_config = args.get("config") or env.get("BRIEFD_CONFIG")
        return None if named_config else os.path.join(project(env, cwd), DEFAULT_DB)
    except (OSError, UnicodeDecodeError):
        return None
    lines = [line for line in text.splitlines() if line.startswith("db:")]
    if len(lines) > 1:
        return None
    if not lines:
        return os.path.join(project(env, cwd), DEFAULT_DB)
    value = lines[0][3:].split(" #", 1)[0].strip()
    if not value or value[0] in "'\"[{&*!|>%@`":
        return None
    return os.path.join(os.path.dirname(config), os.path.expanduser(value))


def stamp_path(db: str) -> str:
    return db + SUFFIX


def signature(path: str) -> str:
    """What the stamp compares of one path: type, inode, size, mtime and ctime ('-': absent)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "-"
    except OSError:
        return "?"  # never equal to a stored signature: no stamp can match an unreadable path
    return f"{st.st_mode:o}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def invocation(args: Args, env: Mapping[str, str], cwd: str) -> str | None:
    """A digest of what decides the settings and the run besides files: the options, the
    working directory and the project folder found from it (:func:`project`), the Python, the
    briefd package running (another one, e.g. through ``PYTHONPATH`` or another work tree's
    editable install, is other code whose files the stamp did not record), the ``BRIEFD_*``
    and ``GIT_*`` environment (hashed, as it may hold tokens) and where the user's settings
    file is (``HOME``, ``XDG_CONFIG_HOME``). None without BLAKE2 (then no stamp)."""
    try:
        from _blake2 import blake2b  # hashlib without its OpenSSL import (~5 ms)
    except ImportError:
        return None
    options = sorted((k, str(v)) for k, v in args.items() if k != "json")
    environment = sorted(
        (k, v) for k, v in env.items() if k.startswith(ENV_PREFIXES) or k in ENV_NAMES
    )
    parts = [
        FORMAT,
        cwd,
        project(env, cwd),
        sys.executable,
        sys.version,
        PACKAGE,
        repr(options),
        repr(environment),
    ]
    text = "\0".join(parts)
    return blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def answer(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str | None:
    """The output of ``briefd index`` when the stamp proves nothing changed; None otherwise."""
    started = time.perf_counter()
    args = index_args(argv)
    if args is None:
        return None
    env = os.environ if env is None else env
    try:
        cwd = os.getcwd()
        db = locate(args, env, cwd)
        if db is None:
            return None
        fields, blob = _read(stamp_path(db))
        if fields.get("invocation") != [invocation(args, env, cwd)]:
            return None
        if not _stats_match(fields, db) or not time.time() < float(fields["due"][0]):
            return None
        if not _index_matches(db, fields["key"][0], fields["fingerprint"][0]):
            return None
        return _render(fields, blob, bool(args["json"]), time.perf_counter() - started)
    except (OSError, ValueError, KeyError, IndexError, UnicodeError):
        return None


def _read(path: str) -> tuple[dict[str, list[str]], str]:
    """The stamp's fields (tag → values) and the report text after its ``end`` line."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as file:
        text = file.read()
    head, sep, blob = text.partition("\nend\n")
    lines = head.split("\n")
    if not sep or lines[0] != FORMAT:
        raise ValueError("not a stamp")
    fields: dict[str, list[str]] = {}
    entries: list[str] = []
    for line in lines[1:]:
        tag, _, rest = line.partition("\t")
        if tag == "stat":
            entries.append(rest)
        else:
            fields[tag] = rest.split("\t")
    fields["stat"] = entries
    return fields, blob


def _stats_match(fields: dict[str, list[str]], db: str) -> bool:
    st = os.stat(db)
    if fields["db"] != [str(st.st_dev), str(st.st_ino)]:
        return False
    for entry in fields["stat"]:
        sig, _, path = entry.partition("\t")
        if signature(path) != sig:
            return False
    return True


def _index_matches(db: str, key: str, fingerprint: str) -> bool:
    """The index still holds the source key the stamp was written for, and no cached bundle
    of another knowledge state waits to be pruned."""
    import sqlite3

    from briefd.store import freshness
    from briefd.store.peek import peek

    if any(c in db for c in "?#%"):
        return False  # not a plain URI path; the next step opens it properly
    conn = peek(db)
    try:
        return freshness.stored_key(conn) == key and not freshness.stale_bundles(conn, fingerprint)
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def _render(fields: dict[str, list[str]], blob: str, as_json: bool, seconds: float) -> str:
    """The stored report with this run's seconds, as ``index_fast`` prints it."""
    human, json_text = (int(n) for n in fields["lengths"])
    if len(blob) != human + json_text:
        raise ValueError("a cut stamp")
    text = blob[human:] if as_json else blob[:human]
    value = repr(round(seconds, 3)) if as_json else f"{seconds:.2f}"
    before, marker, after = text.partition(SECONDS)
    if not marker:
        raise ValueError("no seconds in the stored report")
    return before + value + after


SECONDS = "\0seconds\0"  # where the run's own seconds go in the stored report
