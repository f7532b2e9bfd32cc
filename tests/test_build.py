"""Which build of the engine's hot modules this run tests: pure Python, or the mypyc-compiled copy.

`make test` runs the suite on the sources, then the rules, engine and conformance tests
again with ``PYTHONPATH=build/compiled`` and ``DOMINO_EXPECT_COMPILED=1``
(scripts/build_compiled.sh). These tests make sure each pass really ran on the build it
names: a copy that failed to load, or a path that put the sources first, would otherwise
pass unnoticed on pure Python.
"""
from __future__ import annotations

import ast
import importlib
import os
from pathlib import Path

import pytest

from bench.compiled import COMPILED_MODULES, ROOT, source_hash

EXPECT_COMPILED = os.environ.get("DOMINO_EXPECT_COMPILED") == "1"
HOT_MODULES = sorted(
    [f"engine_service.rules.{p.stem}" for p in (ROOT / "engine_service" / "rules").glob("*.py")
     if p.stem != "__init__"]
    + ["engine_service." + name.removesuffix(".py").replace("/", ".") for name in COMPILED_MODULES])


@pytest.mark.parametrize("name", HOT_MODULES)
def test_each_hot_module_comes_from_the_build_this_run_tests(name: str) -> None:
    module = importlib.import_module(name)
    origin = Path(module.__file__ or "")
    assert (origin.suffix == ".so") is EXPECT_COMPILED, origin
    if EXPECT_COMPILED:
        assert origin.is_relative_to(ROOT / "build" / "compiled")
    else:
        assert origin == ROOT / Path(*name.split(".")).with_suffix(".py")


def test_the_compiled_copy_was_built_from_these_sources() -> None:
    stamp = ROOT / "build" / "compiled" / "SOURCE_HASH"
    if EXPECT_COMPILED:
        assert stamp.read_text().strip() == source_hash()
    else:  # the pure pass reads the sources themselves, whatever build/compiled holds
        import engine_service.rules as rules

        assert Path(rules.__file__ or "").parent == ROOT / "engine_service" / "rules"


def _unfinal_constants(path: Path) -> list[str]:
    """Module-level names in CONSTANT_CASE bound without a `Final` annotation, as "file:line NAME"
    (an annotated name without a value is left to mypy: `Final` needs one)."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            final = "Final" in ast.unparse(node.annotation)
            names = [node.target.id] if node.value is not None and not final else []
        elif isinstance(node, ast.Assign):
            if isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "TypeVar":
                continue  # a type variable, not a value read at run time
            names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            continue
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {name}" for name in names
                  if name.lstrip("_")[:1].isupper() and name.lstrip("_").upper() == name.lstrip("_")]
    return found


def test_the_compiled_modules_constants_are_final() -> None:
    """mypyc reads a module-level name that is not `Final` from the module's dict on every use (a
    string-keyed lookup), a `Final` one from a static slot or inlined: marking the rules' and the
    codec's tables Final cut decoding and encoding a state by a fifth (docs/performance.md)."""
    files = [ROOT / Path(*name.split(".")).with_suffix(".py") for name in HOT_MODULES]
    assert [c for p in files for c in _unfinal_constants(p)] == []
