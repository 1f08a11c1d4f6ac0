# The developer loop. CI runs the README's test line (.ci/run), which is `make lint test` plus the pip install;
# these targets are shortcuts for a checkout with an activated virtual environment (CONTRIBUTING.md, "Checks").

PYTHON ?= python
# The extension built with the `dev-release` cargo profile (Cargo.toml): optimised, no fat LTO, incremental.
BUILD := $(PYTHON) -m pip install -q --config-settings=build-args="--profile dev-release"
# The fast tier: everything but the UI, the fuzzing, Dask clusters and real processes (markers: pyproject.toml).
FAST := not ui and not fuzz and not cluster and not process
# One pytest worker per core, each test file whole on one worker (its module fixtures built once), as CI runs it.
PARALLEL := -n auto --dist loadfile
SOURCES := python tui tests benchmarks

.PHONY: help dev build lint fmt test-fast test regen regen-check

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

dev:  ## editable install of scalefront and the UI with every test extra (fast Rust profile)
	$(BUILD) -e '.[test,cluster,report]' -e './tui[test]'

build:  ## rebuild the extension after a change in rust/ or data/ (the catalogs are embedded in it)
	$(BUILD) --no-deps -e .

lint:  ## every static check CI runs: rustfmt, clippy, ruff, mypy, stubtest
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	ruff check $(SOURCES)
	ruff format --check $(SOURCES)
	mypy
	$(PYTHON) -m mypy.stubtest scalefront._core

fmt:  ## format Rust and Python, sort imports
	cargo fmt --all
	ruff check --select I --fix $(SOURCES)
	ruff format $(SOURCES)

test-fast:  ## the Python tests without the ui, fuzz, cluster and process tiers (about a minute)
	$(PYTHON) -m pytest $(PARALLEL) -m "$(FAST)"

test:  ## every test: the Rust core's, then the whole Python suite
	cargo test
	$(PYTHON) -m pytest $(PARALLEL)

regen:  ## regenerate every derived file (schema, calibration, error model, docs, README figures, UI snapshots)
	$(PYTHON) tests/regen.py

regen-check:  ## fail when a derived file is stale (the test suite runs this too)
	$(PYTHON) tests/regen.py --check
