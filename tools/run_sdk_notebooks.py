"""Run the job notebooks of a checkout of Microsoft's public examples with `aml-run notebook`, as a
learner would, and say for each whether every job it submitted completed, and when not, why.

    python tools/run_sdk_notebooks.py PATH [--only GLOB] [--timeout S] [--scratch DIR] [--json FILE]

PATH is a checkout of https://github.com/Azure/azureml-examples (its sdk/python/jobs folder is
read; PATH may also be that folder itself). The checkout is never written to: each notebook's
folder is copied into a scratch folder, with a workspace of its own there.

Which notebooks: those that submit a job (`jobs.create_or_update`, `ml_client.create_or_update` of
a job, `schedules.begin_create_or_update`) and build nothing only Azure runs (AutoML, Spark,
parallel_run_function, registry fine-tuning, prompt flows, new workspaces): what their code says,
read as text. The others are listed as "workspace only" or "submits nothing" and not run.

Before a notebook runs, what its README asks a learner to have is there: the computes the
notebooks name (cpu-cluster, gpu-cluster), registered as `aml-run compute create` registers them;
remote data mapped with `aml-run data map` to the checkout's own copies of the same files
(tools/run_examples.py's MIRRORS, with why each is the same data) or to a stand-in made here
(STANDINS: small files of the published format, with why; they let a job run, not learn); the files a notebook's own cell
would download, made beforehand when that cell skips what exists (PREPARED). The notebook itself
runs as it is, with explicit, printed overrides for laptop scale (OVERRIDES and
--set-sweep limits.max_total_trials=4 --set-sweep limits.max_concurrent_trials=2 for every one).

The notebooks' own `%pip install` lines are not run by `aml-run notebook` (the kernel is aml-run's
interpreter): packages they import themselves (mldesigner for the python-function components)
must be installed in the interpreter that runs this script.

One row per notebook: Completed (ran to its end, every job Completed), Completed, cloud stop (every
job Completed, then it stopped at a verb that needs Azure, such as a deployment), Failed (a job
did not complete, or a cell failed: the cause in one line), Timeout. The totals count the job
notebooks. Not part of `make test`: it takes a long time and needs the checkout.
"""

from __future__ import annotations

import argparse
import fnmatch
import gzip
import json
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_examples  # noqa: E402  (its mirrors of remote data, and how it reads a job's failure)

# What only Azure runs, as a notebook's code shows it.
WORKSPACE_ONLY = (
    (r"\bautoml\b", "AutoML"), (r"\bspark\(", "Spark"), (r"parallel_run_function", "parallel steps"),
    (r"registry_name\s*=", "a registry's models or components"), (r"[Ff]ine[Tt]uning|create_finetuning", "fine-tuning"),
    (r"flow\.dag\.yaml", "a prompt flow"), (r"workspaces\.begin_create", "a new workspace"),
    (r"serverless_endpoints|MarketplaceSubscription", "serverless endpoints"),
)
SUBMITS = (r"jobs\.create_or_update\(", r"ml_client\.create_or_update\(\s*\w*(job|sweep)", r"schedules\.begin_create_or_update\(")
COMPUTES = ("cpu-cluster", "gpu-cluster")
# The notebooks address some of run_examples' mirrored containers by another URI scheme too.
MORE_PREFIXES = {"dprepdata-demo": ("wasbs://demo@dprepdata.blob.core.windows.net/",)}
SWEEP_SCALE = ("--set-sweep", "limits.max_total_trials=4", "--set-sweep", "limits.max_concurrent_trials=2")
# Per notebook: further overrides for laptop scale, and why.
OVERRIDES = {
    "train-hyperparameter-tune-deploy-with-pytorch.ipynb": (("--set-input", "num_epochs=1"), "30 epochs of transfer learning"),
    "train-hyperparameter-tune-deploy-with-keras.ipynb": (("--set-input", "epochs=1"), "a laptop's CPU"),
    "train-hyperparameter-tune-deploy-with-tensorflow.ipynb": (("--set-input", "epochs=1"), "a laptop's CPU"),
    "distributed-cifar10.ipynb": (("--set-input", "epoch=1"), "10 epochs on two nodes"),
}


@dataclass
class Row:
    notebook: str
    verdict: str
    cause: str = ""
    jobs: int = 0
    seconds: float = 0.0


# -- stand-ins ------------------------------------------------------------------------------------

def _idx(path: Path, magic: int, shape: tuple[int, ...], seed: int, compress: bool = False) -> None:
    """An MNIST idx file (http://yann.lecun.com/exdb/mnist/ gives the format): big-endian magic
    and sizes, then unsigned bytes (here a fixed pattern, not digits)."""
    import numpy

    count = int(numpy.prod(shape))
    values = (numpy.arange(count, dtype=numpy.uint64) * 37 + seed) % (10 if magic == 2049 else 251)
    body = struct.pack(">I", magic) + b"".join(struct.pack(">I", s) for s in shape) + values.astype("uint8").tobytes()
    if compress:
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(body, compresslevel=1))
    else:
        path.write_bytes(body)


def mnist_standin(folder: Path, train: int, test: int, compress: bool = False) -> Path:
    """The four MNIST idx files, ``train`` and ``test`` images of 28x28 with their labels."""
    folder.mkdir(parents=True, exist_ok=True)
    for prefix, count in (("train", train), ("t10k", test)):
        _idx(folder / f"{prefix}-images-idx3-ubyte", 2051, (count, 28, 28), 1, compress)
        _idx(folder / f"{prefix}-labels-idx1-ubyte", 2049, (count,), 3, compress)
    return folder


@dataclass
class StandIn:
    """Remote data with no copy in the checkout, made here in the published format."""
    prefixes: tuple[str, ...]
    make: Callable[[Path], Path]
    why: str


STANDINS = (
    StandIn(("wasbs://datasets@azuremlexamples.blob.core.windows.net/mnist/",
             "https://azuremlexamples.blob.core.windows.net/datasets/mnist/"),
            lambda root: mnist_standin(root / "mnist-gz", 600, 100, compress=True),
            "the keras and tensorflow tuning notebooks read MNIST's four gzipped idx files from this folder "
            "(utils.load_data takes the counts from the headers): 600 training and 100 test images of the same "
            "format, made here (stand-ins, not MNIST's digits)"),
)


@dataclass
class Prepared:
    """Files a notebook's own cell downloads unless they exist, made beforehand, and why."""
    make: Callable[[Path], None]
    why: str


PREPARED = {
    "image_classification_keras_minist_convnet.ipynb": Prepared(
        lambda folder: mnist_standin(folder / "mnist", 60000, 10000),
        "its cell downloads MNIST's four idx files into mnist/ unless they are there, and its prep step reads "
        "60,000 and 10,000 images: idx files of that size and format, made here (stand-ins, not MNIST's digits)"),
}


# -- one notebook ---------------------------------------------------------------------------------

def classify(notebook: Path) -> tuple[str, str]:
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    except (ValueError, KeyError, OSError) as error:
        return "unreadable", str(error)
    code = "\n".join("".join(cell.get("source") or []) for cell in cells if cell.get("cell_type") == "code")
    only = [why for pattern, why in WORKSPACE_ONLY if re.search(pattern, code)]
    if only:
        return "workspace only", ", ".join(only)
    if not any(re.search(pattern, code) for pattern in SUBMITS):
        return "submits nothing", ""
    return "job notebook", ""


def aml(python: str, args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([python, "-m", "runner", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        return subprocess.CompletedProcess(args, 124, str(expired.stdout or ""), f"timed out after {timeout:.0f} s")


def prepare(checkout: Path, folder: Path, python: str, log: list[str]) -> None:
    workspace = folder / ".amllab"
    for name in COMPUTES:
        aml(python, ["compute", "create", "--name", name, "--max-instances", "4", "-w", str(workspace)], folder)
    for mirror in run_examples.MIRRORS:
        target = _scratch_root(folder) / "mirrors" / mirror.name
        for inside, source in mirror.copies.items():
            copy = target / inside
            if (checkout / source).is_dir() and not copy.exists():
                shutil.copytree(checkout / source, copy)
            elif (checkout / source).is_file() and not copy.exists():
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(checkout / source, copy)
        if not target.exists():
            continue
        prefixes = (*mirror.prefixes, *MORE_PREFIXES.get(mirror.name, ()))
        for prefix in prefixes:
            aml(python, ["data", "map", "--uri-prefix", prefix, "--path", str(target), "-w", str(workspace)], folder)
        log.append(f"mapped {', '.join(prefixes)} to the checkout's copy: {mirror.why}")
    _standins(_scratch_root(folder), workspace, folder, python, log)


def _standins(root: Path, workspace: Path, folder: Path, python: str, log: list[str]) -> None:
    for standin in STANDINS:
        made = standin.make(root / "standins")
        for prefix in standin.prefixes:
            aml(python, ["data", "map", "--uri-prefix", prefix, "--path", str(made), "-w", str(workspace)], folder)
        log.append(f"mapped {', '.join(standin.prefixes)} to a stand-in: {standin.why}")


def _scratch_root(folder: Path) -> Path:
    for parent in folder.parents:
        if parent.name == "notebooks":
            return parent.parent
    return folder.parent


def run_notebook(checkout: Path, jobs_root: Path, notebook: Path, scratch: Path, python: str,
                 timeout: float) -> Row:
    relative = notebook.relative_to(jobs_root)
    folder = scratch / "notebooks" / relative.parent
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(notebook.parent, folder, ignore=shutil.ignore_patterns(".amllab"))
    log: list[str] = []
    prepare(checkout, folder, python, log)
    prepared = PREPARED.get(notebook.name)
    if prepared is not None:
        prepared.make(folder)
        log.append(prepared.why)
    extra, why = OVERRIDES.get(notebook.name, ((), ""))
    if why:
        log.append(f"{' '.join(extra)}: {why}")
    args = ["notebook", notebook.name, "-w", str(folder / ".amllab"), *SWEEP_SCALE, *extra]
    started = time.monotonic()
    result = aml(python, args, folder, timeout)
    seconds = time.monotonic() - started
    (scratch / "logs").mkdir(parents=True, exist_ok=True)
    log_file = scratch / "logs" / (str(relative).replace("/", "__") + ".log")
    log_file.write_text("\n".join(log) + "\n" + result.stdout + "\n--- stderr ---\n" + result.stderr)
    jobs = _jobs(result.stdout)
    row = Row(str(relative), "", jobs=len(jobs), seconds=round(seconds, 1))
    if result.returncode == 124:
        row.verdict, row.cause = "Timeout", f"still running after {timeout:.0f} s"
    elif result.returncode == 0:
        row.verdict = "Completed"
    elif result.returncode == 3:
        row.verdict = "Completed, cloud stop"
        row.cause = _stop(result.stdout)
    else:
        row.verdict = "Failed"
        row.cause = _cause(python, folder, jobs, result)
    return row


def _jobs(out: str) -> list[tuple[str, str]]:
    block = out.split("[aml-run] jobs:\n", 1)
    if len(block) < 2:
        return []
    found = []
    for line in block[1].splitlines():
        if not line.startswith("  "):
            break
        parts = line.split()
        found.append((parts[0], parts[2]))
    return found


def _stop(out: str) -> str:
    return next((line.split("[aml-run] ", 1)[1] for line in out.splitlines() if "[aml-run] stopped at" in line), "")


def _cause(python: str, folder: Path, jobs: list[tuple[str, str]], result: subprocess.CompletedProcess) -> str:
    for name, state in jobs:
        if state != "Completed":
            shown = aml(python, ["job", "show", name, "-o", "json", "-w", str(folder / ".amllab")], folder)
            try:
                details = json.loads(shown.stdout)
            except ValueError:
                return f"job {name} {state}"
            for step, node in (details.get("jobs") or {}).items():
                if node.get("status") == "Failed" and node.get("name"):
                    inner = aml(python, ["job", "show", node["name"], "-o", "json", "-w", str(folder / ".amllab")], folder)
                    try:
                        return f"job {name} {state}: step {step}: {run_examples.job_cause(json.loads(inner.stdout))}"
                    except ValueError:
                        error = node.get("error") or {}
                        return f"job {name} {state}: step {step}: {error.get('code')}: " \
                               f"{run_examples.first_line(str(error.get('message')))}"
            return f"job {name} {state}: {run_examples.job_cause(details)}"
    stop = _stop(result.stdout)
    return stop or run_examples.first_line(result.stderr) or f"exit status {result.returncode}"


# -- all of them ----------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="a checkout of Azure/azureml-examples (or its sdk/python/jobs)")
    parser.add_argument("--only", action="append", default=[], metavar="GLOB", help="notebooks whose path matches")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds for one notebook (default 1800)")
    parser.add_argument("--scratch", type=Path, help="where to copy and run (default: a new temporary folder)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs aml-run")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    checkout = args.path.resolve()
    jobs_root = checkout / "sdk" / "python" / "jobs" if (checkout / "sdk" / "python" / "jobs").is_dir() else checkout
    if not jobs_root.is_dir():
        parser.error(f"{jobs_root}: not a folder")
    if jobs_root != checkout / "sdk" / "python" / "jobs":
        checkout = jobs_root.parents[2] if len(jobs_root.parents) > 2 else jobs_root
    scratch = (args.scratch or Path(tempfile.mkdtemp(prefix="sdk-notebooks-"))).resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    for notebook in sorted(jobs_root.rglob("*.ipynb")):
        relative = str(notebook.relative_to(jobs_root))
        if ".ipynb_checkpoints" in relative or (args.only and not any(fnmatch.fnmatch(relative, g) for g in args.only)):
            continue
        kind, why = classify(notebook)
        if kind != "job notebook":
            rows.append(Row(relative, kind, why))
            continue
        print(f"running {relative} ...", flush=True)
        row = run_notebook(checkout, jobs_root, notebook, scratch, args.python, args.timeout)
        print(f"  {row.verdict} ({row.jobs} job(s), {row.seconds:.0f} s){': ' + row.cause if row.cause else ''}",
              flush=True)
        rows.append(row)
    print()
    width = max((len(row.notebook) for row in rows), default=10)
    for row in rows:
        print(f"{row.notebook.ljust(width)}  {row.verdict:<22} {row.cause}")
    ran = [row for row in rows if row.verdict in ("Completed", "Completed, cloud stop", "Failed", "Timeout")]
    completed = [row for row in ran if row.verdict.startswith("Completed")]
    stops = [row for row in completed if row.verdict == "Completed, cloud stop"]
    print(f"\n{len(completed)} of {len(ran)} job notebooks completed with every job Completed "
          f"({len(stops)} of them then stopped at a verb that needs Azure); "
          f"{sum(1 for r in rows if r.verdict == 'workspace only')} workspace only, "
          f"{sum(1 for r in rows if r.verdict == 'submits nothing')} submit nothing. Logs: {scratch / 'logs'}")
    if args.json:
        args.json.write_text(json.dumps([asdict(row) for row in rows], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
