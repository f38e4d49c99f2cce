# foldscope — two commands for a newcomer: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench real lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/foldscope demo --db db/demo.sqlite

test: $(STAMP)
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff check foldscope tests
	$(BIN)/mypy
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff check foldscope tests
	$(BIN)/mypy
# A real model behind a real server: builds llama-cpp-python[server] into a venv under the user
# cache directory if absent (tools/real-server.sh; ~12 CPU-minutes once), serves SmolLM2-135M on
# 127.0.0.1 and runs the probe and a sweep of examples/llamacpp-sweep.toml at it (tests/test_real.py).
real: $(STAMP)
	bash tools/real-server.sh build
	$(BIN)/python -m pytest -m real tests/test_real.py -p no:cacheprovider -s

bench: $(STAMP)
	@# Bytecode as an install compiles it: a shell with PYTHONDONTWRITEBYTECODE=1 would otherwise
	@# make every cold start (cli_start, report_cold) compile foldscope from source again.
	$(BIN)/python -m compileall -q foldscope
	$(BIN)/python -m foldscope.bench

clean:
	rm -rf $(VENV) db/*.sqlite* bench-results.json
