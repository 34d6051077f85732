# kafka-emu: `make run` starts the emulator on 127.0.0.1:9092, `make test` runs the whole suite.
# Both set up what they need first: .venv with the package and its dev extras, and for the tests
# a second environment with kafka-python 2.3 (what most existing code still runs). The Node
# clients' packages are installed by the test session itself (tests/integration/node).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
KP2 := .venv-kp2
HOST ?= 127.0.0.1
PORT ?= 9092
PIP := -m pip install -q --disable-pip-version-check

.PHONY: run test bench setup clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) $(PIP) -U pip
	$(PY) $(PIP) -e '.[dev,report]'
	touch $@

$(KP2)/.installed:
	test -x $(KP2)/bin/python || $(PYTHON) -m venv $(KP2)
	$(KP2)/bin/python $(PIP) 'kafka-python==2.3.3'
	touch $@

run: setup
	$(VENV)/bin/kafka-emu serve --host $(HOST) --port $(PORT)

# pytest exits 5 when it collects no tests; make treats that as a failure, as it should.
test: setup $(KP2)/.installed
	$(PY) -m pytest -q

bench: setup
	@for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) $(KP2) build *.egg-info .pytest_cache .hypothesis tests/integration/node/node_modules
