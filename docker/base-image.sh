#!/usr/bin/env bash
# Make the local base image that docker/Dockerfile.* build FROM, once, and print its tag.
#
# No registry serves base images to these machines, so the base is a minimal Debian
# bookworm made with debootstrap (python3 and venv only) and imported with podman.
# The root filesystem tarball is cached outside the repository, keyed by a hash of
# this script (suite, package list and slimming steps), so re-runs take a second:
#   $DOMINO_IMAGE_CACHE (default /var/cache/domino-deploy)/base-bookworm-<key>.tar
# and the imported image is tagged localhost/domino-base:bookworm-<key>.
#
# Needs root, debootstrap, podman and the Debian mirror (the only outside source).
# Usage: docker/base-image.sh            -> prints the tag on stdout, progress on stderr
set -euo pipefail

SUITE=bookworm
INCLUDE=python3,python3-venv,ca-certificates
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE="${DOMINO_IMAGE_CACHE:-/var/cache/domino-deploy}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KEY="$(sha256sum "$HERE/base-image.sh" | cut -c1-12)"
TAG="localhost/domino-base:$SUITE-$KEY"
TAR="$CACHE/base-$SUITE-$KEY.tar"

log() { echo "base-image: $*" >&2; }

if podman image exists "$TAG"; then
    log "$TAG already present"
    echo "$TAG"
    exit 0
fi

mkdir -p "$CACHE"
if [ ! -s "$TAR" ]; then
    exec 9>"$CACHE/.lock"      # one debootstrap at a time on this machine
    flock 9
fi
if [ ! -s "$TAR" ]; then
    ROOT="$(mktemp -d "$CACHE/rootfs.XXXXXX")"
    trap 'rm -rf "$ROOT"' EXIT
    log "debootstrap $SUITE ($INCLUDE) into $ROOT"
    debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOT" "$MIRROR" >&2
    # Slim: package caches and lists, docs, man pages, translations.
    rm -rf "$ROOT"/var/cache/apt/* "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/log/* \
           "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* \
           "$ROOT"/usr/share/locale/* "$ROOT"/tmp/* "$ROOT"/root/.cache
    # The container gets its resolver and hostname from the engine at run time.
    rm -f "$ROOT"/etc/resolv.conf "$ROOT"/etc/hostname
    tar --numeric-owner --xattrs -C "$ROOT" -cf "$TAR.part" .
    mv "$TAR.part" "$TAR"
    rm -rf "$ROOT"
    trap - EXIT
fi

log "podman import $TAR as $TAG"
podman import --quiet \
    --change 'CMD ["/usr/bin/python3"]' \
    --change 'ENV LANG=C.UTF-8' \
    "$TAR" "$TAG" >/dev/null
echo "$TAG"
