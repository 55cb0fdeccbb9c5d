"""The deployment files agree with each other and with the settings: every ``BRIEFD_*`` name in
the Dockerfile and compose.yaml is a real settings key, the image's default briefd.yaml loads,
compose's port, volume and secret are the ones the image serves, keeps and reads. (Building and
running the image is ``make image-test``: tests/image.)"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from briefd.settings import load_settings
from tests.conftest import REPO

DOCKERFILE = (REPO / "Dockerfile").read_text()
COMPOSE = yaml.safe_load((REPO / "compose.yaml").read_text())
ENTRYPOINT_SH = REPO / "docker" / "entrypoint.sh"
ENTRYPOINT = ENTRYPOINT_SH.read_text()


def dockerfile_env() -> dict[str, str]:
    block = DOCKERFILE[DOCKERFILE.index("\nENV PATH=") :].split("\nUSER", 1)[0]
    return dict(re.findall(r"(BRIEFD_\w+)=(\S+)", block))


def test_the_image_environment_is_made_of_settings_keys() -> None:
    env = dockerfile_env()
    assert set(env) == {
        "BRIEFD_CONFIG",
        "BRIEFD_DB",
        "BRIEFD_SERVE__HOST",
        "BRIEFD_EMBEDDINGS__MODEL_DIR",
    }
    config = REPO / "docker" / "briefd.yaml"
    settings = load_settings(config=config, env={**env, "BRIEFD_CONFIG": str(config)})
    assert str(settings.db) == "/data/briefd.db" and settings.serve.host == "0.0.0.0"
    assert str(settings.embeddings.model_dir) == "/opt/briefd/models"
    assert str(settings.sync.checkout_dir or settings.db.parent / "repo").startswith("/data/")


def test_compose_matches_the_image() -> None:
    (name,) = COMPOSE["services"]
    service = COMPOSE["services"][name]
    assert service["build"] == "." and (REPO / "Dockerfile").is_file()
    assert service["ports"] == ["8484:8484"] and "\nEXPOSE 8484\n" in DOCKERFILE
    assert service["volumes"][0].endswith(":/data") and 'VOLUME ["/data"]' in DOCKERFILE
    assert service["secrets"] == ["git_ssh_key"]
    assert "${GIT_SSH_KEY_FILE:-/run/secrets/git_ssh_key}" in ENTRYPOINT
    assert "${GIT_TOKEN_FILE:-/run/secrets/git_token}" in ENTRYPOINT

    samples = {
        "BRIEFD_SOURCE": "git@github.com:acme/knowledge.git",
        "BRIEFD_SYNC__WEBHOOK_SECRET": "s3cret",
    }
    names = set(service["environment"])
    assert names == {*samples, "BRIEFD_API_TOKEN"}  # the token is no setting: never in a file
    settings = load_settings(config=None, env=samples)
    assert settings.sync.remote == samples["BRIEFD_SOURCE"]
    assert settings.sync.webhook_secret == "s3cret"


def test_the_replicas_compose_is_made_of_settings_keys_and_a_valid_nginx_config(
    tmp_path: Path,
) -> None:
    """compose.replicas.yaml: every replica has its own volume and name, one shared state URL,
    and nginx balances exactly those replicas; ``nginx -t`` accepts the config (with the
    service names resolved to loopback, as compose's DNS would)."""
    compose = yaml.safe_load((REPO / "compose.replicas.yaml").read_text())
    replicas = {k: v for k, v in compose["services"].items() if k.startswith("briefd-")}
    assert sorted(replicas) == ["briefd-1", "briefd-2"]
    volumes = [v["volumes"][0] for v in replicas.values()]
    assert len(set(volumes)) == 2 and all(v.endswith(":/data") for v in volumes)
    for name, service in replicas.items():
        env = service["environment"]
        assert env["BRIEFD_STATE__REPLICA"] == name
        assert env["BRIEFD_STATE__URL"].startswith("postgresql://briefd:")
        samples = {k: "x" for k in env if k != "BRIEFD_API_TOKEN"} | {"BRIEFD_STATE__REPLICA": name}
        samples["BRIEFD_STATE__URL"] = "postgresql://briefd:pw@postgres:5432/briefd"
        settings = load_settings(config=None, env=samples)
        assert settings.state.replica == name and settings.state.url
    conf = (REPO / "docker" / "nginx-replicas.conf").read_text()
    assert re.findall(r"server (briefd-\d):8484", conf) == sorted(replicas)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).is_file():
        pytest.skip("nginx is missing (apt-get install nginx-light)")
    local = conf.replace("briefd-1:", "127.0.0.1:").replace("briefd-2:", "127.0.0.2:")
    local = local.replace("listen 8484;", "listen 127.0.0.1:18484;")
    (tmp_path / "nginx.conf").write_text(f"pid {tmp_path}/nginx.pid;\nerror_log stderr;\n{local}")
    checked = subprocess.run(
        [nginx, "-t", "-q", "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr


def test_a_secret_the_container_cannot_read_stops_it_with_the_fix(tmp_path: Path) -> None:
    """O5: compose mounts a file secret with the host's owner and mode, and a deploy key copied
    as the README says is 600: the entrypoint skipped the key it could not read, and the clone
    failed on 'Permission denied (publickey)' with advice to configure an SSH key."""
    if os.geteuid() == 0:  # root reads anything: run as nobody, outside pytest's private tmp
        tmp_path = Path(tempfile.mkdtemp(prefix="briefd-secret-"))
        tmp_path.chmod(0o755)
    key = tmp_path / "git_ssh_key"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nx\n")
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "briefd").write_text('#!/bin/sh\necho "briefd ran: ${GIT_SSH_COMMAND:-no key}"\n')
    (probe / "briefd").chmod(0o755)
    key.chmod(0o600 if os.geteuid() == 0 else 0o000)
    as_user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    env = {"PATH": f"{probe}:/usr/bin:/bin", "HOME": str(tmp_path), "GIT_SSH_KEY_FILE": str(key)}
    try:
        done = subprocess.run(
            [*as_user, "env", *(f"{k}={v}" for k, v in env.items()), "sh", str(ENTRYPOINT_SH)],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        if os.geteuid() == 0:
            shutil.rmtree(tmp_path)
    uid = done.stderr.split("but uid ", 1)[-1].split(" ", 1)[0]
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: {key} is there but uid {uid} cannot read it (owner uid {os.geteuid()}, mode "
        f"{'600' if os.geteuid() == 0 else '0'}); on the host, make the file mounted there "
        f"readable by uid {uid}: sudo chown {uid} <file>, or chmod 644 <file>\n"
    )


def _entrypoint_gives(
    tmp_path: Path, env: dict[str, str], urls: list[str], then: str = ""
) -> tuple[int, str]:
    """Run docker/entrypoint.sh with a stand-in for briefd that asks git's credential helpers
    (``git credential fill``) for each of ``urls``, then runs ``then``: its exit code, and what
    each URL got (and what ``then`` printed)."""
    token = tmp_path / "git_token"
    token.write_text("s3cret-token\n")
    probe = tmp_path / "probe"
    probe.mkdir(exist_ok=True)
    asks = "".join(
        f"printf 'url=%s\\n\\n' '{url}' | git credential fill 2>/dev/null "
        f"| grep password= || echo 'password: none'\n"
        for url in urls
    )
    (probe / "briefd").write_text(f"#!/bin/sh\n{asks}{then}")
    (probe / "briefd").chmod(0o755)
    base = {
        "PATH": f"{probe}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GIT_CONFIG_NOSYSTEM": "1",  # this machine's git config out of it
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_TOKEN_FILE": str(token),
    }
    done = subprocess.run(
        ["env", "-i", *(f"{k}={v}" for k, v in {**base, **env}.items()), "sh", str(ENTRYPOINT_SH)],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_the_images_git_token_goes_only_to_the_sources_host(tmp_path: Path) -> None:
    """O5: the image's credential helper answered any host with the token, so a redirect, a
    code.repos URL on another host, a look-alike host or plain http got it too. It is now
    git's credential.<origin>.helper for BRIEFD_SOURCE's scheme, host and port only."""
    urls = [
        "https://github.com/acme/other.git",  # the same host: the token
        "https://evil.example/x.git",
        "https://github.com.evil.example/acme/kb.git",
        "http://github.com/acme/kb.git",
        "https://github.com:8443/acme/kb.git",
    ]
    code, said = _entrypoint_gives(
        tmp_path, {"BRIEFD_SOURCE": "https://github.com/acme/kb.git"}, urls
    )
    assert (code, said.splitlines()) == (0, ["password=s3cret-token"] + ["password: none"] * 4)
    code, said = _entrypoint_gives(
        tmp_path,
        {"BRIEFD_SOURCE": "https://bot@Git.Acme.test:8443/kb.git?ref=x"},
        ["https://git.acme.test:8443/kb.git", "https://git.acme.test/kb.git"],
    )
    assert (code, said.splitlines()) == (0, ["password=s3cret-token", "password: none"])
    code, said = _entrypoint_gives(  # an ssh source, the token for https code repositories
        tmp_path,
        {"BRIEFD_SOURCE": "git@github.com:acme/kb.git", "GIT_TOKEN_URL": "https://gitlab.com"},
        ["https://gitlab.com/acme/service.git", "https://github.com/acme/kb.git"],
    )
    assert (code, said.splitlines()) == (0, ["password=s3cret-token", "password: none"])


def test_a_git_token_with_no_https_host_to_go_to_stops_the_container(tmp_path: Path) -> None:
    """O5: a token secret beside an ssh source (or a source set in briefd.yaml) has no host
    the entrypoint can scope it to: it says what to set rather than give it to every host."""
    code, said = _entrypoint_gives(
        tmp_path, {"BRIEFD_SOURCE": "git@github.com:acme/kb.git"}, ["https://github.com/a.git"]
    )
    assert code == 1
    assert said == (
        f"error: {tmp_path / 'git_token'} is there but no https host to give it to: "
        "BRIEFD_SOURCE is 'git@github.com:acme/kb.git' (unset, or no http(s) URL); set "
        "GIT_TOKEN_URL to the https://host the token is for (e.g. https://github.com), or "
        "remove the secret\n"
    )


def _healthcheck() -> Any:
    spec = importlib.util.spec_from_file_location("healthcheck", REPO / "docker" / "healthcheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_healthcheck_asks_the_port_the_server_was_started_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indexed: Any
) -> None:
    """O5: the image's healthcheck asked serve.port only, so a container started with
    `serve --port 9000` (a documented option) was marked unhealthy while it served."""
    from briefd.service import create_app
    from tests.service.conftest import service_config
    from tests.service.live import serving

    check = _healthcheck()
    assert check.served_port(["briefd", "serve", "--port=9100"], 8484) == 9100
    assert check.served_port(["briefd", "serve"], 8484) == 8484
    with serving(create_app(indexed, service_config(allowed_hosts=("127.0.0.1",)))) as base:
        port = base.rsplit(":", 1)[1]
        cmdline = tmp_path / "cmdline"
        cmdline.write_bytes(
            b"\0".join([b"/opt/briefd/bin/briefd", b"serve", b"--port", port.encode()])
        )
        monkeypatch.setattr(check, "SERVER_CMDLINE", cmdline)
        monkeypatch.setenv("BRIEFD_SERVE__PORT", "1")  # the configured port answers nothing
        assert check.main() == 0
        cmdline.write_bytes(b"/opt/briefd/bin/briefd\0serve")
        assert check.main() == 1


def test_a_git_token_keeps_the_safe_directory_the_readme_has_set_beside_it(
    tmp_path: Path,
) -> None:
    """O5: the README trusts a checkout mounted from the host (knowledge or a code.repos
    repository) with GIT_CONFIG_COUNT=1, GIT_CONFIG_KEY_0=safe.directory, GIT_CONFIG_VALUE_0;
    a token secret beside it made the entrypoint write its credential helper over entry 0, so
    git refused the checkout as another user's. The helper now comes after those entries."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "-e GIT_CONFIG_COUNT=1 -e GIT_CONFIG_KEY_0=safe.directory" in readme
    trusted = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "safe.directory",
        "GIT_CONFIG_VALUE_0": "/code",
        "BRIEFD_SOURCE": "https://github.com/acme/kb.git",
    }
    urls = ["https://github.com/acme/kb.git"]
    asks = "git config --get-all safe.directory || echo 'safe.directory: none'\n"
    code, said = _entrypoint_gives(tmp_path, trusted, urls, then=asks)
    assert (code, said.splitlines()) == (0, ["password=s3cret-token", "/code"])


def test_every_briefd_container_of_compose_runs_behind_an_init() -> None:
    """briefd as pid 1 reaps only the git it waits for: the ssh of a hung fetch it ended (the
    whole process group, SIGKILL) and the recall daemon of a hook run in the container are
    handed to pid 1 as they die, and stayed zombies (``ps -o stat``: Z) until the container
    stopped. Docker's init as pid 1 reaps them."""
    replicas = yaml.safe_load((REPO / "compose.replicas.yaml").read_text())["services"]
    services = {**COMPOSE["services"], **{k: v for k, v in replicas.items() if "briefd" in k}}
    assert sorted(services) == ["briefd", "briefd-1", "briefd-2"]
    assert {name: service.get("init") for name, service in services.items()} == {
        "briefd": True,
        "briefd-1": True,
        "briefd-2": True,
    }
    readme = (REPO / "README.md").read_text()
    assert readme.count("docker run -d --init --name briefd") == 2
