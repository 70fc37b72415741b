# Two entry points: `make book` and `make test`. Both set up everything they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# nbgrader calls `alembic`, so the environment's bin/ must come first on PATH.
export PATH := $(abspath $(BIN)):$(PATH)
export PYTHONHASHSEED := 0

INSTALLED := $(VENV)/.installed
CHAPTERS := $(wildcard chapters/*.md)
REFERENCE_SOURCES := $(wildcard solutions/*.py coursedata/*.py)
NBVAL_DIR := _build/nbval
PROBLEM_SETS := $(wildcard autograder/source/*/*.ipynb)
RELEASES := $(patsubst autograder/source/%,autograder/release/%,$(PROBLEM_SETS))

.PHONY: all book test benchmark clean distclean

all: book

$(INSTALLED): requirements.txt pyproject.toml
	@# The autograder's sandbox for student code (Debian's bubblewrap).
	command -v bwrap >/dev/null 2>&1 || { if [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && apt-get install -y -qq bubblewrap; \
	  else echo "note: install bubblewrap (sudo apt-get install bubblewrap) to grade safely"; fi; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e . --config-settings editable_mode=compat
	touch $@

# The book's execution cache cannot see edits to the reference package: clear it when they change.
_build/.reference-stamp: $(REFERENCE_SOURCES)
	rm -rf _build/.jupyter_cache
	mkdir -p _build && touch $@

# Student versions of the problem sets (nbgrader's release), linked from the book for download.
autograder/release/%.ipynb: autograder/source/%.ipynb $(INSTALLED)
	mkdir -p _build
	cd autograder && ../$(BIN)/nbgrader generate_assignment $(notdir $(*D)) --force --log-level=WARN \
	  --CourseDirectory.db_url=sqlite:///$(abspath _build/release-gradebook.db)

## book: set up and build the web book into _build/html (warnings are errors)
book: $(INSTALLED) _build/.reference-stamp $(RELEASES)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
	  $(BIN)/jupyter-book build . --warningiserror --keep-going --quiet

## test: set up and run every test: unit tests, every chapter and problem-set source under
## nbval, the graders' self-tests, and a from-scratch book build with -W (tests/test_book.py)
test: $(INSTALLED) $(RELEASES)
	rm -rf $(NBVAL_DIR) && mkdir -p $(NBVAL_DIR)
	for f in $(CHAPTERS); do $(BIN)/jupytext --quiet --to ipynb -o $(NBVAL_DIR)/$$(basename $${f%.md}).ipynb $$f; done
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(PY) -m pytest tests $(NBVAL_DIR) $(PROBLEM_SETS) \
	  --nbval-lax -p no:cacheprovider -n 2 --dist loadscope

## benchmark: print our time / peer time for the reference package
benchmark: $(INSTALLED)
	$(PY) benchmarks/run.py

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis
