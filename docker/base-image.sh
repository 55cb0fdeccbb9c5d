#!/usr/bin/env bash
# A Debian bookworm base image with Python 3.11, built here without any image registry:
# debootstrap (minbase) plus Debian's python3, python3-venv, git, openssh-client and CA
# certificates, imported into the docker daemon. The tag carries a hash of the debootstrap
# arguments, so a daemon that already has it never builds it again (CI on the same machine
# reuses it). Prints the tag on stdout; progress goes to stderr. Needs root (debootstrap).
set -euo pipefail

SUITE=bookworm
PACKAGES=python3,python3-venv,ca-certificates,git,openssh-client
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
RECIPE=2 # bump when the steps below change what the image holds

key=$(printf '%s|%s|%s' "$SUITE" "$PACKAGES" "$RECIPE" | sha256sum | cut -c1-12)
tag="briefd-base:$SUITE-$key"
if docker image inspect "$tag" >/dev/null 2>&1; then
    echo "$tag"
    exit 0
fi

rootfs=$(mktemp -d /var/tmp/briefd-base.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
echo "building $tag with debootstrap (about 2 minutes)" >&2
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$MIRROR" >&2
# What an image never needs: package lists and caches, documentation, man pages.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
    "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*
tar --numeric-owner -C "$rootfs" -c . |
    docker import --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' - "$tag" >&2
echo "$tag"
