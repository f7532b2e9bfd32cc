#!/usr/bin/env bash
# Instructions per call (callgrind), for a tree: repeatable whatever the machine is doing.
#   bench/instructions.sh TREE WHAT [N]     WHAT: apply | decode | game (see bench/handler_cost.py)
# Prints instructions per call: (Ir at N - Ir at 0) / N. Run it on a worktree of the commit
# before a change and on the tree after it for a before/after figure.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TREE=$(cd "$1" && pwd); WHAT=$2; N=${3:-1000}
PY=${PYTHON:-$ROOT/.venv/bin/python}
ir() {
  PYTHONPATH="$TREE" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$PY" -P "$ROOT/bench/handler_cost.py" "$WHAT" "$1" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
A=$(ir 0); B=$(ir "$N")
echo "$WHAT: $(( (B - A) / N )) instructions per call ($TREE)"
