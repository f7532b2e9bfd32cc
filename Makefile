# One entry point for people and CI. Everything installs into ./.venv from the
# project's own files; nothing is assumed on the machine but python3 (>= 3.11).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: install run test conformance lint typecheck bench bench-compiled clean proto

$(STAMP): pyproject.toml setup.py proto/domino/v1/*.proto
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) setup.py --quiet build_py >/dev/null
	touch $(STAMP)

install: $(STAMP)

## Regenerate proto/domino/v1/*_pb2*.py after editing the .proto files.
proto: $(STAMP)
	$(PY) setup.py --quiet build_py >/dev/null

## Run the engine and the gateway locally with default settings.
run: install
	$(VENV)/bin/domino serve all

## Run the whole test suite (unit, property, conformance on every surface, services).
test: install
	$(PY) -m pytest $(PYTEST_ARGS)

conformance: install
	$(VENV)/bin/domino conformance tests/scenarios

lint: install
	$(VENV)/bin/ruff check engine_service api_gateway clients tests

typecheck: install
	$(VENV)/bin/mypy

## Benchmarks against the peers (docs/performance.md); results land in bench/results/.
bench: install
	$(VENV)/bin/domino bench engine
	$(VENV)/bin/domino bench service
	$(VENV)/bin/domino bench report

## The same with the mypyc-compiled rules side by side (needs gcc and the Python headers).
bench-compiled: install
	bash bench/build_compiled.sh
	$(VENV)/bin/domino bench engine --compiled yes
	$(VENV)/bin/domino bench report

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
	find proto/domino -name '*_pb2*' -delete
