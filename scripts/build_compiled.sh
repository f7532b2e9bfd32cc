#!/usr/bin/env bash
# Build the mypyc-compiled copy of the engine's hot modules: the rules package,
# engine_service/edge/codec.py and engine_service/edge/wire.py as C extension modules.
#
# The copy holds the whole engine_service package (the other modules stay Python)
# and is used by putting it first on the path: PYTHONPATH=build/compiled. It is
# never built in place, where the .so files would shadow the sources for every
# import; without it everything runs as pure Python, the same code. Who uses it:
#   - `make test`, which runs the rules, engine and conformance tests on it too;
#   - docker/Dockerfile.engine, whose engine runs on it (ENGINE image PYTHONPATH);
#   - `domino bench engine|service`, side by side with pure Python.
# OUT/SOURCE_HASH records the sources it was built from, so a stale copy is refused.
#
# Usage: scripts/build_compiled.sh [OUT]   (default build/compiled; needs mypy from the dev
#        extra, a C compiler and the Python headers: scripts/ci-system-deps.sh installs them)
#        PYTHON=/path/to/python picks the interpreter (default .venv/bin/python).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
OUT=$(mkdir -p "${1:-$ROOT/build/compiled}" && cd "${1:-$ROOT/build/compiled}" && pwd)

command -v "${CC:-cc}" >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || {
    echo "build_compiled: no C compiler (apt-get install gcc, or scripts/ci-system-deps.sh)" >&2; exit 2; }
"$PY" - <<'PYEOF' || { echo "build_compiled: no Python.h for $PY (apt-get install python3-dev)" >&2; exit 2; }
import os, sys, sysconfig
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else 1)
PYEOF
"$PY" -c "import mypyc" 2>/dev/null || { echo "mypyc is missing: pip install mypy (the dev extra)" >&2; exit 2; }
rm -rf "${OUT:?}"/*
# The package without caches or earlier build products.
(cd "$ROOT" && tar --exclude='__pycache__' --exclude='*.so' -cf - engine_service) | (cd "$OUT" && tar -xf -)
cd "$OUT"
# The generated protobuf modules and their .pyi stubs (`python setup.py build_py` makes them).
PROTO="$ROOT/proto"
[ -f "$PROTO/domino/v1/engine_pb2.pyi" ] || { echo "build_compiled: no $PROTO/domino/v1/engine_pb2.pyi: run python setup.py build_py" >&2; exit 2; }
MYPYPATH="$PROTO" "$PY" -m mypyc engine_service/rules/*.py engine_service/edge/codec.py engine_service/edge/wire.py >"$OUT/mypyc.log" 2>&1 || { tail -40 "$OUT/mypyc.log" >&2; exit 1; }
rm -rf "$OUT/build"   # mypyc's C sources and objects
"$PY" - "$ROOT" >"$OUT/SOURCE_HASH" <<'PYEOF'
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench.compiled import source_hash
print(source_hash(Path(sys.argv[1])))
PYEOF
ls engine_service/rules/*.so >/dev/null
echo "compiled rules in $OUT ($(ls engine_service/rules/*.so | wc -l) modules, source $(cat "$OUT/SOURCE_HASH"))"
