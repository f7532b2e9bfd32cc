#!/usr/bin/env bash
# Build the library's fast wheel: a platform wheel of domino-engine whose rules package and the
# edge's codec and wire modules are compiled by mypyc (setup.py, DOMINO_COMPILE=1), the build the
# engine image runs. Install it with `pip install dist/domino_engine-*.whl`: the rules then import
# from .so files (`engine_service.rules.round.__file__` ends with .so), ~2.7x the pure build's speed.
#
# Usage: scripts/build-wheel.sh [OUT]   (default dist/; `make wheel`). Needs mypy, setuptools, wheel and
#        grpcio-tools in the interpreter's environment (the dev extra: `make install`), a C compiler and
#        the Python headers (scripts/ci-system-deps.sh). PYTHON=/path/to/python picks the interpreter
#        (default .venv/bin/python); the wheel is for that interpreter's version and platform.
# The pure wheel is `pip wheel --no-deps .` without DOMINO_COMPILE; `make run` never compiles.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
OUT=$(mkdir -p "${1:-$ROOT/dist}" && cd "${1:-$ROOT/dist}" && pwd)

command -v "${CC:-cc}" >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || {
    echo "build-wheel: no C compiler (apt-get install gcc, or scripts/ci-system-deps.sh)" >&2; exit 2; }
"$PY" -c "import mypyc" 2>/dev/null || { echo "build-wheel: mypyc is missing: pip install mypy (the dev extra)" >&2; exit 2; }
cd "$ROOT"
# mypyc's C sources and objects go to build/ (setuptools' default); build/lib would carry files of an
# earlier build into this one, so it starts empty. build/compiled (scripts/build_compiled.sh) is left alone.
clean() { rm -rf build/lib.* build/temp.* build/bdist.* build/__native_* build/ops.txt build/engine_service; }
clean
rm -f "$OUT"/domino_engine-*.whl
start=$(date +%s)
DOMINO_COMPILE=1 "$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    -w "$OUT" . >"$OUT/build-wheel.log" 2>&1 || { tail -40 "$OUT/build-wheel.log" >&2; exit 1; }
clean
wheel=$(ls "$OUT"/domino_engine-*.whl)
echo "$wheel (mypyc-compiled rules, codec and wire; built in $(( $(date +%s) - start )) s)"
