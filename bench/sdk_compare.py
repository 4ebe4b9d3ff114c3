"""How fast is aml-lint against the official SDK's own checks, on the same spec files?

Builds (on first use) a virtual environment with `azure-ai-ml` from PyPI in a cache folder
(.cache/sdk-venv/ under the project, git-ignored; the project's .venv is never touched), writes
a corpus of spec files into a temporary folder (the project's fixtures, the seed's scenarios
and generated variants of the six kinds, each with the code folders, component files, scripts
and data it references: bench/sdk_corpus.py), and times, in the same run and as whole
processes (interpreter start and imports count, as they do for a user):

  SDK       one Python process in the SDK venv that loads every spec file with
            load_job / load_component / load_schedule and calls `_validate()` on what it loaded
            where the SDK's own operations do before anything is sent (JobOperations._validate,
            ComponentOperations._validate, ScheduleOperations.begin_create_or_update): loading
            is the whole local check of a sweep job and of a monitor schedule
  aml-lint  `aml-lint <corpus>` (this checkout's code): process start, the worker pool's
            start-up and every rule on every file
  floor     a bare interpreter that composes every YAML file aml-lint reads with PyYAML's C
            loader and parses every training script the specs run with `ast`
            (bench/lint_floor.py): what no linter of these files can avoid

Each is run a few rounds, interleaved (aml-lint several times a round, as one run of it is
short enough for a burst of other work on a shared machine to move it); the medians give the
ratio (target: aml-lint >= 50x faster), and aml-lint's CPU time against the floor's gives the
floor ratio (target: <= 3x). Then where aml-lint's time goes (a bare interpreter,
`aml-lint --version`, its imports, one process without the pool, the default run), the cost
per kind on each side, and both verdicts side by side: every file that either one rejects,
with the SDK's error and aml-lint's errors, disagreements first.

    python bench/sdk_compare.py [--variants 25] [--rounds 3] [--sdk-version 1.35.2]
                                [--keep DIR] [--rebuild-venv | --sdk-python PYTHON]

Not part of `make test`. The first run installs the SDK (about 20 s here); a run takes about
40 s after that, most of it the SDK's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT_VENV = ROOT / ".venv"

# The corpus generator needs PyYAML, which the project's venv has: run there if started elsewhere.
if (Path(sys.prefix).resolve() != PROJECT_VENV.resolve() and (PROJECT_VENV / "bin" / "python").exists()
        and not os.environ.get("AMLLAB_SDK_COMPARE_REEXEC")):
    os.environ["AMLLAB_SDK_COMPARE_REEXEC"] = "1"
    os.execv(str(PROJECT_VENV / "bin" / "python"), [str(PROJECT_VENV / "bin" / "python"), *sys.argv])

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))  # this checkout's validator, for the per-kind figures
from lint_floor import ENV, FLOOR_RATIO_TARGET, LINT, Floor, Timing, median  # noqa: E402
from lint_floor import timed as timed_both  # noqa: E402
from sdk_corpus import build_corpus  # noqa: E402

DEFAULT_SDK_VERSION = "1.35.2"
LINT_RUNS = 5  # aml-lint runs per round
DEFAULT_CACHE = ROOT / ".cache" / "sdk-venv"

# Runs inside the SDK venv. Import time counts (it is part of what a user waits for).
SDK_RUNNER = textwrap.dedent('''
    import json, sys, time
    started = time.perf_counter()
    from azure.ai.ml import load_component, load_job
    from azure.ai.ml.entities import Component, JobSchedule
    from azure.ai.ml.entities._load_functions import load_schedule
    from azure.ai.ml.entities._validation import PathAwareSchemaValidatableMixin
    imported = time.perf_counter()
    LOADERS = {"commandJob": load_job, "sweepJob": load_job, "pipelineJob": load_job,
               "commandComponent": load_component, "pipelineComponent": load_component,
               "schedule": load_schedule}
    results = []
    with open(sys.argv[1]) as listing:
        for line in listing:
            kind, path = line.rstrip("\\n").split("\\t")
            error = None
            begun = time.perf_counter()
            try:
                entity = LOADERS[kind](path)
                # Validate where the SDK's own create/validate operations do: components, jobs
                # with schema validation (not sweeps), schedules that create a job (not monitors).
                if isinstance(entity, (Component, JobSchedule)) or (
                        kind.endswith("Job") and isinstance(entity, PathAwareSchemaValidatableMixin)):
                    outcome = entity._validate()
                    if not outcome.passed:
                        error = "; ".join(f"{k}: {v}" for k, v in outcome.error_messages.items())
            except Exception as exc:  # what the user would see: the SDK refuses the file
                error = f"{type(exc).__name__}: {exc}"
            results.append([path, error, time.perf_counter() - begun])
    finished = time.perf_counter()
    with open(sys.argv[2], "w") as out:
        json.dump({"import": imported - started, "loop": finished - imported, "results": results}, out)
''')


def say(message: str) -> None:
    print(message, flush=True)


def ensure_sdk_venv(folder: Path, version: str, rebuild: bool) -> Path:
    """The SDK venv's python, built on first use (and again when the version changes)."""
    python = folder / "bin" / "python"
    stamp = folder / f".installed-azure-ai-ml-{version}"
    if stamp.exists() and python.exists() and not rebuild:
        say(f"SDK venv: {folder} (azure-ai-ml {version}, cached)")
        return python
    say(f"SDK venv: building {folder} with azure-ai-ml=={version} from PyPI (first use only) ...")
    started = time.perf_counter()
    if folder.exists():
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(folder)], check=True)
    log = folder.parent / "sdk-venv-install.log"
    with open(log, "w") as handle:
        status = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                                 f"azure-ai-ml=={version}"], stdout=handle, stderr=subprocess.STDOUT)
    if status.returncode != 0:
        sys.exit(f"pip install azure-ai-ml=={version} failed; see {log}")
    # Compile once, so no timed run pays for writing the SDK's bytecode.
    subprocess.run([str(python), "-c", "import azure.ai.ml"], env=ENV, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    stamp.touch()
    say(f"SDK venv: ready in {time.perf_counter() - started:.1f} s (pip log: {log})")
    return python


def timed(command: list[str], cwd: Path) -> float:
    return timed_both(command, cwd).wall


def median_of(rounds: int, command: list[str], cwd: Path) -> float:
    return statistics.median(timed(command, cwd) for _ in range(rounds))


def lint_per_kind(corpus: Path) -> dict[str, float]:
    """Seconds aml-lint spends per kind, in this process on one core (after its imports), in one
    lint run as `aml-lint .` does. A pipeline or schedule includes the first analysis of the
    component and job files it uses."""
    from validator import paths
    from validator.config import Config
    from validator.engine import iter_spec_files, lint_file

    config = Config(root=corpus)
    spent: Counter = Counter()
    previous = Path.cwd()
    os.chdir(corpus)
    try:
        with paths.one_run():
            for path, _ in iter_spec_files([Path(".")]):
                started = time.perf_counter()
                report = lint_file(path, config)
                if report.kind:
                    spent[report.kind] += time.perf_counter() - started
    finally:
        os.chdir(previous)
    return spent


def summarize_sdk_error(text: str) -> str:
    """The SDK's error, without its JSON envelope and boilerplate: `path: message; ...`."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return text
    try:
        data = json.loads(text[start:end + 1])
    except ValueError:
        return text
    leaves: list[str] = []

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("errors"), list):
                for error in node["errors"]:
                    message = str(error.get("message", ""))
                    inner = summarize_sdk_error(message) if "{" in message else message
                    where = error.get("path")
                    leaves.append(inner if where in (None, "*") else f"{where}: {inner}")
                return
            for key, value in node.items():
                walk(value, path if key == "_schema" else f"{path}.{key}" if path else str(key))
        elif isinstance(node, list):
            for value in node:
                walk(value, path)
        else:
            leaves.append(f"{path}: {node}" if path else str(node))

    walk(data, "")
    unique = list(dict.fromkeys(leaves))
    head = text[:start].split(":")[0].strip()
    summary = "; ".join(unique[:4]) + (f" (+{len(unique) - 4} more)" if len(unique) > 4 else "")
    return f"{head}: {summary}" if head and not head.startswith("Validation for") else summary


def one_line(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variants", type=int, default=25, help="generated variants per kind (default 25)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds; medians are reported")
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--sdk-version", default=DEFAULT_SDK_VERSION)
    parser.add_argument("--venv", type=Path, default=DEFAULT_CACHE, help="where the SDK venv lives")
    parser.add_argument("--rebuild-venv", action="store_true")
    parser.add_argument("--sdk-python", type=Path,
                        help="an interpreter that already has azure-ai-ml (instead of the cached venv)")
    parser.add_argument("--keep", type=Path, help="write the corpus here and keep it (must not exist)")
    args = parser.parse_args()

    sdk_python = args.sdk_python or ensure_sdk_venv(args.venv, args.sdk_version, args.rebuild_venv)
    with tempfile.TemporaryDirectory(prefix="sdk-compare-") as scratch_name:
        scratch = Path(scratch_name)
        corpus = args.keep.resolve() if args.keep else scratch / "corpus"
        say(f"corpus: writing fixtures, scenarios and {args.variants} generated variants per kind to {corpus}")
        build_corpus(corpus, args.variants, args.seed)

        # Which files aml-lint checks, as what, and its verdicts (untimed; also warms caches).
        listing = subprocess.run(LINT + ["-v", "--format", "json", "."], cwd=corpus, env=ENV,
                                 capture_output=True, text=True, check=False)
        try:
            report = json.loads(listing.stdout)
        except ValueError:
            sys.exit(f"aml-lint -v --format json failed (exit {listing.returncode}):\n{listing.stderr[-2000:]}")
        checked = [(f["kind"], os.path.normpath(f["path"])) for f in report["files"] if f["kind"]]
        skipped = sum(1 for f in report["files"] if not f["kind"])
        lint_errors: dict[str, list[dict]] = {}
        for diagnostic in report["diagnostics"]:
            if diagnostic["severity"] == "error":
                lint_errors.setdefault(os.path.normpath(diagnostic["path"]), []).append(diagnostic)
        list_file = scratch / "specs.tsv"
        list_file.write_text("".join(f"{kind}\t{path}\n" for kind, path in checked))
        runner = scratch / "sdk_runner.py"
        runner.write_text(SDK_RUNNER)
        by_kind = Counter(kind for kind, _ in checked)
        by_source = Counter(path.split(os.sep)[0] for _, path in checked)
        say(f"corpus: {len(checked)} spec files ({', '.join(f'{n} {k}' for k, n in sorted(by_kind.items()))}); "
            f"{skipped} other YAML files (environments, conda files, scenario notes) that aml-lint reads and skips")
        say(f"        from: {', '.join(f'{source}/ {n}' for source, n in sorted(by_source.items()))}")

        sdk_command = [str(sdk_python), str(runner), str(list_file), str(scratch / "sdk.json")]
        lint_command = LINT + ["."]
        floor = Floor(corpus, scratch)
        sdk_times, sdk_inside = [], []
        lint_runs: list[Timing] = []
        floor_runs: list[Timing] = []
        for round_ in range(1, args.rounds + 1):
            sdk_times.append(timed(sdk_command, corpus))
            sdk_inside.append(json.loads((scratch / "sdk.json").read_text()))
            # aml-lint is short, so a burst of other work on this shared machine moves one run a
            # lot: each round runs it LINT_RUNS times, and every run counts in the median.
            runs = [timed_both(lint_command, corpus) for _ in range(LINT_RUNS)]
            lint_runs += runs
            floor_runs += [timed_both(floor.command, corpus) for _ in range(LINT_RUNS)]
            say(f"round {round_}/{args.rounds}: SDK {sdk_times[-1]:.2f} s, aml-lint "
                + " ".join(f"{t.wall:.3f}" for t in runs) + " s (CPU "
                + " ".join(f"{t.cpu:.3f}" for t in runs) + f" s), floor CPU {floor_runs[-1].cpu:.3f} s")
        lint_times = [t.wall for t in lint_runs]

        # Where aml-lint's time goes.
        python = sys.executable
        bare = median_of(5, [python, "-c", "pass"], corpus)
        version = median_of(5, LINT + ["--version"], corpus)
        imports = median_of(5, [python, "-c", "import validator.cli, validator.engine, validator.kinds as k, "
                                "validator.rules as r; [r.checks_for(kind) for kind in k.KINDS]"], corpus)
        serial = median_of(args.rounds, LINT + ["-j", "1", "."], corpus)
        lint_kind = lint_per_kind(corpus)
        sdk_results = sdk_inside[-1]["results"]

    count = len(checked)
    sdk_time, lint_time = statistics.median(sdk_times), statistics.median(lint_times)
    sdk_import = statistics.median(r["import"] for r in sdk_inside)
    sdk_loop = statistics.median(r["loop"] for r in sdk_inside)
    ratio = sdk_time / lint_time
    say("")
    say(f"== speed: {count} spec files, medians of {args.rounds} SDK runs and {len(lint_times)} aml-lint runs "
        f"(whole processes) ==")
    say(f"  SDK (azure-ai-ml {args.sdk_version}) load + _validate   {sdk_time:7.2f} s   "
        f"{count / sdk_time:7.0f} files/s   (import {sdk_import:.2f} s, files {sdk_loop:.2f} s, "
        f"{1000 * sdk_loop / count:.1f} ms/file)")
    say(f"  aml-lint (all rules, default jobs)          {lint_time:7.3f} s   {count / lint_time:7.0f} files/s")
    say(f"  ratio: aml-lint is {ratio:.1f}x faster than the SDK   target >= 50x: "
        f"{'met' if ratio >= 50 else 'MISSED'}   (best round of each: {min(sdk_times) / min(lint_times):.1f}x)")
    say(f"  SDK per-file work alone vs the whole aml-lint process: {sdk_loop / lint_time:.1f}x")
    floor_time, lint_cpu = median(floor_runs), median(lint_runs)
    floor_ratio = lint_cpu.cpu / floor_time.cpu
    say(f"  floor ({len(floor.yaml_files)} YAML files composed with the C loader, {len(floor.scripts)} training "
        f"scripts parsed): CPU {1000 * floor_time.cpu:.0f} ms, wall {1000 * floor_time.wall:.0f} ms")
    say(f"  floor ratio: aml-lint uses {floor_ratio:.2f}x the floor's CPU ({1000 * lint_cpu.cpu:.0f} ms)   "
        f"target <= {FLOOR_RATIO_TARGET:.0f}x: {'met' if floor_ratio <= FLOOR_RATIO_TARGET else 'MISSED'}   "
        f"(wall: {lint_cpu.wall / floor_time.wall:.2f}x)")
    say("")
    say("== where aml-lint's time goes (medians) ==")
    say(f"  python -c pass (interpreter start)           {1000 * bare:6.0f} ms")
    say(f"  aml-lint --version (start + CLI module)      {1000 * version:6.0f} ms")
    say(f"  python -c 'import validator.engine' (+ rules) {1000 * imports:5.0f} ms")
    say(f"  aml-lint -j 1 . (one process, no pool)       {1000 * serial:6.0f} ms   "
        f"{1000 * (serial - imports) / count:.2f} ms/file beyond start-up and imports")
    say(f"  aml-lint . (default: a worker per core)      {1000 * lint_time:6.0f} ms")
    say("")
    say("== per kind: ms per file (SDK: load + _validate in its process; aml-lint: lint_file in this "
        "process, one core; a pipeline or schedule includes the first look at the files it uses) ==")
    sdk_kind: Counter = Counter()
    for (kind, _), (_, _, seconds) in zip(checked, sdk_results):
        sdk_kind[kind] += seconds
    say(f"  {'kind':<18} {'files':>5} {'SDK':>8} {'aml-lint':>9} {'ratio':>7}")
    for kind in sorted(by_kind):
        sdk_ms = 1000 * sdk_kind[kind] / by_kind[kind]
        lint_ms = 1000 * lint_kind[kind] / by_kind[kind]
        say(f"  {kind:<18} {by_kind[kind]:>5} {sdk_ms:8.2f} {lint_ms:9.2f} {sdk_ms / max(lint_ms, 1e-9):6.1f}x")

    # Both verdicts, side by side: each file that either one rejects, disagreements first.
    sdk_errors = {os.path.normpath(path): error for path, error, _ in sdk_results if error}
    kinds = {path: kind for kind, path in checked}
    groups: dict[tuple[bool, bool], list[str]] = {}
    for path in kinds:
        groups.setdefault((path in sdk_errors, path in lint_errors), []).append(path)
    say("")
    say("== verdicts ==")
    say(f"  both accept {len(groups.get((False, False), []))}, both reject {len(groups.get((True, True), []))}, "
        f"only the SDK rejects {len(groups.get((True, False), []))}, "
        f"only aml-lint rejects {len(groups.get((False, True), []))}")
    for key, title in (((True, False), "only the SDK rejects"), ((False, True), "only aml-lint rejects"),
                       ((True, True), "both reject")):
        paths = sorted(groups.get(key, []))
        if not paths:
            continue
        say("")
        say(f"  -- {title} ({len(paths)}) --")
        for path in paths:
            say(f"  {path}  ({kinds[path]})")
            sdk_text = one_line(summarize_sdk_error(sdk_errors[path]), 150) if path in sdk_errors else "accepts"
            say(f"      SDK:      {sdk_text}")
            if path in lint_errors:
                diagnostics = lint_errors[path]
                first = diagnostics[0]
                more = f" (+{len(diagnostics) - 1} more: {', '.join(d['code'] for d in diagnostics[1:])})" \
                    if len(diagnostics) > 1 else ""
                text = f"{first['line']}:{first['column']} {first['code']} {first['message']}"
                say(f"      aml-lint: {one_line(text, 150 - len(more))}{more}")
            else:
                say("      aml-lint: accepts (no error)")
    if args.keep:
        say(f"\ncorpus kept in {corpus}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
