#!/usr/bin/env bash
# The library's fast wheel (`make wheel`): a platform wheel of domino-engine with its rules, codec and
# wire compiled by mypyc, in dist/ or OUT. Usage: scripts/build-wheel.sh [OUT]. The build itself, what it
# needs and the other compiled builds: scripts/build_compiled.sh, one script for the three.
exec bash "$(dirname "$0")/build_compiled.sh" --wheel "$@"
