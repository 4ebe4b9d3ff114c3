"""Pipelines for real: the order from the wiring, parallel steps, failure handling, step reuse
with its reasons, and a cache that a killed run cannot corrupt. Real processes, real MLflow."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from amlrun import aml_run, pid_gone
from conftest import ROOT
from runner import assets, contract, jobs, pipeline, status, step_cache
from runner.workspace import Workspace
from validator.spec import load_spec

LAB = ROOT / "scenarios" / "pipeline-prep-train-eval"


def steps_of(shown: dict) -> dict[str, tuple[str, bool]]:
    return {name: (node["status"], node["reused"]) for name, node in shown["jobs"].items()}


def run(workspace: Workspace, spec: Path, *overrides: str, timeout: float = 180) -> dict:
    name = jobs.submit(spec, workspace, overrides=overrides)
    jobs.wait(workspace, name, timeout=timeout)
    return jobs.show(workspace, name)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The prep-train-eval lab, set up as a learner does (with the labs it borrows from)."""
    from runner import scenarios

    folder = tmp_path_factory.mktemp("pipeline")
    for name in ("pipeline-prep-train-eval", "pipeline", "command-job"):
        shutil.copytree(ROOT / "scenarios" / name, folder / name, ignore=shutil.ignore_patterns(".amllab", "data"))
    workspace = Workspace.locate(folder / ".amllab")
    scenarios.setup(folder / LAB.name, workspace, open(os.devnull, "w"))
    return {"folder": folder, "spec": folder / LAB.name / "pipeline.yml", "workspace": workspace}


def test_a_second_run_reuses_every_step_and_a_code_edit_reruns_only_what_depends_on_it(lab: dict) -> None:
    workspace, spec = lab["workspace"], lab["spec"]
    first = run(workspace, spec)
    assert first["status"] == "Completed", first.get("error")
    assert steps_of(first) == {"prep": ("Completed", False), "train": ("Completed", False),
                               "evaluate": ("Completed", False)}
    report = Path(first["outputs"]["evaluation"]) / "report.json"
    assert json.loads(report.read_text())["rows"] > 0

    second = run(workspace, spec)
    assert steps_of(second) == {"prep": ("Completed", True), "train": ("Completed", True),
                                "evaluate": ("Completed", True)}
    assert {node["reused_from"] for node in second["jobs"].values()} == \
        {first["jobs"][name]["name"] for name in ("prep", "train", "evaluate")}
    # `job list --parent-job-name PIPELINE` lists its steps, reused ones too, as az ml does.
    assert [row["name"] for row in jobs.list_jobs(workspace, second["name"])] == \
        [second["jobs"][name]["name"] for name in ("prep", "train", "evaluate")]
    # A reused step hands on the original's outputs and metrics.
    assert json.loads((Path(second["outputs"]["evaluation"]) / "report.json").read_text()) == \
        json.loads(report.read_text())
    assert second["jobs"]["evaluate"]["metrics"] == first["jobs"]["evaluate"]["metrics"]

    train_code = lab["folder"] / "pipeline" / "src" / "train" / "train.py"
    train_code.write_text(train_code.read_text() + "\n# a comment changes the snapshot, so train runs again\n")
    # A registered component keeps the code it was registered with: the edit changes nothing
    # until the component is registered again, as a new version.
    unchanged = run(workspace, spec)
    assert all(reused for _, reused in steps_of(unchanged).values())
    component = lab["folder"] / LAB.name / "components" / "train_model.yml"
    component.write_text(component.read_text().replace('version: "1"', 'version: "2"'))
    assets.create_component(workspace, str(component))
    version_2 = "jobs.train.component=azureml:train_model:2"
    third = run(workspace, spec, version_2)
    assert steps_of(third) == {"prep": ("Completed", True), "train": ("Completed", False),
                               "evaluate": ("Completed", False)}
    run_dir = workspace.run_dir(third["name"])
    assert "code changed: train.py" in pipeline.why(workspace, run_dir, "train")
    evaluate_why = pipeline.why(workspace, run_dir, "evaluate")
    assert f"input model changed: it is now output model of {third['jobs']['train']['name']}" in evaluate_why
    assert "nothing that decides its result changed" in pipeline.why(workspace, run_dir, "prep")
    # The same, as a user asks for it.
    shown = aml_run("job", "show", third["name"], "--node", "train", "--why", "--workspace", str(workspace.folder),
                    cwd=lab["folder"])
    assert shown.returncode == 0 and "code changed: train.py" in shown.stdout, shown.stderr
    table = aml_run("job", "show", third["name"], "--workspace", str(workspace.folder), cwd=lab["folder"])
    assert [line.split()[:3] for line in table.stdout.splitlines() if line.startswith(("prep ", "train ", "evaluate "))] \
        == [["prep", "Completed", "True"], ["train", "Completed", "False"], ["evaluate", "Completed", "False"]]

    # force_rerun runs everything, and what it ran never becomes a reuse source.
    forced = run(workspace, spec, "settings.force_rerun=true", version_2)
    assert all(not node["reused"] for node in forced["jobs"].values())
    assert "force_rerun is true" in pipeline.why(workspace, workspace.run_dir(forced["name"]), "prep")
    after = run(workspace, spec, version_2)
    assert {node["reused_from"] for node in after["jobs"].values()} == \
        {third["jobs"]["train"]["name"], third["jobs"]["evaluate"]["name"], first["jobs"]["prep"]["name"]}


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


STAMPED = """\
    command: >-
      python -c "import time, pathlib; out = pathlib.Path('${{{{outputs.stamp}}}}');
      out.mkdir(parents=True, exist_ok=True); start = time.time(); time.sleep({sleep});
      (out / 'span.txt').write_text(f'{{start}} {{time.time()}}')"{fail}
    environment: {{image: python:3.11-slim}}
    outputs:
      stamp: {{type: uri_folder}}
"""


def step(sleep: float, fail: bool = False, reads: str | None = None) -> str:
    body = textwrap.dedent(STAMPED).format(sleep=sleep, fail="; exit 3" if fail else "")
    if reads:
        body += f"inputs:\n  upstream: ${{{{parent.jobs.{reads}.outputs.stamp}}}}\n"
        body = body.replace("time.sleep(", "print('${{inputs.upstream}}'); time.sleep(")
    return textwrap.indent(body, "    ")


def inline(body: str) -> str:
    """A step's keys, written flush left, as they sit under `jobs.<name>:`."""
    return textwrap.indent(textwrap.dedent(body), "    ")


def number_step(value: str) -> str:
    """A step that writes ``value`` to n.txt in its output `data`."""
    return inline(f"""\
        command: echo {value} > ${{{{outputs.data}}}}/n.txt
        environment: {{image: python:3.11-slim}}
        outputs:
          data: {{type: uri_folder}}
        """)


def copy_step(binding: str, file: str) -> str:
    """A step that copies ``file`` from the output bound to its input into its output `copied`."""
    return inline(f"""\
        command: cp ${{{{inputs.source}}}}/{file} ${{{{outputs.copied}}}}/{file}
        environment: {{image: python:3.11-slim}}
        inputs:
          source: {binding}
        outputs:
          copied: {{type: uri_folder}}
        """)


def failures(shown: dict) -> tuple:
    """What went wrong with a pipeline, and with each of its steps (for an assertion message)."""
    return shown.get("error"), {name: node["error"] for name, node in shown["jobs"].items()}


def pipeline_spec(folder: Path, steps: dict[str, str], settings: str = "") -> Path:
    jobs_text = "".join(f"  {name}:\n" + ("" if body.lstrip().startswith("type:") else "    type: command\n") + body
                        for name, body in steps.items())
    return write(folder, "pipeline.yml", "$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json\n"
                 "type: pipeline\n" + settings + "jobs:\n" + jobs_text)


def span(shown: dict, name: str) -> tuple[float, float]:
    start, end = (Path(shown["jobs"][name]["outputs"]["stamp"]) / "span.txt").read_text().split()
    return float(start), float(end)


def test_independent_steps_run_side_by_side_and_wired_ones_in_order(tmp_path: Path) -> None:
    spec = pipeline_spec(tmp_path, {"left": step(2), "right": step(2), "after": step(0, reads="left")})
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = run(workspace, spec)
    assert shown["status"] == "Completed", shown.get("error")
    left, right, after = span(shown, "left"), span(shown, "right"), span(shown, "after")
    assert left[0] < right[1] and right[0] < left[1]  # the two independent steps overlap
    assert after[0] >= left[1]  # the wired one starts after what it reads


def test_a_failed_step_without_continue_cancels_the_rest(tmp_path: Path) -> None:
    spec = pipeline_spec(tmp_path, {"broken": step(0, fail=True), "needs_it": step(0, reads="broken"),
                                    "slow": step(30)},
                         settings="settings:\n  continue_on_step_failure: false\n")
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = run(workspace, spec, timeout=120)  # `slow` would take 30 s: it is canceled instead
    assert shown["status"] == "Failed"
    assert {name: node["status"] for name, node in shown["jobs"].items()} == \
        {"broken": "Failed", "needs_it": "Canceled", "slow": "Canceled"}
    assert "broken" in shown["error"]["message"]


def test_with_continue_on_step_failure_the_independent_branches_finish(tmp_path: Path) -> None:
    spec = pipeline_spec(tmp_path, {"broken": step(0, fail=True), "needs_it": step(0, reads="broken"),
                                    "other": step(1), "after_other": step(0, reads="other")},
                         settings="settings:\n  continue_on_step_failure: true\n")
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = run(workspace, spec)
    assert shown["status"] == "Failed"
    assert {name: node["status"] for name, node in shown["jobs"].items()} == \
        {"broken": "Failed", "needs_it": "Canceled", "other": "Completed", "after_other": "Completed"}
    assert "upstream step 'broken' did not complete" in shown["jobs"]["needs_it"]["error"]["message"]


def test_a_run_killed_mid_step_leaves_no_cache_entry_that_a_rerun_would_trust(tmp_path: Path) -> None:
    marker = tmp_path / "release"
    spec = pipeline_spec(tmp_path, {"slow": inline(f"""\
        command: >-
          python -c "import pathlib, time; out = pathlib.Path('${{{{outputs.result}}}}');
          out.mkdir(parents=True, exist_ok=True); (out / 'half.txt').write_text('half');
          [time.sleep(0.1) for _ in iter(lambda: pathlib.Path('{marker}').exists(), True)];
          (out / 'whole.txt').write_text('whole')"
        environment: {{image: python:3.11-slim}}
        outputs:
          result: {{type: uri_folder}}
        """)})
    workspace = Workspace.locate(tmp_path / ".amllab")
    name = jobs.submit(spec, workspace)
    step_dir = workspace.run_dir(name) / pipeline.STEPS / "slow"
    deadline = time.monotonic() + 60
    while not (step_dir / "outputs" / "result" / "half.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(status.read(workspace.run_dir(name))["supervisor"]["pid"], signal.SIGKILL)
    time.sleep(0.3)
    assert jobs.show(workspace, name)["status"] == "Failed"  # noticed; its processes stopped
    cache = workspace.folder / step_cache.FOLDER
    assert not cache.exists() or not [p for p in cache.iterdir() if p.name not in ("index",)]
    # A half-built entry from some other crash is never trusted either.
    (cache / ".tmp-crashed").mkdir(parents=True, exist_ok=True)
    (cache / ".tmp-crashed" / "entry.json").write_text('{"job": "x", "key"')
    marker.write_text("go")
    again = run(workspace, spec)
    assert steps_of(again) == {"slow": ("Completed", False)}
    assert (Path(again["jobs"]["slow"]["outputs"]["result"]) / "whole.txt").read_text() == "whole"
    third = run(workspace, spec)
    assert steps_of(third) == {"slow": ("Completed", True)}
    assert third["jobs"]["slow"]["reused_from"] == again["jobs"]["slow"]["name"]


def test_a_non_deterministic_component_always_runs(tmp_path: Path) -> None:
    write(tmp_path, "stamp.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        type: command
        name: stamp
        version: "1"
        is_deterministic: false
        command: date +%s%N > ${{outputs.out}}/now.txt
        environment: {image: python:3.11-slim}
        outputs:
          out: {type: uri_folder}
        """)
    spec = pipeline_spec(tmp_path, {"stamp": "    component: ./stamp.yml\n"})
    workspace = Workspace.locate(tmp_path / ".amllab")
    first, second = run(workspace, spec), run(workspace, spec)
    assert steps_of(first) == steps_of(second) == {"stamp": ("Completed", False)}
    assert "is_deterministic: false" in pipeline.why(workspace, workspace.run_dir(second["name"]), "stamp")


def test_a_sweep_step_tunes_a_component_and_hands_on_its_best_trials_output(tmp_path: Path) -> None:
    write(tmp_path, "fit.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        type: command
        name: fit
        version: "1"
        command: >-
          python -c "import mlflow, pathlib; lr = ${{inputs.lr}};
          data = float((pathlib.Path('${{inputs.data}}') / 'n.txt').read_text());
          mlflow.log_metric('score', -(lr - data) ** 2);
          pathlib.Path('${{outputs.model}}', 'lr.txt').write_text(str(lr))"
        environment: {image: python:3.11-slim}
        inputs:
          data: {type: uri_folder}
          lr: {type: number, default: 0.0}
        outputs:
          model: {type: uri_folder}
        """)
    spec = pipeline_spec(tmp_path, {
        "make": number_step("0.5"),
        "tune": inline("""\
            type: sweep
            trial: ./fit.yml
            inputs:
              data: ${{parent.jobs.make.outputs.data}}
            outputs:
              model: {type: uri_folder}
            sampling_algorithm: grid
            search_space:
              lr: {type: choice, values: [0.1, 0.5, 0.9]}
            objective: {goal: maximize, primary_metric: score}
            limits: {max_total_trials: 3, max_concurrent_trials: 2}
            """),
        "use": copy_step("${{parent.jobs.tune.outputs.model}}", "lr.txt")})
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = run(workspace, spec, timeout=240)
    assert shown["status"] == "Completed", failures(shown)
    assert steps_of(shown) == {"make": ("Completed", False), "tune": ("Completed", False), "use": ("Completed", False)}
    tune = jobs.show(workspace, shown["jobs"]["tune"]["name"])
    assert len(tune["trials"]) == 3 and tune["best_trial"]["params"] == {"lr": 0.5}
    assert shown["jobs"]["tune"]["metrics"]["score"] == pytest.approx(0.0)
    assert (Path(shown["jobs"]["use"]["outputs"]["copied"]) / "lr.txt").read_text() == "0.5"


def test_a_sweep_steps_limits_bound_to_a_pipeline_input_take_its_value(tmp_path: Path) -> None:
    # The service resolves `${{parent.inputs.X}}` in a step's run settings; the limit is 2, not
    # the 1,000 trials of an unreadable number, nor the 4 of the search space.
    write(tmp_path, "fit.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        type: command
        name: fit
        version: "1"
        command: python -c "import mlflow; mlflow.log_metric('score', ${{inputs.lr}})"
        environment: {image: python:3.11-slim}
        inputs:
          lr: {type: number, default: 0.0}
        """)
    spec = pipeline_spec(tmp_path, {"tune": inline("""\
            type: sweep
            trial: ./fit.yml
            sampling_algorithm: grid
            search_space:
              lr: {type: choice, values: [0.1, 0.2, 0.3, 0.4]}
            objective: {goal: maximize, primary_metric: score}
            limits:
              max_total_trials: ${{parent.inputs.trials}}
              max_concurrent_trials: ${{parent.inputs.at_once}}
            """)}, settings="inputs:\n  trials: 2\n  at_once: 1\n")
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = run(workspace, spec, timeout=240)
    assert shown["status"] == "Completed", failures(shown)
    tune = jobs.show(workspace, shown["jobs"]["tune"]["name"])
    assert len(tune["trials"]) == 2 and tune["limits"]["max_total_trials"] == 2


def test_a_steps_distribution_and_resources_bound_to_pipeline_inputs_get_their_numbers(tmp_path: Path) -> None:
    spec = pipeline_spec(tmp_path, {"train": inline("""\
            command: echo hi
            environment: {image: python:3.11-slim}
            resources:
              instance_count: ${{parent.inputs.nodes}}
            distribution:
              type: pytorch
              process_count_per_instance: ${{parent.inputs.procs}}
            """)}, settings="inputs:\n  procs: 2\n  nodes: 1\n")
    plan = pipeline.plan_pipeline(load_spec(spec), Workspace.locate(tmp_path / ".amllab"), "p", tmp_path / "run")
    job = pipeline.step_job_data(plan, "train", {})
    # Numbers, as the launcher needs them (the text '2' was refused as "not a whole number").
    assert job["resources"] == {"instance_count": 1}
    assert job["distribution"] == {"type": "pytorch", "process_count_per_instance": 2}


def test_a_pipeline_component_step_runs_its_own_steps_and_hands_on_its_outputs(tmp_path: Path) -> None:
    write(tmp_path / "parts", "double.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json
        type: pipeline
        name: double
        inputs:
          numbers: {type: uri_folder}
          times: {type: integer, default: 2}
        outputs:
          result: {type: uri_folder}
        jobs:
          scale:
            type: command
            command: >-
              python -c "import pathlib; n = float((pathlib.Path('${{inputs.numbers}}') / 'n.txt').read_text());
              pathlib.Path('${{outputs.scaled}}', 'n.txt').write_text(str(n * ${{inputs.times}}))"
            environment: {image: python:3.11-slim}
            inputs:
              numbers: ${{parent.inputs.numbers}}
              times: ${{parent.inputs.times}}
            outputs:
              scaled: {type: uri_folder}
          again:
            type: command
            command: >-
              python -c "import pathlib; n = float((pathlib.Path('${{inputs.numbers}}') / 'n.txt').read_text());
              pathlib.Path('${{outputs.done}}', 'n.txt').write_text(str(n + 1))"
            environment: {image: python:3.11-slim}
            inputs:
              numbers: ${{parent.jobs.scale.outputs.scaled}}
            outputs:
              done: ${{parent.outputs.result}}
        """)
    spec = pipeline_spec(tmp_path, {
        "make": number_step("5"),
        "nested": inline("""\
            type: pipeline
            component: ./parts/double.yml
            inputs:
              numbers: ${{parent.jobs.make.outputs.data}}
              times: 3
            """),
        "use": copy_step("${{parent.jobs.nested.outputs.result}}", "n.txt")})
    workspace = Workspace.locate(tmp_path / ".amllab")
    first = run(workspace, spec)
    assert first["status"] == "Completed", failures(first)
    assert (Path(first["jobs"]["use"]["outputs"]["copied"]) / "n.txt").read_text() == "16.0"  # 5 x 3 + 1
    inner = jobs.show(workspace, first["jobs"]["nested"]["name"])
    assert steps_of(inner) == {"scale": ("Completed", False), "again": ("Completed", False)}
    second = run(workspace, spec)
    assert second["status"] == "Completed"
    inner_again = jobs.show(workspace, second["jobs"]["nested"]["name"])
    assert steps_of(inner_again) == {"scale": ("Completed", True), "again": ("Completed", True)}
    assert steps_of(second)["use"] == ("Completed", True)  # the nested outputs came from the same jobs


def test_the_weekly_retrain_schedule_triggers_the_seed_pipeline(tmp_path: Path) -> None:
    """`aml-run schedule trigger weekly-retrain` runs the seed's prep -> train pipeline now."""
    from runner import schedules

    for name in ("weekly-retrain", "pipeline", "command-job"):
        shutil.copytree(ROOT / "scenarios" / name, tmp_path / name, ignore=shutil.ignore_patterns(".amllab", "data"))
    workspace = Workspace.locate(tmp_path / ".amllab")
    env = {"AMLLAB_WORKSPACE": str(workspace.folder)}
    subprocess.run([sys.executable, "make_data.py", "data/churn-raw"], cwd=tmp_path / "command-job", check=True,
                   capture_output=True)
    for command in (["data", "create", "--name", "churn-raw", "--version", "3", "--path", "data/churn-raw",
                     "--type", "uri_folder"],
                    ["environment", "create", "--file", "environment.yml"],
                    ["compute", "create", "--name", "cpu-cluster", "--max-instances", "2"],
                    ["component", "create", "--file", "../pipeline/components/prep_data.yml"],
                    ["component", "create", "--file", "../pipeline/components/train_model.yml"]):
        result = aml_run(*command, cwd=tmp_path / "command-job", env=env)
        assert result.returncode == 0, result.stderr
    schedules.create(workspace, tmp_path / "weekly-retrain" / "schedule.yml")
    result = aml_run("schedule", "trigger", "weekly-retrain", "-o", "json", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    name = json.loads(result.stdout)["job"]
    final = jobs.wait(workspace, name, timeout=180)
    assert final["status"] == "Completed", final.get("error")
    assert steps_of(jobs.show(workspace, name)) == {"prep": ("Completed", False), "train": ("Completed", False)}


# -- links in outputs, and what interrupted writers leave ------------------------------------------

LINKS = """\
    command: >-
      python -c "import os, pathlib; out = pathlib.Path('${{outputs.model}}');
      (out / 'ckpt').mkdir(parents=True, exist_ok=True); (out / 'ckpt' / '1.pt').write_text('weights');
      os.symlink('ckpt/1.pt', out / 'best.pt'); os.symlink('checkpoint-99.pt', out / 'latest.pt');
      os.symlink('b', out / 'a'); os.symlink('a', out / 'b'); os.symlink(str(out / 'ckpt'), out / 'dir');
      OUTSIDE"
    environment: {image: python:3.11-slim}
    outputs:
      model: {type: uri_folder}
"""


def links_step(outside: str = "") -> str:
    return inline(LINKS.replace("OUTSIDE", f"os.symlink('{outside}', out / 'etc')" if outside else "None"))


def test_dangling_and_looping_links_in_an_output_are_stored_and_restored_as_links(tmp_path: Path) -> None:
    reader = inline("""\
        command: ls -l ${{inputs.model}} && cat ${{inputs.model}}/best.pt
        environment: {image: python:3.11-slim}
        inputs:
          model: ${{parent.jobs.make.outputs.model}}
        """)
    spec = pipeline_spec(tmp_path, {"make": links_step(), "use": reader})
    workspace = Workspace.locate(tmp_path / ".amllab")
    first = run(workspace, spec)
    assert first["status"] == "Completed", failures(first)
    assert steps_of(first) == {"make": ("Completed", False), "use": ("Completed", False)}
    entries = [p for p in (workspace.folder / step_cache.FOLDER).iterdir() if p.name != "index"]
    stored = {entry / "outputs" / "model" for entry in entries if (entry / "outputs" / "model").is_dir()}
    assert len(stored) == 1
    model = stored.pop()
    # Links stay links, relative, whether they resolve or not; the absolute one into the output
    # folder is made relative, so a restored copy points into its own folder.
    assert {p.name: os.readlink(p) for p in model.iterdir() if p.is_symlink()} == \
        {"best.pt": "ckpt/1.pt", "latest.pt": "checkpoint-99.pt", "a": "b", "b": "a", "dir": "ckpt"}
    second = run(workspace, spec)
    assert steps_of(second) == {"make": ("Completed", True), "use": ("Completed", True)}
    restored = Path(second["jobs"]["make"]["outputs"]["model"])
    assert os.readlink(restored / "latest.pt") == "checkpoint-99.pt" and not (restored / "latest.pt").exists()
    assert (restored / "best.pt").read_text() == "weights" and (restored / "dir" / "1.pt").is_file()


def test_a_link_out_of_the_output_folder_is_never_followed_and_the_step_says_why(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the step's\n")
    spec = pipeline_spec(tmp_path, {"make": links_step(str(outside)), "after": inline("""\
        command: echo ${{inputs.model}}
        environment: {image: python:3.11-slim}
        inputs:
          model: ${{parent.jobs.make.outputs.model}}
        """)})
    workspace = Workspace.locate(tmp_path / ".amllab")
    first = run(workspace, spec)
    # The step's outputs are as it wrote them and everything completes; it is only not reusable.
    assert first["status"] == "Completed", failures(first)
    assert steps_of(first) == {"make": ("Completed", False), "after": ("Completed", False)}
    assert os.readlink(Path(first["jobs"]["make"]["outputs"]["model"]) / "etc") == str(outside)
    cache = workspace.folder / step_cache.FOLDER
    assert not list(cache.rglob("secret.txt"))  # nothing was read through the link
    assert not list(cache.glob(".tmp-*"))
    explained = pipeline.why(workspace, workspace.run_dir(first["name"]), "make")
    assert f"not stored for reuse: output 'model'/etc is a link to {outside}, outside the output folder" in explained
    log = (workspace.run_dir(first["name"]) / contract.SYSTEM_LOG).read_text()
    assert f"step make: completed, not stored for reuse: output 'model'/etc is a link to {outside}" in log
    second = run(workspace, spec)
    assert second["status"] == "Completed" and steps_of(second)["make"] == ("Completed", False)


def _writer(tmp_path: Path, code: str) -> subprocess.Popen:
    """A real process that writes a temporary the way aml-run does, then waits (to be killed,
    or to stay alive as a concurrent writer)."""
    ready = tmp_path / f"ready-{time.monotonic_ns()}"
    script = textwrap.dedent(code) + f"\nimport pathlib, time\npathlib.Path({str(ready)!r}).write_text('')\ntime.sleep(120)\n"
    child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)},
                             preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists()
    return child


def test_a_killed_writers_cache_temporary_is_cleaned_and_a_live_writers_survives(tmp_path: Path) -> None:
    workspace = Workspace.locate(tmp_path / ".amllab")
    cache = workspace.folder / step_cache.FOLDER
    cache.mkdir(parents=True)
    build = f"""\
        import pathlib
        from runner.workspace import temporary_name
        building = pathlib.Path({str(cache)!r}) / temporary_name()
        (building / "outputs" / "model").mkdir(parents=True)
        (building / "outputs" / "model" / "half.pt").write_bytes(b"half of it")
        """
    killed, live = _writer(tmp_path, build), _writer(tmp_path, build)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        left = {p.name.split("-")[1]: p for p in cache.glob(".tmp-*")}
        assert set(left) == {str(killed.pid), str(live.pid)}
        old = cache / ".tmp-0123abcd"  # an older name without a pid, from long ago
        old.mkdir()
        os.utime(old, (time.time() - 2 * 86400,) * 2)
        shown = run(workspace, pipeline_spec(tmp_path, {"one": number_step("1")}))  # stores a step
        assert shown["status"] == "Completed", failures(shown)
        assert not left[str(killed.pid)].exists() and not old.exists()
        assert (left[str(live.pid)] / "outputs" / "model" / "half.pt").read_bytes() == b"half of it"
    finally:
        live.kill()
        live.wait(timeout=30)


def test_a_killed_registry_writers_temporary_is_cleaned_and_a_live_writers_survives(tmp_path: Path) -> None:
    folder = tmp_path / ".amllab"
    folder.mkdir()
    (tmp_path / "rows").mkdir()
    # As validator.workspace.register writes: under the registry's lock, a temporary beside it.
    half_written = f"""\
        import fcntl, os, tempfile
        lock = open({str(folder / 'workspace.yml.lock')!r}, "a")
        fcntl.flock(lock, fcntl.LOCK_EX)
        handle, temporary = tempfile.mkstemp(dir={str(folder)!r}, prefix=".workspace.yml.", suffix=".tmp")
        os.write(handle, b"version: 1\\ndata:\\n  half")
        """
    killed = _writer(tmp_path, half_written)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    stale = list(folder.glob(".workspace.yml.*.tmp"))
    assert len(stale) == 1
    live = _writer(tmp_path, half_written)  # holds the lock now, mid-write
    try:
        mid_write = set(folder.glob(".workspace.yml.*.tmp")) - set(stale)
        assert len(mid_write) == 1
        Workspace.locate(folder)  # opening the workspace cleans only when no writer holds the lock
        assert set(folder.glob(".workspace.yml.*.tmp")) == set(stale) | mid_write
    finally:
        live.kill()
        live.wait(timeout=30)
    created = aml_run("data", "create", "--name", "rows", "--version", "1", "--path", "rows",
                      "--workspace", str(folder), cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    assert not list(folder.glob(".workspace.yml.*.tmp"))
    assert Workspace(folder).registry().versions("data", "rows") == ["1"]


def test_steps_that_never_started_under_a_dead_pipeline_supervisor_are_canceled(tmp_path: Path) -> None:
    """The service cancels a pipeline's steps that never ran; the running one lost its runtime
    and fails. Seen from the pipeline, from a step, and in the step list alike."""
    spec = pipeline_spec(tmp_path, {"slow": step(300), "after": step(0, reads="slow"),
                                    "last": step(0, reads="after")})
    workspace = Workspace.locate(tmp_path / ".amllab")
    name = jobs.submit(spec, workspace)
    slow = workspace.run_dir(name) / pipeline.STEPS / "slow"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not ((slow / status.FILE).is_file()
                                               and status.read(slow).get("status") == "Running"):
        time.sleep(0.05)
    supervisor = status.read(workspace.run_dir(name))["supervisor"]["pid"]
    os.kill(supervisor, signal.SIGKILL)
    # Killed, it stays a zombie of this process (it started it) until reaped: gone all the same.
    while time.monotonic() < deadline and not pid_gone(supervisor):
        time.sleep(0.05)
    # Looked at through a step first: the pipeline ends, and every step with it.
    assert jobs.show(workspace, pipeline.step_job_name(name, "slow"))["status"] == "Failed"
    shown = jobs.show(workspace, name)
    assert shown["status"] == "Failed" and shown["error"]["code"] == "RunnerDied"
    assert {step: node["status"] for step, node in shown["jobs"].items()} == \
        {"slow": "Failed", "after": "Canceled", "last": "Canceled"}
    assert shown["jobs"]["after"]["error"]["code"] == "NotRun"
    assert "never started" in shown["jobs"]["after"]["error"]["message"]
    listed = {row["name"]: row["status"] for row in jobs.list_jobs(workspace, name)}
    assert listed == {node["name"]: node["status"] for node in shown["jobs"].values()}
