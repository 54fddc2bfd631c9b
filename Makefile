# The two commands: `make demo` (the whole stack on embedded defaults, Alice's mailbox, the evidence)
# and `make test` (every suite). Both install what they need first, on a fresh machine too.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# pytest exits 5 when it collects no test: an empty suite is not a failure here. Each run has its
# own base folder: pytest resets /tmp/pytest-of-<user> to mode 0700 whenever a session starts, which
# (run as root) cuts the embedded PostgreSQL, running as an unprivileged account, off from its data
# in any other session still running there. A passing run's folder is removed, a failing one's kept.
define pytest
	base=$$(mktemp -d /tmp/memloop-pytest.XXXXXX); status=0; $(BIN)/pytest --basetemp=$$base $(1) || status=$$?; \
	if [ $$status -eq 0 ] || [ $$status -eq 5 ]; then rm -rf $$base; else echo "test folders kept in $$base"; false; fi
endef

# The suites run on TEST_WORKERS pytest-xdist workers, each module whole on one worker; then the
# tests marked `quiet` (they measure wall-clock time) run with nothing beside them. Why that is safe:
# tests/parallel_workers.py. TEST_WORKERS=0 runs everything in one process, as before. The second
# argument, when given, narrows both passes ("not cluster and ").
TEST_WORKERS ?= 2
define suites
	$(call pytest,$(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile) -m "$(2)not quiet" $(1))
	$(call pytest,-m "$(2)quiet" $(1))
endef

.PHONY: install demo up up-cluster cluster-test test test-unit test-integration test-e2e test-integration-external lint lint-protos protos bench bench-quick fuzz chaos clean redaction-report test-at-rest-full screenshots chromium system-tools extraction-report train-extractor calibration-report

# buf breaking compares the contracts with main's (read from the local git repository, offline).
# Override for a deliberate, reviewed break: `make lint BUF_AGAINST=<older ref or image>`.
BUF_AGAINST ?= .git\#branch=main,subdir=protos

install: $(STAMP) chromium system-tools

# The console's browser tests and screenshots drive Debian's chromium package; nothing is downloaded
# by Playwright itself. Installed only when missing (needs root or sudo, as apt-get does). apt waits
# up to ten minutes for another apt run (a fresh machine's own updates, a second clone installing).
chromium:
	@test -x /usr/bin/chromium || { \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq -o DPkg::Lock::Timeout=600 && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=600 chromium; }

# promtool (Debian's `prometheus` package) checks and unit-tests deploy/monitoring's alert rules in
# `make test`. Installed only when missing; no apt, or a failed install, stops with what to do.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
system-tools:
	@command -v promtool >/dev/null 2>&1 || { \
	  command -v apt-get >/dev/null 2>&1 || { \
	    echo "promtool is missing and apt-get is not available: install Debian's 'prometheus' package (or promtool from Prometheus) and re-run" >&2; exit 1; }; \
	  echo "installing promtool (Debian package 'prometheus')"; \
	  { $(SUDO) apt-get update -qq -o DPkg::Lock::Timeout=600 && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	      --no-install-recommends -o DPkg::Lock::Timeout=600 prometheus >/dev/null; } || { \
	    echo "apt-get could not install 'prometheus' (promtool); install it by hand and re-run" >&2; exit 1; }; \
	  command -v promtool >/dev/null 2>&1 || { echo "'prometheus' installed but promtool is not on PATH" >&2; exit 1; }; }

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

# 3 NATS nodes (streams at R3), PostgreSQL primary + hot standby, 2 relays, 2 workers, 2 memory replicas.
up-cluster: install
	$(BIN)/memloop up --cluster

test: install
	$(call suites,tests)

test-unit: install
	$(call suites,tests/unit)

test-integration: install
	$(call suites,tests/integration tests/e2e)

test-e2e: install
	$(call suites,tests/e2e)

# .ci/run's second pass: the integration suite against the servers MEMLOOP_TEST_DATABASE_URL and
# MEMLOOP_TEST_NATS_URL name (the cluster tests start servers of their own, so they are left out).
test-integration-external: install
	$(call suites,tests/integration,not cluster and )

# Property-based fuzzing of every RPC against the stack as processes, ≥300 examples per RPC (a few
# per RPC run inside `make test`); prints the table and keeps it in .memloop/fuzz-table.md.
fuzz: install
	mkdir -p .memloop
	MEMLOOP_FUZZ_EXAMPLES=300 MEMLOOP_FUZZ_REPORT=.memloop/fuzz-table.md $(BIN)/pytest tests/fuzz -q

# 5,000 events through the stack while processes are killed, NATS and PostgreSQL restarted and
# worker<->memory cut (a ~500-event profile runs inside `make test`); prints the table. Then a search
# racing 1,000 forgets (100 inside `make test`).
chaos: install
	mkdir -p .memloop
	$(BIN)/python -m tests.chaos.campaign --events 5000 --report .memloop/chaos-table.md
	MEMLOOP_RACE_ROUNDS=1000 $(BIN)/pytest tests/integration/test_deletion.py -k racing_forget -q

# The clustered topology under load: 2,000 events while the stream's leader node, then a follower, a
# relay, a worker and a memory replica are killed (a 400-event profile runs inside `make test`).
cluster-test: install
	MEMLOOP_CLUSTER_EVENTS=2000 $(BIN)/pytest --timeout=3600 -s -m cluster tests/e2e/test_cluster.py

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

# The learned extractor: its labelled set, its heads (reproducible), and what it learns on held-out phrasings.
train-extractor: install
	$(BIN)/python scripts/make_extraction_dataset.py
	HF_HUB_OFFLINE=1 $(BIN)/python scripts/train_extractor.py

extraction-report: install
	HF_HUB_OFFLINE=1 $(BIN)/python scripts/extraction_report.py

calibration-report: install
	HF_HUB_OFFLINE=1 $(BIN)/python scripts/calibrate_policy.py

bench: install
	$(BIN)/python -m bench.run_all

bench-quick: install  # every module at small sizes (~6 min); fails when a module no longer runs
	$(BIN)/python -m bench.run_all --quick --fail-on-error

# The labelled redaction corpus (regenerated) and its precision/recall per kind.
redaction-report: install
	$(BIN)/python scripts/make_redaction_corpus.py
	$(BIN)/python scripts/redaction_report.py

# Every labelled secret and PII string through the real stack, then both databases, the streams and the logs
# searched (make test sends a representative subset of 60).
test-at-rest-full: install
	MEMLOOP_AT_REST_FULL=1 $(BIN)/pytest --timeout=3600 tests/e2e/test_secrets_at_rest.py
# Screenshots of every console page at 1280 px and 390 px, into docs/console/ (linked from the README).
screenshots: install
	$(BIN)/python scripts/console_screenshots.py --out docs/console

clean:
	rm -rf .memloop .pytest_cache .mypy_cache .ruff_cache
