#!/usr/bin/env bash
# The rules alone, compiled (`make rules-wheel`): a platform wheel of domino-rules, no dependency, in
# dist/ or OUT. Usage: scripts/build-rules-wheel.sh [OUT]. The build itself, what it needs and the other
# compiled builds: scripts/build_compiled.sh, one script for the three.
exec bash "$(dirname "$0")/build_compiled.sh" --rules-wheel "$@"
