# Two commands set everything up on a fresh machine:
#   make demo   install amem and run it on the example vault with the bundled models
#   make test   install what the tests need and run them (all of them: what CI runs)
# While working: make test-fast (the unit and service tests, a few minutes).
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
DEMO := build/demo-vault

.PHONY: install install-test demo test test-fast completions clean

# pip runs through tools/install.py: a line per stage (and one every 15 s while it works)
# instead of minutes of silence; its whole output is kept in build/pip-install.log.
PIP := $(BIN)/python tools/install.py pip

$(BIN)/python:
	@echo "Creating the virtual environment $(VENV)"
	$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --upgrade pip

# `check` says before pip starts whether llama.cpp will be compiled (how long, once) and
# stops at once, naming what to install, when there is no C++ compiler to do it.
# torch 2.13.0 is pinned first so pip takes the CPU build instead of a CUDA one.
install: $(BIN)/python
	@$(BIN)/python tools/install.py check
	@$(PIP) torch==2.13.0
	@$(PIP) -e .

install-test: install
	@$(PIP) -e '.[test]'

demo: install
	rm -rf $(DEMO) && mkdir -p build && cp -r notes $(DEMO)
	$(BIN)/amem --dir $(DEMO) status
	$(BIN)/amem --dir $(DEMO) add "Demo: amem keeps each memory as a Markdown file; the index under .amem/ can always be rebuilt." -t demo
	$(BIN)/amem --dir $(DEMO) search "how do I rebuild the index?" --limit 3
	$(BIN)/amem --dir $(DEMO) search "linking notes in a Zettelkasten" --limit 3
	$(BIN)/amem --dir $(DEMO) server stop

# The tests run with no network but loopback where that can be arranged (root, and
# unshare): no telemetry, model download or other connection can pass unnoticed.
# Elsewhere they run plain (tests/conftest.py still refuses connections off the machine).
NO_NETWORK := $(shell [ "$$(id -u)" = 0 ] && unshare -n sh -c 'ip link set lo up' 2>/dev/null && echo yes)

# The suite runs on every core (pytest-xdist, -n auto: 2 workers on 2 cores). A test file
# stays on one worker (--dist loadfile), so what a module builds once (a model, a server)
# is built once; the slow files are handed out first (tests/conftest.py), so no core is
# left with one at the end; the 15 slowest tests are named at the end.
PYTEST := $(BIN)/python -m pytest -q -n auto --dist loadfile --durations=15

test: install-test
ifneq ($(NO_NETWORK),)
	unshare -n sh -c 'ip link set lo up && exec $(PYTEST)'
else
	$(PYTEST)
endif

test-fast: install-test
	$(PYTEST) -p no:cacheprovider tests/unit tests/services

# The shell completion scripts in completions/ (committed; a test checks they are current).
completions: install
	$(BIN)/python -m amem_cli.cli.completions completions

clean:
	rm -rf build .pytest_cache .hypothesis
