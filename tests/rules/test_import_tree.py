"""The rules' imports form a tree: no circle among engine_service/rules' modules, not even under TYPE_CHECKING.

A family computes a round's result and `Match` records it; a round asks its
family for flags and hooks given plain values; `kingdomino_state.decode` hands
`Kingdomino` the checked parts. None calls back into a module that depends on
it, and this test keeps it so: every module is parsed with `ast` and every
import statement counts, wherever it stands (module level, ``if
TYPE_CHECKING:``, inside a function).

What is an edge from module M:
- ``from .family import X``, ``from engine_service.rules.family import X`` and
  ``import engine_service.rules.family``: to `family`;
- ``from . import options`` (or ``from engine_service.rules import options``):
  to the submodule `options`;
- any other name from the package (``from engine_service.rules import Match``,
  ``import engine_service.rules``): to the package's ``__init__``, which
  imports the submodules, so from a submodule that is a circle.

The package that Python imports before any of its submodules is not an edge
(every submodule would make a circle with ``__init__`` otherwise); that is why
a submodule must name its sibling, never the package.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Set
from pathlib import Path

import pytest

PACKAGE = "engine_service.rules"
RULES = Path(__file__).resolve().parents[2] / "engine_service" / "rules"


# ---------------------------------------------------------------- the graph


def module_name(path: Path, root: Path = RULES, package: str = PACKAGE) -> str:
    """The dotted name of a source file under `root` (``__init__.py``: the package itself)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def _known_prefix(name: str, known: Set[str]) -> str | None:
    """The longest leading part of the dotted `name` that is one of the `known` modules."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in known:
            return prefix
    return None


def imported(module: str, is_package: bool, source: str, known: Set[str]) -> set[str]:
    """The `known` modules that `module` imports anywhere in its `source` (see the module's docstring)."""
    # Relative imports start from the package holding the module (a package's __init__: itself).
    here = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _known_prefix(alias.name, known)
                if target is not None:
                    found.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = node.level - 1
                if up > len(here):
                    raise ValueError(f"{module}: relative import beyond the top-level package")
                base = ".".join(here[: len(here) - up] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                target = submodule if submodule in known else _known_prefix(base, known)
                if target is not None:
                    found.add(target)
    return found


def import_graph(sources: Mapping[str, tuple[bool, str]]) -> dict[str, set[str]]:
    """module -> the modules among `sources` it imports; `sources`: module -> (is a package, source)."""
    known = set(sources)
    return {name: imported(name, is_package, source, known) for name, (is_package, source) in sources.items()}


def rules_sources(root: Path = RULES) -> dict[str, tuple[bool, str]]:
    """Every module of the rules package: its dotted name -> (is a package, source)."""
    return {module_name(path, root): (path.name == "__init__.py", path.read_text(encoding="utf-8"))
            for path in sorted(root.rglob("*.py"))}


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """A circle of `graph` as ``[a, b, ..., a]``, or None when it has none (a DAG).

    Depth first, in sorted order, so the circle reported is the same on every run.
    """
    done: set[str] = set()
    path: list[str] = []
    on_path: dict[str, int] = {}

    def visit(node: str) -> list[str] | None:
        on_path[node] = len(path)
        path.append(node)
        for succ in sorted(graph.get(node, ())):
            if succ in on_path:
                return path[on_path[succ]:] + [succ]
            if succ not in done:
                found = visit(succ)
                if found is not None:
                    return found
        path.pop()
        del on_path[node]
        done.add(node)
        return None

    for node in sorted(graph):
        if node not in done:
            found = visit(node)
            if found is not None:
                return found
    return None


def _short(name: str) -> str:
    return "__init__" if name == PACKAGE else name.removeprefix(PACKAGE + ".")


# ---------------------------------------------------------------- the helpers catch what they must


@pytest.mark.parametrize(("graph", "cycle"), [
    ({}, None),
    ({"a": set()}, None),
    ({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}, None),        # a diamond is no circle
    ({"a": {"a"}}, ["a", "a"]),
    ({"a": {"b"}, "b": {"a"}}, ["a", "b", "a"]),
    ({"x": {"a"}, "a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"e"}, "e": {"d"}}, ["d", "e", "d"]),
])
def test_find_cycle_on_small_graphs(graph: dict[str, set[str]], cycle: list[str] | None) -> None:
    assert find_cycle(graph) == cycle


KNOWN = frozenset({PACKAGE, *(f"{PACKAGE}.{m}" for m in ("family", "match", "options", "tiles", "deal", "round"))})


def test_every_import_statement_counts_wherever_it_stands() -> None:
    source = '''
from __future__ import annotations
import json
from typing import TYPE_CHECKING
from . import options as opt
from .tiles import ALL_TILES
from engine_service.rules import Match
from ..rules.deal import derive_seed
if TYPE_CHECKING:
    from .match import Match
def late() -> None:
    import engine_service.rules.round
'''
    assert imported(f"{PACKAGE}.family", False, source, KNOWN) == {
        f"{PACKAGE}.options", f"{PACKAGE}.tiles", PACKAGE, f"{PACKAGE}.deal", f"{PACKAGE}.match",
        f"{PACKAGE}.round"}


def test_a_packages_relative_imports_start_from_itself() -> None:
    assert imported(PACKAGE, True, "from .match import Match\nfrom . import tiles\n", KNOWN) == {
        f"{PACKAGE}.match", f"{PACKAGE}.tiles"}


def test_a_circle_under_type_checking_is_caught() -> None:
    # The shape this test exists to refuse: family.py naming Match for its type hints again.
    sources = rules_sources()
    is_package, source = sources[f"{PACKAGE}.family"]
    sources[f"{PACKAGE}.family"] = (is_package, source + "\nif TYPE_CHECKING:\n    from .match import Match\n")
    cycle = find_cycle(import_graph(sources))
    assert cycle is not None
    assert f"{PACKAGE}.family" in cycle and f"{PACKAGE}.match" in cycle


def test_importing_the_package_from_a_submodule_is_a_circle() -> None:
    sources = rules_sources()
    is_package, source = sources[f"{PACKAGE}.deal"]
    sources[f"{PACKAGE}.deal"] = (is_package, source + "\nfrom engine_service.rules import Match\n")
    cycle = find_cycle(import_graph(sources))
    assert cycle is not None and PACKAGE in cycle


# ---------------------------------------------------------------- the rules themselves


def test_the_graph_sees_the_rules() -> None:
    graph = import_graph(rules_sources())
    assert {_short(m) for m in graph} >= {"__init__", "events", "family", "round", "match", "kozel",
                                          "kingdomino", "kingdomino_state"}
    assert f"{PACKAGE}.family" in graph[f"{PACKAGE}.match"]
    assert f"{PACKAGE}.family" in graph[f"{PACKAGE}.round"]
    assert f"{PACKAGE}.options" in graph[f"{PACKAGE}.kozel"]          # `from . import options as opt`
    assert f"{PACKAGE}.kingdomino_state" in graph[f"{PACKAGE}.kingdomino"]
    assert f"{PACKAGE}.match" in graph[PACKAGE]


def test_no_rules_module_imports_the_package() -> None:
    # Its __init__ imports the submodules, so a submodule naming the package closes a circle.
    graph = import_graph(rules_sources())
    importers = sorted(_short(m) for m, targets in graph.items() if PACKAGE in targets and m != PACKAGE)
    assert importers == [], f"import siblings, not the package: {importers}"


def test_the_rules_imports_form_a_tree() -> None:
    cycle = find_cycle(import_graph(rules_sources()))
    assert cycle is None, "a circle in the rules' imports: " + " -> ".join(_short(m) for m in cycle or [])
