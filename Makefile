# Provisional targets for the foundation work; the lead extends this file (demo, up, ...).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

# pytest exits 5 when it collects no test: an empty suite is not a failure here.
define pytest
	status=0; $(BIN)/pytest $(1) || status=$$?; [ $$status -eq 0 ] || [ $$status -eq 5 ]
endef

.PHONY: install test test-integration lint protos

install:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -e '.[dev]'

test:
	$(call pytest,tests)

test-integration:
	$(call pytest,tests/integration tests/e2e)

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict services

protos:
	$(BIN)/python scripts/gen_protos.py
