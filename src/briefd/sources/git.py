"""The git command line: briefd's one edge to repositories (K3, T1).

Every call runs ``git`` with a timeout, without a terminal prompt (``GIT_TERMINAL_PROMPT=0``,
SSH in batch mode) and with the C locale, so a missing credential fails fast with a message
instead of hanging a server. Failures raise the error class the caller names (sync raises
:class:`~briefd.errors.SourceError`, proposals :class:`~briefd.errors.ProposalError`), with
the last line git printed, a hint, and any credentials in URLs redacted.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from briefd.errors import BriefdError, ProposalError, SourceError

_QUIET_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "echo",
    "SSH_ASKPASS": "echo",
    "GCM_INTERACTIVE": "never",
    "LC_ALL": "C",
}
_CREDENTIALS = re.compile(r"(\w+://)[^/\s]*@")  # to the last @: a password may hold one
DUBIOUS = "dubious ownership"  # git refuses a repository another user owns (safe.directory)
TIMED_OUT = "took longer than"  # in the message of a git command its timeout ended
SOURCE_URL_HINT = "check the repository URL in `source`"
MISSING_BRANCH_HINT = "the branch does not exist on the remote; check `sync.branch`"
UNREACHABLE_HINT = "the remote is unreachable; check the network and the URL"
CREDENTIALS_HINT = (
    "the remote refused the credentials; briefd never prompts, so put a token in the URL, "
    "configure a credential helper or an SSH key"
)
# a fetch's answer broken off (curl 18, 56…), not refused (an HTTP status: RPC failed; HTTP 500)
_BROKEN_OFF = ("RPC failed; curl", "early EOF", "unexpected disconnect while reading")
BROKEN_OFF_HINT = (
    "the connection to the remote broke off mid-transfer (the remote, or a proxy in between, "
    "went away); the clone and the index are as they were, and the next sync fetches again"
)
_HINTS = (
    (
        ("Authentication failed", "could not read Username", "Permission denied", "error: 403"),
        CREDENTIALS_HINT,
    ),
    (
        ("not found", "does not appear to be a git repository", "does not exist"),
        SOURCE_URL_HINT,
    ),
    (
        ("Could not resolve host", "Connection refused", "unable to access", "timed out"),
        UNREACHABLE_HINT,
    ),
    (
        ("couldn't find remote ref", "invalid refspec"),
        MISSING_BRANCH_HINT,
    ),
    (
        (DUBIOUS,),
        "git reads no repository another user owns: trust that path with `git config --global "
        "--add safe.directory PATH` as the user briefd runs as (or GIT_CONFIG_COUNT=1 "
        "GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=PATH in its environment), or make "
        "that user its owner",
    ),
)


# git's credential helper for a URL that carried ``user:token@`` (or ``TOKEN@``): it answers from the environment
# (the variables below), so no secret is ever in a command line (``ps``) or in a git config;
# and only for that URL's protocol and host: git asks again for the host a redirect names,
# where the token, given in the URL, would never have gone
_USER_VAR, _PASSWORD_VAR = "GIT_BRIEFD_USERNAME", "GIT_BRIEFD_PASSWORD"
_ORIGIN_VAR = "GIT_BRIEFD_ORIGIN"
CREDENTIAL_HELPER = (
    '!f() { test "$1" = get || exit 0; p=; h=; while IFS= read -r l && test -n "$l"; do '
    'case "$l" in protocol=*) p=${l#protocol=};; host=*) h=${l#host=};; esac; done; '
    f'test "$p://$h" = "${_ORIGIN_VAR}" || exit 0; '
    f'printf "username=%s\\npassword=%s\\n" "${_USER_VAR}" "${_PASSWORD_VAR}"; }}; f'
)


@dataclass(frozen=True, slots=True)
class Remote:
    """A remote's URL as git is given it, without credentials, and the environment that
    hands git the credentials the configured URL carried (empty: none)."""

    url: str
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def helper(self) -> tuple[str, ...]:
        """``-c`` options making :data:`CREDENTIAL_HELPER` git's only helper (none when there
        are no credentials): a user's own helper neither answers for the URL nor stores its
        token (git offers a credential that worked to every helper)."""
        if not self.env:
            return ()
        return ("-c", "credential.helper=", "-c", f"credential.helper={CREDENTIAL_HELPER}")


# A user name with a token's shape: ``https://TOKEN@github.com/…`` (GitHub, Gitea, Azure DevOps
# take a token as the user name, no password); a person's name is shorter or has a dot
_TOKEN_SHAPED = re.compile(r"(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{32,}")


def remote(url: str) -> Remote:
    """``url`` with its ``user:password@`` moved out (http and https: the password, a token,
    is a secret; an ssh user name is not), and a lone user name that has a token's shape
    (:data:`_TOKEN_SHAPED`; git sends it with an empty password, as it did from the URL)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.username is None:
        return Remote(url)
    user = unquote(parts.username)
    if parts.password is None and not _TOKEN_SHAPED.fullmatch(user):
        return Remote(url)  # a name (alice@): the user's own helper has its password
    host = parts.netloc.rpartition("@")[2]
    plain = urlunsplit(parts._replace(netloc=host))
    env = {_USER_VAR: user, _PASSWORD_VAR: unquote(parts.password or "")}
    env[_ORIGIN_VAR] = f"{parts.scheme}://{host}"  # as git names it to its helpers
    return Remote(plain, env)


def keep_helper(repo: Path, remote: Remote, timeout: float) -> None:
    """The git config of briefd's clone ``repo`` names :data:`CREDENTIAL_HELPER` as its only
    helper when ``remote`` has credentials (each command there gives them in its
    environment), and no helper of briefd's once it has none: the URL lost its token, and
    the user's own helper (or the image's) answers again. One ``git config`` read when
    nothing changes."""
    wanted = ["", CREDENTIAL_HELPER] if remote.env else []
    try:  # bytes, not run(): its strip() would drop the empty helper's line
        listed = run_bytes(["config", "--local", "--get-all", "credential.helper"], repo, timeout)
        helpers = listed.decode("utf-8", "replace").splitlines()
    except SourceError:  # none set: git exits 1
        helpers = []
    if helpers == wanted:
        return
    if helpers:
        run(["config", "--local", "--unset-all", "credential.helper"], repo, timeout)
    for helper in wanted:
        run(["config", "--local", "--add", "credential.helper", helper], repo, timeout)


def redact(text: str) -> str:
    """Hide ``user:token@`` in URLs."""
    return _CREDENTIALS.sub(r"\1***@", text)


def bare_url(url: str) -> str:
    """``url`` without ``user:token@``: the repository it names."""
    return _CREDENTIALS.sub(r"\1", url)


def quiet_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(_QUIET_ENV)
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env.update(extra or {})
    return env


def run(
    args: Sequence[str],
    cwd: Path | None,
    timeout: float,
    error: type[BriefdError] = SourceError,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> str:
    """Run ``git ARGS`` in ``cwd`` and return its standard output (stripped)."""
    return run_bytes(args, cwd, timeout, error, env, stdin).decode("utf-8", "replace").strip()


def run_bytes(
    args: Sequence[str],
    cwd: Path | None,
    timeout: float,
    error: type[BriefdError] = SourceError,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> bytes:
    command = ["git", *args]
    if _STOPPING.is_set():
        raise error(f"git {command_name(args)} not run: briefd was stopping")
    try:
        done = _run(command, cwd, stdin, timeout, quiet_env(env))
    except FileNotFoundError:
        if cwd is not None and not Path(cwd).is_dir():  # the folder, not git, is missing
            raise error(f"cannot run git in {cwd}: no such folder") from None
        raise error("git is not installed (or not on PATH); install git 2.30 or newer") from None
    except subprocess.TimeoutExpired:
        key = "proposals.git_timeout" if issubclass(error, ProposalError) else "sync.git_timeout"
        raise error(
            f"git {command_name(args)} {TIMED_OUT} {timeout:g}s; check the remote, or raise {key}"
        ) from None
    if done.returncode != 0:
        if _STOPPING.is_set() and done.returncode < 0:  # ended by the shutdown, not failed
            raise error(f"git {command_name(args)} ended: briefd was stopping")
        raise error(describe_failure(args, done.stderr.decode("utf-8", "replace")))
    return done.stdout


_RUNNING: set[int] = set()  # process groups of the git commands running now
_RUNNING_LOCK = threading.Lock()
_SPAWNED = threading.Condition(_RUNNING_LOCK)  # a spawn in flight became known (or failed)
_SPAWNING: list[None] = []  # one per git command being spawned, not yet in _RUNNING
_STOPPING = threading.Event()  # a server is stopping: no git command starts
SPAWN_WAIT_S = 2.0  # at most, for a command being spawned to become known, then ended


def _end_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def end_running() -> None:
    """End every git command this process runs now, with its helpers: briefd is stopping (a
    server's shutdown, an exit) while a background sync or a proposal runs git. A command
    another thread is spawning is waited for: spawned, it would outlive briefd unended."""
    with _SPAWNED:
        _SPAWNED.wait_for(lambda: not _SPAWNING, SPAWN_WAIT_S)
        for pid in _RUNNING:
            _end_group(pid)


@atexit.register
def _at_exit() -> None:
    """briefd exits (Ctrl-C or SIGTERM on a start-up's clone, a sync's thread running): its
    git commands end, and a thread that goes on while the interpreter finalizes starts none."""
    refuse_new()


def refuse_new(refuse: bool = True) -> None:
    """A server stops (``refuse``): end the git commands running now, and start none until
    it is done (``False``) — a sync whose fetch ended goes on to its next command (``git
    ls-remote``), which waited on the same silent remote past the shutdown."""
    if refuse:
        _STOPPING.set()
        end_running()
    else:
        _STOPPING.clear()


def _run(
    command: list[str], cwd: Path | None, stdin: bytes | None, timeout: float, env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """Run ``command`` in a process group of its own, ended whole when it does not finish (a
    timeout, an interrupt) or when briefd exits while it runs (a sync's thread, which no
    terminal's Ctrl-C reaches now): git's helpers (``git-remote-https`` waiting on a remote that
    never answers, ``receive-pack`` and its hooks) would outlive git, one more each sync."""
    with _spawned(command, cwd, env) as process:
        try:
            out, err = process.communicate(stdin, timeout=timeout)
        except BaseException:
            _end_group(process.pid)
            process.wait()
            raise
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(process.pid)
    return subprocess.CompletedProcess(command, process.returncode, out, err)


@contextlib.contextmanager
def _spawned(
    command: list[str], cwd: Path | None, env: dict[str, str]
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` started in a new session and known to :func:`end_running` — ended at once
    when briefd began to stop meanwhile. Known as it spawns: a stop (SIGTERM on the main
    thread) between the fork and its registration waits for it, instead of missing it."""
    with _SPAWNED:
        _SPAWNING.append(None)
    process = None
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    finally:
        with _SPAWNED:
            _SPAWNING.pop()
            if process is not None:
                _RUNNING.add(process.pid)
                if _STOPPING.is_set():  # started as briefd began to stop
                    _end_group(process.pid)
            _SPAWNED.notify_all()
    with process:
        yield process


def describe_failure(args: Sequence[str], stderr: str) -> str:
    """One line: the most telling line of git's output (the remote's own reason, then a
    rejected ref, then git's error; "failed to push some refs" says nothing), and a hint."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    said = [ln for ln in lines if _REMOTE_SAID.match(ln) and "%" not in ln]  # no progress
    declined = [ln for ln in lines if ln.startswith("! [remote rejected]") and DECLINED in ln]
    telling = (
        [ln for ln in lines if ln.startswith(("remote: error:", "remote: fatal:"))],
        said[:1] if declined else [],  # a hook's reason said plainly (GitLab, Gitea, Bitbucket)
        [ln for ln in lines if ln.startswith("! [")],
        _hook_refusal(lines),
        [ln for ln in lines if ln.startswith(("fatal:", "error:")) and "some refs" not in ln],
        [ln for ln in lines if ln.startswith(("fatal:", "error:"))],
        lines[-1:],
    )
    detail = next((found[0] for found in telling if found), "no message")
    if declined and declined[0] != detail:  # the remote's reason, and that its rules said no
        detail += f" ({declined[0].rpartition('(')[2]}"
    if said and _REFUSED_HTTP.search(detail):  # why: "Permission to … denied to …"
        detail += f" ({said[-1][:200]})"
    hint = next((h for keys, h in _HINTS if any(k in stderr for k in keys)), "")
    if (
        not hint
        and command_name(args) in ("fetch", "clone")
        and any(k in stderr for k in _BROKEN_OFF)
    ):
        hint = BROKEN_OFF_HINT
    message = f"git {command_name(args)} failed: {redact(detail)}"
    return f"{message}; {hint}" if hint else message


# what the remote said in its own words: not an error line (those come first), not a banner
_REMOTE_SAID = re.compile(r"remote: (?!error:|fatal:).*[^\W\d_]")
# an HTTP remote's refusal, whose reason git shows only as the answer's text ("remote: …")
_REFUSED_HTTP = re.compile(r"^fatal: unable to access .*returned error: 4\d\d$")
PRE_PUSH = "a pre-push hook refused the push"
DECLINED = "declined"  # in the reason of a push the remote's hook or rules refused
_GITS_OWN = ("error:", "fatal:", "hint:", "warning:", "remote:", "To ", "! [")


def _hook_refusal(lines: list[str]) -> list[str]:
    """The last line a pre-push hook wrote, as ``[PRE_PUSH: line]``, when a push failed with
    nothing refused by the remote (git says only "failed to push some refs"); else []."""
    if not any("failed to push some refs" in ln for ln in lines):
        return []
    if any(ln.startswith(("! [", "fatal:")) for ln in lines):  # the remote's, or the transport's
        return []
    said = [ln for ln in lines if not ln.startswith(_GITS_OWN)]
    return [f"{PRE_PUSH}: {said[-1]}"] if said else []


def command_name(args: Sequence[str]) -> str:
    """``fetch`` for ``-c gc.auto=0 fetch …``."""
    rest = list(args)
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in ("-c", "-C") else rest[1:]
    return rest[0] if rest else "command"


def toplevel(path: Path, timeout: float = 30) -> tuple[Path, str] | None:
    """(work tree root, ``path`` relative to it with a trailing slash or '') when ``path`` is
    inside a git checkout; None otherwise (also when git is missing). A checkout git refuses
    to read (another user owns it) raises SourceError: it is no plain folder."""
    try:
        out = run(["rev-parse", "--show-toplevel", "--show-prefix"], path, timeout)
    except BriefdError as exc:
        if DUBIOUS in str(exc):
            raise
        return None
    lines = out.splitlines()
    if not lines:
        return None
    return Path(lines[0]), lines[1] if len(lines) > 1 else ""


def is_git_dir(path: Path, timeout: float = 30) -> bool:
    """``path`` is a bare repository or a ``.git`` folder (git's files, no work tree)."""
    if not (path / "HEAD").is_file():  # a plain folder costs no git call
        return False
    try:
        return run(["rev-parse", "--is-inside-git-dir"], path, timeout) == "true"
    except BriefdError:
        return False


def rev_parse(repo: Path, ref: str, timeout: float, error: type[BriefdError] = SourceError) -> str:
    return run(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], repo, timeout, error)


def remove_stale_locks(repo: Path, older_than: float | None = None) -> list[str]:
    """Delete lock files a killed git left behind in a clone briefd owns. With ``older_than``
    None, every one: call it so only while no git can be working in that clone (briefd's sync
    lock, and :func:`briefd.sources.knowledge.clone_unused`). Else only those unchanged for
    ``older_than`` seconds: a git briefd runs is killed at its timeout, so a lock older than
    the longest timeout belongs to no live git of briefd's; so does one dated that much ahead
    of the clock (a clone restored from a backup, a clock set back since: "unchanged for"
    could not be told, and every fetch failed on it until the clock caught up). ``repo`` is
    a checkout (its ``.git``) or a bare clone (the folder itself: code repositories are cloned
    bare)."""
    git_dir = repo / ".git" if (repo / ".git").is_dir() else repo
    candidates = [git_dir / n for n in ("index.lock", "HEAD.lock", "packed-refs.lock")]
    candidates += [git_dir / "config.lock", git_dir / "shallow.lock"]
    if (git_dir / "refs").is_dir():
        candidates += list((git_dir / "refs").rglob("*.lock"))
    now = time.time()
    removed = []
    for path in candidates:
        try:
            if older_than is not None and abs(now - path.stat().st_mtime) < older_than:
                continue
            path.unlink()
        except FileNotFoundError:  # none there, or its git finished since
            continue
        removed.append(path.name)
    return removed


def private_folder(path: Path) -> Path:
    """Make the empty folder ``path`` for a clone, readable by its user alone (0700): a clone
    holds the knowledge, and its ``.git/config`` the remote's URL (with a token written as
    its user name, the one form :func:`remote` leaves in it), which a folder made with the
    umask (0755) let every user of the machine read."""
    path.mkdir(mode=0o700)
    path.chmod(0o700)  # whatever the umask took away or not
    return path


def clone_folder(root: Path, setting: str) -> None:
    """Make the folder a clone at ``root`` goes in: a file in the way (at ``root`` or above)
    or a folder that cannot be made is a SourceError naming ``setting``, never an OSError."""
    in_way = next((p for p in (root, *root.parents) if p.exists() and not p.is_dir()), None)
    if in_way is not None:
        raise SourceError(
            f"{in_way} is a file, not a folder, so nothing can be cloned into {root}; set "
            f"{setting} to a folder"
        )
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SourceError(
            f"cannot make {root.parent} for a clone ({exc.strerror}); set {setting} to a "
            "folder you can write"
        ) from None
