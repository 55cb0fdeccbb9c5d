#!/usr/bin/env bash
# What `make image-test` needs from the machine: Debian's docker.io, debootstrap and a Compose
# (docker-compose, to check compose.yaml), installed with apt-get when missing (CI runs as root;
# sudo otherwise), and a docker daemon that answers (started here when none does; one already
# running is used as it is).
set -euo pipefail

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)  # the image ships a docker client alone
command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap debian-archive-keyring)
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || missing+=(docker-compose)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! docker info >/dev/null 2>&1; then
    log=/var/tmp/briefd-dockerd.log
    echo "no docker daemon answers: starting dockerd (log: $log)" >&2
    $sudo sh -c "nohup dockerd >$log 2>&1 &"
    for _ in $(seq 90); do
        docker info >/dev/null 2>&1 && break
        sleep 1
    done
    docker info >/dev/null 2>&1 || { echo "dockerd did not come up; see $log" >&2; exit 1; }
fi
