# briefd — everything a fresh machine with Python 3.11+, git and make needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-runtime
# MCP Inspector (pinned) on a pinned Node ≥ 22, both from the npm registry, for `make unit`.
NODE_VERSION      := 22.23.3
INSPECTOR_VERSION := 2.12.0
NODE_DIR          := .briefd/node
NODE_STAMP        := $(NODE_DIR)/.installed-$(NODE_VERSION)-$(INSPECTOR_VERSION)
INSPECTOR         := $(NODE_DIR)/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js

.PHONY: run test lint typecheck unit eval-gate bench clean inspector dist image image-test

# A venv that fails half way is removed: Debian's python3 without python3-venv makes the folder
# and bin/python, then stops at ensurepip, and the next run would skip this and find no pip.
$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "briefd needs Python 3.11 or newer (found $$($(PYTHON) --version))"; exit 1; }
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip || { rm -rf $(VENV); exit 1; }

# `make run` needs the runtime dependencies only; everything else (tests, lint) the dev ones.
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $(RUN_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# Without npm the Inspector test is skipped (CI installs npm first, and there it must run).
inspector:
	@if [ -f $(NODE_STAMP) ]; then :; \
	elif command -v npm >/dev/null; then \
		npm install --no-audit --no-fund --loglevel=error --prefix $(NODE_DIR) \
			node@$(NODE_VERSION) @modelcontextprotocol/inspector@$(INSPECTOR_VERSION) && \
		touch $(NODE_STAMP); \
	elif [ -n "$$CI" ]; then echo "CI needs npm to fetch Node $(NODE_VERSION)"; exit 1; \
	else echo "note: npm not found, so the MCP Inspector test is skipped (apt-get install npm)"; fi

# Index the bundled example knowledge, then serve it: dashboard http://127.0.0.1:8484/, MCP /mcp.
# `make run PORT=8485` where 8484 is taken (a PORT in the environment is not read: `:=`).
PORT := 8484
run: $(RUN_STAMP)
	$(BIN)/briefd index --source testdata/knowledge
	$(BIN)/briefd serve --source testdata/knowledge --no-index --port $(PORT)

# The eval gate (one core, ~30 s) runs beside pytest, whose workers mostly wait on processes;
# either one failing fails the target (make -j waits for both and exits non-zero).
test: $(STAMP) lint typecheck
	$(MAKE) --no-print-directory -j2 --output-sync=target unit eval-gate

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

# Three pytest-xdist workers, each module on one worker: the suite is bound by CPU (1,187 CPU-s in
# one process), and a third worker on 2 cores fills the time the others wait on a process (13 min
# 32 s beside the eval gate, where two took 14 min 43 s without it). tests/ports.py gives each
# worker its own block of ports. `make test PYTEST_WORKERS=` runs the suite in one process.
PYTEST_WORKERS ?= -n 3 --dist loadfile

unit: $(STAMP) inspector
	TEST_NODE=$(NODE_DIR)/node_modules/.bin/node TEST_MCP_INSPECTOR=$(INSPECTOR) $(BIN)/pytest -q $(PYTEST_WORKERS)

eval-gate: $(STAMP)
	$(BIN)/briefd eval --check eval/thresholds.yaml

bench: $(STAMP)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/gate.py --out .briefd/bench/gate.json

# The sdist and the wheel (which carries the example knowledge) in dist/.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

# The container image from the default base (python:3.12-slim-bookworm; needs a registry and PyPI).
image:
	docker build --tag briefd:latest .

# Builds a base image locally (debootstrap), the image on it offline, and smoke-tests it.
image-test: $(STAMP)
	bash docker/image-test.sh

clean:
	rm -rf $(VENV) .briefd .pytest_cache .mypy_cache .ruff_cache dist
