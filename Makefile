# Quire. `make run` to use it, `make test` to check it. See README.md.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: run test test-pooled test-drill test-restarts test-soak lint install worker-venv system-packages system-packages-test system-packages-cluster system-packages-bench cluster cluster-drill bundle stop-db clean bench bench-queue bench-office bench-latex bench-submit bench-load bench-library bench-pptx bench-collab bench-admin bench-history bench-author bench-cluster bench-project soak

# The browser code (frontend/): npm packages from the committed lock file, bundled by esbuild into static/bundles/.
NODE_MODULES := frontend/node_modules/.installed
BUNDLE := static/bundles/editor.js
BUNDLE_SOURCES := $(shell find frontend/src -type f 2>/dev/null) frontend/build.mjs frontend/package-lock.json

$(PY):
	"$$(scripts/find_python.sh)" -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Core and, editable beside it, the worker agent's own distribution (worker/): `manage.py processing_worker`
# and the tests import it; the agent that `make run` and the end-to-end tests start runs from var/worker-venv.
# Both depend on two small distributions of ours that no index has, the worker protocol's vocabulary (wire/) and
# the sandbox profile (sandbox/): named on the same command line, they are installed first and satisfy both.
SHARED_DISTRIBUTIONS := wire sandbox
$(INSTALLED): pyproject.toml worker/pyproject.toml $(SHARED_DISTRIBUTIONS:%=%/pyproject.toml) | $(PY)
	$(PY) -m pip install --quiet $(SHARED_DISTRIBUTIONS:%=-e ./%) -e ".[dev]" -e ./worker
	touch $(INSTALLED)

install: $(INSTALLED)

# The worker agent alone in a virtual environment of its own (scripts/worker_venv.py): no Core, no Django; the
# shared distributions (wire/, sandbox/) installed from their directories before it.
worker-venv: | $(PY)
	$(PY) scripts/worker_venv.py

$(NODE_MODULES): frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_MODULES)

$(BUNDLE): $(NODE_MODULES) $(BUNDLE_SOURCES)
	cd frontend && node build.mjs
	touch $(BUNDLE)

# Typst's default fonts as files beside the bundle, for the live preview (scripts/typst_fonts.py): the very fonts
# the worker's pinned typst wheel embeds, so a page breaks at the same place in the preview and the PDF.
TYPST_FONTS := static/bundles/typst-fonts/.installed
$(TYPST_FONTS): $(INSTALLED) scripts/typst_fonts.py
	$(PY) -m scripts.typst_fonts
	touch $(TYPST_FONTS)

bundle: $(BUNDLE) $(TYPST_FONTS)

system-packages:
	scripts/system_packages.sh run

system-packages-test:
	scripts/system_packages.sh test

system-packages-cluster:
	scripts/system_packages.sh cluster

system-packages-bench:
	scripts/system_packages.sh bench

run: install worker-venv system-packages
	$(MAKE) --no-print-directory bundle
	$(PY) scripts/run_local.py

# Quire on a cluster of network namespaces on this machine (root): PostgreSQL, PgBouncer, HAProxy, two Core
# hosts, two agent hosts (docs/deployment.md). Ctrl-C stops it.
cluster: install worker-venv system-packages system-packages-cluster
	$(MAKE) --no-print-directory bundle
	$(PY) -m scripts.cluster

# The cluster under mixed load loses a Core replica, an agent and PgBouncer's connections; then every promise is checked.
cluster-drill: install worker-venv system-packages system-packages-cluster
	$(MAKE) --no-print-directory bundle
	$(PY) -m scripts.cluster.drill

# The browser bundle needs Node (a system package), so it is built after system-packages, never before.
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(MAKE) --no-print-directory $(NODE_MODULES)
	cd frontend && node build.mjs --check

# The outbox relay's AMQP tests publish to a real RabbitMQ: found on loopback, or installed and started.
AMQP_URL ?= amqp://guest:guest@127.0.0.1:5672/%2F
export AMQP_URL

# The suite in tiers: every test that can share the machine, spread over TEST_WORKERS processes (pytest-xdist, a
# test database each; a module's tests kept together so its server starts once, tests/conftest.py); then the few
# marked `exclusive` (they measure a capacity) alone; then, side by side, what uses a PostgreSQL of its own (the
# pooled rerun, the drill) and what uses the checkout's, one after the other (the tests marked
# `restarts_postgres`, then the soak). The tests mostly wait on servers, agents, compilers and browsers, so there
# are more workers than cores.
TEST_WORKERS ?= 4
export TEST_WORKERS

test: install worker-venv system-packages-test lint bundle
	scripts/rabbitmq.sh
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) manage.py spectacular --validate --fail-on-warn --file /dev/null
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not exclusive and not restarts_postgres" --durations=30 \
		$(PYTEST_ARGS)
	$(PY) -m pytest -m exclusive $(PYTEST_ARGS) || [ $$? -eq 5 ]  # 5: PYTEST_ARGS chose none of them
	# Runs that each leave a core mostly idle and share nothing (the pooled rerun and the drill have a PostgreSQL
	# of their own): side by side, each one's output printed whole when it ends.
	$(MAKE) --no-print-directory -j3 --output-sync=target test-pooled test-drill test-soak

# The tests that speak to the database most, again through PgBouncer in transaction mode (scripts/pooled_tests.py).
test-pooled:
	$(PY) -m scripts.pooled_tests

# The cluster's failure drill (as root; otherwise it says why it is skipped).
test-drill:
	$(PY) -m scripts.cluster.drill

# The tests that restart the checkout's PostgreSQL, alone on it.
test-restarts:
	$(PY) -m pytest -m restarts_postgres $(PYTEST_ARGS) || [ $$? -eq 5 ]  # 5: PYTEST_ARGS chose none of them

# A short soak under real load and faults, so that the soak itself cannot rot (it fails without load). It restarts
# the checkout's PostgreSQL and RabbitMQ too: after the tests that restart it.
test-soak: test-restarts
	SOAK_MINUTES=$${SOAK_MINUTES:-1} $(PY) -m scripts.soak

# Every benchmark once with small sizes (a few minutes); each bench-* target alone uses the sizes in each
# benchmark's docstring. BENCH_N is set per benchmark because their defaults differ: one value for all would
# enlarge some (bench-library's defaults are already small). An exported BENCH_N still applies to all.
bench: install system-packages
	export BENCH_REPS=$${BENCH_REPS:-1} BENCH_DEPTHS=$${BENCH_DEPTHS:-1000,100000} BENCH_SECONDS=$${BENCH_SECONDS:-5}; \
	BENCH_N=$${BENCH_N:-20} $(MAKE) --no-print-directory bench-submit && \
	BENCH_N=$${BENCH_N:-100} $(MAKE) --no-print-directory bench-queue && \
	BENCH_N=$${BENCH_N:-5} $(MAKE) --no-print-directory bench-latex && \
	$(MAKE) --no-print-directory bench-load && \
	$(MAKE) --no-print-directory bench-library && \
	BENCH_N=$${BENCH_N:-5} $(MAKE) --no-print-directory bench-office && \
	$(MAKE) --no-print-directory bench-pptx && \
	BENCH_N=$${BENCH_N:-20} $(MAKE) --no-print-directory bench-collab && \
	BENCH_N=$${BENCH_N:-20000} $(MAKE) --no-print-directory bench-admin && \
	BENCH_N=$${BENCH_N:-5000} $(MAKE) --no-print-directory bench-history && \
	BENCH_N=$${BENCH_N:-3} $(MAKE) --no-print-directory bench-author && \
	$(MAKE) --no-print-directory bench-project

bench-queue: install
	$(PY) -m scripts.bench.queue

bench-submit: install
	$(PY) -m scripts.bench.submit

bench-load: install
	$(PY) -m scripts.bench.load

bench-latex: install system-packages
	$(PY) -m scripts.bench.latex

bench-office: install system-packages
	$(PY) scripts/bench_office.py

bench-library: install
	$(PY) -m scripts.bench.library

bench-collab: install
	$(PY) -m scripts.bench.collab

bench-history: install
	$(PY) -m scripts.bench.history

# The author's loop: warm LaTeX rebuilds against raw latexmk and pdflatex, Ctrl+Enter → PDF drawn in Chromium.
bench-author: install worker-venv system-packages system-packages-test bundle
	$(PY) -m scripts.bench.author

bench-admin: install
	$(PY) -m scripts.bench.admin

# Through HAProxy and PgBouncer on the namespace cluster against one server process, in the same run (root).
bench-cluster: install worker-venv system-packages system-packages-cluster
	$(PY) -m scripts.bench.cluster

# Zip in and out of a 1,000-file project against unzip and zip, the output PDF's download, and every member's
# PDF pane refreshed after a build (Chromium). The bundle is built last: it needs Node, a system package.
bench-project: install worker-venv system-packages system-packages-bench bundle
	$(PY) -m scripts.bench.project

bench-pptx: install system-packages
	$(PY) scripts/bench_pptx.py

soak: install system-packages
	$(PY) -m scripts.soak

stop-db: install
	$(PY) -c "from pathlib import Path; from config.embedded_db import stop; print('stopped' if stop(Path('var/pgdata')) else 'not running')"

clean: stop-db
	rm -rf var $(VENV)
