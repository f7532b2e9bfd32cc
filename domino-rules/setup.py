"""Build hook of domino-rules: pure Python by default; ``DOMINO_COMPILE=1`` compiles the rules package
with mypyc, as the root's setup.py does for domino-engine.

The compiled build is a platform wheel whose rules run ~2.7x faster (docs/performance.md): the same
modules as C extensions next to their sources, made by `scripts/build-wheel.sh` (`make wheel`) with
mypy (the root's compile extra), a C compiler and Python's headers. Unset, which is how a plain
``pip install ./domino-rules`` builds, nothing is compiled and no build tool beyond setuptools is needed.
"""
from __future__ import annotations

import glob
import os

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))


def compiled_extensions() -> list[object]:
    """mypyc's extension modules for engine_service/rules/*.py when DOMINO_COMPILE=1, else none.

    Their shared library is named for this distribution (group_name), not by a hash of its sources."""
    if os.environ.get("DOMINO_COMPILE", "").strip() not in ("1", "yes", "true"):
        return []
    from mypyc.build import mypycify

    sources = sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(HERE, "engine_service", "rules", "*.py")))
    extensions: list[object] = mypycify(sources, opt_level="3", group_name="domino_rules")
    return extensions


setup(ext_modules=compiled_extensions())
