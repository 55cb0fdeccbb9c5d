"""Weights on disk: whether a model's files are present, and ``briefd model pull``.

A pull streams each file into a temporary file in its final directory while hashing it, checks
the pinned size and SHA-256, and only then renames it into place (atomic on one filesystem).
A mismatch, an HTTP error or an interruption deletes the temporary file, so a model directory
never holds a half-written or unverified file under a real name. Files that ship inside a
package are never downloaded: pull checks that they are installed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from briefd.embeddings.spec import (
    DownloadedFile,
    ModelSpec,
    PackagedFile,
    WeightFile,
    file_problem,
    install_hint,
    locate,
)
from briefd.errors import EmbeddingError
from briefd.folders import sweep_abandoned
from briefd.proxy import site_proxy

if TYPE_CHECKING:
    import httpx

# (file path, bytes so far, bytes expected)
Progress = Callable[[str, int, int], None]
# the client a request to a URL goes through: each redirect's URL gets its own (its proxy)
ClientFor = Callable[[str], "httpx.Client"]
CHUNK_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class FileStatus:
    path: str
    location: str | None
    present: bool
    problem: str | None
    action: str = "none"  # pull: "downloaded", "verified" (already there), "packaged"


@dataclass(frozen=True, slots=True)
class ModelStatus:
    name: str
    dim: int
    languages: str
    runtime: str
    license: str
    summary: str
    weights_from: str
    packages: tuple[str, ...]
    present: bool
    files: tuple[FileStatus, ...]


def model_status(spec: ModelSpec, model_dir: Path, verify: bool = False) -> ModelStatus:
    """Presence of every file (sizes only, unless ``verify`` also hashes the downloaded ones)."""
    files = tuple(_file_status(spec, f, model_dir, verify) for f in spec.files)
    return _status(spec, files)


def pull_model(
    spec: ModelSpec,
    model_dir: Path,
    client: httpx.Client | ClientFor,
    base_url: str | None = None,
    progress: Progress | None = None,
) -> ModelStatus:
    """Download what is missing or wrong, verify everything; raise on the first failure.
    ``client``: one client for every request, or the client for each URL (a redirect to
    another host then goes through that host's proxy, see :class:`briefd.proxy.ProxiedClients`)."""
    statuses = []
    for file in spec.files:
        if isinstance(file, PackagedFile):
            statuses.append(_require_packaged(spec, file, model_dir))
            continue
        status = _file_status(spec, file, model_dir, verify=True)
        if not status.present:
            base = base_url or spec.download_url or ""
            target = locate(file, spec, model_dir)
            assert target is not None
            download(client, _join(base, file.path), target, file, progress)
            status = FileStatus(file.path, str(target), True, None, "downloaded")
        statuses.append(status)
    return _status(spec, tuple(statuses))


def download(
    client: httpx.Client | ClientFor,
    url: str,
    target: Path,
    file: DownloadedFile,
    progress: Progress | None = None,
) -> None:
    """Stream ``url`` to ``target`` through a verified temporary file in the same directory."""
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep_abandoned(target.parent, f".{target.name}.*.partial*")  # what a killed pull left
    prefix = f".{target.name}.{os.getpid()}.partial"  # its writer named, for that sweep
    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".part")
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            digest = _stream(client, url, out, file, progress)
            out.flush()
            os.fsync(out.fileno())
        if digest != file.sha256:
            raise EmbeddingError(
                f"checksum mismatch for {file.path} from {url}: expected sha256 {file.sha256}, "
                f"got {digest}; nothing was saved — check the mirror (--url) and pull again"
            )
        temp.replace(target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise


def _stream(
    client: httpx.Client | ClientFor,
    url: str,
    out: BinaryIO,
    file: DownloadedFile,
    progress: Progress | None,
) -> str:
    import httpx  # only a pull downloads: every other command starts without it

    digest = hashlib.sha256()
    done = 0
    try:
        with _followed(client, url) as response:
            if response.status_code >= 400:
                raise EmbeddingError(
                    f"download of {file.path} failed: HTTP {response.status_code} from {url}; "
                    "check the URL (--url) and the network"
                )
            for block in response.iter_bytes(CHUNK_BYTES):
                done += len(block)
                if done > file.size:
                    raise EmbeddingError(
                        f"download of {file.path} from {url} is larger than the pinned "
                        f"{file.size} bytes; nothing was saved — check the mirror (--url)"
                    )
                digest.update(block)
                out.write(block)
                if progress is not None:
                    progress(file.path, done, file.size)
    except httpx.HTTPError as exc:
        raise _failed(exc, client, url, file) from None
    return digest.hexdigest()


def _failed(
    exc: httpx.HTTPError, client: httpx.Client | ClientFor, url: str, file: DownloadedFile
) -> EmbeddingError:
    """What a download that failed before an answer says: the proxy it went through, when
    the environment names one for the URL that failed (``url``, or a host it redirected
    to), so a proxy that is down is not taken for the mirror (and the mirror for the proxy)."""
    import httpx

    failed, proxy = url, None
    with contextlib.suppress(RuntimeError):  # a request always comes with it from a send
        failed = str(exc.request.url)
    if not isinstance(client, httpx.Client):  # each URL's own proxy (briefd.proxy)
        with contextlib.suppress(EmbeddingError):
            proxy = site_proxy(failed, "model downloads", EmbeddingError)
    name = type(exc).__name__
    if proxy is None:
        return EmbeddingError(
            f"download of {file.path} from {url} failed ({name}); "
            "check the URL (--url) and the network, then pull again"
        )
    host = httpx.URL(failed).host
    hop = "" if failed == url else f" (redirected to {failed})"
    return EmbeddingError(
        f"download of {file.path} from {url}{hop} failed through {proxy.said()} ({name}); "
        f"check that proxy and the URL (--url), or, if {host} is reachable without the proxy, "
        f"add {host} to NO_PROXY; then pull again"
    )


@contextlib.contextmanager
def _followed(client: httpx.Client | ClientFor, url: str) -> Iterator[httpx.Response]:
    """The streamed response to GET ``url`` after its redirects (httpx's rules and bound),
    each hop sent with the client for its own URL: a mirror redirecting to a CDN on another
    host reaches it through the proxy the environment names for that host."""
    import httpx

    client_for = (lambda _url: client) if isinstance(client, httpx.Client) else client
    sender = client_for(url)
    request = sender.build_request("GET", url)
    for _hop in range(sender.max_redirects + 1):
        response = sender.send(request, stream=True, follow_redirects=False)
        if response.next_request is None:
            try:
                yield response
            finally:
                response.close()
            return
        response.close()
        request = response.next_request
        sender = client_for(str(request.url))
    raise httpx.TooManyRedirects("Exceeded maximum allowed redirects.", request=request)


def _file_status(spec: ModelSpec, file: WeightFile, model_dir: Path, verify: bool) -> FileStatus:
    path = locate(file, spec, model_dir)
    problem = file_problem(file, path, verify)
    action = "packaged" if isinstance(file, PackagedFile) else "verified"
    location = str(path) if path is not None else None
    return FileStatus(file.path, location, problem is None, problem, action)


def _require_packaged(spec: ModelSpec, file: PackagedFile, model_dir: Path) -> FileStatus:
    status = _file_status(spec, file, model_dir, verify=False)
    if not status.present:
        raise EmbeddingError(
            f"{spec.name} ships inside a Python package, not as a download, and {file.path} is "
            f"not installed ({status.problem}): {install_hint(spec, file)}"
        )
    return status


def _status(spec: ModelSpec, files: tuple[FileStatus, ...]) -> ModelStatus:
    return ModelStatus(
        name=spec.name,
        dim=spec.dim,
        languages=spec.languages,
        runtime=spec.runtime,
        license=spec.license,
        summary=spec.summary,
        weights_from=spec.weights_from(),
        packages=spec.packages,
        present=all(f.present for f in files),
        files=files,
    )


def _join(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")
