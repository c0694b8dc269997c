# Two commands do all set-up: `make demo` and `make test`.
PYTHON ?= python3
# Python writes its compiled modules (__pycache__) as it imports them. With PYTHONDONTWRITEBYTECODE set,
# as some machines set it for every process, a fresh clone never gets them, and each of the hundreds
# of processes the tests start compiled every module of ours it imported from source again (half a
# second of CPU for a `signoff serve`).
unexport PYTHONDONTWRITEBYTECODE
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=
# Tests run in parallel worker processes (pytest-xdist), each with its own PostgreSQL cluster, temp
# folders and session fixtures. Many tests start sandboxes, servers and git, which wait on I/O, so one
# worker more than the cores keeps them busy; more than that only adds contention on 2 cores.
# `make test TEST_WORKERS=0` runs serially. Whole files go to one worker, so a module's fixtures are
# built once; they are handed out in collection order, where tests/conftest.py puts the files with
# the most `slow` tests first (xdist's own reorder would put the files with the most tests first).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
PYTEST_PARALLEL := $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)

.PHONY: demo test unit integration system lint install install-dev lock audit image clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Dependencies come from the lock files, every one pinned with its hashes (docs/operations.md,
# "Dependencies"): two installs a week apart are the same program. signoff itself goes in editable,
# without dependencies of its own choosing.
LOCK := requirements/server.lock
DEV_LOCK := requirements/dev.lock
PIP_LOCKED := $(BIN)/python -m pip install --quiet --require-hashes
PIP_COMPILE = $(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
	--no-emit-find-links --no-header --annotation-style=line

install: $(BIN)/python
	$(PIP_LOCKED) -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .

install-dev: $(BIN)/python
	$(PIP_LOCKED) -r $(DEV_LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .

# The tiers' targets install the dev extras only where they are missing, so the inner loop starts at once.
$(BIN)/pytest: $(BIN)/python
	$(PIP_LOCKED) -r $(DEV_LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .

# Re-resolve both lock files from pyproject.toml (newest releases that fit), with every file's hash.
# `make lock PIP_COMPILE_ARGS=--upgrade-package=httpx` moves one package only.
PIP_COMPILE_ARGS ?=
lock: $(BIN)/pytest
	$(PIP_COMPILE) $(PIP_COMPILE_ARGS) -o $(LOCK) pyproject.toml
	$(PIP_COMPILE) $(PIP_COMPILE_ARGS) --extra dev -o $(DEV_LOCK) pyproject.toml

# Known vulnerabilities in every locked package (PyPI's advisory data, via pip-audit). --strict: a package
# the advisory service cannot answer for fails the audit, never passes it unread; that failure is said
# as such, since pip-audit's own words ("not found on PyPI") read like a missing package.
# `make audit PIP_AUDIT_ARGS="--vulnerability-service osv"` asks OSV instead of PyPI.
PIP_AUDIT_ARGS ?=
audit: $(BIN)/pytest
	@out=$$($(BIN)/pip-audit --strict --require-hashes --disable-pip --progress-spinner off $(PIP_AUDIT_ARGS) \
		-r $(LOCK) -r $(DEV_LOCK) 2>&1); status=$$?; echo "$$out"; \
	if [ $$status -ne 0 ] && echo "$$out" | grep -q "could not be audited\|ConnectionError\|Max retries"; then \
		echo "error: the vulnerability service did not answer for every locked package, so the audit could not run (this is not a finding)"; \
		echo "fix: run make audit where https://pypi.org/pypi/NAME/VERSION/json answers (a package mirror without PyPI's JSON API cannot), or with PIP_AUDIT_ARGS=\"--vulnerability-service osv\" where api.osv.dev answers"; \
	fi; exit $$status

# The container image, built from Debian's packages with no registry pull, then smoke-tested as it is
# meant to run (docs/operations.md, "A container image"). As root, with mmdebstrap, podman and runc.
# Not part of `make test`: it downloads a Debian root and takes minutes. IMAGE=name:tag picks the tag.
IMAGE ?=
image: $(BIN)/pytest
	tag=$$(deploy/image/build.sh $(IMAGE)) && deploy/image/smoke.sh "$$tag"

demo: install
	$(BIN)/signoff demo

lint: install-dev
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy

# Ruff takes under a second, so it runs first and a lint error stops before any test. A cold mypy
# (a fresh clone has no cache) takes a minute of wall time, so it runs beside the tests; `make test`
# fails when either fails, after both have finished.
test: install-dev
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy & mypy=$$!; \
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS); tests=$$?; \
	wait $$mypy; typed=$$?; \
	[ $$typed -eq 0 ] || echo "error: mypy failed (its report is above)"; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]

# One tier at a time (docs/testing.md). `make unit` is the inner loop: pure tests, no socket, process or
# database file, well under a minute; `make test` still runs all three tiers, with ruff and mypy.
# The unit tier's files differ a hundredfold in size (airlock's corpora), so its tests are handed out
# one at a time (--dist load), not whole files.
unit: $(BIN)/pytest
	$(BIN)/python -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist load) tests/unit $(PYTEST_ARGS)

integration: $(BIN)/pytest
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) tests/integration $(PYTEST_ARGS)

system: $(BIN)/pytest
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) tests/system $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .signoff .pytest_cache .mypy_cache .ruff_cache
