"""The training-code family (AML7xx) and the code reading it relies on (validator/pycode.py):
how commands are split into the Python programs they start, what a script is seen to log and
parse, and end-to-end verdicts on small specs with their scripts."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator import pycode
from validator.engine import lint_file

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------- command lines
@pytest.mark.parametrize("command,expected", [
    ("python train.py --lr 0.1", [("script", "train.py", ("--lr", "0.1"), "")]),
    ("python3 -u -W ignore train.py", [("script", "train.py", (), "")]),
    ("ls ${{inputs.x}} && python train.py --data ${{inputs.d}}",
     [("script", "train.py", ("--data", pycode.PLACEHOLDER), "")]),
    ("cd src && PYTHONPATH=. python -m pkg.train --lr=1 $[[--opt ${{inputs.o}}]] > log.txt",
     [("module", "pkg.train", ("--lr=1", "--opt", pycode.PLACEHOLDER), "src")]),
    ("torchrun --nproc_per_node 2 train.py --epochs 3", [("script", "train.py", ("--epochs", "3"), "")]),
    ("python -m torch.distributed.run --nnodes 1 t.py --x", [("script", "t.py", ("--x",), "")]),
    ("accelerate launch --config_file c.yaml t.py --y", [("script", "t.py", ("--y",), "")]),
    ("mpirun -np 2 python mpi.py --a 1", [("script", "mpi.py", ("--a", "1"), "")]),
    ("python -c \"import mlflow\" --x 1", [("inline", "import mlflow", ("--x", "1"), "")]),
    ("python a.py {search_space.lr}", [("script", "a.py", (pycode.PLACEHOLDER,), "")]),
    ("echo python fake.py", []),
    ("cd ${{inputs.repo}} && python train.py", [("script", "train.py", (), None)]),
])
def test_command_line_finds_programs_and_arguments(command: str, expected: list) -> None:
    found = [(i.kind, i.name, i.args, i.directory) for i in pycode.command_line(command).invocations]
    assert found == expected


def test_command_line_marks_other_programs_and_writers() -> None:
    line = pycode.command_line("unzip code.zip && bash prep.sh; python train.py")
    assert line.opaque == ("unzip", "bash")
    assert line.invocations[0].after_writes
    assert not pycode.command_line("echo hi && mkdir -p out && python train.py").invocations[0].after_writes


@SETTINGS
@given(st.text(max_size=200))
def test_command_line_never_raises(text: str) -> None:
    pycode.command_line(text)


@SETTINGS
@given(st.text(max_size=300))
def test_source_facts_never_raise(text: str) -> None:
    pycode.source_facts(text)


# ----------------------------------------------------------------------------- script facts
def facts(source: str) -> pycode.ScriptFacts:
    found = pycode.source_facts(textwrap.dedent(source))
    assert found is not None
    return found


def logged(source: str) -> list[tuple[str | None, str | None, bool | None]]:
    return [(log.name, log.pattern, log.repeats) for log in facts(source).logs]


@pytest.mark.parametrize("source,names", [
    ("import mlflow\nmlflow.log_metric('auc', 1)", ["auc"]),
    ("import mlflow as mf\nmf.log_metric(key='auc', value=1)", ["auc"]),
    ("from mlflow import log_metric as lm\nlm('auc', 1, 3)", ["auc"]),
    ("import mlflow\nmlflow.log_metrics({'auc': 1, 'loss': 2})", ["auc", "loss"]),
    ("import mlflow\nmlflow.log_metrics(metrics=dict(auc=1))", ["auc"]),
    ("from mlflow.tracking import MlflowClient\nMlflowClient().log_metric(run_id, 'auc', 1)", ["auc"]),
    ("run.log('auc', 0.5)", ["auc"]),
    ("import logging\nlogging.log(logging.INFO, 'auc')\nlogger.log('a message, not a metric')", []),
])
def test_literal_metric_names(source: str, names: list[str]) -> None:
    assert [name for name, _, _ in logged(source)] == names


def test_computed_names_become_patterns_or_unknown() -> None:
    found = logged("""
        import mlflow
        mlflow.log_metric(f"val_{split}", 1)
        mlflow.log_metric("best_" + name, 1)
        mlflow.log_metric("{}_loss".format(x), 1)
        mlflow.log_metric(name, 1)
        mlflow.log_metrics(results)
    """)
    assert [(n, p) for n, p, _ in found] == [(None, "val_.+"), (None, "best_.+"), (None, ".+_loss"),
                                             (None, None), (None, None)]
    log = pycode.MetricLog(1, None, "val_.+", None)
    assert log.matches("val_auc") and not log.matches("auc")


def test_autolog_frameworks_and_subprocesses_are_noted() -> None:
    seen = facts("import mlflow\nimport subprocess\nfrom transformers import Trainer\n"
                 "mlflow.sklearn.autolog()\nsubprocess.run(['python', 'x.py'])\n")
    assert seen.autolog == 4 and seen.framework == "transformers" and seen.runs_other_code == 5


@pytest.mark.parametrize("source,repeats", [
    ("import mlflow\nmlflow.log_metric('a', 1)", False),
    ("import mlflow\nfor e in range(3):\n    mlflow.log_metric('a', e)", True),
    ("import mlflow\ndef ev():\n    mlflow.log_metric('a', 1)\nfor e in range(3):\n    ev()", True),
    ("import mlflow\ndef ev():\n    mlflow.log_metric('a', 1)\ndef main():\n    ev()\nmain()", False),
    ("import mlflow\ndef ev():\n    mlflow.log_metric('a', 1)\nfit(callbacks=[ev])", None),
    ("import mlflow\nclass C:\n    def on_epoch_end(self):\n        mlflow.log_metric('a', 1)", None),
    ("import mlflow\n[mlflow.log_metric('a', e) for e in range(3)]", True),
])
def test_repetition_of_a_log_call(source: str, repeats: bool | None) -> None:
    assert logged(source)[0][2] is repeats


PARSER = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--lr', '-l')\n"


@pytest.mark.parametrize("extra,blocked", [
    ("p.parse_args()", False),
    ("p.parse_known_args()", True),
    ("p.add_argument(f'--{name}')\np.parse_args()", True),
    ("p.add_subparsers()\np.parse_args()", True),
    ("p.add_argument('rest', nargs=argparse.REMAINDER)\np.parse_args()", True),
    ("p.parse_args(['--lr', '1'])", True),
    ("import sys\np.parse_args(sys.argv[1:])", False),
])
def test_argparse_blockers(extra: str, blocked: bool) -> None:
    parsing = facts(PARSER + extra).parsing
    assert parsing is not None and parsing.options >= {"--lr", "-l"}
    assert (parsing.blocker is not None) is blocked


def test_other_command_line_readers() -> None:
    assert facts("import click\n" + PARSER + "p.parse_args()").other_cli == "click"
    assert facts("import sys\n" + PARSER + "p.parse_args()\nx = sys.argv[2]").other_cli == "sys.argv"
    assert facts("import argparse\np = argparse.ArgumentParser(allow_abbrev=False)\np.parse_args()"
                 ).parsing.abbreviations is False


# ----------------------------------------------------------------------------- end to end
SWEEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  code: ./src
  command: {command}
  environment: azureml:sklearn-train:2
compute: azureml:cpu-cluster
sampling_algorithm: random
search_space:
  lr:
    type: uniform
    min_value: 0.001
    max_value: 0.1
objective:
  goal: maximize
  primary_metric: {metric}
limits:
  max_total_trials: 20
{policy}"""
POLICY = "early_termination:\n  type: median_stopping\n  evaluation_interval: 1\n  delay_evaluation: 5\n"


def lint_sweep(tmp_path: Path, files: dict[str, str], metric: str, command: str = "python train.py --lr ${{search_space.lr}}",
               policy: str = "") -> set[str]:
    for name, text in files.items():
        target = tmp_path / "src" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    spec = tmp_path / "sweep.yml"
    spec.write_text(SWEEP.format(command=command, metric=metric, policy=policy))
    return {d.code for d in lint_file(spec).diagnostics if d.code.startswith("AML7")}


TRAIN = """\
    import argparse
    import mlflow
    from helpers import report

    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float)
    args = parser.parse_args()
    for epoch in range(5):
        mlflow.log_metric("val_loss", 1 / (epoch + 1), step=epoch)
    report()
"""
HELPERS = """\
    import mlflow
    def report():
        mlflow.log_metric("final_auc", 0.9)
"""


def test_metric_logged_by_an_imported_helper_module(tmp_path: Path) -> None:
    files = {"train.py": TRAIN, "helpers.py": HELPERS}
    assert lint_sweep(tmp_path, files, "final_auc") == set()
    assert lint_sweep(tmp_path, files, "val_loss", policy=POLICY) == set()
    # The helper's callers live in another file: amllab does not follow them, so no warning.
    assert lint_sweep(tmp_path, files, "final_auc", policy=POLICY) == set()
    once = TRAIN.replace("report()", 'mlflow.log_metric("test_auc", 0.8)')
    assert lint_sweep(tmp_path, {"train.py": once, "helpers.py": HELPERS}, "test_auc", policy=POLICY) == {"AML703"}
    assert lint_sweep(tmp_path, files, "auc") == {"AML701"}


def test_unknown_flag_through_the_whole_pipeline(tmp_path: Path) -> None:
    files = {"train.py": TRAIN, "helpers.py": HELPERS}
    assert lint_sweep(tmp_path, files, "val_loss", "python train.py --l ${{search_space.lr}}") == set()
    assert lint_sweep(tmp_path, files, "val_loss", "python train.py --rate ${{search_space.lr}}") == {"AML704"}


def test_other_programs_in_the_command_make_a_missing_metric_a_warning(tmp_path: Path) -> None:
    files = {"train.py": TRAIN, "helpers.py": HELPERS}
    command = "bash prepare.sh && python train.py --lr ${{search_space.lr}}"
    assert lint_sweep(tmp_path, files, "accuracy", command) == {"AML702"}


def test_unreadable_scripts_are_not_judged(tmp_path: Path) -> None:
    assert lint_sweep(tmp_path, {"train.py": "def broken(:\n"}, "auc") == set()
    assert lint_sweep(tmp_path, {"other.py": "x = 1\n"}, "auc") == set()


def test_parent_parsers_and_self_logging_callbacks() -> None:
    local = facts("import argparse\nbase = argparse.ArgumentParser(add_help=False)\nbase.add_argument('--seed')\n"
                  "p = argparse.ArgumentParser(parents=[base])\np.parse_args()")
    assert local.parsing.blocker is None and "--seed" in local.parsing.options
    foreign = facts("import argparse\nfrom common import base\np = argparse.ArgumentParser(parents=[base])\n"
                    "p.parse_args()")
    assert foreign.parsing.blocker is not None
    assert facts("import mlflow\nmodel.fit(x, callbacks=[mlflow.keras.MlflowCallback()])").autolog == 2
    assert facts("import mlflow\nmlflow.evaluate(model, data, targets='y')").autolog == 2


def test_log_calls_that_are_not_metrics() -> None:
    assert logged("import numpy as np\ny = np.log(x)\nz = math.log(x, 2)") == []
    assert logged("import logging\nlogger.log(logging.INFO, msg)\nlog.log(level, msg)") == []
    assert logged("run.log(name, value)") == [(None, None, False)]
    assert logged("self.log('val_loss', loss)") == [("val_loss", None, False)]


AUTOLOG_SKLEARN = """\
    import argparse
    import mlflow
    from sklearn.svm import SVC

    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float)
    args = parser.parse_args()
    mlflow.autolog()
    SVC().fit(x, y)
"""
AUTOLOG_LIGHTGBM = """\
    import argparse
    import lightgbm as lgbm
    import mlflow

    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float)
    args = parser.parse_args()
    mlflow.lightgbm.autolog()
    lgbm.train(params, data, valid_sets=[test], valid_names=["test"])
"""


@pytest.mark.parametrize("script,metric,expected", [
    (AUTOLOG_SKLEARN, "training_f1_score", set()),
    (AUTOLOG_SKLEARN, "f1_score", {"AML702"}),
    (AUTOLOG_LIGHTGBM, "test-multi_logloss", set()),
    (AUTOLOG_LIGHTGBM, "multi_logloss", {"AML702"}),
])
def test_names_that_autolog_writes(tmp_path: Path, script: str, metric: str, expected: set[str]) -> None:
    assert lint_sweep(tmp_path, {"train.py": script}, metric) == expected
