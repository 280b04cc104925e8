# switchback - `make demo` runs the sample job on the embedded stack, `make test` the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)
JOB    ?= creator-demo-$(shell date +%H%M%S)

.PHONY: demo pipeline test stop status lint bench clean

$(STAMP):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*; touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m devstack up
	. .stack/env && $(BIN)/python starter.py start --config creator --id $(JOB) \
		--wait --show-workspace

pipeline: $(STAMP)
	$(BIN)/python -m devstack up
	. .stack/env && $(BIN)/python starter.py pipeline --id pipeline-$(shell date +%H%M%S)

test: $(STAMP)
	@$(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that is a failure" >&2; fi; \
	exit $$rc

stop:
	@if [ -x $(BIN)/python ]; then $(BIN)/python -m devstack down; fi

status: $(STAMP)
	$(BIN)/python -m devstack status

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python -m bench.history_growth

clean: stop
	rm -rf .stack $(VENV)
