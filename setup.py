"""Build hook: generate the protobuf/gRPC modules from proto/ before packaging.

The generated code is never committed or edited by hand (see proto/README.md);
every build, editable or not, produces it from proto/domino/v1/*.proto.
"""
from __future__ import annotations

import glob
import os

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

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


class BuildWithProto(build_py):
    def run(self) -> None:
        generate_proto()
        super().run()


packages = find_packages(include=["engine_service*", "api_gateway*", "clients*"])
packages += ["domino", "domino.v1"]

setup(
    packages=packages,
    package_dir={"": ".", "domino": "proto/domino"},
    cmdclass={"build_py": BuildWithProto},
)
