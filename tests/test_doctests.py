"""The examples in the rules modules' docstrings and in README.md are tests too (python-chess style)."""
from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import engine_service.rules as rules

MODULES = sorted(m.name for m in pkgutil.iter_modules(rules.__path__, rules.__name__ + "."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"


def test_the_readme_examples_print_what_they_say() -> None:
    """README.md's library example is a Python session (```pycon): what it prints is checked, so a
    comment such as "e.g. 2" can no longer drift from the 3 it prints (issue 28)."""
    readme = Path(__file__).resolve().parents[1] / "README.md"
    blocks = re.findall(r"```pycon\n(.*?)```", readme.read_text(encoding="utf-8"), re.S)
    assert blocks, "README.md has no pycon example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks, 1):
        runner.run(doctest.DocTestParser().get_doctest(block, {}, f"README.md example {i}", str(readme), 0))
    assert runner.tries >= 5 and runner.failures == 0, f"{runner.failures} README example(s) failed"
