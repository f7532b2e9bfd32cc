"""Build hook: generate the protobuf/gRPC modules from proto/ before packaging; optionally compile.

The generated code is never committed or edited by hand (see proto/README.md);
every build, editable or not, produces it from proto/domino/v1/*.proto.

``DOMINO_COMPILE=1`` builds the engine's hot modules with mypyc (the same modules as
scripts/build_compiled.sh: the rules package, engine_service/edge/codec.py and wire.py) as
C extensions next to their sources: a platform wheel whose rules run ~2.7x faster
(scripts/build-wheel.sh, `make wheel`). Unset, which is how `make run`, `make install` and a
plain ``pip install`` build, nothing is compiled and the package is pure Python, the same code.
"""
from __future__ import annotations

import glob
import os
import warnings

from setuptools import find_namespace_packages, find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.warnings import InformationOnly

# `pip install -e .` (make run, make install) would print setuptools' note on editable installs
# ("Please be careful with folders in your working directory ..."): information only, nothing to act
# on, and it reads like a broken install to a newcomer. Real warnings still show.
warnings.filterwarnings("ignore", category=InformationOnly)

HERE = os.path.dirname(os.path.abspath(__file__))


def generate_proto() -> None:
    import grpc_tools
    from grpc_tools import protoc  # build requirement (pyproject.toml)

    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    sources = sorted(glob.glob(os.path.join(HERE, "proto", "domino", "v1", "*.proto")))
    args = [
        "protoc",
        f"-I{os.path.join(HERE, 'proto')}",
        f"-I{include}",
        f"--python_out={os.path.join(HERE, 'proto')}",
        f"--pyi_out={os.path.join(HERE, 'proto')}",
        f"--grpc_python_out={os.path.join(HERE, 'proto')}",
        *sources,
    ]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed on " + ", ".join(sources))


#: What ``DOMINO_COMPILE=1`` compiles (bench/compiled.py's COMPILED_MODULES and the rules package).
COMPILED_SOURCES = ["engine_service/rules/*.py", "engine_service/edge/codec.py", "engine_service/edge/wire.py"]


def compiled_extensions() -> list[object]:
    """mypyc's extension modules for `COMPILED_SOURCES` when DOMINO_COMPILE=1, else none (a pure build).

    mypyc type-checks what it compiles against the protobuf stubs, so the generated
    modules are made first; it needs mypy (the compile extra), a C compiler and Python's headers."""
    if os.environ.get("DOMINO_COMPILE", "").strip() not in ("1", "yes", "true"):
        return []
    from mypyc.build import mypycify

    generate_proto()
    os.environ["MYPYPATH"] = os.path.join(HERE, "proto")
    sources = sorted(os.path.relpath(p, HERE) for pattern in COMPILED_SOURCES
                     for p in glob.glob(os.path.join(HERE, pattern)))
    extensions: list[object] = mypycify(sources, opt_level="3")
    return extensions


class BuildWithProto(build_py):
    def run(self) -> None:
        generate_proto()
        super().run()


packages = find_packages(include=["engine_service*", "api_gateway*", "clients*"])
# The browser table's files (HTML, JS, CSS; no Python) are a namespace package of data:
# find_packages() sees only directories with an __init__.py, and left out, setuptools warns at
# every build. Found, not named, so that a build without it (the images' dependency layer,
# docker/) still works.
packages += find_namespace_packages(include=["api_gateway.play"])
packages += ["domino", "domino.v1"]

setup(
    packages=packages,
    package_dir={"": ".", "domino": "proto/domino"},
    cmdclass={"build_py": BuildWithProto},
    ext_modules=compiled_extensions(),
)
