#!/usr/bin/env bash
# Install buf (npm @bufbuild/buf, the version pinned by scripts/buf/package-lock.json) into
# scripts/buf/node_modules, from the lock file alone; safe to run again. `make install` runs it.
# buf lints proto/ and checks it for breaking changes against the released contract
# (proto/buf.yaml, tests/test_proto_contract.py, docs/grpc.md "Stubs in other languages").
# Needs Node and npm (Node 20 here and in CI); fetches from the npm registry only.
set -euo pipefail
cd "$(dirname "$0")/buf"
command -v npm >/dev/null 2>&1 || { echo "buf-tools: npm is missing: install Node.js 20 (Debian: apt-get install nodejs npm)" >&2; exit 1; }
# --ignore-scripts: @bufbuild/buf's postinstall only swaps its node launcher for the binary; npm 11 skips
# it anyway, so the same install results on every npm.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
node_modules/.bin/buf --version >/dev/null
