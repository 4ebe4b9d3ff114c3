# Two entry points for a fresh machine (see README): `make demo` and `make test`.
# Each creates .venv on first use; torch's CPU build is installed before anything that depends
# on torch, so pip never pulls the multi-GB CUDA build.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
TORCH_VERSION := 2.13.0

.PHONY: demo test test-serial check mpi lint bench schemas docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# Lint-only install: what a pre-commit user gets (no torch, mlflow or textual).
$(VENV)/.installed-base: pyproject.toml | $(PY)
	$(PIP) install -e .
	touch $@

# The runner: MLflow and torch (CPU build first), without the quiz and test tools.
$(VENV)/.installed-run: pyproject.toml | $(PY)
	$(PIP) install torch==$(TORCH_VERSION)
	$(PIP) install -e '.[run]'
	touch $@ $(VENV)/.installed-base

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PIP) install torch==$(TORCH_VERSION)
	$(PIP) install -e '.[dev]'
	touch $@ $(VENV)/.installed-base $(VENV)/.installed-run

demo: $(VENV)/.installed-run
	@echo "== aml-lint on the study guide's specs: command, sweep, distributed, pipeline, components, schedule =="
	$(VENV)/bin/aml-lint scenarios/command-job scenarios/sweep-random-bandit scenarios/distributed-job scenarios/pipeline scenarios/schedule
	@echo
	@echo "== aml-lint on a deliberately broken sweep (exit status 1 is expected; fixed.yml beside it is clean) =="
	@$(VENV)/bin/aml-lint scenarios/broken-sweep/sweep.yml; status=$$?; test $$status -eq 1
	@echo
	@echo "== The worked example for real: sweep, promote the best into train_model, weekly pipeline =="
	$(VENV)/bin/aml-run scenario run worked-example
	@echo
	@echo "== aml-quiz --check: the question bank, every machine-checked answer proven by the toolkit =="
	$(VENV)/bin/aml-quiz --check
	@echo
	@echo "== Where to look =="
	@echo "  the runs:      $(VENV)/bin/aml-run job list --workspace scenarios/worked-example/.amllab"
	@echo "                 (each job's folder: scenarios/worked-example/.amllab/runs/NAME, with its logs and outputs)"
	@echo "  the sweep:     scenarios/worked-example/sweep.png (every trial's auc per epoch; canceled ones end early)"
	@echo "  the promotion: scenarios/worked-example/promoted/train_model.yml (train_model version 2)"
	@echo "  every run in MLflow's UI:"
	@echo "                 $(VENV)/bin/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/scenarios/worked-example/.amllab/mlflow.db"
	@echo "  the other labs: $(VENV)/bin/aml-run scenario list   (run one: aml-run scenario run NAME)"
	@echo "  the exam trainer: $(VENV)/bin/aml-quiz"

# The MPI tests run Open MPI's real mpirun (Debian's openmpi-bin): installed here when missing
# and this user may (root with apt-get); otherwise say what to install.
mpi:
	@command -v mpirun >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin >/dev/null; \
	  else echo "make test needs Open MPI's mpirun: sudo apt-get install openmpi-bin" >&2; exit 1; fi; }

# The whole suite, labs included, over four worker processes as well: most of a test's time is
# spent waiting on real jobs, so four keep two cores busy (the serial run takes twice as long).
# `make test-serial` runs it in one process, for a failure that only shows there.
# --dist loadgroup: the tests of one Ray cluster (tests/runner/test_cluster.py) share a worker.
test: $(VENV)/.installed-dev mpi
	$(PY) -m pytest -q -n 4 --dist loadgroup

test-serial: $(VENV)/.installed-dev mpi
	$(PY) -m pytest -q

# The inner loop: every test but the labs (tests marked `lab` run a scenario lab for real),
# spread over worker processes (pytest-xdist; four keep two cores busy while jobs wait).
check: $(VENV)/.installed-dev mpi
	$(PY) -m pytest -q -m "not lab" -n 4 --dist loadgroup

bench: $(VENV)/.installed-dev
	$(PY) bench/lint_bench.py
	$(PY) bench/sdk_compare.py
	$(PY) bench/lint_floor.py
	$(PY) bench/python_lint.py
	$(PY) bench/run_overhead.py
	$(PY) bench/sweep_overhead.py
	$(PY) bench/quiz_start.py
	$(PY) bench/distributed_launch.py
	$(PY) bench/pathological.py
	$(PY) bench/lsp_latency.py
	$(PY) bench/cluster_sweep.py

schemas: $(VENV)/.installed-base
	$(PY) tools/build_schemas.py

docs: $(VENV)/.installed-base
	$(PY) tools/build_docs.py
	$(PY) tools/build_cli_docs.py
	$(PY) tools/build_scenario_docs.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
