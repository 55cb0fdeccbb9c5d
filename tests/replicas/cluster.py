"""Replicas for real: ``briefd serve`` processes on 127.0.0.1 sharing a PostgreSQL
(:mod:`tests.postgres`), behind a real nginx doing round robin, all following one bare git
remote. Used by the acceptance tests and by ``bench/replicas.py``."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests import zygote
from tests.postgres import free_port

SECRET = "replica-webhook-secret"
NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/bin/nginx")


def nginx_binary() -> str | None:
    for candidate in NGINX_CANDIDATES:
        if Path(candidate).is_file():
            return candidate
    return shutil.which("nginx")


@dataclass
class Replica:
    name: str
    home: Path
    port: int
    env: dict[str, str]
    process: subprocess.Popen[str] | zygote.WarmProcess | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90) -> None:
        with (self.home / "serve.log").open("ab") as log:
            self.process = zygote.popen(
                ["serve", "--port", str(self.port)],
                cwd=self.home,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited: {self.log()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/api/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise AssertionError(f"{self.name} did not start: {self.log()[-2000:]}")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        path = self.home / "serve.log"
        return path.read_text(errors="replace") if path.is_file() else ""


@dataclass
class Balancer:
    """nginx: round robin over the replicas, a failed one skipped (and the request retried on
    the next, POSTs too), ``X-Upstream`` naming the replica that answered."""

    home: Path
    port: int
    upstreams: list[int]
    process: subprocess.Popen[str] | zygote.WarmProcess | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> str:
        servers = "\n".join(
            f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;" for p in self.upstreams
        )
        user = "user root;\n" if os.geteuid() == 0 else ""
        temp = "\n".join(
            f"    {kind}_temp_path {self.home}/{kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        return f"""{user}worker_processes 1;
daemon off;
pid {self.home}/nginx.pid;
error_log {self.home}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
{temp}
    upstream briefd {{
{servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{self.port};
        client_max_body_size 8m;
        location / {{
            proxy_pass http://briefd;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_next_upstream error timeout http_502 non_idempotent;
            proxy_next_upstream_tries 2;
            proxy_connect_timeout 1s;
            proxy_read_timeout 60s;
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"""

    def start(self, binary: str) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        conf = self.home / "nginx.conf"
        conf.write_text(self.config())
        self.process = subprocess.Popen(
            [binary, "-c", str(conf), "-p", str(self.home)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{self.url}/api/health", timeout=2)
                return
            except httpx.HTTPError:
                time.sleep(0.05)
        raise AssertionError(f"nginx did not start: {(self.home / 'error.log').read_text()}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@dataclass
class Cluster:
    replicas: list[Replica]
    balancer: Balancer
    state_url: str
    extra: dict[str, str] = field(default_factory=dict)

    def replica_at(self, upstream: str) -> Replica:
        port = int(upstream.rsplit(":", 1)[1])
        return next(r for r in self.replicas if r.port == port)

    def stop(self) -> None:
        self.balancer.stop()
        for r in self.replicas:
            r.stop()


def replica_env(home: Path, name: str, source: str, state_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(
        BRIEFD_SOURCE=source,
        BRIEFD_DB=str(home / "data" / "index.db"),
        BRIEFD_EMBEDDINGS__ENABLED="false",
        BRIEFD_SYNC__INTERVAL="0",
        BRIEFD_SYNC__WEBHOOK_SECRET=SECRET,
        BRIEFD_PROPOSALS__ENABLED="true",
        BRIEFD_PROPOSALS__PUSH="true",
        BRIEFD_SERVE__FLUSH_SECONDS="0.5",
        BRIEFD_STATE__URL=state_url,
        BRIEFD_STATE__REPLICA=name,
        BRIEFD_STATE__TIMEOUT_SECONDS="1",
    )
    return env


def start_cluster(root: Path, source: str, state_url: str, count: int = 2) -> Cluster:
    binary = nginx_binary()
    if binary is None:
        raise AssertionError("nginx is missing (apt-get install nginx-light)")
    replicas = []
    for i in range(count):
        home = root / f"replica-{i + 1}"
        home.mkdir(parents=True)
        name = f"replica-{i + 1}"
        replicas.append(
            Replica(name, home, free_port(), replica_env(home, name, source, state_url))
        )
    for r in replicas:
        r.start()
    balancer = Balancer(root / "nginx", free_port(), [r.port for r in replicas])
    balancer.start(binary)
    return Cluster(replicas, balancer, state_url)
