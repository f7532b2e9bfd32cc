"""Where the mypyc-compiled copy of the rules lives, and whether it matches the sources."""
from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPILED = ROOT / "build" / "compiled"
#: The modules of engine_service compiled besides the rules package (scripts/build_compiled.sh).
COMPILED_MODULES = ("edge/codec.py", "edge/wire.py")


def source_hash(root: Path = ROOT) -> str:
    """sha256 over the compiled sources (the rules package, the edge's codec and wire; names and contents)."""
    h = hashlib.sha256()
    sources = sorted((root / "engine_service" / "rules").glob("*.py")) + [
        root / "engine_service" / name for name in COMPILED_MODULES]
    for path in sources:
        h.update(path.name.encode())
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
