# Two commands do all set-up on a fresh machine: `make run` and `make test`.
# Both install exactly the versions in uv.lock (with their hashes), through uv: pinned here and
# bootstrapped with the machine's own pip into .uv/, so nothing but Python 3.11+ and make is needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV_VERSION := 0.13.9
UV_HOME := .uv
UV := $(UV_HOME)/bin/uv
# uv uses the Python that runs `make` (never downloads one), and the venv is the project's .venv.
UV_ENV := UV_PYTHON=$(PY) UV_PYTHON_DOWNLOADS=never UV_PROJECT_ENVIRONMENT=$(VENV)
RUN_STAMP := $(VENV)/.synced-run
TEST_STAMP := $(VENV)/.synced-test

.PHONY: run test lint bench fmt-check clean lock lock-check docs lowest-smoke

$(UV):
	@echo "make: fetching uv $(UV_VERSION) into $(UV_HOME)/ (once)"
	$(PY) -m pip install --quiet --disable-pip-version-check --target $(UV_HOME) uv==$(UV_VERSION)

# `make run`: the runtime packages and every extra, no dev tools. `--inexact` keeps dev tools a
# `make test` installed earlier (they are harmless to the app; `make test` removes what the lock
# no longer names).
$(RUN_STAMP): pyproject.toml uv.lock | $(UV)
	@echo "make: installing the locked runtime packages into $(VENV)"
	$(UV_ENV) $(UV) sync --locked --all-extras --no-dev --inexact
	touch $@

$(TEST_STAMP): pyproject.toml uv.lock | $(UV)
	@echo "make: installing the locked runtime and dev packages into $(VENV)"
	$(UV_ENV) $(UV) sync --locked --all-extras
	touch $@

# Refresh the lock after changing pyproject.toml (or to take new releases: `make lock ARGS=--upgrade`).
lock: | $(UV)
	$(UV_ENV) $(UV) lock $(ARGS)

# CI: fails when pyproject.toml and uv.lock disagree.
lock-check: | $(UV)
	$(UV_ENV) $(UV) lock --check

# The documentation site: the locked runtime packages and `docs` group in a venv of its own (the
# build imports patch_tui for the command line reference, docs/hooks.py), built strictly into site/.
DOCS_VENV := .venv-docs
DOCS_STAMP := $(DOCS_VENV)/.synced-docs
$(DOCS_STAMP): pyproject.toml uv.lock | $(UV)
	@echo "make: installing the locked docs packages into $(DOCS_VENV)"
	UV_PYTHON=$(PY) UV_PYTHON_DOWNLOADS=never UV_PROJECT_ENVIRONMENT=$(DOCS_VENV) \
		$(UV) sync --locked --no-dev --group docs
	touch $@

# Not --quiet: mkdocs then stops counting the warnings --strict fails on.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --strict

# CI: each lower bound in pyproject.toml is a version the code works with. patch-tui is built as
# a wheel (as `uv tool install .` or `pipx install .` builds it) and installed with the lowest
# versions of its direct dependencies the ranges allow into a venv of its own, and tools/smoke.py
# uses it as a user would (lint the samples, serve and call a tool over MCP, start the desk).
LOWEST_VENV := .venv-lowest
lowest-smoke: | $(UV)
	rm -rf $(LOWEST_VENV)
	UV_PYTHON_DOWNLOADS=never $(UV) venv --quiet --python $(PY) $(LOWEST_VENV)
	UV_PYTHON_DOWNLOADS=never $(UV) pip install --quiet --python $(LOWEST_VENV)/bin/python \
		--resolution lowest-direct --reinstall-package patch-tui .
	cd /tmp && SMOKE_AT_BOUNDS=1 $(abspath $(LOWEST_VENV))/bin/python $(abspath tools/smoke.py)

run: $(RUN_STAMP)
	$(BIN)/patch-tui $(ARGS)

# Five workers on two cores on purpose: many tests wait on a tool process, a server on stdio or a
# Textual frame, and that wait is another worker's CPU time (on 2 cores: 4 workers 154-159 s,
# 5 workers 141-146 s, 6 workers 155 s). `worksteal` hands a finished worker the tests still
# queued on a busy one (the default, `load`, left one worker running the last minute alone).
# Python may write its bytecode (an environment with PYTHONDONTWRITEBYTECODE makes every worker
# and every tool, server and CLI process compile patch_tui and the tests again), into one cache
# inside .venv so the source tree stays clean.
PYTEST_ENV := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(abspath $(VENV))/pycache
test: $(TEST_STAMP)
	$(PYTEST_ENV) $(BIN)/python -m pytest -q -n 5 --dist worksteal $(PYTEST_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

bench: $(TEST_STAMP)
	$(BIN)/python bench/lint_bench.py
	$(BIN)/python bench/tui_bench.py
	$(BIN)/python bench/store_bench.py
	$(BIN)/python bench/inbox_bench.py
	$(BIN)/python bench/run_bench.py
	$(BIN)/python bench/web_bench.py

# The code's layout is ruff format's (pinned in pyproject.toml); CI checks it before the tests.
fmt-check: $(TEST_STAMP)
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) $(DOCS_VENV) $(LOWEST_VENV) $(UV_HOME) build dist site *.egg-info

# The real Patch runtime (node 20+): build it (cached after the first time) and check patch-tui
# against it (tests/interop_runtime). PATCH_RUNTIME_SRC: the folder holding build.sh.
PATCH_RUNTIME_SRC ?= ../shared/patch-runtime
.PHONY: interop
interop: $(TEST_STAMP)
	@out=$$(bash $(PATCH_RUNTIME_SRC)/build.sh) || { echo "make interop: building the Patch runtime failed" >&2; exit 2; }; \
	PATCH_RUNTIME_HARNESS=$$out/packages/mcp/harness-dist $(BIN)/python -m pytest -q -n 2 tests/interop_runtime $(PYTEST_ARGS)
