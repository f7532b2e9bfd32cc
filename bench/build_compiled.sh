#!/usr/bin/env bash
# Build a mypyc-compiled copy of the rules package (and the gRPC codec) into
# build/compiled/ for the side-by-side "pure vs compiled" figures of
# `domino bench engine` and `domino bench service`.
#
# The copy holds the whole engine_service package with engine_service/rules/*.py
# and engine_service/codec.py and wire.py compiled to extension modules (the rest stays Python).
# It is never built in place: next to the sources the .so files would shadow
# the .py files for every import. The bench loads it in its own worker process
# with PYTHONPATH=build/compiled (see clients/bench/engine.py), and so does a
# second engine process in `bench service`; nothing else does. build/compiled/SOURCE_HASH records which rules sources it was built
# from, so the bench can refuse a stale copy.
#
# Usage: bench/build_compiled.sh            (uses .venv/bin/python, needs mypy)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
OUT=$ROOT/build/compiled

"$PY" -c "import mypyc" 2>/dev/null || { echo "mypyc is missing: pip install mypy (the dev extra)" >&2; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT"
# The package without caches or earlier build products.
(cd "$ROOT" && tar --exclude='__pycache__' --exclude='*.so' -cf - engine_service) | (cd "$OUT" && tar -xf -)
cd "$OUT"
MYPYPATH="$ROOT/proto" "$PY" -m mypyc engine_service/rules/*.py engine_service/codec.py engine_service/wire.py >"$OUT/mypyc.log" 2>&1 || { tail -40 "$OUT/mypyc.log" >&2; exit 1; }
rm -rf "$OUT/build"   # mypyc's C sources and objects
"$PY" - "$ROOT" >"$OUT/SOURCE_HASH" <<'PYEOF'
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from clients.bench.compiled import source_hash
print(source_hash(Path(sys.argv[1])))
PYEOF
ls engine_service/rules/*.so >/dev/null
echo "compiled rules in $OUT ($(ls engine_service/rules/*.so | wc -l) modules, source $(cat "$OUT/SOURCE_HASH"))"
