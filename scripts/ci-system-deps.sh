#!/usr/bin/env bash
# Install the Debian tools that tests/deploy needs, once; safe to run again (it only
# installs what is missing). Run as root (CI is), before `make test`:
#   bash scripts/ci-system-deps.sh
#
#   prometheus   Prometheus 2.42 and promtool: rule checks, rule unit tests, and the
#                live scrape of the running engine and gateway (tests/deploy)
#   podman       podman build --isolation=chroot of docker/Dockerfile.* (buildah, crun come with it)
#   debootstrap  the local Debian base image those builds start FROM (docker/base-image.sh)
#   redis-server the cluster token version store (tests/gateway start their own on loopback)
#   postgresql   the archive database of a cluster (tests/archive start their own: initdb + pg_ctl
#                into a temporary directory, on loopback)
#   chromium     Debian's browser, driven by Playwright (pip) in the browser table's tests
#                (tests/gateway/test_play_browser.py; no browser download)
#   protobuf-compiler protoc with its Java, Kotlin, C#, Objective-C, PHP and Ruby generators: the contract's
#                options checked by generating each language (tests/test_proto_contract.py)
#   gcc, python3-dev  the mypyc-compiled build that `make test` also tests (scripts/build_compiled.sh);
#                python3-dev only when the venv's Python has no headers of its own
#
# kubectl (for `kubectl kustomize`) is not in Debian's archive: it ships on this kind
# of machine's image; the k8s tests say so and skip when it is missing.
# `make test` runs it first. Without root (a developer's laptop) and with something
# missing, it prints one line saying what and how, and exits 1: make test runs every
# test, and a test without its tool would fail anyway.
set -euo pipefail

need=()
command -v promtool    >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus  >/dev/null 2>&1 || need+=(prometheus)
command -v podman      >/dev/null 2>&1 || need+=(podman)
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || need+=(debootstrap)
command -v h2load      >/dev/null 2>&1 || need+=(nghttp2-client)   # gRPC load for `domino bench service`
command -v wrk         >/dev/null 2>&1 || need+=(wrk)              # HTTP load for `domino bench service`
command -v gcc         >/dev/null 2>&1 || need+=(gcc)              # the compiled build
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)    # the cluster token version store
compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null || need+=(postgresql)  # the archive database (tests/archive)
command -v chromium    >/dev/null 2>&1 || need+=(chromium)         # the browser table's tests (Playwright)
command -v protoc      >/dev/null 2>&1 || need+=(protobuf-compiler) # other languages' code from the contract (tests/test_proto_contract.py)
python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    2>/dev/null || need+=(python3-dev)
# de-duplicate
mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u | sed '/^$/d')

if [ "${#need[@]}" -eq 0 ]; then
    echo "ci-system-deps: prometheus, promtool, podman, debootstrap, h2load, wrk, gcc, Python headers, redis-server, postgresql, chromium, protoc already installed"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "make test needs ${need[*]}: run \`sudo bash scripts/ci-system-deps.sh\` (Debian), then make test again" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
start=$(date +%s)
echo "ci-system-deps: apt-get install ${need[*]}"
apt-get -o DPkg::Lock::Timeout=300 update -qq
# prometheus without its recommends (node-exporter and friends are not needed);
# podman and debootstrap with theirs (buildah, fuse-overlayfs, the archive keyring, gpgv).
for pkg in "${need[@]}"; do
    case "$pkg" in
        prometheus) apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends prometheus >/dev/null ;;
        *) apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$pkg" >/dev/null ;;
    esac
done
# Debian's prometheus package may start its daemon where an init system runs; the
# tests start their own on loopback, so stop the packaged one if it started.
if command -v service >/dev/null 2>&1 && [ -x /etc/init.d/prometheus ]; then
    service prometheus stop >/dev/null 2>&1 || true
fi
if command -v service >/dev/null 2>&1 && [ -x /etc/init.d/redis-server ]; then
    service redis-server stop >/dev/null 2>&1 || true
fi
if command -v service >/dev/null 2>&1 && [ -x /etc/init.d/postgresql ]; then
    service postgresql stop >/dev/null 2>&1 || true
fi
echo "ci-system-deps: done in $(( $(date +%s) - start ))s"
