# Each target sets itself up: a virtual environment in .venv/ with the locked packages.
PYTHON ?= python3
VENV := .venv
UV := $(VENV)/bin/uv
UV_VERSION := 0.13.8

export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 120
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1

.PHONY: setup demo test bench clean

setup: $(VENV)/.synced

$(VENV)/.synced: pyproject.toml uv.lock
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	test -x $(UV) || $(VENV)/bin/python -m pip install --quiet uv==$(UV_VERSION)
	$(UV) sync --frozen --quiet
	touch $@

demo: setup
	$(VENV)/bin/timelyqa demo --out out/demo

test: setup
	$(VENV)/bin/pytest

bench: setup
	$(VENV)/bin/python scripts/bench.py

clean:
	rm -rf out .pytest_cache
