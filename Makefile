# Two entry points for a fresh machine (see README): `make demo` and `make test`.
# Each creates .venv on first use; torch's CPU build is installed before anything that depends
# on torch, so pip never pulls the multi-GB CUDA build.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
TORCH_VERSION := 2.13.0

.PHONY: demo test mpi lint bench schemas docs clean

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
	@echo "== aml-lint on the seed's specs: command, sweep, distributed, pipeline, components, schedule =="
	$(VENV)/bin/aml-lint scenarios/command-job scenarios/sweep-random-bandit scenarios/distributed-job scenarios/pipeline scenarios/schedule
	@echo
	@echo "== aml-lint on a deliberately broken spec (exit status 1 is expected) =="
	@$(VENV)/bin/aml-lint scenarios/broken-spec; status=$$?; test $$status -eq 1
	@echo
	@echo "== aml-run: the command-job lab for real (workspace: scenarios/command-job/.amllab) =="
	$(PY) -m runner.scenarios scenarios/command-job
	$(VENV)/bin/aml-run job list --workspace scenarios/command-job/.amllab
	@echo
	@echo "== aml-run: the seed's sweep for real (workspace: scenarios/sweep-random-bandit/.amllab) =="
	$(PY) -m runner.scenarios scenarios/sweep-random-bandit
	$(VENV)/bin/aml-run job list --workspace scenarios/sweep-random-bandit/.amllab
	@echo
	@echo "== aml-run: the prep -> train -> evaluate pipeline, twice: the second run reuses every step =="
	$(PY) -m runner.scenarios scenarios/pipeline-prep-train-eval
	$(PY) -m runner.scenarios scenarios/pipeline-prep-train-eval
	$(VENV)/bin/aml-run job list --workspace scenarios/pipeline-prep-train-eval/.amllab
	@echo
	@echo "== aml-quiz --check: the question bank, every machine-checked answer proven by the toolkit =="
	$(VENV)/bin/aml-quiz --check

# The MPI tests run Open MPI's real mpirun (Debian's openmpi-bin): installed here when missing
# and this user may (root with apt-get); otherwise say what to install.
mpi:
	@command -v mpirun >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin >/dev/null; \
	  else echo "make test needs Open MPI's mpirun: sudo apt-get install openmpi-bin" >&2; exit 1; fi; }

test: $(VENV)/.installed-dev mpi
	$(PY) -m pytest -q

bench: $(VENV)/.installed-dev
	$(PY) bench/lint_bench.py
	$(PY) bench/sdk_compare.py
	$(PY) bench/run_overhead.py
	$(PY) bench/sweep_overhead.py
	$(PY) bench/quiz_start.py
	$(PY) bench/distributed_launch.py

schemas: $(VENV)/.installed-base
	$(PY) tools/build_schemas.py

docs: $(VENV)/.installed-base
	$(PY) tools/build_docs.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
