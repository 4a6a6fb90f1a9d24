# Fleetscope: `make run` to try it, `make test` for the whole suite, `make bench` for figures.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
export FLEETSCOPE_DATA_DIR ?= $(CURDIR)/var

.PHONY: venv run test services lint typecheck pytest bench demo clean soak

# Reinstalls only when pyproject.toml changes.
$(BIN)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

venv: $(BIN)/.installed

run: venv
	@bash scripts/run.sh

demo: venv
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: venv
	$(BIN)/mypy .

# One worker per core (pytest-xdist), each taking whole files: `PYTEST_WORKERS=1` for one process.
PYTEST_WORKERS ?= $(shell nproc)
pytest: venv
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile

# Programs the suite starts for itself (Chromium, PostgreSQL, Redis), installed if missing.
services:
	@bash scripts/ci-services.sh

test: services lint typecheck pytest

# The production topology (PostgreSQL, S3, Redis, 2 web servers, 2 workers, beat) under
# every writer and fault at once, in rounds for SOAK_MINUTES with SOAK_KILLS kills of each
# kind per round; stops by itself after the round that passes the deadline.
SOAK_MINUTES ?= 30
SOAK_KILLS ?= 20
soak: services venv
	FLEETSCOPE_SOAK_MINUTES=$(SOAK_MINUTES) FLEETSCOPE_SOAK_KILLS=$(SOAK_KILLS) \
	  $(BIN)/pytest -s -p no:xdist tests/production/test_faults.py

# `make bench` runs every benchmark; `make bench otlp` (or any names after it) only those.
BENCH_NAMES := $(filter-out bench,$(MAKECMDGOALS))
bench: venv
	$(BIN)/python -m bench $(if $(filter bench,$(MAKECMDGOALS)),$(BENCH_NAMES))

ifneq ($(filter bench,$(MAKECMDGOALS)),)
# The names after `bench` are benchmarks, not targets of their own.
$(BENCH_NAMES):
	@:
endif

clean:
	rm -rf var .mypy_cache .ruff_cache
