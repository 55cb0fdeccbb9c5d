#!/usr/bin/env bash
# `make image-test`: build the image the way a machine without any image registry can, then run
# it and smoke-test it from the host (tests/image). Steps:
#   1. docker and debootstrap present, a daemon answering (docker/ensure-docker.sh);
#   2. hadolint on the Dockerfile, Compose's own check of compose.yaml and compose.replicas.yaml;
#   3. the base image: Debian bookworm + python3 by debootstrap, cached in the daemon
#      (docker/base-image.sh);
#   4. a wheelhouse of briefd's pinned runtime dependencies for the base image's Python,
#      downloaded on the host into docker/wheels/ (the build itself has no network);
#   5. docker build --network none --build-arg BASE_IMAGE=<base> --build-arg OFFLINE=1;
#   6. pytest tests/image against that image (each container runs with --network none).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
TAG=${BRIEFD_IMAGE:-briefd:image-test}
started=$(date +%s)

bash docker/ensure-docker.sh
$BIN/hadolint Dockerfile
echo "hadolint: Dockerfile clean"
compose=(docker compose)
docker compose version >/dev/null 2>&1 || compose=(docker-compose)
check=$(mktemp -d)
mkdir "$check/secrets" "$check/docker" && touch "$check/secrets/git_ssh_key"
cp compose.yaml compose.replicas.yaml "$check/" && cp docker/nginx-replicas.conf "$check/docker/"
for file in compose.yaml compose.replicas.yaml; do
    (cd "$check" && BRIEFD_SOURCE=git@example.com:acme/knowledge.git BRIEFD_API_TOKEN=x \
        BRIEFD_WEBHOOK_SECRET=y POSTGRES_PASSWORD=z \
        "${compose[@]}" -f "$file" --project-name briefd-check config --quiet)
    echo "$file: valid (${compose[*]})"
done
rm -rf "$check"

base=$(bash docker/base-image.sh)
python=$(docker run --rm --network none "$base" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
echo "base image $base (Python $python)"

build_requires=$($BIN/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"])')
find docker/wheels -name '*.whl' -delete
# shellcheck disable=SC2086 # the build requirements are separate arguments
$BIN/python -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --python-version "$python" --dest docker/wheels . $build_requires
echo "wheelhouse: $(find docker/wheels -name '*.whl' | wc -l) wheels, $(du -sh docker/wheels | cut -f1)"

DOCKER_BUILDKIT=0 docker build --network none --build-arg BASE_IMAGE="$base" \
    --build-arg OFFLINE=1 --tag "$TAG" .
echo "image $TAG built ($(( $(date +%s) - started )) s since the start)"

BRIEFD_IMAGE="$TAG" $BIN/pytest -q -p no:cacheprovider tests/image
