#!/usr/bin/env bash
# The mypyc-compiled builds, one script: what they need and how they fail is written once here.
#
#   scripts/build_compiled.sh [OUT]                the compiled copy of the engine's hot modules
#                                                  (default build/compiled; `make compiled`); from
#                                                  WHEEL=dist/domino_engine-*.whl if given
#   scripts/build_compiled.sh --wheel [OUT]        the library's fast wheel (default dist/;
#                                                  `make wheel`, scripts/build-wheel.sh)
#   scripts/build_compiled.sh --rules-wheel [OUT]  the rules alone, compiled (default dist/;
#                                                  `make rules-wheel`, scripts/build-rules-wheel.sh)
#
# The compiled copy: the rules package, engine_service/edge/codec.py and engine_service/edge/wire.py
# as C extension modules, in a copy of the whole engine_service package (the other modules stay
# Python), used by putting it first on the path: PYTHONPATH=build/compiled. It is the fast wheel's
# engine_service package and mypyc's shared module, unpacked: one build, not two of the same modules
# (the wheel WHEEL names, which `make compiled` builds first, or one built here). It is never built in
# place, where the .so files would shadow the sources for every import; without it everything runs
# as pure Python, the same code. Who uses it: `make test` (the rules, engine and conformance tests
# run on it too), docker/Dockerfile.engine (the engine image runs on it; it copies this script
# alone), `domino bench engine|service` (side by side with pure Python). OUT/SOURCE_HASH records the
# sources it was built from, so that a stale copy is refused.
#
# The fast wheel: a platform wheel of domino-engine whose rules package and the edge's codec and
# wire modules are compiled (setup.py, DOMINO_COMPILE=1), the build the engine image runs.
# `pip install dist/domino_engine-*.whl`: the rules then import from .so files, ~2.7x the pure
# build's speed. The pure wheel is `pip wheel --no-deps .` without DOMINO_COMPILE; `make run`
# never compiles.
#
# The rules wheel: domino-rules (domino-rules/, issue 39) with its rules package compiled
# (domino-rules/setup.py, DOMINO_COMPILE=1), still with no dependency. `pip install
# dist/domino_rules-*.whl`; the pure one is `pip wheel --no-deps ./domino-rules`.
#
# Each needs mypy (mypyc), setuptools and wheel in the interpreter's environment (the dev extra:
# `make install`), a C compiler and the Python headers (scripts/ci-system-deps.sh installs them).
# PYTHON=/path/to/python picks the interpreter (default .venv/bin/python); what is built is for that
# interpreter's version and platform. tests/test_build.py and tests/test_wheel.py check the builds.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
case "${1:-}" in
    --wheel) NAME=build-wheel; shift; DEFAULT_OUT=$ROOT/dist ;;
    --rules-wheel) NAME=build-rules-wheel; shift; DEFAULT_OUT=$ROOT/dist ;;
    *) NAME=build_compiled; DEFAULT_OUT=$ROOT/build/compiled ;;
esac
OUT=$(mkdir -p "${1:-$DEFAULT_OUT}" && cd "${1:-$DEFAULT_OUT}" && pwd)

missing() { echo "$NAME: $*" >&2; exit 2; }
command -v "${CC:-cc}" >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 ||
    missing "no C compiler (apt-get install gcc, or scripts/ci-system-deps.sh)"
"$PY" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ||
    missing "no Python.h for $PY (apt-get install python3-dev)"
"$PY" -c "import mypyc" 2>/dev/null || missing "mypyc is missing: pip install mypy (the dev extra)"

# sources DEST NAMES...: NAMES of the current folder copied into DEST, links followed, without caches, build
# products, egg-info or generated protobuf modules: what a build starts from.
sources() {
    local dest=$1
    shift
    tar -ch --exclude='__pycache__' --exclude='*.so' --exclude='build' --exclude='*.egg-info' \
        --exclude='*_pb2*.py' --exclude='*_pb2*.pyi' "$@" | (cd "$dest" && tar -xf -)
}

# wheel DIR DIST WHAT NAMES...: the compiled wheel of the project made of NAMES (of the current folder),
# DIST-*.whl in DIR, its build's output in DIR/$NAME.log. It is built in a copy of NAMES (`sources`), so that
# nothing of an earlier build is packed into this one and nothing in the checkout changes while it builds
# (protoc and setuptools wrote the generated modules and the egg-info there, which tests and a running
# service read).
wheel() {
    local dir=$1 dist=$2 what=$3 start copy
    shift 3
    copy=$(mktemp -d)
    rm -f "$dir/$dist"-*.whl
    start=$(date +%s)
    sources "$copy" "$@"
    (cd "$copy" && DOMINO_COMPILE=1 "$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps \
        --no-build-isolation -w "$dir" .) >"$dir/$NAME.log" 2>&1 || { rm -rf "$copy"; tail -40 "$dir/$NAME.log" >&2; exit 1; }
    rm -rf "$copy"
    echo "$(ls "$dir/$dist"-*.whl) ($what; built in $(( $(date +%s) - start )) s)"
}
# The compiled copy takes the wheel's engine_service alone, so its wheel is built from the engine's sources alone
# (setup.py packages what it finds): docker/Dockerfile.engine compiles before it copies the gateway and the clients.
ENGINE_ONLY=(domino_engine "mypyc-compiled rules, codec and wire" pyproject.toml setup.py README.md proto engine_service)
ENGINE_WHEEL=("${ENGINE_ONLY[@]}" api_gateway clients)

case "$NAME" in
build-wheel)
    cd "$ROOT"
    wheel "$OUT" "${ENGINE_WHEEL[@]}" ;;
build-rules-wheel)
    cd "$ROOT/domino-rules"
    wheel "$OUT" domino_rules "mypyc-compiled rules, no dependency" . ;;
build_compiled)
    rm -rf "${OUT:?}"/*
    if [ -z "${WHEEL:-}" ]; then
        made=$(mktemp -d)
        trap 'rm -rf "$made"' EXIT   # also when the build fails
        (cd "$ROOT" && wheel "$made" "${ENGINE_ONLY[@]}") >/dev/null
        WHEEL=$(ls "$made"/domino_engine-*.whl)
    fi
    [ -f "$WHEEL" ] || missing "no wheel $WHEEL"
    # The wheel's engine_service package (its sources and the compiled modules) and mypyc's shared module.
    "$PY" - "$WHEEL" "$OUT" <<'PYEOF'
import sys
import zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    wheel.extractall(sys.argv[2], [name for name in wheel.namelist() if name.startswith("engine_service/")
                                   or ("/" not in name and "__mypyc." in name)])
PYEOF
    cd "$OUT"
    "$PY" - "$ROOT" >"$OUT/SOURCE_HASH" <<'PYEOF'
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench.compiled import source_hash
print(source_hash(Path(sys.argv[1])))
PYEOF
    ls engine_service/rules/*.so >/dev/null
    echo "compiled rules in $OUT ($(ls engine_service/rules/*.so | wc -l) modules, source $(cat "$OUT/SOURCE_HASH"))" ;;
esac
