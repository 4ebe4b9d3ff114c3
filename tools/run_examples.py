"""Run every job spec of a checkout of Microsoft's public examples with aml-run, as a new user
would, and say what happened to each.

    python tools/run_examples.py PATH [--folder cli/jobs/basics ...] [--only GLOB] [--timeout S]

PATH is a checkout of https://github.com/Azure/azureml-examples (or any tree of specs). The
folders default to the five that hold command, sweep, pipeline and schedule jobs:
cli/jobs/basics, cli/jobs/single-step, cli/jobs/pipelines-with-components, cli/jobs/pipelines
and cli/schedules. The checkout is never written to: the folders are copied into a scratch
folder, and one workspace there holds every job.

Before a spec runs, what it references is registered the way its README's `az ml ... create`
commands would: computes by name, and environments, data and components found by name among
the checkout's asset files. Remote data (https, wasbs, datastore paths) is pointed with
`aml-run data map` at a local mirror of its container, built from the checkout's copies of the
same files (MIRRORS names each copy and why it is the same data); a data asset a spec names by a
name the checkout's asset files no longer give it is registered from the file that defines the
same data (RENAMED_DATA, with why); remote data with no true copy here is logged with why
(NO_COPY, NO_ASSET). Nothing else is changed: the spec runs as it is.

One row per spec: Completed, Failed, Refused (aml-run or its linter refused it at submission),
By design (a job type or a resource aml-run does not run here, and says so), Not a job (a
component, an environment, data), Timeout. Failures and refusals carry a cause: the first line
of what aml-run said, or the last line of the job's log. The totals count the specs aml-run
means to run: every job and schedule but those refused by design.

Not part of `make test`: it takes tens of minutes and needs the examples' checkout.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FOLDERS = ("cli/jobs/basics", "cli/jobs/single-step", "cli/jobs/pipelines-with-components", "cli/jobs/pipelines",
           "cli/schedules")
JOB_KINDS = ("commandJob", "sweepJob", "pipelineJob")
ASSET_SCHEMAS = {"environment": "environment", "data": "data", "commandComponent": "component",
                 "pipelineComponent": "component", "model": "model"}
# What aml-run says when it will not run something here by design (a job type, a resource or a
# place it cannot reach), as opposed to a defect.
BY_DESIGN = (
    r"lives in an Azure ML registry", r"\bparallel\b.*(step|job)", r"\bspark\b", r"\bray\b", r"automl",
    r"not a job", r"registry", r"import job", r"data transfer", r"\bdata_transfer\b", r"\bflow\b",
)
AML_RUN = [sys.executable, "-m", "runner"]


@dataclass
class Row:
    spec: str
    kind: str
    verdict: str = ""
    cause: str = ""
    seconds: float = 0.0
    job: str | None = None
    steps: list[str] = field(default_factory=list)
    cause_class: str = ""
    evidence: str = ""  # all of what aml-run said, for the cause class; not printed


def run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(AML_RUN + args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        return subprocess.CompletedProcess(args, 124, expired.stdout or "", f"timed out after {timeout:.0f} s")


def first_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    meaningful = [line for line in lines if not line.startswith(("warning", "WARNING", "  "))]
    return (meaningful or lines or [""])[0][:220]


# -- what the checkout holds ----------------------------------------------------------------------

def kind_of(path: Path) -> str | None:
    """The spec's kind as aml-lint detects it, or an asset kind from its $schema."""
    try:
        data = yaml.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError, OSError):
        return None
    if not isinstance(data, dict):
        return None
    schema = str(data.get("$schema") or "")
    for name, asset in ASSET_SCHEMAS.items():
        if f"/{name}.schema.json" in schema:
            return name if asset != "component" else name
    from validator.engine import lint_file

    report = lint_file(path)
    if report.kind:
        return report.kind
    kind = str(data.get("type") or "")
    return kind or None


@dataclass
class Assets:
    """Asset files in the checkout, by the name they register."""
    by_kind: dict[str, dict[str, list[Path]]] = field(default_factory=dict)

    def add(self, kind: str, path: Path) -> None:
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError:
            return
        name = str(data.get("name") or "")
        if name:
            self.by_kind.setdefault(kind, {}).setdefault(name, []).append(path)


def index(tree: Path) -> Assets:
    assets = Assets()
    for path in sorted(tree.rglob("*")):
        if path.suffix in (".yml", ".yaml") and path.is_file():
            try:
                head = path.read_text(errors="replace")[:4000]
            except OSError:
                continue
            for name, asset in ASSET_SCHEMAS.items():
                if f"/{name}.schema.json" in head:
                    assets.add(asset, path)
    return assets


def specs(tree: Path, folders: list[str], only: str | None) -> Iterator[Path]:
    for folder in folders:
        base = tree / folder
        for path in sorted(base.rglob("*.yml")) + sorted(base.rglob("*.yaml")):
            relative = str(path.relative_to(tree))
            if only and not fnmatch.fnmatch(relative, only):
                continue
            yield path


# -- registering what a spec references -----------------------------------------------------------

REFERENCE = re.compile(r"^azureml:(?!//)([A-Za-z0-9][A-Za-z0-9_.-]*)(?::([^@\s]+)|@([a-z]+))?$")
REMOTE = re.compile(r"^(https?://|wasbs?://|abfss?://|azureml://datastores/)")


def walk(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for child_key, child in value.items():
            yield from walk(child, str(child_key))
    elif isinstance(value, list):
        for child in value:
            yield from walk(child, key)
    else:
        yield key, value


class Registrar:
    def __init__(self, workspace: Path, cwd: Path, assets: Assets, log: list[str]) -> None:
        self.workspace = workspace
        self.cwd = cwd
        self.assets = assets
        self.done: set[tuple[str, str]] = set()
        self.log = log

    def _aml(self, *args: str) -> subprocess.CompletedProcess:
        result = run([*args, "-w", str(self.workspace)], self.cwd)
        self.log.append(f"$ aml-run {' '.join(args)}  -> {result.returncode} {first_line(result.stderr)}")
        return result

    def prepare(self, spec: Path, seen: set[Path] | None = None) -> None:
        seen = seen or set()
        if spec in seen:
            return
        seen.add(spec)
        try:
            data = yaml.safe_load(spec.read_text())
        except (yaml.YAMLError, OSError):
            return
        for key, value in walk(data):
            if not isinstance(value, str):
                continue
            value = value.strip()
            if key in ("compute", "default_compute") and value and not value.startswith("${{"):
                self.compute(value.removeprefix("azureml:"))
            match = REFERENCE.match(value)
            if match:
                self.reference(key, match.group(1), spec, seen)
            elif REMOTE.match(value):
                self.remote(value)
            elif key in ("component", "trial", "create_job") and value.startswith(("./", "../", "file:")) or (
                    key in ("component", "create_job") and value.endswith((".yml", ".yaml"))):
                nested = (spec.parent / value.removeprefix("file:")).resolve()
                if nested.is_file():
                    self.prepare(nested, seen)

    def compute(self, name: str) -> None:
        if name in ("serverless", "local") or ("compute", name) in self.done:
            return
        self.done.add(("compute", name))
        self._aml("compute", "create", "--name", name, "--max-instances", "4")

    def reference(self, key: str, name: str, spec: Path, seen: set[Path]) -> None:
        kinds = {"environment": ["environment"], "component": ["component"], "trial": ["component"],
                 "compute": []}.get(key, ["data", "environment", "component", "model"])
        for kind in kinds:
            files = self.assets.by_kind.get(kind, {}).get(name)
            if not files or (kind, name) in self.done:
                continue
            self.done.add((kind, name))
            for path in files:
                if kind == "component":
                    self.prepare(path, seen)
                self._aml(kind, "create", "--file", str(path))
            return
        renamed = RENAMED_DATA.get(name)
        if "data" in kinds and renamed and not self.assets.by_kind.get("data", {}).get(name) \
                and ("data", name) not in self.done:
            self.done.add(("data", name))
            self._aml("data", "create", "--file", str(self.cwd / renamed.file), "--name", name)
        elif "data" in kinds and name in NO_ASSET and ("no asset", name) not in self.done:
            self.done.add(("no asset", name))
            self.log.append(f"no local copy of data asset '{name}': {NO_ASSET[name]}")

    def remote(self, uri: str) -> None:
        """Map the remote location's container to a local mirror when the checkout holds copies
        of its files (MIRRORS); otherwise leave it, and the job says how to map it."""
        absent = next((why for prefix, why in NO_COPY if uri.startswith(prefix)), None)
        if absent and ("no copy", uri) not in self.done:
            self.done.add(("no copy", uri))
            self.log.append(f"no local copy of {uri}: {absent}")
        for mirror in MIRRORS:
            prefix = next((prefix for prefix in mirror.prefixes if uri.startswith(prefix)), None)
            if prefix is None:
                continue
            if ("map", prefix) not in self.done:
                self.done.add(("map", prefix))
                self._aml("data", "map", "--uri-prefix", prefix, "--path", str(mirror.build(self.cwd)))
            return
        if ("no copy", uri) not in self.done and "${{" not in uri and "<" not in uri:
            self.done.add(("no copy", uri))
            self.log.append(f"no local copy of {uri} in the checkout")


@dataclass
class Mirror:
    """A local stand-in for one remote container: the files of it that the checkout has copies
    of. Each copy is named explicitly: a file with the same name elsewhere in the checkout is
    not necessarily the same data (the checkout has three different iris.csv files)."""
    name: str
    prefixes: tuple[str, ...]
    copies: dict[str, str]   # path under the prefix -> path in the checkout
    why: str

    def build(self, tree: Path) -> Path:
        folder = tree.parent / "mirrors" / self.name
        for inside, source in self.copies.items():
            target = folder / inside
            target.parent.mkdir(parents=True, exist_ok=True)
            if (tree / source).is_dir():
                shutil.copytree(tree / source, target, dirs_exist_ok=True)
            elif (tree / source).is_file() and not target.exists():
                shutil.copy2(tree / source, target)
        return folder


MIRRORS = (
    Mirror("azuremlexamples-datasets",
           ("https://azuremlexamples.blob.core.windows.net/datasets/",
            "wasbs://datasets@azuremlexamples.blob.core.windows.net/"),
           {"iris.csv": "cli/jobs/pipelines/add-column-and-word-count-using-spark/data/iris.csv"},
           "the public iris.csv has a header row with a `species` column, which the iris scripts read; "
           "of the checkout's three iris.csv files only this one has it"),
    Mirror("workspaceblobstore-example-data",
           ("azureml://datastores/workspaceblobstore/paths/example-data/",),
           {"": "cli/assets/data/example-data"},
           "the examples' own example data folder, which the datastore examples read from the "
           "workspace's default datastore"),
    Mirror("dprepdata-demo",
           ("https://dprepdata.blob.core.windows.net/demo/",),
           {"Titanic.csv": "cli/jobs/spark/data/titanic.csv"},
           "the public Titanic.csv is Kaggle's Titanic training set: Microsoft's dataset docs preview "
           "it (`Dataset.Tabular.from_delimited_files` on this URL) with the columns PassengerId, "
           "Survived, Pclass, Name, Sex, Age, SibSp, Parch, Ticket, Fare, Cabin, Embarked and the "
           "first passengers Braund, Cumings and Heikkinen, which are this file's header and first "
           "rows; the checkout's file holds the training set's 891 passengers"),
)


@dataclass
class Renamed:
    """A data asset that a spec names by a name the checkout's asset files no longer give it."""
    file: str   # the asset file in the checkout that defines the same data under another name
    why: str


RENAMED_DATA = {
    "sampledata": Renamed(
        "cli/assets/data/local-folder-sampledata.yml",
        "an earlier version of the examples' own cli/assets/data/local-folder-sampledata.yml named "
        "this asset `sampledata` (type uri_folder, path example-data/); the checkout's version of the "
        "same file registers the same folder as `local-folder-sampledata`, and hello-dataset.yml "
        "still asks for `sampledata`"),
}

# Remote data the examples read that has no true local copy here, and why: logged in place of
# a mapping, so that a run says what was looked for. Nothing here is mapped or made up.
NO_COPY = (
    ("https://azuremlexamples.blob.core.windows.net/datasets/diabetes.csv",
     "the script reads a CSV with a `target` column and numeric features, but no public source "
     "shows the published file's header or values (scikit-learn's scaled or raw diabetes data, an "
     "index column or not), so scikit-learn's bundled copy cannot be said to be the same file"),
    ("wasbs://datasets@azuremlexamples.blob.core.windows.net/nyctaxi/",
     "the published folder is the 24 GB of NYC TLC yellow-trip CSVs with TLC's own column names "
     "(tpep_pickup_datetime, RatecodeID, pickup_longitude); the checkout's taxi files are 5000-row "
     "samples with Azure Open Datasets' renamed columns, another selection of rows and columns"),
    ("https://www.robots.ox.ac.uk/~vgg/data/pets/data/",
     "the Oxford-IIIT Pet archives (about 800 MB) are in neither the checkout nor any package"),
)
NO_ASSET = {
    "cifar-10-example":
        "the script wants CIFAR-10's python batches (a cifar-10-batches-py folder, which torchvision "
        "checks file by file against their published md5 sums); the checkout's two copies of that "
        "folder lack the five data batches and the test batch (MISSING.txt), and no package holds them",
}


# -- running one spec -----------------------------------------------------------------------------

def by_design(text: str) -> bool:
    return any(re.search(pattern, text, re.I) for pattern in BY_DESIGN)


def job_cause(shown: dict[str, Any]) -> str:
    error = shown.get("error") or {}
    message = first_line(str(error.get("message") or ""))
    log = Path(str(shown.get("log_path") or ""))
    if log.is_file():
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
        # A download that failed early (wget, curl) is the cause, whatever failed after it.
        offline = [line for line in lines if re.search(NETWORK, line)]
        if offline:
            return f"{error.get('code', '')}: {offline[0][:200]}"
        errors = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", line)]
        if errors:
            return f"{error.get('code', '')}: {errors[-1][:200]}"
    return f"{error.get('code', '')}: {message}"


def evidence(shown: dict[str, Any]) -> str:
    """All of a failed job's error and the end of its log: what its cause class is read from."""
    text = str((shown.get("error") or {}).get("message") or "")
    log = Path(str(shown.get("log_path") or ""))
    if log.is_file():
        text += "\n" + "\n".join(log.read_text(errors="replace").splitlines()[-40:])
    return text


def refused(row: Row, result: subprocess.CompletedProcess) -> bool:
    """Whether aml-run refused a submission; if so, the row says why (by design or not)."""
    if result.returncode == 0:
        return False
    text = result.stderr or result.stdout
    row.verdict, row.cause = ("By design" if by_design(text) else "Refused"), first_line(text)
    row.evidence = text
    return True


def run_job(row: Row, spec: Path, workspace: Path, timeout: float) -> None:
    created = run(["job", "create", "--file", str(spec), "-w", str(workspace), "-o", "json"], spec.parent)
    if refused(row, created):
        return
    row.job = json.loads(created.stdout)["name"]
    finish(row, workspace, timeout, spec.parent)


def run_schedule(row: Row, spec: Path, workspace: Path, timeout: float) -> None:
    created = run(["schedule", "create", "--file", str(spec), "-w", str(workspace), "-o", "json"], spec.parent)
    if refused(row, created):
        return
    name = json.loads(created.stdout)["name"]
    run(["schedule", "disable", name, "-w", str(workspace)], spec.parent)
    triggered = run(["schedule", "trigger", name, "-w", str(workspace), "-o", "json"], spec.parent)
    if refused(row, triggered):
        return
    fired = json.loads(triggered.stdout)
    row.job = fired.get("job") or fired.get("name") or fired.get("job_name")
    finish(row, workspace, timeout, spec.parent)


def finish(row: Row, workspace: Path, timeout: float, cwd: Path) -> None:
    waited = run(["job", "stream", str(row.job), "-w", str(workspace)], cwd, timeout=timeout)
    if waited.returncode == 124:
        run(["job", "cancel", str(row.job), "-w", str(workspace)], cwd)
        row.verdict, row.cause = "Timeout", f"still running after {timeout:.0f} s"
        return
    shown = run(["job", "show", str(row.job), "-w", str(workspace), "-o", "json"], cwd)
    if shown.returncode != 0:
        row.verdict, row.cause = "Failed", f"job show failed: {first_line(shown.stderr)}"
        return
    record = json.loads(shown.stdout)
    row.verdict = str(record.get("status"))
    if row.verdict != "Completed":
        row.cause = job_cause(record)
        row.evidence = evidence(record)
        for step, node in (record.get("jobs") or {}).items():
            if node.get("status") != "Failed":
                continue
            # The step's own record says more than the pipeline's "see job show --node".
            cause = first_line(str((node.get("error") or {}).get("message") or ""))
            if node.get("name"):
                step_shown = run(["job", "show", str(node["name"]), "-w", str(workspace), "-o", "json"], cwd)
                if step_shown.returncode == 0:
                    cause = job_cause(json.loads(step_shown.stdout))
                    row.evidence += "\n" + evidence(json.loads(step_shown.stdout))
            row.steps.append(f"{step}: {cause}")
        if row.steps:
            row.cause = f"{row.cause.split(';')[0]}: {row.steps[0]}"


# Why a spec did not complete, when the reason is not aml-run's: each pattern is matched against
# the cause aml-run or the job's log gave. Anything unmatched is "aml-run?" and must be looked at.
NETWORK = (r"Name or service not known|cannot download|URLError|Temporary failure in name resolution"
           r"|unable to resolve host|Could not resolve host|is cloud storage|HTTPError|ConnectionError"
           r"|getaddrinfo|which does not exist; copy")
CAUSE_CLASSES = (
    ("network: data not in the checkout", NETWORK),
    ("asset not in the checkout", r"'(?!AzureML-)[^']+' is not registered"),
    ("program of the image, not on this machine",
     r"code 127|command not found|bash: line \d+: /(usr|opt)/[^:]+: No such file or directory"),
    # The Java job-template names a code folder that is not in the repository. pytorch/iris
    # pip-installs `mlflow` beside `azureml-mlflow`, which caps mlflow-skinny at 3.15.0 (its
    # 1.62.0.post6 release); mlflow.pytorch.save_model there defaults to the pt2 format and
    # raises without an input_example, which the script does not give: the same error with the
    # packages the service's image installs today.
    ("example's own defect", r"AML803 error: code folder|If `serialization_format` is set to 'pt2', "
                             r"then input_example is required"),
    ("lint refusal of a spec azure-ai-ml sends to the service",
     r"azure-ai-ml (accepts this and sends it|refuses some specs with this finding and sends others)"),
    ("the environment pins a Python this machine lacks",
     r"pins python=\S+ and environments here are built on Python"),
    ("needs Azure credentials", r"CredentialUnavailableError|DefaultAzureCredential failed"),
)


def cause_class(row: Row) -> str:
    if row.verdict in ("Completed", "By design", "Not a job"):
        return ""
    for name, pattern in CAUSE_CLASSES:
        if re.search(pattern, "\n".join([row.cause, *row.steps, row.evidence])):
            return name
    return "aml-run?"


# -- the report -----------------------------------------------------------------------------------

def report(rows: list[Row], out: Any) -> dict[str, Any]:
    width = max((len(row.spec) for row in rows), default=10)
    for row in rows:
        cause = f"[{row.cause_class}] {row.cause}" if row.cause_class else row.cause
        out.write(f"{row.spec:<{width}}  {row.kind:<12} {row.verdict:<10} {row.seconds:6.1f}s  {cause}\n")
    counted = [row for row in rows if row.kind in (*JOB_KINDS, "schedule") and row.verdict != "By design"]
    completed = sum(1 for row in counted if row.verdict == "Completed")
    totals: dict[str, Any] = {}
    for row in rows:
        totals[row.verdict] = totals.get(row.verdict, 0) + 1
    share = 100 * completed / len(counted) if counted else 0.0
    out.write(f"\n{len(rows)} specs: " + ", ".join(f"{key} {value}" for key, value in sorted(totals.items())) + "\n")
    out.write(f"of the {len(counted)} specs aml-run means to run, {completed} Completed ({share:.0f} %)\n")
    classes: dict[str, int] = {}
    for row in counted:
        if row.cause_class:
            classes[row.cause_class] = classes.get(row.cause_class, 0) + 1
    if classes:
        out.write("not completed, by cause: " + ", ".join(f"{key} {value}" for key, value in sorted(classes.items())) + "\n")
    return {"rows": [row.__dict__ for row in rows], "totals": totals, "meant_to_run": len(counted),
            "completed": completed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="a checkout of Azure/azureml-examples")
    parser.add_argument("--folder", action="append", help="a folder of the checkout to run (repeatable)")
    parser.add_argument("--only", help="run only the specs whose path matches this glob")
    parser.add_argument("--timeout", type=float, default=900, help="seconds one job may take (default 900)")
    parser.add_argument("--scratch", type=Path, help="the scratch folder (default: a new temporary one)")
    parser.add_argument("--json", type=Path, help="also write the rows and totals as JSON here")
    parser.add_argument("--missing", type=Path,
                        help="a file listing paths (one per line, relative to PATH) that this checkout lacks, "
                             "e.g. large data files a partial clone left out: a spec beside one that did not "
                             "complete is put down to it")
    args = parser.parse_args(argv)

    source = args.path.resolve()
    scratch = (args.scratch or Path(tempfile.mkdtemp(prefix="aml-examples-"))).resolve()
    tree = scratch / "checkout"
    if not tree.exists():
        # Copied, so that nothing a job writes beside its spec lands in the checkout.
        shutil.copytree(source / "cli", tree / "cli", symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "endpoints", "deployments", "foundation-models"))
    workspace = scratch / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)  # aml-run makes an empty folder a workspace
    assets = index(tree / "cli")
    log: list[str] = []
    registrar = Registrar(workspace, tree, assets, log)
    rows: list[Row] = []
    missing = [line.strip() for line in args.missing.read_text().splitlines() if line.strip()] if args.missing else []
    folders = args.folder or list(FOLDERS)
    for spec in specs(tree, folders, args.only):
        relative = str(spec.relative_to(tree))
        kind = kind_of(spec) or "unknown"
        row = Row(relative, kind)
        rows.append(row)
        if kind not in (*JOB_KINDS, "schedule"):
            row.verdict = "Not a job"
            continue
        started = time.monotonic()
        log.append(f"== {relative}")
        registrar.prepare(spec)
        try:
            (run_schedule if kind == "schedule" else run_job)(row, spec, workspace, args.timeout)
        except (json.JSONDecodeError, KeyError) as error:
            row.verdict, row.cause = "Failed", f"aml-run printed something unexpected: {error}"
        row.seconds = time.monotonic() - started
        row.cause_class = cause_class(row)
        if row.cause_class and any(spec.parent in (tree / path).parents for path in missing):
            row.cause_class = "file missing from this checkout"
        sys.stderr.write(f"{row.verdict:<10} {row.seconds:6.1f}s {relative}  {row.cause[:120]}\n")
        sys.stderr.flush()
    (scratch / "registration.log").write_text("\n".join(log) + "\n")
    result = report(rows, sys.stdout)
    for mirror in MIRRORS:
        if any(("map", prefix) in registrar.done for prefix in mirror.prefixes):
            print(f"offline data: {', '.join(mirror.prefixes)} -> the checkout's {', '.join(mirror.copies.values())} "
                  f"({mirror.why})")
    for name, renamed in RENAMED_DATA.items():
        if ("data", name) in registrar.done and not assets.by_kind.get("data", {}).get(name):
            print(f"renamed data: '{name}' -> the checkout's {renamed.file} ({renamed.why})")
    for line in log:
        if line.startswith("no local copy of") and not line.endswith(" in the checkout"):
            print(line)
    print(f"scratch folder (workspace, registration log): {scratch}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
