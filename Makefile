# kafka-emu: `make run` starts the emulator on 127.0.0.1:9092, `make test` runs the whole suite.
# Both set up what they need first (a .venv with the package and its dev extras).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 9092

.PHONY: run test bench setup clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -U pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

run: setup
	$(VENV)/bin/kafka-emu serve --host $(HOST) --port $(PORT)

# pytest exits 5 when it collects no tests; make treats that as a failure, as it should.
test: setup
	$(PY) -m pytest -q

bench: setup
	@for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
