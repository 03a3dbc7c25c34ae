# Every target bootstraps itself: a fresh clone needs only python3 (3.11+) and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two installs into the one venv, each redone when its pyproject.toml changes: the runtime (`make run`: memstack and
# its dependencies, nothing else) and the development one (`make install`, and every target that tests or measures:
# the `dev` extra's tools and the test fakes of testing/, which the runtime wheel does not carry).
RUNTIME := $(VENV)/.runtime-$(shell cksum pyproject.toml | cut -d' ' -f1)
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml testing/pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: install run test lint bench clean chromium pgbouncer node screenshots

CHROMIUM := /usr/bin/chromium

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(RUNTIME): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install -q -e .
	rm -f $(VENV)/.runtime-*
	touch $(RUNTIME)

$(STAMP): pyproject.toml testing/pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install -q -e '.[dev]' -e ./testing
	rm -f $(VENV)/.installed-* $(VENV)/.runtime-*
	touch $(STAMP) $(RUNTIME)

install: $(STAMP)

run: $(RUNTIME)
	$(BIN)/memstack serve

lint: $(STAMP)
	$(BIN)/ruff check src tests testing
	$(BIN)/ruff format --check src tests testing
	$(BIN)/mypy src testing/src

# The web UI tests drive Debian's Chromium, the pooler tests Debian's PgBouncer, the TypeScript client's tests Node.js
# and npm (its packages come from the npm registry). Without them they fail (never skip) with the command to run.
test: lint
	@$(MAKE) --no-print-directory chromium || echo "make chromium failed: the web UI tests (tests/ui) will fail" >&2
	@$(MAKE) --no-print-directory pgbouncer || echo "make pgbouncer failed: the [pgbouncer] store tests will fail" >&2
	@$(MAKE) --no-print-directory node || echo "make node failed: the TypeScript client's tests will fail" >&2
	$(BIN)/pytest -q

# A Debian package the tests need, installed with apt-get when its program ($(1)) is missing and we are root.
define apt_install
	@if [ ! -x $(1) ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing $(2) with apt-get (for $(3))"; \
	    export DEBIAN_FRONTEND=noninteractive; apt-get update -q && apt-get install -y -q $(2); \
	  else \
	    echo "$(1) is missing and only root can install it: sudo apt-get install -y $(2)" >&2; exit 1; \
	  fi; \
	fi
	@test -x $(1)
endef

# Debian's chromium for the web UI tests and screenshots.
chromium:
	$(call apt_install,$(CHROMIUM),chromium,the web UI tests)

# Debian's PgBouncer for the tests that run the store through a transaction-pooling pooler.
PGBOUNCER := /usr/sbin/pgbouncer
pgbouncer:
	$(call apt_install,$(PGBOUNCER),pgbouncer,the pooler tests)

# Debian's Node.js and npm for the TypeScript client's tests (tests/clients/test_typescript.py).
node:
	$(call apt_install,/usr/bin/npm,nodejs npm,the TypeScript client's tests)

# The three views of the web UI at 1280x800, as PNG files in docs/ (linked from the README).
screenshots: $(STAMP) chromium
	$(BIN)/python tests/ui/screenshots.py docs

bench: $(STAMP)
	$(BIN)/memstack bench startup --json
	$(BIN)/memstack bench context --json
	$(BIN)/memstack bench capture --json
	$(BIN)/memstack bench turn --json
	$(BIN)/memstack bench ingest --json
	$(BIN)/memstack bench ingest --backend postgres --json
	$(BIN)/memstack bench freshness --json
	$(BIN)/memstack bench freshness --backend postgres --json
	$(BIN)/memstack bench retrieval --backend sqlite --users 1000 --per-user 500 --queries 1000 --k 10 --json
	$(BIN)/memstack bench retrieval --backend postgres --users 1000 --per-user 500 --queries 1000 --k 10 --json
	$(BIN)/memstack bench retrieval --backend postgres --users 2000 --per-user 500 --queries 1000 --k 10 --json
	$(BIN)/memstack bench retrieval --backend sqlite --users 1 --per-user 100000 --queries 200 --k 10 --json
	$(BIN)/memstack bench retrieval --backend postgres --users 1 --per-user 100000 --queries 200 --k 10 --json
	$(BIN)/memstack bench http --json
	$(BIN)/memstack bench http --queries 0 --json
	$(BIN)/memstack bench sessions --sessions 1000 --turns 2 --model-delay 10 --pool 20 --json
	$(BIN)/memstack bench chat --json

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
