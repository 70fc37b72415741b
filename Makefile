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
REFERENCE_SOURCES := $(wildcard solutions/*.py coursedata/*.py)
PROBLEM_SETS := $(wildcard course/source/*/*.ipynb)
RELEASES := $(patsubst course/source/%,course/release/%,$(PROBLEM_SETS))
# The student kit (kit/): a wheel of coursedata/, published by the book at <site>/kit/<wheel>.
KIT := _build/kit/.built
KIT_SOURCES := kit/pyproject.toml kit/README.md kit/build.py $(wildcard coursedata/*.py coursedata/*/*.py)
# The book's library (library/): a wheel of solutions/, published by the book at <site>/library/
# when _config.yml says course_library: public.
LIBRARY := _build/library/.built
LIBRARY_SOURCES := library/pyproject.toml library/README.md library/build.py kit/build.py $(wildcard solutions/*.py)
# MathJax served by the book itself (offline maths): the pinned npm package, checked by its hash.
MATHJAX_VERSION := 3.2.2
MATHJAX_SHA256 := 1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09
# (The stamp names what is unpacked: the speech files were added to what the pages use.)
MATHJAX := _build/static/.mathjax-$(MATHJAX_VERSION)-speech
# axe-core, the accessibility checker that tests/book/test_accessibility.py runs in Chromium on every
# page of the book and of the grader (WCAG 2.1 A and AA): the pinned npm package, checked by its hash.
AXE_VERSION := 4.14.1
AXE_SHA256 := e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745
AXE := _build/axe/.axe-$(AXE_VERSION)
# JupyterLite in the book (_ext/course_lite.py): the Pyodide core from the pinned npm package,
# checked by its hash (the version jupyterlite-pyodide-kernel expects), and the wheels of
# lite/wheels.txt from PyPI, pinned by their hashes.
PYODIDE_VERSION := 314.0.6
PYODIDE_SHA256 := d78ac549b28a2a58600cd06f44e017024151775f8c6b2d73fab1475400d38ea2
LITE_CACHE := _build/lite-cache
PYODIDE := $(LITE_CACHE)/.pyodide-$(PYODIDE_VERSION)
LITE_WHEELS := $(LITE_CACHE)/.wheels

.PHONY: all book test test-fast benchmark clean distclean browser setup release formgrader

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

# Student versions of the problem sets (nbgrader's release, with the kit's URL on the course site
# written into the setup cell), linked from the book for download and published by it. The same
# command as `make release PS=...`, with the same gradebook (the course's): a problem set changed
# after a term's grading is refused with the command that archives the term, never released
# past the gradebook that grades it.
course/release/%.ipynb: course/source/%.ipynb _config.yml kit/pyproject.toml \
    coursedata/__init__.py coursesite/__init__.py $(wildcard autograder/authoring/*.py) \
    $(INSTALLED)
	$(PY) -m autograder release $(notdir $(*D)) --quiet

$(KIT): $(KIT_SOURCES) $(INSTALLED)
	$(PY) kit/build.py _build/kit
	touch $@

$(LIBRARY): $(LIBRARY_SOURCES) $(INSTALLED)
	$(PY) library/build.py _build/library
	touch $@

$(MATHJAX):
	rm -rf _build/static/mathjax _build/static/.mathjax-* _build/mathjax-pkg
	mkdir -p _build/mathjax-pkg _build/static/mathjax
	cd _build/mathjax-pkg && npm pack --silent --loglevel=error mathjax@$(MATHJAX_VERSION) >/dev/null
	echo "$(MATHJAX_SHA256)  _build/mathjax-pkg/mathjax-$(MATHJAX_VERSION).tgz" | sha256sum --check --quiet -
	@# Only what the pages use: the component, its fonts, the TeX extensions it autoloads, and
	@# the accessibility components with the Speech Rule Engine's English rules (speech text).
	tar -xzf _build/mathjax-pkg/mathjax-$(MATHJAX_VERSION).tgz -C _build/static/mathjax \
	  --strip-components=2 package/es5/tex-mml-chtml.js package/es5/output/chtml/fonts/woff-v2 \
	  package/es5/input/tex/extensions package/es5/a11y package/es5/sre/mathmaps/base.json \
	  package/es5/sre/mathmaps/en.json
	rm -rf _build/mathjax-pkg
	touch $@

$(AXE):
	rm -rf _build/axe
	mkdir -p _build/axe/pkg
	cd _build/axe/pkg && npm pack --silent --loglevel=error axe-core@$(AXE_VERSION) >/dev/null
	echo "$(AXE_SHA256)  _build/axe/pkg/axe-core-$(AXE_VERSION).tgz" | sha256sum --check --quiet -
	tar -xzf _build/axe/pkg/axe-core-$(AXE_VERSION).tgz -C _build/axe --strip-components=1 \
	  package/axe.min.js package/LICENSE
	rm -rf _build/axe/pkg
	touch $@

$(PYODIDE):
	rm -rf $(LITE_CACHE)/pyodide $(LITE_CACHE)/.pyodide-* $(LITE_CACHE)/pyodide-pkg
	mkdir -p $(LITE_CACHE)/pyodide-pkg $(LITE_CACHE)/pyodide
	cd $(LITE_CACHE)/pyodide-pkg && npm pack --silent --loglevel=error pyodide@$(PYODIDE_VERSION) >/dev/null
	echo "$(PYODIDE_SHA256)  $(LITE_CACHE)/pyodide-pkg/pyodide-$(PYODIDE_VERSION).tgz" | sha256sum --check --quiet -
	@# What a browser loads: the module, the interpreter, the standard library and the lock file.
	tar -xzf $(LITE_CACHE)/pyodide-pkg/pyodide-$(PYODIDE_VERSION).tgz -C $(LITE_CACHE)/pyodide \
	  --strip-components=1 package/pyodide.mjs package/pyodide.asm.mjs package/pyodide.asm.wasm \
	  package/python_stdlib.zip package/pyodide.js package/pyodide-lock.json package/package.json
	rm -rf $(LITE_CACHE)/pyodide-pkg
	touch $@

$(LITE_WHEELS): lite/wheels.txt $(INSTALLED)
	rm -rf $(LITE_CACHE)/wheels
	$(PY) -m pip download -q --disable-pip-version-check --no-deps --require-hashes \
	  --only-binary=:all: --python-version 3.14 --implementation py --abi none --platform any \
	  -r lite/wheels.txt -d $(LITE_CACHE)/wheels
	touch $@

# The browser of the offline-maths test (Debian's chromium).
browser:
	@command -v chromium >/dev/null 2>&1 || { if [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "note: install chromium (sudo apt-get install chromium) for the browser tests"; fi; }

## book: set up and build the web book into _build/html (warnings are errors), with its
## JupyterLite site in _build/html/lite/
book: $(INSTALLED) _build/.reference-stamp $(KIT) $(LIBRARY) $(MATHJAX) $(PYODIDE) $(LITE_WHEELS) $(RELEASES)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
	  $(BIN)/jupyter-book build . --warningiserror --keep-going --quiet

## test: set up and run every test: unit tests, the graders' self-tests (every problem-set source
## graded as its reference and as each of its mutants), a from-scratch book build with -W that
## executes every chapter (tests/book/test_book.py), every chapter and the unit tests again under two
## other OpenBLAS kernels with the quoted numbers compared (tests/book/test_other_kernels.py), every
## chapter run by a reader's environment (tests/book/test_reader.py), the student kit in a clean environment (tests/book/test_kit.py), the site in
## Chromium (tests/book/test_site.py) and axe-core's WCAG 2.1 AA checks on every page of the book and
## the grader (tests/book/test_accessibility.py). What CI runs (.ci/run).
test: $(INSTALLED) $(KIT) $(LIBRARY) $(MATHJAX) $(PYODIDE) $(LITE_WHEELS) $(RELEASES) $(AXE) browser
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(PY) -m pytest tests \
	  -p no:cacheprovider -n 2 --dist loadscope --durations=30

## test-fast: the unit tests only, in under two minutes, for the edit-test loop: every test
## not marked `slow` (a kernel, an nbgrader or grading run, a build, a browser; see
## CONTRIBUTING.md). `make test` runs those too.
test-fast: $(INSTALLED) $(KIT) $(LIBRARY) $(RELEASES)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(PY) -m pytest tests -m "not slow" \
	  -p no:cacheprovider -n 2 --dist loadscope -q

## setup: only the environment (.venv) and the sandbox, for grading (see grading.md, the book's page "Grading a class")
setup: $(INSTALLED)

## release PS=NAME: the student version of one problem set, in course/release/NAME/
release: $(INSTALLED)
	@test -n "$(PS)" || { echo "usage: make release PS=ps3_mle"; exit 2; }
	$(PY) -m autograder release $(PS)

## formgrader: nbgrader's formgrader on the course, for grading written answers by hand
formgrader: $(INSTALLED)
	$(PY) -m autograder formgrader

## benchmark: print our time / peer time for the reference package
benchmark: $(INSTALLED)
	$(PY) benchmarks/run.py

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis
