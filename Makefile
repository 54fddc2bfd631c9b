# The two commands: `make demo` (the whole stack on embedded defaults, Alice's mailbox, the evidence)
# and `make test` (every suite). Both install what they need first, on a fresh machine too.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# pytest exits 5 when it collects no test: an empty suite is not a failure here.
define pytest
	status=0; $(BIN)/pytest $(1) || status=$$?; [ $$status -eq 0 ] || [ $$status -eq 5 ]
endef

.PHONY: install demo up test test-unit test-integration test-e2e lint lint-protos protos bench bench-quick fuzz chaos clean

# buf breaking compares the contracts with main's (read from the local git repository, offline).
# Override for a deliberate, reviewed break: `make lint BUF_AGAINST=<older ref or image>`.
BUF_AGAINST ?= .git\#branch=main,subdir=protos

install: $(STAMP)

$(STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip setuptools wheel
	$(BIN)/pip install -q -e '.[dev]'
	$(BIN)/pip install -q -e clients/python  # the agent's client: examples, its e2e tests, bench_context
	touch $(STAMP)

demo: install
	$(BIN)/memloop demo

up: install
	$(BIN)/memloop up

test: install
	$(call pytest,tests)

test-unit: install
	$(call pytest,tests/unit)

test-integration: install
	$(call pytest,tests/integration tests/e2e)

test-e2e: install
	$(call pytest,tests/e2e)

# Property-based fuzzing of every RPC against the stack as processes, ≥300 examples per RPC (a few
# per RPC run inside `make test`); prints the table and keeps it in .memloop/fuzz-table.md.
fuzz: install
	mkdir -p .memloop
	MEMLOOP_FUZZ_EXAMPLES=300 MEMLOOP_FUZZ_REPORT=.memloop/fuzz-table.md $(BIN)/pytest tests/fuzz -q

# 5,000 events through the stack while processes are killed, NATS and PostgreSQL restarted and
# worker<->memory cut (a ~500-event profile runs inside `make test`); prints the table.
chaos: install
	mkdir -p .memloop
	$(BIN)/python -m tests.chaos.campaign --events 5000 --report .memloop/chaos-table.md

lint: install lint-protos
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict services tests bench
	$(BIN)/mypy --strict clients/python/src/memloop_client
	$(BIN)/lint-imports

lint-protos: install
	cd protos && ../$(BIN)/buf lint
	cd protos && ../$(BIN)/buf format --diff --exit-code
	$(BIN)/buf breaking protos --against '$(BUF_AGAINST)'

protos: install
	$(BIN)/python scripts/gen_protos.py
	$(BIN)/python scripts/gen_client_protos.py

bench: install
	$(BIN)/python -m bench.run_all

bench-quick: install
	$(BIN)/python -m bench.run_all --quick

clean:
	rm -rf .memloop .pytest_cache .mypy_cache .ruff_cache
