"""How long does an editor wait for aml-lint's diagnostics after a keystroke?

Starts `aml-lint --lsp` (as `python -m validator --lsp`) once, opens a 200-line pipeline spec
(six steps: inline command steps over training scripts, a sweep step over a component, with
inputs, outputs, resources and environment variables), then sends N changes, each the whole
text with one value edited (every other one adding a misspelt key, so that the findings come
and go), and times each from the didChange sent to its publishDiagnostics received. Each change is
also linted in-process through the API (`validator.lint_text`), just before it is sent: the
baseline, measured under the same load (the machine may be shared). Prints the median and p95 of
both and their ratio; the target is a median of 50 ms or less for the server.

With --huge MIB, it then opens the same spec padded to MIB mebibytes (over aml-lint's 1 MiB
limit, so it is not linted) and times keystrokes there: incremental one-character edits, each
from its didChange to its publishDiagnostics (the one finding that says the file is too large).

    python bench/lsp_latency.py [--changes 100] [--huge 8]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from lspclient import LspClient  # noqa: E402

SCRIPT = """\
import argparse

import mlflow

parser = argparse.ArgumentParser()
{arguments}
args = parser.parse_args()
for epoch in range(10):
    mlflow.log_metric("auc", 0.5 + epoch / 100)
"""

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: train_model
version: "1"
code: ../src/train
command: >-
  python train.py --data ${{inputs.training_data}} --learning_rate ${{inputs.learning_rate}}
  --n_estimators ${{inputs.n_estimators}} --model ${{outputs.model_output}}
environment: azureml:sklearn-train:2
inputs:
  training_data:
    type: uri_folder
  learning_rate:
    type: number
    default: 0.1
  n_estimators:
    type: integer
    default: 100
outputs:
  model_output:
    type: uri_folder
"""

HEADER = """\
# Churn model: prepare, featurize, split, tune, evaluate and register, every week.
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
display_name: churn-training-pipeline
experiment_name: churn-training
description: Builds the churn model from the raw CRM export.
tags:
  team: data-science
  project: churn
settings:
  default_compute: azureml:cpu-cluster
  continue_on_step_failure: false
inputs:
  raw_data:
    type: uri_folder
    path: azureml:churn-raw:3
  test_fraction: 0.2
  random_seed: 42
outputs:
  registered_model:
    type: uri_folder
jobs:
"""

STEP = """\
  {name}:
    type: command
    display_name: {title}
    code: ./src/{name}
    command: >-
      python {name}.py --input ${{{{inputs.data}}}} --seed ${{{{inputs.seed}}}}
      --fraction ${{{{inputs.fraction}}}} --output ${{{{outputs.result}}}}
    environment: azureml:sklearn-train:2
    inputs:
      data: {source}
      seed: ${{{{parent.inputs.random_seed}}}}
      fraction: ${{{{parent.inputs.test_fraction}}}}
    outputs:
      result:
        type: uri_folder
        mode: rw_mount
    environment_variables:
      LOG_LEVEL: INFO
      OMP_NUM_THREADS: "4"
    resources:
      instance_count: 1
      shm_size: 8g
    tags:
      stage: {name}
      owner: data-science
"""

SWEEP = """\
  tune:
    type: sweep
    display_name: Tune the model
    trial: ./components/train.yml
    inputs:
      training_data: ${{parent.jobs.split.outputs.result}}
    sampling_algorithm: random
    search_space:
      learning_rate:
        type: loguniform
        min_value: -6.9
        max_value: -0.7
      n_estimators:
        type: choice
        values: [50, 100, 200, 400]
    objective:
      goal: maximize
      primary_metric: auc
    limits:
      max_total_trials: 40
      max_concurrent_trials: 4
      timeout: 7200
    early_termination:
      type: bandit
      slack_factor: 0.1
      evaluation_interval: 1
      delay_evaluation: 5
    outputs:
      model_output:
        type: uri_folder
"""


def workspace(folder: Path) -> str:
    steps = [("prep", "Prepare the data", "${{parent.inputs.raw_data}}"),
             ("clean", "Drop bad rows", "${{parent.jobs.prep.outputs.result}}"),
             ("featurize", "Build features", "${{parent.jobs.clean.outputs.result}}"),
             ("split", "Split train and test", "${{parent.jobs.featurize.outputs.result}}"),
             ("evaluate", "Evaluate the model", "${{parent.jobs.tune.outputs.model_output}}"),
             ("register", "Register the model", "${{parent.jobs.evaluate.outputs.result}}")]
    for name, _, _ in steps:
        arguments = "\n".join(f'parser.add_argument("--{flag}")' for flag in ("input", "seed", "fraction", "output"))
        (folder / "src" / name).mkdir(parents=True)
        (folder / "src" / name / f"{name}.py").write_text(SCRIPT.format(arguments=arguments))
    (folder / "src" / "train").mkdir(parents=True)
    arguments = "\n".join(f'parser.add_argument("--{flag}")'
                          for flag in ("data", "learning_rate", "n_estimators", "model"))
    (folder / "src" / "train" / "train.py").write_text(SCRIPT.format(arguments=arguments))
    (folder / "components").mkdir()
    (folder / "components" / "train.yml").write_text(COMPONENT)
    body = [STEP.format(name=n, title=t, source=s) for n, t, s in steps[:4]]
    body.append(SWEEP)
    body += [STEP.format(name=n, title=t, source=s) for n, t, s in steps[4:]]
    return HEADER + "".join(body)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def keystrokes_on_a_huge_spec(folder: Path, text: str, mebibytes: int, changes: int) -> list[float]:
    """Seconds from each one-character edit of ``text`` padded to ``mebibytes`` to its diagnostics."""
    line = "# padding: a comment line that makes the spec far larger than any spec should be\n"
    huge = text + line * ((mebibytes << 20) // len(line) + 1)
    spec = folder / "huge.yml"
    client = LspClient(folder)
    times: list[float] = []
    try:
        client.initialize(folder)
        uri = client.open(spec, huge)
        (finding,) = client.diagnostics(uri, timeout=120)
        assert finding["code"] == "AML009", finding
        where = text.count("\n") + 1  # a padding line: the edit keeps the text over the limit
        for version in range(2, changes + 2):
            start = time.perf_counter()
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": where, "character": 1},
                                              "end": {"line": where, "character": 1}}, "text": "x"}]})
            client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                        and m["params"].get("version") == version, timeout=60)
            times.append(time.perf_counter() - start)
        client.close()
    finally:
        if client.process.poll() is None:
            client.process.kill()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--huge", type=int, default=0, metavar="MIB",
                        help="also time keystrokes on the spec padded to MIB mebibytes (over the size limit)")
    args = parser.parse_args()

    from validator import lint_text
    from validator.config import Config

    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        text = workspace(folder)
        spec = folder / "pipeline.yml"
        spec.write_text(text)
        lines = text.count("\n")
        texts = []
        for index in range(args.changes):
            changed = text.replace("max_total_trials: 40", f"max_total_trials: {40 + index}")
            if index % 2:
                changed = changed.replace("    early_termination:", "    early_terminaton:")
            texts.append(changed)

        # The baseline: the same lints in this process, with the collector tuned and the
        # imported objects frozen as aml-lint does for itself (validator.cli.run), so that the
        # ratio is the cost of the protocol and the server's bookkeeping. Each change is timed
        # both ways in turn, so that both see the same load on a shared machine.
        gc.set_threshold(200_000, 30, 30)
        config = Config(root=folder)
        findings = [len(lint_text(t, str(spec), config, base_dir=folder).diagnostics) for t in texts[:2]]
        gc.freeze()

        client = LspClient(folder)
        baseline: list[float] = []
        served: list[float] = []
        codes: set[str] = set()
        try:
            client.initialize(folder)
            uri = client.open(spec, text)
            first = client.diagnostics(uri, timeout=60)
            for version, changed in enumerate(texts, start=2):
                start = time.perf_counter()
                lint_text(changed, str(spec), config, base_dir=folder)
                baseline.append(time.perf_counter() - start)

                start = time.perf_counter()
                client.change(uri, changed, version)
                message = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                      and m["params"].get("version") == version, timeout=60)
                served.append(time.perf_counter() - start)
                codes |= {d["code"] for d in message["params"]["diagnostics"]}
            status = client.close()
        finally:
            if client.process.poll() is None:
                client.process.kill()
        huge = keystrokes_on_a_huge_spec(folder, text, args.huge, args.changes) if args.huge else []

    def ms(value: float) -> str:
        return f"{value * 1000:.1f} ms"

    print(f"spec: {lines} lines, pipeline of 7 steps; {args.changes} changes "
          f"(findings: {findings[0]} and {findings[1]} in turn; on open: {len(first)}; codes seen: {sorted(codes)})")
    print(f"baseline  in-process lint_text       median {ms(statistics.median(baseline))}   p95 {ms(percentile(baseline, 0.95))}")
    print(f"server    didChange -> diagnostics   median {ms(statistics.median(served))}   p95 {ms(percentile(served, 0.95))}")
    ratio = statistics.median(served) / statistics.median(baseline)
    verdict = "met" if statistics.median(served) <= 0.050 else "NOT met"
    print(f"ratio server/baseline (medians): {ratio:.2f}x; target median <= 50 ms: {verdict}; server exit status {status}")
    if huge:
        print(f"huge      {args.huge} MiB spec, one-character edits -> diagnostics   "
              f"median {ms(statistics.median(huge))}   p95 {ms(percentile(huge, 0.95))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
