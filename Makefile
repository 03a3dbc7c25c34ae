# Every target bootstraps itself: a fresh clone needs only python3 (3.11+) and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: install run test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/memstack serve

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy src

test: lint
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/memstack bench context --json
	$(BIN)/memstack bench capture --json
	$(BIN)/memstack bench turn --json
	$(BIN)/memstack bench retrieval --backend sqlite --users 1000 --per-user 500 --queries 1000 --k 10 --json
	$(BIN)/memstack bench retrieval --backend postgres --users 1000 --per-user 500 --queries 1000 --k 10 --json
	$(BIN)/memstack bench retrieval --backend sqlite --users 1 --per-user 100000 --queries 200 --k 10 --json
	$(BIN)/memstack bench retrieval --backend postgres --users 1 --per-user 100000 --queries 200 --k 10 --json
	$(BIN)/memstack bench http --json
	$(BIN)/memstack bench http --queries 0 --json

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
