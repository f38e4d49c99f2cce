# foldscope — two commands for a newcomer: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench lint clean

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

bench: $(STAMP)
	$(BIN)/python -m foldscope.bench

clean:
	rm -rf $(VENV) db/*.sqlite* bench-results.json
