# Session Lens: every target bootstraps .venv (and Qt's system libraries) on first use.
SHELL := /bin/bash
VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.bootstrap-stamp
export LANG := C.UTF-8

.PHONY: run test bench fuzz bootstrap clean package package-test

$(STAMP): pyproject.toml packaging/bootstrap.sh
	bash packaging/bootstrap.sh "$(VENV)"
	touch $(STAMP)

bootstrap: $(STAMP)

run: $(STAMP)
	$(PY) -m app $(ARGS)

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) bench/run.py $(BENCH_ARGS)

fuzz: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) bench/fuzz.py $(FUZZ_ARGS)

clean:
	rm -rf $(VENV) build dist .pytest_cache

# ---- packages (Linux x86_64): dist/session-lens-<version>-linux-x86_64.tar.gz and dist/session-lens_<version>_amd64.deb
.PHONY: package package-test

package: $(STAMP)
	$(PY) -m pip install -q --disable-pip-version-check pyinstaller
	bash packaging/build.sh "$(VENV)"

package-test: package
	bash packaging/package_test.sh "$(VENV)"
