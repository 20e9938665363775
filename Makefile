# Two commands: `make run` starts the whole product; `make test` runs every test.
# Each target installs what it needs first, so a fresh clone needs nothing else.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
FLASK  := $(BIN)/flask --app wsgi
HTMX   := app/static/vendor/htmx.min.js
# npm ci writes this file; it is newer than package-lock.json once node_modules matches the lock.
NODE_MODULES := node_modules/.package-lock.json
# The browser tests inject axe-core into each page straight from node_modules.
AXE    := node_modules/axe-core/axe.min.js

.PHONY: install install-dev run test lint bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(AXE): $(NODE_MODULES)

$(HTMX): $(NODE_MODULES)
	mkdir -p $(dir $(HTMX))
	cp node_modules/htmx.org/dist/htmx.min.js $(HTMX)

install: $(VENV)/.runtime $(HTMX)

install-dev: install $(VENV)/.dev $(AXE)

run: install
	$(FLASK) serve-all

lint: install-dev
	$(BIN)/ruff check .

test: install-dev lint
	$(BIN)/python -m pytest

bench: install-dev
	$(BIN)/python -m bench.run_all
