# Two commands: `make run` starts the whole product; `make test` runs every test.
# Each target installs what it needs first, so a fresh clone needs nothing else.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
FLASK  := $(BIN)/flask --app wsgi
VENDOR := app/static/vendor
HTMX   := $(VENDOR)/htmx.min.js
CHARTS := $(VENDOR)/chart.umd.min.js

.PHONY: install install-dev run test lint bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

# The front-end packages (package.json, pinned), copied where the pages load them from.
$(HTMX) $(CHARTS) &: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	mkdir -p $(VENDOR)
	cp node_modules/htmx.org/dist/htmx.min.js $(HTMX)
	cp node_modules/chart.js/dist/chart.umd.min.js $(CHARTS)

install: $(VENV)/.runtime $(HTMX) $(CHARTS)

install-dev: install $(VENV)/.dev

run: install
	$(FLASK) serve-all

lint: install-dev
	$(BIN)/ruff check .

test: install-dev lint
	$(BIN)/python -m pytest

bench: install-dev
	$(BIN)/python -m bench.run_all
