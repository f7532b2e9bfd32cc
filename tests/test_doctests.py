"""The examples in the rules modules' docstrings are tests too (python-chess style)."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import engine_service.rules as rules

MODULES = sorted(m.name for m in pkgutil.iter_modules(rules.__path__, rules.__name__ + "."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
