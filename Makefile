# Session Lens: every target bootstraps .venv (and Qt's system libraries) on first use.
SHELL := /bin/bash
VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.bootstrap-stamp
export LANG := C.UTF-8

.PHONY: run test test-fast check bench fuzz bootstrap clean package package-test

$(STAMP): pyproject.toml packaging/bootstrap.sh
	bash packaging/bootstrap.sh "$(VENV)"
	touch $(STAMP)

# the index's row scanner in C built again when its source changed (see packaging/build_native.py; no mypyc: decision 0021)
NATIVE := $(VENV)/.native-stamp
$(NATIVE): $(STAMP) app/log/index/rowscan_c.c packaging/build_native.py
	$(PY) packaging/build_native.py
	touch $(NATIVE)

bootstrap: $(STAMP) $(NATIVE)

run: $(STAMP) $(NATIVE)
	$(PY) -m app $(ARGS)

# the whole suite on TEST_WORKERS processes (pytest-xdist, one test file per worker at a time: the file's
# fixtures stay in one process); TEST_WORKERS=0 runs it in this one process
TEST_WORKERS ?= 2
test: $(STAMP) $(NATIVE)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# the fast lane (under a minute): everything but the tests marked slow
test-fast: $(STAMP) $(NATIVE)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m "not slow" $(PYTEST_ARGS)

# lint, types, dead code, layers (configuration in pyproject.toml; see CONTRIBUTING.md)
check: $(STAMP) $(NATIVE)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/vulture app tests bench vulture_whitelist.py --ignore-decorators "@pytest.fixture"
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests/test_layering.py tests/test_private_access.py

bench: $(STAMP) $(NATIVE)
	$(PY) bench/run.py $(BENCH_ARGS)

fuzz: $(STAMP) $(NATIVE)
	QT_QPA_PLATFORM=offscreen $(PY) bench/fuzz.py $(FUZZ_ARGS)

clean:
	rm -rf $(VENV) build dist .pytest_cache

# ---- packages (Linux x86_64): dist/session-lens-<version>-linux-x86_64.tar.gz and dist/session-lens_<version>_amd64.deb
.PHONY: package package-test

package: $(STAMP) $(NATIVE)
	$(PY) -m pip install -q --disable-pip-version-check pyinstaller
	bash packaging/build.sh "$(VENV)"

package-test: package
	bash packaging/package_test.sh "$(VENV)"

# the Python install paths of the README (wheel with and without a C compiler, pip install .): packaging/install_test.sh
.PHONY: install-test
install-test: $(STAMP)
	bash packaging/install_test.sh "$(VENV)"
