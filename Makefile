# The two commands: `make demo` (set up everything, run the main job) and `make test`.
# Each installs what a fresh machine lacks: the virtualenv and Python dependencies, then the
# control-plane binaries built from Go modules (cached in ~/.cache/aftershock/bin/<key>/).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEPS   := $(VENV)/.deps-installed
PYTEST_ARGS ?=

.PHONY: demo test toolchain venv lint unit clean

$(DEPS): pyproject.toml constraints.txt
	@echo "==> [setup] virtualenv $(VENV) with pinned Python dependencies"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --progress-bar on -c constraints.txt -e '.[dev]'
	@touch $@

venv: $(DEPS)

toolchain: $(DEPS)
	@echo "==> [setup] control-plane binaries (built once from Go modules, then cached)"
	$(BIN)/aftershock toolchain build

lint: $(DEPS)
	$(BIN)/ruff check .

unit: $(DEPS)
	$(BIN)/pytest tests/unit $(PYTEST_ARGS)

test: toolchain lint
	@echo "==> [test] harness tests and features on the embedded cluster"
	$(BIN)/aftershock cluster gc
	$(BIN)/pytest $(PYTEST_ARGS)

demo: toolchain
	@echo "==> [demo] the conformance suite on the embedded cluster"
	$(BIN)/aftershock cluster gc
	$(BIN)/aftershock run features/harness
	@echo "==> [demo] operator conformance (R, S, N) against the correct references and the built-in controllers"
	$(BIN)/aftershock run features/operator --profile profiles/replicagroup-correct.yaml
	$(BIN)/aftershock run features/operator --profile profiles/kube-replicaset.yaml
	$(BIN)/aftershock run features/operator --profile profiles/storage-correct.yaml
	$(BIN)/aftershock run features/operator --profile profiles/noderecords-correct.yaml
	$(BIN)/aftershock run features/operator --profile profiles/kube-statefulset.yaml
	@echo "==> [demo] scheduler and driver conformance (G, D) on the real kube-scheduler"
	$(BIN)/aftershock run features/scheduler features/driver \
	    --profile profiles/gang-correct.yaml --profile profiles/dradriver-correct.yaml

clean:
	-$(BIN)/aftershock cluster gc
	rm -rf $(VENV) reports/*/ .pytest_cache .ruff_cache
