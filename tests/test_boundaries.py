"""Who may import whom: the state boundary between the engine, the gateway and the clients.

- `api_gateway` carries states it does not read: it imports nothing of
  `engine_service` (nor of `clients`), checked both by reading its sources and by
  importing the app in a fresh interpreter and looking at `sys.modules`;
- `clients` never imports `api_gateway` (it starts the gateway as a program);
- what the gateway and the clients share with the engine is the contract package,
  `domino.v1` (generated modules, `errors`, `channel`), which imports none of them.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = {"api_gateway": REPO / "api_gateway", "clients": REPO / "clients", "engine_service": REPO / "engine_service",
            "domino": REPO / "proto" / "domino"}
FORBIDDEN = {
    "api_gateway": {"engine_service", "clients"},
    "clients": {"api_gateway"},
    "domino": {"engine_service", "api_gateway", "clients"},
    "engine_service": {"api_gateway", "clients"},
}


def imported_packages(source: str) -> set[str]:
    """The top-level packages a module's source imports, anywhere in it (functions and TYPE_CHECKING too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.partition(".")[0])
    return found


def test_the_import_reader_sees_every_kind_of_import() -> None:
    source = ("import a.b\nfrom c import d\nif TYPE_CHECKING:\n    from e.f import g\n"
              "def h():\n    import i\nfrom . import j\n")
    assert imported_packages(source) == {"a", "c", "e", "i"}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_package_imports_across_the_boundary(package: str) -> None:
    offenders = []
    for path in sorted(PACKAGES[package].rglob("*.py")):
        if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            continue
        crossing = imported_packages(path.read_text()) & FORBIDDEN[package]
        if crossing:
            offenders.append(f"{path.relative_to(REPO)} imports {sorted(crossing)}")
    assert not offenders, offenders


def test_the_gateway_app_loads_no_engine_module() -> None:
    probe = ("import json, sys\nimport api_gateway.app, api_gateway.wsgi\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('engine_service', 'clients'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False,
                          cwd=REPO, env={"PATH": "/usr/bin:/bin", "GATEWAY_DEV_TOKEN_KEY": "0"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
