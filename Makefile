# The two commands: `make demo` (set up everything, run the main job) and `make test`.
# Each installs what a fresh machine lacks: the virtualenv and Python dependencies, the
# control-plane binaries built from Go modules (cached in ~/.cache/aftershock/bin/<key>/), the
# report generator (allure 3 from npm, pinned by package-lock.json) and, for the report test,
# Debian's chromium.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEPS   := $(VENV)/.deps-installed
PYTEST_ARGS ?=
# The integration tests wait on real controllers far more than they compute: two at once each
# take as long as alone (measured on 2 cores); with four the 2 cores were 74% busy and the suite
# took 15 min 7 s, where three had left them a third idle. Work-stealing, since they are
# collected first and `--dist load` hands consecutive chunks out, all of them to one worker.
TEST_WORKERS ?= 4
REPORT_TOOLS := node_modules/.installed
DEMO_RUN ?= reports/demo-$(shell date +%Y%m%d-%H%M%S)
THIRDPARTY := sample-controller prometheus-operator kuberay-v1.0.0 kuberay-v1.4.2 rabbitmq mpi-operator

.PHONY: demo demo-all test test-kind toolchain venv lint unit clean report-tools browser notebook

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

$(REPORT_TOOLS): package.json package-lock.json
	@echo "==> [setup] allure 3 report generator (npm ci, pinned by package-lock.json)"
	npm ci --no-audit --no-fund --progress=true
	@touch $@

report-tools: $(REPORT_TOOLS)

browser:
	@command -v chromium >/dev/null || { \
	  echo "==> [setup] Debian's chromium (headless, for the report rendering test)"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
	  else sudo apt-get update -q && sudo apt-get install -y -q chromium; fi; }

# JupyterLab on this project (pinned in pyproject's extras, installed with the rest); the
# notebooks' paths resolve against the project wherever the kernel starts.
notebook: $(DEPS)
	@echo "==> [notebook] JupyterLab on $(CURDIR) (notebooks/ holds the examples)"
	$(BIN)/aftershock notebook $(NOTEBOOK_ARGS)

lint: $(DEPS)
	$(BIN)/ruff check .
	@echo "==> [lint] the layering: which layer may import which, and no import circles (pyproject.toml)"
	$(BIN)/lint-imports
	@echo "==> [lint] the copyable GitHub workflow (actionlint, built once from its Go module)"
	$(BIN)/python -m tests.lint_workflows

unit: $(DEPS)
	$(BIN)/pytest tests/unit $(PYTEST_ARGS)

test: toolchain lint report-tools browser
	@echo "==> [test] harness tests and features on the embedded cluster"
	$(BIN)/aftershock cluster gc
	$(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal --durations=15 $(PYTEST_ARGS)

# The first full matrix: every seed incident's faulty reference implementation caught, each
# family's correct one passing, and an implementation of somebody else's per family that runs on
# the embedded cluster, on the scenarios tagged @demo, two shards at once (each its own
# cluster: the scenarios mostly wait). The third-party build runs before the first scenario.
DEMO_PROFILES := replicagroup-correct replicagroup-faulty thirdparty/sample-controller \
    gang-correct gang-faulty gangscheduler-correct gangscheduler-faulty kube-scheduler-gang \
    storage-correct storage-faulty noderecords-correct noderecords-faulty kube-statefulset \
    dradriver-correct dradriver-faulty
DEMO_WORKERS ?= 2

demo: toolchain report-tools
	@echo "==> [demo] the first matrix: each family's @demo scenarios against its reference pair and one implementation of somebody else's, $(DEMO_WORKERS) shards at once, into $(DEMO_RUN)"
	$(BIN)/aftershock cluster gc
	-$(BIN)/aftershock run features/operator features/scheduler features/driver -m demo \
	    --workers $(DEMO_WORKERS) --run-dir $(DEMO_RUN) $(foreach p,$(DEMO_PROFILES),--profile profiles/$(p).yaml)
	@echo "==> [demo] the matrix and the HTML report (make demo-all runs everything there is)"
	$(BIN)/aftershock report $(DEMO_RUN)

# Everything there is, one row after another: about two and a half hours on 2 cores once built,
# and about 33 minutes of first builds (the README has each row's figure).
demo-all: toolchain report-tools
	@echo "==> [demo] the conformance suite on the embedded cluster, into $(DEMO_RUN)"
	$(BIN)/aftershock cluster gc
	-$(BIN)/aftershock run features/harness --run-dir $(DEMO_RUN) --progress
	@echo "==> [demo] operator conformance (R, S, N): reference operators (correct and faulty) and the built-in controllers"
	-$(BIN)/aftershock run features/operator/replica_group_stale_cache.feature --run-dir $(DEMO_RUN) --progress \
	    --profile profiles/replicagroup-correct.yaml --profile profiles/replicagroup-faulty.yaml \
	    --profile profiles/kube-replicaset.yaml
	-$(BIN)/aftershock run features/operator/storage_scale_down.feature --run-dir $(DEMO_RUN) --progress \
	    --profile profiles/storage-correct.yaml --profile profiles/storage-faulty.yaml \
	    --profile profiles/kube-statefulset.yaml
	-$(BIN)/aftershock run features/operator/node_record_reclaim.feature --run-dir $(DEMO_RUN) --progress \
	    --profile profiles/noderecords-correct.yaml --profile profiles/noderecords-faulty.yaml \
	    --profile profiles/kube-statefulset.yaml
	@echo "==> [demo] scheduler and driver conformance (G, D) on the real kube-scheduler; the gang family also on 100 nodes"
	-$(BIN)/aftershock run features/scheduler features/driver --run-dir $(DEMO_RUN) --progress \
	    --profile profiles/gang-correct.yaml --profile profiles/gang-faulty.yaml \
	    --profile profiles/dradriver-correct.yaml --profile profiles/dradriver-faulty.yaml
	@echo "==> [demo] Grove's operator built from its source tree, at the fix of ai-dynamo/grove#561 and its parent (where its source cannot be reached, one line says why)"
	-$(BIN)/aftershock run features/scheduler --run-dir $(DEMO_RUN) --progress \
	    --profile profiles/thirdparty/grove-d5afd169.yaml --profile profiles/thirdparty/grove-cd742f07.yaml
	@echo "==> [demo] third-party operators, built from their published Go modules (profiles/thirdparty)"
	-$(BIN)/aftershock run features/operator/replica_group_stale_cache.feature --run-dir $(DEMO_RUN) --progress \
	    $(foreach p,$(THIRDPARTY),--profile profiles/thirdparty/$(p).yaml)
	@echo "==> [demo] the operator family (R, S, N), the DRA example driver and Chaos Mesh on kind: real kubelets, the engine and node image built here; the replica group built into an image and run in the cluster"
	-$(BIN)/aftershock engine up
	-$(BIN)/aftershock run features/operator/replica_group_stale_cache.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress --profile profiles/incluster/replicagroup-correct.yaml \
	    --profile profiles/incluster/replicagroup-faulty.yaml
	-$(BIN)/aftershock run features/operator/storage_scale_down.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress --profile profiles/storage-correct.yaml --profile profiles/storage-faulty.yaml
	-$(BIN)/aftershock run features/operator/node_record_reclaim.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress --profile profiles/noderecords-correct.yaml --profile profiles/noderecords-faulty.yaml
	@echo "==> [demo] DRA drivers on kind, also under node faults (a reboot, a kubelet restart or stop, the plugin down): the DRA example driver (its plugin built from its module, installed by its own chart), Kubernetes' e2e test driver and aftershock's reference kubelet plugin (correct and faulty), judged from each node's kubelet checkpoint"
	-$(BIN)/aftershock run features/driver --cluster=kind --run-dir $(DEMO_RUN) --progress \
	    --profile profiles/thirdparty/dra-example-driver.yaml \
	    --profile profiles/thirdparty/k8s-dra-test-driver.yaml \
	    --profile profiles/incluster/drakubelet-correct.yaml
	-$(BIN)/aftershock run features/driver --cluster=kind --run-dir $(DEMO_RUN) --progress \
	    --profile profiles/incluster/drakubelet-faulty.yaml
	@echo "==> [demo] the DRA example driver v0.4.0 (apart from v0.2.1: they share each node's plugin directory), and Kubernetes' e2e test driver at 1.35.4 under node faults"
	-$(BIN)/aftershock run features/driver --cluster=kind --run-dir $(DEMO_RUN) --progress \
	    --profile profiles/thirdparty/dra-example-driver-v0.4.0.yaml
	-$(BIN)/aftershock run features/driver/dra_node_faults.feature features/driver/dra_driver_life.feature \
	    --cluster=kind --kubernetes-version 1.35.4 --run-dir $(DEMO_RUN) --progress \
	    --profile profiles/thirdparty/k8s-dra-test-driver-v1.35.4.yaml
	@echo "==> [demo] what a container sees (D13): the reference plugin's leaky and bare variants, each caught"
	-$(BIN)/aftershock run features/driver/dra_container.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress --profile profiles/incluster/drakubelet-leaky.yaml
	-$(BIN)/aftershock run features/driver/dra_container.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress --profile profiles/incluster/drakubelet-bare.yaml
	@echo "==> [demo] CDI hygiene (D17): the reference plugin's litter variant, which leaves a claim's CDI spec when it unprepares it, caught"
	-$(BIN)/aftershock run features/driver/dra_driver_life.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress --profile profiles/incluster/drakubelet-litter.yaml
	@echo "==> [demo] an upgrade of the plugin (D16-D20): the reference plugin's amnesiac, stale and tidy variants, each caught"
	-$(BIN)/aftershock run features/driver/dra_driver_upgrade.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress --profile profiles/incluster/drakubelet-amnesiac.yaml
	-$(BIN)/aftershock run features/driver/dra_driver_upgrade.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress --profile profiles/incluster/drakubelet-stale.yaml
	-$(BIN)/aftershock run features/driver/dra_driver_upgrade.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress --profile profiles/incluster/drakubelet-tidy.yaml
	@echo "==> [demo] a pod whose claims two drivers serve (D21, D22): the reference plugin's once variant, which refuses to prepare a claim twice, caught"
	-$(BIN)/aftershock run features/driver/dra_two_drivers.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress --profile profiles/incluster/drakubelet-once.yaml
	@echo "==> [demo] AIStore under its own operator on kind, at the parent of NVIDIA/ais-k8s PR #61, its fix and 3.4.0: operator from its source tree, aisnode and ais-init from their module (where the source cannot be reached, one line says why)"
	-$(BIN)/aftershock run features/operator/storage_scale_down.feature --cluster=kind --run-dir $(DEMO_RUN) \
	    --progress -k "not service" --profile profiles/thirdparty/ais-operator-388c1f8e.yaml \
	    --profile profiles/thirdparty/ais-operator-0fff6202.yaml --profile profiles/thirdparty/ais-operator-8bb21bf8.yaml
	@echo "==> [demo] Chaos Mesh built from its Go modules (cached after; cold, longer than a scenario may take)"
	-$(BIN)/aftershock kind build-chaos-mesh
	-$(BIN)/aftershock run features/harness/chaos_mesh.feature --cluster=kind --run-dir $(DEMO_RUN) --progress
	@echo "==> [demo] the matrix and the HTML report"
	$(BIN)/aftershock report $(DEMO_RUN)

# kind on real kubelets: the managed engine (Debian's docker.io) and its own tests, which change
# the host and so run only when asked (AFTERSHOCK_TEST_ENGINE=1), the node image built here
# (cold: about 6 minutes with warm Go caches; cached after), then the smoke feature on it. Not
# part of `make test`: see the README's "Running on kind".
test-kind: toolchain
	@echo "==> [test-kind] the container engine and its tests, the kind node image, the smoke feature on kind"
	AFTERSHOCK_TEST_ENGINE=1 $(BIN)/pytest tests/integration/test_managed_engine.py $(PYTEST_ARGS)
	$(BIN)/aftershock engine up
	$(BIN)/aftershock kind build-image
	$(BIN)/aftershock run features/harness/smoke.feature --cluster=kind

clean:
	-$(BIN)/aftershock cluster gc
	rm -rf $(VENV) reports/*/ .pytest_cache .ruff_cache
