# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench fmt-check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/patch-tui $(ARGS)

# Five workers on two cores on purpose: many tests wait on a tool process, a server on stdio or a
# Textual frame, and that wait is another worker's CPU time (on 2 cores: 4 workers 154-159 s,
# 5 workers 141-146 s, 6 workers 155 s). `worksteal` hands a finished worker the tests still
# queued on a busy one (the default, `load`, left one worker running the last minute alone).
# Python may write its bytecode (an environment with PYTHONDONTWRITEBYTECODE makes every worker
# and every tool, server and CLI process compile patch_tui and the tests again), into one cache
# inside .venv so the source tree stays clean.
PYTEST_ENV := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(abspath $(VENV))/pycache
test: $(STAMP)
	$(PYTEST_ENV) $(BIN)/python -m pytest -q -n 5 --dist worksteal $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

bench: $(STAMP)
	$(BIN)/python bench/lint_bench.py
	$(BIN)/python bench/tui_bench.py
	$(BIN)/python bench/store_bench.py
	$(BIN)/python bench/inbox_bench.py
	$(BIN)/python bench/run_bench.py

# The code's layout is ruff format's (pinned in pyproject.toml); CI checks it before the tests.
fmt-check: $(STAMP)
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) build dist *.egg-info

# The real Patch runtime (node 20+): build it (cached after the first time) and check patch-tui
# against it (tests/interop_runtime). PATCH_RUNTIME_SRC: the folder holding build.sh.
PATCH_RUNTIME_SRC ?= ../shared/patch-runtime
.PHONY: interop
interop: $(STAMP)
	@out=$$(bash $(PATCH_RUNTIME_SRC)/build.sh) || { echo "make interop: building the Patch runtime failed" >&2; exit 2; }; \
	PATCH_RUNTIME_HARNESS=$$out/packages/mcp/harness-dist $(BIN)/python -m pytest -q -n 2 tests/interop_runtime $(PYTEST_ARGS)
