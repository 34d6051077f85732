# kafka-emu: `make run` starts the emulator on 127.0.0.1:9092, `make test` runs the whole suite.
# Both set up what they need first: `make run` a .venv with the package and its runtime
# dependencies only; `make test` adds the dev extras there, and a second environment with
# kafka-python 2.3 (what most existing code still runs). The Node clients' packages are installed
# by the test session itself (tests/integration/node). A .venv built with a Python kafka-emu does
# not support (older than 3.10, or gone) is rebuilt first.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
KP2 := .venv-kp2
HOST ?= 127.0.0.1
PORT ?= 9092
PIP := -m pip install -q --disable-pip-version-check

SUPPORTED := import sys; sys.exit(sys.version_info < (3, 10))

.PHONY: run test bench setup clean venv-check

# The report's trace reader (kafka_emu/report/jvm) is compiled here when a JDK is at hand (it
# does nothing when the jar is up to date); without a JDK it says so, and reports use Spark's
# JSON reader, slower. The report's tests need it. Then the report JVM's class archive is built
# into the user's cache, once per Java and pyspark (about a minute; kafka_emu/report/
# class_archive.py): every local Spark session after it starts in about half the time.
setup: venv-check $(VENV)/.installed
	@$(PY) -m kafka_emu.report.trace_jar
	@$(PY) -m kafka_emu.report.class_archive

# Rebuild a .venv whose interpreter is missing or too old, instead of failing halfway through.
venv-check:
	@if [ -d $(VENV) ] && ! $(PY) -c '$(SUPPORTED)' 2>/dev/null; then \
	    echo "$(VENV) was built with an unsupported or missing Python; recreating it"; \
	    rm -rf $(VENV); fi
	@$(PYTHON) -c '$(SUPPORTED)' 2>/dev/null || { \
	    echo "kafka-emu needs Python 3.10 or newer; $(PYTHON) is $$($(PYTHON) -V 2>&1)." \
	         "Try: make $(MAKECMDGOALS) PYTHON=python3.12" >&2; exit 1; }

# What the server needs, nothing more (make run).
$(VENV)/.runtime: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) $(PIP) -e .
	touch $@

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) $(PIP) -U pip
	$(PY) $(PIP) -e '.[dev,report]'
	touch $@ $(VENV)/.runtime

# kafka-python 2.3 beside kafka-emu's own runtime dependencies (read from pyproject.toml by
# installing the checkout): the kafka-python 2 scenarios of bench/bench_initial_delay.py run the
# emulator in that interpreter too.
$(KP2)/.installed: pyproject.toml
	test -x $(KP2)/bin/python || $(PYTHON) -m venv $(KP2)
	$(KP2)/bin/python $(PIP) 'kafka-python==2.3.3' -e .
	touch $@

run: venv-check $(VENV)/.runtime
	@echo "kafka-emu is starting on $(HOST):$(PORT) (Ctrl-C stops it). To check it is up, from"
	@echo "another shell: $(VENV)/bin/kafka-emu versions --bootstrap-server $(HOST):$(PORT)"
	@echo "(put kafka-emu on your PATH with: . $(VENV)/bin/activate)"
	$(VENV)/bin/kafka-emu serve --host $(HOST) --port $(PORT)

# pytest exits 5 when it collects no tests; make treats that as a failure, as it should.
test: setup $(KP2)/.installed
	$(PY) -m pytest -q

bench: setup $(KP2)/.installed
	@for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) $(KP2) build *.egg-info .pytest_cache .hypothesis tests/integration/node/node_modules
