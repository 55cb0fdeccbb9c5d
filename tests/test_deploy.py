"""The deployment files agree with each other and with the settings: every ``BRIEFD_*`` name in
the Dockerfile and compose.yaml is a real settings key, the image's default briefd.yaml loads,
compose's port, volume and secret are the ones the image serves, keeps and reads. (Building and
running the image is ``make image-test``: tests/image.)"""

from __future__ import annotations

import re

import yaml

from briefd.settings import load_settings
from tests.conftest import REPO

DOCKERFILE = (REPO / "Dockerfile").read_text()
COMPOSE = yaml.safe_load((REPO / "compose.yaml").read_text())
ENTRYPOINT = (REPO / "docker" / "entrypoint.sh").read_text()


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
