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

# Four workers on two cores on purpose: most tests spend their time waiting on a tool process,
# a server on stdio or a Textual frame, not computing (with two workers the cores sat half idle:
# 6.5 min against 4.2 min for the same suite).
test: $(STAMP)
	$(BIN)/python -m pytest -q -n 4 $(PYTEST_ARGS)

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
