"""A git smart-HTTP remote on 127.0.0.1 behind HTTP Basic authentication: git's own
``git http-backend`` (the CGI program git's documentation puts behind Apache or nginx), run
for each request by a small threaded HTTP server. ``delay`` holds each request, so a test can
look at the processes git runs meanwhile; ``cut_fetch`` breaks each fetch's answer off after its
first bytes, as a remote (or a proxy) that dies mid-transfer does; ``read_only`` refuses pushes
with GitHub's 403 for a token that may only read."""

from __future__ import annotations

import base64
import gzip
import os
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit


class AuthenticatedGit:
    """Serves the repositories under ``root`` to ``user``:``password`` only."""

    def __init__(self, root: Path, user: str, password: str, delay: float = 0.0) -> None:
        self.root, self.delay = root, delay
        self.expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.refused = 0  # requests without (or with wrong) credentials
        self.cut_fetch = False
        self.read_only = False  # the credentials may fetch, not push: 403, as GitHub answers
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def url(self, repo: str, credentials: str = "") -> str:
        return f"http://{credentials}{'@' if credentials else ''}127.0.0.1:{self.port}/{repo}"

    def __enter__(self) -> AuthenticatedGit:
        self.thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        remote = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._backend()

            def do_POST(self) -> None:
                self._backend()

            def _backend(self) -> None:
                if self.headers.get("Authorization") != remote.expected:
                    remote.refused += 1
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if remote.read_only and "git-receive-pack" in self.path:
                    self._refuse_push()
                    return
                time.sleep(remote.delay)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                url = urlsplit(self.path)
                env = {
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "GIT_PROJECT_ROOT": str(remote.root),
                    "GIT_HTTP_EXPORT_ALL": "1",
                    "PATH_INFO": url.path,
                    "QUERY_STRING": url.query,
                    "REQUEST_METHOD": self.command,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "CONTENT_LENGTH": str(len(body)),
                    "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                    "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                    "REMOTE_USER": "git",
                    "REMOTE_ADDR": "127.0.0.1",
                }
                done = subprocess.run(
                    ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
                )
                head, _, payload = done.stdout.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.strip().split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                encoding = self.headers.get("Content-Encoding", "")
                if remote.cut_fetch and _asks_for_objects(body, encoding):
                    self.wfile.write(payload[: len(payload) // 4])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(payload)

            def _refuse_push(self) -> None:
                said = f"Permission to {self.path.split('/')[1]} denied to bot.\n".encode()
                self.send_response(403)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(said)))
                self.end_headers()
                self.wfile.write(said)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def _asks_for_objects(body: bytes, encoding: str) -> bool:
    """The request is a fetch's (protocol v2 ``command=fetch``, v0 ``want``), not a listing."""
    if encoding == "gzip":
        body = gzip.decompress(body)
    return b"command=fetch" in body or body[4:9] == b"want "
