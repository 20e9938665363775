# Two commands: `make run` starts the whole product; `make test` runs every test.
# Each target installs what it needs first, so a fresh clone needs nothing else.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
FLASK  := $(BIN)/flask --app wsgi
VENDOR := app/static/vendor
HTMX   := $(VENDOR)/htmx.min.js
CHARTS := $(VENDOR)/chart.umd.min.js
# npm ci writes this file; it is newer than package-lock.json once node_modules matches the lock.
NODE_MODULES := node_modules/.package-lock.json
# The browser tests inject axe-core into each page straight from node_modules.
AXE    := node_modules/axe-core/axe.min.js

.PHONY: install install-dev run test unit check lint bench lock

# requirements.txt and requirements-dev.txt are hashed locks of every package, compiled from the
# short requirements.in and requirements-dev.in by `make lock`; installs refuse anything unhashed.
PIP_INSTALL := $(BIN)/pip install --quiet --disable-pip-version-check --require-hashes
# The locks are resolved against PyPI alone: this machine's own pip configuration (local indexes,
# find-links, constraints) must not leak into files another machine installs from.
PYPI_ONLY := env -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL -u PIP_FIND_LINKS -u PIP_CONSTRAINT \
	PIP_CONFIG_FILE=/dev/null CUSTOM_COMPILE_COMMAND="make lock"
PIP_COMPILE := $(PYPI_ONLY) $(BIN)/pip-compile --quiet --generate-hashes --strip-extras \
	--index-url https://pypi.org/simple --no-emit-index-url

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(PIP_INSTALL) -r requirements.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(PIP_INSTALL) -r requirements-dev.txt
	touch $@

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(AXE): $(NODE_MODULES)

# The front-end packages the pages load (package.json, pinned), copied where the pages find them.
$(HTMX) $(CHARTS) &: $(NODE_MODULES)
	mkdir -p $(VENDOR)
	cp node_modules/htmx.org/dist/htmx.min.js $(HTMX)
	cp node_modules/chart.js/dist/chart.umd.min.js $(CHARTS)

install: $(VENV)/.runtime $(HTMX) $(CHARTS)

install-dev: install $(VENV)/.dev $(AXE)

run: install
	$(FLASK) serve-all

# mypy reads its settings, and the folders it checks (app/ and jobs/), from pyproject.toml.
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The unit tier needs no service: it runs with PostgreSQL's and Redis's URLs pointing at a closed
# port, so a unit test that reaches for either fails here rather than quietly needing them.
NO_SERVICES := TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:1/no_service \
	TEST_REDIS_URL=redis://127.0.0.1:1/0

unit: install-dev
	$(NO_SERVICES) $(BIN)/python -m pytest tests/unit

# The edit-test loop: lint and the unit tier, property tests at their quick depth (tests/unit/conftest.py).
check: lint unit

# The unit tier first (no services), then the integration and browser tiers on the real ones, in
# three processes (most tests wait on PostgreSQL, Redis, workers or the browser, so three keep
# two cores busy), each with a database and a Redis database of its own (tests/conftest.py); a
# file's tests stay in one process, as its module fixtures expect.
TEST_PROCESSES ?= 3

# `make test` runs the property tests at their full depth; `make unit` and `make check` at the quick one.
test: export HYPOTHESIS_PROFILE = thorough
test: install-dev lint unit
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile tests/integration tests/browser

bench: install-dev
	$(BIN)/python -m bench.run_all

# After editing requirements.in or requirements-dev.in: recompile both locks (the dev lock is
# constrained to the runtime one). Pins already in a lock stay unless an input asks otherwise.
lock: $(VENV)/.dev
	$(PIP_COMPILE) --output-file requirements.txt requirements.in
	$(PIP_COMPILE) --output-file requirements-dev.txt requirements-dev.in
