#!/usr/bin/env bash
# Build the rules alone, compiled: a platform wheel of domino-rules (domino-rules/, issue 39) whose rules
# package is compiled by mypyc (domino-rules/setup.py, DOMINO_COMPILE=1), ~2.7x the pure rules' speed,
# still with no dependency. `pip install dist/domino_rules-*.whl`; tests/test_wheel.py checks it.
# The pure wheel is `pip wheel --no-deps ./domino-rules`, and `pip install ./domino-rules` installs it.
#
# Usage: scripts/build-rules-wheel.sh [OUT]   (default dist/; `make rules-wheel`). Needs what
#        scripts/build-wheel.sh needs: mypy and setuptools in the interpreter's environment (the dev
#        extra: `make install`), a C compiler and the Python headers. PYTHON=/path/to/python picks the
#        interpreter (default .venv/bin/python); the wheel is for that interpreter's version and platform.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
OUT=$(mkdir -p "${1:-$ROOT/dist}" && cd "${1:-$ROOT/dist}" && pwd)

command -v "${CC:-cc}" >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || {
    echo "build-rules-wheel: no C compiler (apt-get install gcc, or scripts/ci-system-deps.sh)" >&2; exit 2; }
"$PY" -c "import mypyc" 2>/dev/null || { echo "build-rules-wheel: mypyc is missing: pip install mypy (the dev extra)" >&2; exit 2; }
cd "$ROOT/domino-rules"
# mypyc's C sources and objects go to domino-rules/build/; it starts and ends empty, so that nothing of
# an earlier build is packed into this one.
rm -rf build
rm -f "$OUT"/domino_rules-*.whl
start=$(date +%s)
DOMINO_COMPILE=1 "$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    -w "$OUT" . >"$OUT/build-rules-wheel.log" 2>&1 || { tail -40 "$OUT/build-rules-wheel.log" >&2; exit 1; }
rm -rf build
wheel=$(ls "$OUT"/domino_rules-*.whl)
echo "$wheel (mypyc-compiled rules, no dependency; built in $(( $(date +%s) - start )) s)"
