#!/usr/bin/env bash
# Install the TypeScript client's packages (clients/typescript: openapi-typescript, openapi-fetch,
# eventsource-parser, typescript; the versions pinned by its package-lock.json) into
# clients/typescript/node_modules, from the lock file alone; safe to run again. `make install` runs it.
# Needs Node and npm (Node 20 here and in CI); fetches from the npm registry only.
set -euo pipefail
cd "$(dirname "$0")/../clients/typescript"
command -v npm >/dev/null 2>&1 || { echo "ts-client-tools: npm is missing: install Node.js 20 (Debian: apt-get install nodejs npm)" >&2; exit 1; }
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
node_modules/.bin/tsc --version >/dev/null
