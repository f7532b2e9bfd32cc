"""Where the mypyc-compiled copy of the rules lives, and whether it matches the sources."""
from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPILED = ROOT / "build" / "compiled"
#: The modules of engine_service compiled besides the rules package (scripts/build_compiled.sh).
COMPILED_MODULES = ("edge/codec.py", "edge/wire.py")


def source_hash(root: Path = ROOT) -> str:
    """sha256 over every source of the engine_service package (paths and contents): the copy holds the whole
    package, the compiled modules and the Python ones beside them, and runs them all. (It hashed only the
    compiled modules' sources, so a copy built before a change to, say, `engine_service/metrics.py` passed as
    current, and the benchmarks and the compiled tests ran the old module.)"""
    h = hashlib.sha256()
    package = root / "engine_service"
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def status(root: Path = ROOT) -> tuple[bool, str]:
    """(usable, why): the compiled copy exists and was built from the current sources."""
    out = root / "build" / "compiled"
    stamp = out / "SOURCE_HASH"
    if not stamp.exists() or not list((out / "engine_service" / "rules").glob("*.so")):
        return False, "no compiled copy: run scripts/build_compiled.sh"
    built, now = stamp.read_text().strip(), source_hash(root)
    if built != now:
        return False, f"compiled copy is stale (built from {built}, sources are {now}): rerun scripts/build_compiled.sh"
    return True, f"build/compiled (source {now})"
