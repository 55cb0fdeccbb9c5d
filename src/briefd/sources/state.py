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
from dataclasses import dataclass, field
from pathlib import Path

from briefd.errors import BriefdError
from briefd.markdown.versions import CHUNKER_VERSION, FRONT_MATTER_VERSION, LINKS_VERSION
from briefd.model import SkippedFile
from briefd.settings import Settings
from briefd.sources import git
from briefd.sources.layout import Layout
from briefd.sources.scan import CONFLICTED, TOO_LARGE, UNREADABLE_FOLDER, SourceFile, scan

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
    like decides what to do (PowerShell 5 writes UTF-16; an image renamed ``.md`` is no text);
    else where its first byte that is not UTF-8 is, which an editor opening the file as UTF-8
    does not show (a stray byte from a paste in an otherwise UTF-8 document)."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return UTF16
    if b"\0" in raw:
        return NOT_TEXT
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = _first_bad_byte(raw, exc.start)
        return f"not valid UTF-8 text: {where}; fix that character, or save the file as UTF-8"
    return NOT_UTF8


def _first_bad_byte(raw: bytes, at: int) -> str:
    """``byte 0xE9 at line 3, column 9 (é in Windows-1252)``: the line and column (in
    characters) of the byte at ``at``, and what Windows-1252, the usual other encoding, reads."""
    start = raw.rfind(b"\n", 0, at) + 1
    line = raw.count(b"\n", 0, at) + 1
    column = len(raw[start:at].decode("utf-8")) + 1
    where = f"byte 0x{raw[at]:02X} at line {line}, column {column}"
    try:
        seen = raw[at : at + 1].decode("cp1252")
    except UnicodeDecodeError:
        return where
    return f"{where} ({seen} in Windows-1252)" if seen.isprintable() else where


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


def chunking_part(signature: str) -> str:
    """A parse signature without its links part (``links 12 shared a,b``): what decides the
    documents' chunks, titles and scopes. Signatures that differ only there need the links
    resolved again, not every document read again (``briefd.ingest``)."""
    return "; ".join(p for p in signature.split("; ") if not p.startswith("links "))


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
    scan skipped, in the order an index run reports them; ``unread``: the files listed but not
    read as text (path → content hash, '' when they could not be read at all), ``listed``:
    every listed file's scope."""

    hashes: dict[str, str]
    scopes: dict[str, str]
    skipped: tuple[SkippedFile, ...]
    unread: dict[str, str] = field(default_factory=dict)
    listed: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)  # by index.exclude/.gitignore: why

    def as_indexed(self, indexed: Mapping[str, str]) -> SourceState:
        """The state an index run over an index holding ``indexed`` (path → content hash)
        records: the documents it keeps serving as last indexed (:func:`keep_indexed`) count,
        with their scopes, and their skipped reasons say so."""
        hashes, skipped = dict(self.hashes), list(self.skipped)
        keep_indexed(indexed, hashes, skipped, self.unread)
        scopes = {path: scope for path, scope in self.listed.items() if path in hashes}
        skips = tuple(sorted(skipped, key=lambda s: s.path))
        return SourceState(hashes, scopes, skips, self.unread, self.listed, self.left_out)


def read_state(root: Path, settings: Settings) -> SourceState:
    """Scan ``root`` and hash every file an index run would index (reads each file once)."""
    left_out: dict[str, str] = {}
    files, skipped = scan(root, settings.index, Layout.of(settings), left_out)
    hashes: dict[str, str] = {}
    unread: dict[str, str] = {}
    for file in files:
        digest, why = _digest(file)
        if why:
            skipped.append(SkippedFile(file.path, why))
            unread[file.path] = digest
        else:
            hashes[file.path] = digest
    listed = {f.path: f.scope for f in files}
    scopes = {path: scope for path, scope in listed.items() if path in hashes}
    skips = tuple(sorted(skipped, key=lambda s: s.path))
    return SourceState(hashes, scopes, skips, unread, listed, left_out)


def _digest(file: SourceFile) -> tuple[str, str]:
    """The file's content hash ('' when unreadable) and why it is not indexed ('': it is)."""
    try:
        raw = file.abs_path.read_bytes()
    except OSError as exc:
        return "", f"cannot read it ({exc.strerror or exc})"
    digest = hashlib.sha256(raw).hexdigest()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return digest, not_utf8(raw)
    return digest, LFS_POINTER if lfs_pointer(raw) else ""


def keep_indexed(
    known: Mapping[str, str],
    current: dict[str, str],
    skipped: list[SkippedFile],
    unread: Mapping[str, str],
) -> None:
    """Add to ``current`` (path → hash) the documents the index holds (``known``) that keep
    being served as last indexed, and say so in their ``skipped`` reason: a file not read as
    text now (``unread``: path → its hash; a stray byte or a permission change must not take a
    document away), but for a Git LFS pointer an earlier build indexed as it is; a file grown
    past ``index.max_file_bytes``; a file a merge left with conflicts in a checkout; the documents under a folder the scan could not read. The
    full run and the no-change check both count these, so that their keys agree."""
    for number, skip in enumerate(skipped):
        path, reason = skip.path, skip.reason
        if reason.startswith(UNREADABLE_FOLDER):
            folder = "" if path == "./" else path
            kept = [p for p in known if p.startswith(folder) and p not in current]
            current.update((p, known[p]) for p in kept)
            if kept:
                counted = "document" if len(kept) == 1 else f"{len(kept)} documents"
                what = f"the {counted} indexed before under it {'is' if len(kept) == 1 else 'are'}"
                skipped[number] = SkippedFile(path, f"{reason}; {what} kept")
            continue
        unreadable = path in unread and unread[path] != known.get(path)
        if path in known and (unreadable or reason.startswith((TOO_LARGE, CONFLICTED))):
            current[path] = known[path]
            skipped[number] = SkippedFile(path, f"{reason}; the version indexed before is kept")


def head_commit(root: Path, timeout: float) -> str:
    """The commit checked out at ``root`` ('' outside a git work tree, or without git): with
    the files' hashes it decides each document's last commit (K3)."""
    try:
        return git.rev_parse(root, "HEAD", timeout)
    except (BriefdError, OSError):
        return ""


def without_commits(root: Path, timeout: float) -> bool:
    """``root`` is in a git work tree that has no commit checked out (``git init``, nothing
    committed yet): asked only where :func:`head_commit` found none."""
    try:
        return git.toplevel(root, timeout) is not None
    except (BriefdError, OSError):
        return False


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
    layout = Layout.of(settings)
    return sorted(s.path for s in skipped if layout.is_outside(s.reason))


def skipped_files(
    skipped: Iterable[SkippedFile], settings: Settings, left_out: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The files of a scope a scan found but did not index (too large, not UTF-8 text, a Git
    LFS pointer, unreadable…) and the documents ``index.exclude`` or a ``.gitignore`` leave
    out (``left_out``), each with why: links may name them."""
    layout = Layout.of(settings)
    found = {
        s.path: s.reason
        for s in skipped
        if not layout.is_outside(s.reason) and not s.path.endswith("/")
    }
    return {**(left_out or {}), **found}


def source_key(
    fingerprint: str,
    scopes: Mapping[str, str],
    head: str,
    model: str | None,
    root: Path,
    outside: Iterable[str] = (),
    skipped: Iterable[str] = (),
) -> str:
    """One hash of everything a no-change run compares: the fingerprint (files and chunker),
    each file's scope, the git commit, the embedding model id ('' without embeddings), the
    source folder, the files outside every scope and the files of a scope not indexed (links
    to them are resolved as such)."""
    digest = hashlib.sha256(f"{fingerprint}\n{head}\n{model or ''}\n{root.resolve()}\n".encode())
    for path in sorted(scopes):
        digest.update(f"{path}\x00{scopes[path]}\n".encode())
    for path in sorted(outside):  # none: the key as it was before they counted
        digest.update(f"{path}\x00\x00outside\n".encode())
    for path in sorted(skipped):  # none: the key as it was before they counted
        digest.update(f"{path}\x00\x00skipped\n".encode())
    return digest.hexdigest()
