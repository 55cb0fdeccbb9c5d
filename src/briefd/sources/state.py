"""What an index was built from, cheaply: the source files' hashes and scopes, what chunked them,
the git commit, the embedding model — folded into one key (O4).

An index run stores the key once its index is complete (every chunk has a vector); the next
``briefd index`` recomputes it from the files alone — a scan, a hash per file, one
``git rev-parse`` — and when it matches, there is nothing to do: no parser, no model, no vectors.
Standard library and the scanner only; nothing here loads a model or numpy.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from briefd.errors import BriefdError
from briefd.markdown.versions import CHUNKER_VERSION, FRONT_MATTER_VERSION, LINKS_VERSION
from briefd.model import SkippedFile
from briefd.settings import Settings
from briefd.sources import git
from briefd.sources.layout import Layout
from briefd.sources.scan import SourceFile, scan

NOT_UTF8 = "not valid UTF-8 text; save it as UTF-8"
UTF16 = "UTF-16 text (it starts with a UTF-16 byte order mark), not UTF-8; save it as UTF-8"
NOT_TEXT = (
    "not text: it holds NUL bytes (binary data, or UTF-16/32 text); save text as UTF-8, or "
    "leave the file out with index.exclude"
)


LFS_POINTER = (
    "a Git LFS pointer, not the document; install git-lfs and run `git lfs pull` in the source"
)
_LFS_OID = re.compile(rb"^oid sha256:[0-9a-f]{64}\r?$", re.MULTILINE)


def lfs_pointer(raw: bytes) -> bool:
    """Whether ``raw`` is a Git LFS pointer file (what a checkout holds where git-lfs did not
    fetch the content): under 1024 bytes, its version line first, an ``oid sha256:`` line."""
    return (
        len(raw) < 1024
        and raw.startswith(b"version https://git-lfs.github.com/spec/v1")
        and _LFS_OID.search(raw) is not None
    )


def not_utf8(raw: bytes) -> str:
    """Why the file of ``raw`` bytes, which are not valid UTF-8, is not indexed: what it looks
    like decides what to do (PowerShell 5 writes UTF-16; an image renamed ``.md`` is no text)."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return UTF16
    return NOT_TEXT if b"\0" in raw else NOT_UTF8


def parse_signature(settings: Settings) -> str:
    """What decides a file's chunks and links besides its bytes: the chunker and its settings,
    which front-matter keys are read, how links resolve (the resolver, and the shared scopes
    an ambiguous name prefers: ``default_scopes``) and the scope each file is stored with (the
    ``scopes:`` rules: a file whose scope changed is read again, bundles compiled before are
    not served)."""
    chunking = settings.chunking
    tokens = f"tokens {chunking.target_tokens}/{chunking.max_tokens}"
    links = f"links {LINKS_VERSION} shared {','.join(settings.default_scopes)}"
    rules = ",".join(f"{rule.folder}={rule.scope or '*'}" for rule in settings.scopes)
    front = f"front matter {FRONT_MATTER_VERSION}"
    return f"chunker {CHUNKER_VERSION}; {tokens}; {front}; {links}; scopes {rules}"


def index_fingerprint(hashes: Mapping[str, str], signature: str = "") -> str:
    """Hash of every indexed (path, content_hash) and of what chunked them: changes whenever
    the knowledge, or the sections it is cut into, does."""
    digest = hashlib.sha256(signature.encode())
    for path in sorted(hashes):
        digest.update(f"{path}\x00{hashes[path]}\n".encode())
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class SourceState:
    """The readable UTF-8 files of a source (path → content hash, path → scope) and what the
    scan skipped, in the order an index run reports them."""

    hashes: dict[str, str]
    scopes: dict[str, str]
    skipped: tuple[SkippedFile, ...]


def read_state(root: Path, settings: Settings) -> SourceState:
    """Scan ``root`` and hash every file an index run would index (reads each file once)."""
    files, skipped = scan(root, settings.index, Layout.of(settings))
    hashes: dict[str, str] = {}
    for file in files:
        digest = _digest(file, skipped)
        if digest is not None:
            hashes[file.path] = digest
    scopes = {f.path: f.scope for f in files if f.path in hashes}
    return SourceState(hashes, scopes, tuple(sorted(skipped, key=lambda s: s.path)))


def _digest(file: SourceFile, skipped: list[SkippedFile]) -> str | None:
    try:
        raw = file.abs_path.read_bytes()
    except OSError as exc:
        skipped.append(SkippedFile(file.path, f"cannot read it ({exc.strerror or exc})"))
        return None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        skipped.append(SkippedFile(file.path, not_utf8(raw)))
        return None
    if lfs_pointer(raw):
        skipped.append(SkippedFile(file.path, LFS_POINTER))
        return None
    return hashlib.sha256(raw).hexdigest()


def head_commit(root: Path, timeout: float) -> str:
    """The commit checked out at ``root`` ('' outside a git work tree, or without git): with
    the files' hashes it decides each document's last commit (K3)."""
    try:
        return git.rev_parse(root, "HEAD", timeout)
    except (BriefdError, OSError):
        return ""


def untouched_between(root: Path, old: str, new: str, timeout: float) -> bool:
    """Whether moving the checkout from commit ``old`` to ``new`` left every document's history
    under ``root`` as it was: ``old`` is an ancestor of ``new`` and no commit after it touched
    anything under ``root`` (a commit to the code beside the knowledge, an empty commit). Any
    doubt (no git, another branch, a failure) says no."""
    if not old or not new:
        return False
    try:
        git.run(["merge-base", "--is-ancestor", old, new], root, timeout)
        return git.run(["rev-list", "-1", f"{old}..{new}", "--", "."], root, timeout) == ""
    except (BriefdError, OSError):
        return False


def vectors_id(model: str | None, window_words: int) -> str | None:
    """What the vectors of an index are: the model, and the window size its chunks were also
    cut at (``embeddings.window_words``), so a change of either runs the index again."""
    return f"{model}|windows {window_words}" if model and window_words > 0 else model


def outside_scopes(skipped: Iterable[SkippedFile], settings: Settings) -> list[str]:
    """The files a scan found outside every scope: not indexed, but links may name them."""
    reason = Layout.of(settings).outside()
    return sorted(s.path for s in skipped if s.reason == reason)


def source_key(
    fingerprint: str,
    scopes: Mapping[str, str],
    head: str,
    model: str | None,
    root: Path,
    outside: Iterable[str] = (),
) -> str:
    """One hash of everything a no-change run compares: the fingerprint (files and chunker),
    each file's scope, the git commit, the embedding model id ('' without embeddings), the
    source folder and the files outside every scope (links to them are resolved as such)."""
    digest = hashlib.sha256(f"{fingerprint}\n{head}\n{model or ''}\n{root.resolve()}\n".encode())
    for path in sorted(scopes):
        digest.update(f"{path}\x00{scopes[path]}\n".encode())
    for path in sorted(outside):  # none: the key as it was before they counted
        digest.update(f"{path}\x00\x00outside\n".encode())
    return digest.hexdigest()
