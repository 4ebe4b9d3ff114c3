"""`aml-run` as a user runs it: real processes, a real workspace in a temporary folder, MLflow's
real SQLite store (and a real `mlflow server` on loopback), real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from amlrun import (aml_run, default_signals, group_gone, lab, nothing_ran, pid_gone, submit,  # noqa: F401
                    wait_for, write_job)
from conftest import BIN
from runner import jobs, status
from runner.workspace import Workspace


# -- refusals before anything runs ------------------------------------------------------------

def test_unknown_asset_is_refused_with_the_command_that_registers_it(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", """\
        command: echo ${{inputs.data}}
        inputs:
          data: {type: uri_folder, path: azureml:churn-raw:3}
        environment: azureml:sklearn-train:2
        compute: azureml:cpu-cluster
        """)
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode == 1
    assert "AML805" in result.stderr
    assert "aml-run data create --name churn-raw --version 3" in result.stderr
    assert "aml-run environment create --name sklearn-train --version 2" in result.stderr
    assert "aml-run compute create --name cpu-cluster" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / ".amllab").exists()


def test_missing_input_file_is_refused_before_anything_runs(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", """\
        command: cat ${{inputs.table}}
        inputs:
          table: {type: uri_file, path: ./data/missing.csv}
        """)
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    # Lint only warns (AML806: data is often fetched before submission); the runner, which is
    # submitting now, refuses the missing file itself.
    assert result.returncode == 2, result.stdout
    assert f"{spec}:4:33: AML806 warning: input 'table': local path './data/missing.csv' does not " \
           "exist yet" in result.stderr
    assert "aml-run: error: input 'table': ./data/missing.csv (resolved to " in result.stderr
    assert "does not exist (local path); create it, or fix the path" in result.stderr
    assert "Traceback" not in result.stderr
    assert nothing_ran(tmp_path)


def test_a_registered_asset_whose_files_are_gone_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "rows"
    data.mkdir()
    created = aml_run("data", "create", "--name", "rows", "--version", "1", "--path", str(data), cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    data.rmdir()
    spec = write_job(tmp_path, "job", """\
        command: ls ${{inputs.rows}}
        inputs:
          rows: {type: uri_folder, path: azureml:rows:1}
        """)
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert result.stderr == f"aml-run: error: input 'rows': azureml:rows:1 (resolved to {data}) does not exist " \
                            "(data asset rows:1); create it, or fix the path\n"
    assert nothing_ran(tmp_path)


def test_an_input_given_as_an_arm_id_is_refused_with_the_local_form(tmp_path: Path) -> None:
    # Valid for the service (azure-ai-ml passes the ARM id on), unreachable from here.
    arm = ("/subscriptions/0000/resourceGroups/rg/providers/Microsoft.MachineLearningServices/"
           "workspaces/ws/data/rows/versions/3")
    spec = write_job(tmp_path, "job", f"""\
        command: ls ${{{{inputs.rows}}}}
        inputs:
          rows: {{type: uri_folder, path: {arm}}}
        """)
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert result.stderr == (f"aml-run: error: input 'rows': {arm} is the ARM id of an asset in an Azure ML "
                             "workspace, which a local workspace cannot reach; register a local copy with "
                             "`aml-run data create` and write `path: azureml:rows:3`\n")
    assert nothing_ran(tmp_path)


def test_a_spec_with_lint_errors_never_runs(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", "command: echo hi\ncomptue: local\n")
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode == 1
    assert f"{spec}:3:1: AML101" in result.stderr
    assert "not submitted" in result.stderr
    assert nothing_ran(tmp_path)


def test_a_folder_asset_given_to_a_file_input_says_which_type_to_declare(tmp_path: Path) -> None:
    (tmp_path / "rows").mkdir()
    assert aml_run("data", "create", "--name", "rows", "--version", "2", "--path", "rows",
                   cwd=tmp_path).returncode == 0
    spec = write_job(tmp_path, "job", """\
        command: cat ${{inputs.data}}
        inputs:
          data: {type: uri_file, path: azureml:rows:2}
        """)
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "input 'data' is a uri_file but" in result.stderr and "declare it `type: uri_folder`" in result.stderr


# -- outcomes ---------------------------------------------------------------------------------

def test_failing_script_is_failed_and_its_log_is_kept(lab: Path) -> None:
    spec = write_job(lab / "fail", "job", """\
        code: src
        command: python main.py
        """, script="""\
        print("about to fail")
        raise SystemExit("boom: the data is wrong")
        """)
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=lab)
    assert result.returncode == 1
    assert "about to fail" in result.stdout and "Status: Failed" in result.stdout
    workspace = Workspace.locate(lab / ".amllab")
    name = result.stdout.split("RunId: ", 1)[1].split()[0]
    shown = jobs.show(workspace, name)
    assert shown["status"] == "Failed" and shown["exit_code"] == 1
    assert shown["error"]["code"] == "UserError" and shown["outputs_complete"] is False
    log = Path(shown["log_path"]).read_text()
    assert "about to fail" in log and "boom: the data is wrong" in log


def test_timeout_fails_the_job_and_stops_its_processes(lab: Path) -> None:
    spec = write_job(lab / "slow", "job", """\
        command: sleep 300 & sleep 300; wait
        limits:
          timeout: 2
        """)
    name = submit(lab, spec)
    workspace = Workspace.locate(lab / ".amllab")
    final = jobs.wait(workspace, name, timeout=60)
    assert final["status"] == "Failed"
    assert final["error"]["code"] == "JobTimeout" and "limits.timeout" in final["error"]["message"]
    assert group_gone(final["pgid"])


def test_cancel_stops_the_whole_process_group_and_escapees(lab: Path) -> None:
    spec = write_job(lab / "cancel", "job", """\
        command: >-
          (sleep 300 & echo $! > child.pid; wait) &
          setsid sleep 300 & echo $! > escaped.pid;
          sleep 300
        """)
    workspace = Workspace.locate(lab / ".amllab")
    name = submit(lab, spec)
    running = wait_for(workspace, name, "Running")
    wd = workspace.run_dir(name) / "wd"
    deadline = time.monotonic() + 30
    while not ((wd / "child.pid").is_file() and (wd / "escaped.pid").is_file()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    child, escaped = (int((wd / f).read_text()) for f in ("child.pid", "escaped.pid"))
    result = aml_run("job", "cancel", name, "-o", "json", cwd=lab)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "Canceled"
    pgid = status.read(workspace.run_dir(name))["pgid"]
    assert pgid == running.get("pgid", pgid)
    assert group_gone(pgid)
    assert pid_gone(child)
    assert pid_gone(escaped), "a process that left the job's group with setsid survived the cancel"


def test_ctrl_c_while_streaming_cancels_the_job(lab: Path) -> None:
    spec = write_job(lab / "interrupt", "job", "command: echo started; sleep 300\n")
    stream = subprocess.Popen([str(BIN / "aml-run"), "job", "create", "--file", str(spec), "--stream"],
                              cwd=lab, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True, preexec_fn=default_signals)
    lines = []
    for line in stream.stdout:
        lines.append(line)
        if line.strip() == "started":
            break
    stream.send_signal(signal.SIGINT)
    out, err = stream.communicate(timeout=60)
    assert stream.returncode == 1, err
    assert "Status: Canceled" in out
    name = "".join(lines).split("RunId: ", 1)[1].split()[0]
    record = status.read(Workspace.locate(lab / ".amllab").run_dir(name))
    assert record["status"] == "Canceled" and group_gone(record["pgid"])


def test_a_killed_supervisor_is_noticed_and_its_job_stopped(lab: Path) -> None:
    spec = write_job(lab / "orphan", "job", """\
        command: >-
          setsid sleep 300 & echo $! > escaped.pid;
          python -c "import mlflow; mlflow.log_metric('started', 1)"; sleep 300
        """)
    workspace = Workspace.locate(lab / ".amllab")
    name = submit(lab, spec)
    running = wait_for(workspace, name, "Running")
    wd = workspace.run_dir(name) / "wd"
    deadline = time.monotonic() + 60
    while not ((wd / "escaped.pid").is_file() and jobs.show(workspace, name)["metrics"]) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    running = status.read(workspace.run_dir(name))
    escaped = int((wd / "escaped.pid").read_text())
    os.kill(running["supervisor"]["pid"], signal.SIGKILL)
    time.sleep(0.3)
    shown = jobs.show(workspace, name)
    assert shown["status"] == "Failed" and shown["error"]["code"] == "RunnerDied"
    # Its processes are stopped, even the one that left the group (found by the job's marker
    # variable), and its MLflow run is closed as FAILED.
    assert group_gone(running["pgid"])
    assert pid_gone(escaped)
    from mlflow import MlflowClient

    run = MlflowClient(tracking_uri=shown["mlflow"]["tracking_uri"]).get_run(shown["mlflow"]["run_id"])
    assert run.info.status == "FAILED"


# -- what the job sees ------------------------------------------------------------------------

ECHO_ARGS = """\
import json, os, sys
os.makedirs("outputs", exist_ok=True)
json.dump({"argv": sys.argv[1:], "env": {k: v for k, v in os.environ.items()
          if k.startswith(("AZUREML_", "MLFLOW_", "GREETING"))}},
          open("outputs/seen.json", "w"))
"""


def test_a_string_input_cannot_inject_a_command(lab: Path) -> None:
    spec = write_job(lab / "inject", "job", """\
        code: src
        command: python main.py --note ${{inputs.note}} "${{inputs.note}}" '${{inputs.note}}'
        inputs:
          note: "x'; touch PWNED; echo $(touch PWNED2) `touch PWNED3` \\"; touch PWNED4 #"
        """, script=ECHO_ARGS)
    name = submit(lab, spec)
    workspace = Workspace.locate(lab / ".amllab")
    assert jobs.wait(workspace, name, timeout=60)["status"] == "Completed"
    wd = workspace.run_dir(name) / "wd"
    assert not [p.name for p in wd.iterdir() if p.name.startswith("PWNED")]
    assert not [p.name for p in lab.iterdir() if p.name.startswith("PWNED")]
    seen = json.loads((wd / "outputs" / "seen.json").read_text())
    note = "x'; touch PWNED; echo $(touch PWNED2) `touch PWNED3` \"; touch PWNED4 #"
    assert seen["argv"] == ["--note", note, note, note]


def test_inputs_overrides_and_environment_variables(lab: Path) -> None:
    spec = write_job(lab / "env", "job", """\
        code: src
        command: python main.py ${{inputs.lr}} ${{inputs.flag}}
        experiment_name: env-check
        inputs:
          lr: 0.01
          flag: true
        environment_variables:
          GREETING: hello
        """, script=ECHO_ARGS)
    name = submit(lab, spec, "--set", "inputs.lr=0.5")
    workspace = Workspace.locate(lab / ".amllab")
    assert jobs.wait(workspace, name, timeout=60)["status"] == "Completed"
    seen = json.loads((workspace.run_dir(name) / "wd" / "outputs" / "seen.json").read_text())
    # Literals are substituted as Python's str() of the YAML value, like the service sends them.
    assert seen["argv"] == ["0.5", "True"]
    env = seen["env"]
    shown = jobs.show(workspace, name)
    assert env["MLFLOW_RUN_ID"] == shown["mlflow"]["run_id"]
    assert env["MLFLOW_EXPERIMENT_ID"] == shown["mlflow"]["experiment_id"]
    assert env["MLFLOW_TRACKING_URI"] == f"sqlite:///{workspace.folder / 'mlflow.db'}"
    assert env["AZUREML_RUN_ID"] == name and env["AZUREML_ARM_PROJECT_NAME"] == "env-check"
    assert env["GREETING"] == "hello"
    assert shown["inputs"] == {"lr": "0.5", "flag": "True"}
    assert shown["outputs_complete"] is True


def test_download_mode_is_a_read_only_copy_and_named_outputs_register(lab: Path) -> None:
    data = lab / "modes" / "data"
    data.mkdir(parents=True)
    (data / "rows.csv").write_text("a,b\n1,2\n")
    spec = write_job(lab / "modes", "job", """\
        code: src
        command: python main.py ${{inputs.copy}} ${{inputs.link}} ${{outputs.result}}
        inputs:
          copy: {type: uri_folder, path: ./data, mode: download}
          link: {type: uri_file, path: ./data/rows.csv}
        outputs:
          result: {type: uri_folder, name: scored-rows}
        """, script="""\
        import os, pathlib, sys
        copy, link, result = map(pathlib.Path, sys.argv[1:])
        assert (copy / "rows.csv").read_text() == "a,b\\n1,2\\n"
        try:
            (copy / "rows.csv").write_text("changed")
        except PermissionError:
            print("read-only, as a download input should be")
        assert link.name == "rows.csv" and link.read_text().startswith("a,b")
        (result / "scored.csv").write_text("a,b,score\\n1,2,0.5\\n")
        """)
    name = submit(lab, spec)
    workspace = Workspace.locate(lab / ".amllab")
    final = jobs.wait(workspace, name, timeout=60)
    log = (workspace.run_dir(name) / "user_logs" / "std_log.txt").read_text()
    assert final["status"] == "Completed", log
    assert "read-only" in log or os.geteuid() == 0
    assert (data / "rows.csv").read_text() == "a,b\n1,2\n"
    assert final["registered_outputs"] == {"result": "scored-rows:1"}
    listed = aml_run("data", "show", "--name", "scored-rows", "-o", "json", cwd=lab)
    assert Path(json.loads(listed.stdout)["path"], "scored.csv").is_file()
    target = lab / "downloaded"
    result = aml_run("job", "download", name, "--all", "--download-path", str(target), cwd=lab)
    assert result.returncode == 0, result.stderr
    assert (target / "named-outputs" / "result" / "scored.csv").is_file()
    assert (target / "artifacts" / "user_logs" / "std_log.txt").is_file()


def test_a_requirement_that_cannot_be_installed_fails_the_job_at_preparing(lab: Path) -> None:
    folder = lab / "needs"
    folder.mkdir()
    (folder / "conda.yml").write_text("dependencies:\n  - pip:\n      - surely-not-installed-pkg==1.0\n"
                                      "      - pyyaml>=1\n")
    (folder / "env.yml").write_text("name: needs-env\nversion: 1\nconda_file: conda.yml\n")
    assert aml_run("environment", "create", "--file", str(folder / "env.yml"), cwd=lab).returncode == 0
    spec = write_job(folder, "job", "command: echo ran\nenvironment: azureml:needs-env:1\n")
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=lab)
    assert result.returncode == 1, result.stdout + result.stderr
    error = [line for line in result.stdout.splitlines() if line.startswith("Error: ")]
    assert error and "environment needs-env:1" in error[0] and "surely-not-installed-pkg" in error[0], result.stdout
    assert "PreparationError" in result.stdout and "state: Running" not in result.stdout
    assert "\nran\n" not in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    # Nothing half-made is left to be reused.
    from runner.envbuild import envs_dir
    assert not [p for p in envs_dir().glob(".staging-*")]


# -- concurrency and compute ----------------------------------------------------------------

METRIC_SCRIPT = """\
import sys, mlflow
mlflow.log_metric("score", float(sys.argv[1]))
"""


def test_two_jobs_at_once_in_one_workspace(lab: Path) -> None:
    spec = write_job(lab / "pair", "job", """\
        code: src
        command: python main.py ${{inputs.value}}
        experiment_name: pair
        inputs:
          value: 1
        """, script=METRIC_SCRIPT)
    first = submit(lab, spec, "--set", "inputs.value=0.25")
    second = submit(lab, spec, "--set", "inputs.value=0.75")
    workspace = Workspace.locate(lab / ".amllab")
    records = [jobs.wait(workspace, name, timeout=120) for name in (first, second)]
    assert [r["status"] for r in records] == ["Completed", "Completed"]
    assert [r["metrics"]["score"] for r in records] == [0.25, 0.75]
    assert records[0]["mlflow"]["run_id"] != records[1]["mlflow"]["run_id"]
    # Both ran at once: each started before the other ended.
    assert records[0]["start_time"] < records[1]["end_time"] and records[1]["start_time"] < records[0]["end_time"]


def test_a_compute_runs_at_most_max_instances_jobs_and_queues_the_rest(tmp_path: Path) -> None:
    assert aml_run("compute", "create", "--name", "tiny", "--max-instances", "1", cwd=tmp_path).returncode == 0
    spec = write_job(tmp_path, "job", "command: sleep 1\ncompute: azureml:tiny\n")
    names = [submit(tmp_path, spec) for _ in range(2)]
    workspace = Workspace.locate(tmp_path / ".amllab")
    first, second = sorted((jobs.wait(workspace, n, timeout=120) for n in names), key=lambda r: r["start_time"])
    assert first["status"] == second["status"] == "Completed"
    assert second["start_time"] >= first["end_time"]


# -- MLflow -------------------------------------------------------------------------------------

def test_a_job_against_a_real_mlflow_server_on_loopback(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = tmp_path / "server"
    store.mkdir()
    server = subprocess.Popen(
        [str(BIN / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--backend-store-uri", f"sqlite:///{store / 'server.db'}", "--artifacts-destination", str(store / "artifacts")],
        cwd=store, stdout=subprocess.DEVNULL, stderr=open(store / "server.log", "w"), start_new_session=True,
        # MLflow 3's server also starts a job-execution consumer (ten huey workers) that this
        # test never uses, and that cost more CPU than the rest of the file.
        env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"})
    uri = f"http://127.0.0.1:{port}"
    try:
        import urllib.request

        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{uri}/health", timeout=2)
                break
            except OSError:
                assert server.poll() is None, (store / "server.log").read_text()[-2000:]
                assert time.monotonic() < deadline, "mlflow server did not start"
                time.sleep(0.3)
        spec = write_job(tmp_path, "job", """\
            code: src
            command: python main.py 0.9 && mkdir -p outputs && echo weights > outputs/model.txt
            experiment_name: shared-server
            """, script=METRIC_SCRIPT)
        env = {"MLFLOW_TRACKING_URI": uri}
        result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        name = result.stdout.split("RunId: ", 1)[1].split()[0]
        shown = json.loads(aml_run("job", "show", name, "-o", "json", cwd=tmp_path, env=env).stdout)
        assert shown["mlflow"]["tracking_uri"] == uri and shown["metrics"] == {"score": 0.9}
        from mlflow import MlflowClient

        client = MlflowClient(tracking_uri=uri)
        run = client.get_run(shown["mlflow"]["run_id"])
        assert run.data.metrics == {"score": 0.9}
        assert run.info.status == "FINISHED"
        assert client.get_experiment(run.info.experiment_id).name == "shared-server"
        assert [a.path for a in client.list_artifacts(run.info.run_id, "outputs")] == ["outputs/model.txt"]
        assert not (tmp_path / ".amllab" / "mlflow.db").exists()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_the_tracking_agent_and_in_process_tracking_agree(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", """\
        code: src
        command: python main.py 0.5
        """, script=METRIC_SCRIPT)
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path,
                     env={"AMLLAB_TRACKING_AGENT": "0"})
    assert result.returncode == 0, result.stdout
    name = result.stdout.split("RunId: ", 1)[1].split()[0]
    shown = json.loads(aml_run("job", "show", name, "-o", "json", cwd=tmp_path,
                               env={"AMLLAB_TRACKING_AGENT": "0"}).stdout)
    assert shown["metrics"] == {"score": 0.5}


# -- the CLI surface ----------------------------------------------------------------------------

def test_every_verb_speaks_json_yaml_and_table(lab: Path) -> None:
    assert aml_run("compute", "create", "--name", "cpu-cluster", cwd=lab).returncode == 0
    for output in ("json", "yaml", "table"):
        result = aml_run("compute", "list", "-o", output, cwd=lab)
        assert result.returncode == 0 and "cpu-cluster" in result.stdout
        result = aml_run("job", "list", "-o", output, cwd=lab)
        assert result.returncode == 0
    table = aml_run("compute", "show", "--name", "cpu-cluster", cwd=lab).stdout.splitlines()
    assert table[0].split() == ["Name", "Type", "Max", "Instances"] and set(table[1]) == {"-", " "}


def test_unknown_job_suggests_the_closest_name(lab: Path) -> None:
    spec = write_job(lab / "named", "job", "command: echo hi\nname: quiet_moon_abcd1234\n")
    submit(lab, spec)
    result = aml_run("job", "show", "quiet_moon_abcd1235", cwd=lab)
    assert result.returncode == 2 and "did you mean quiet_moon_abcd1234?" in result.stderr
    again = aml_run("job", "create", "--file", str(spec), cwd=lab)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_runner_import_stays_light() -> None:
    code = "import sys, runner, runner.cli, runner.jobs; print(sorted(m for m in ('mlflow', 'torch', 'textual') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


def test_runner_public_api_is_exactly_all() -> None:
    import runner

    assert sorted(runner.__all__) == runner.__all__
    for name in runner.__all__:
        assert getattr(runner, name) is not None
    with pytest.raises(AttributeError):
        runner.not_a_public_name  # noqa: B018


def test_a_job_created_beside_its_spec_is_found_from_the_parent_folder(tmp_path: Path) -> None:
    spec = write_job(tmp_path / "labs" / "one", "job", "command: echo hi\n")
    result = aml_run("job", "create", "--file", "labs/one/job.yml", "--stream", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (spec.parent / ".amllab").is_dir() and not (tmp_path / ".amllab").exists()
    name = result.stdout.split("RunId: ", 1)[1].split()[0]
    shown = aml_run("job", "show", name, "-o", "json", cwd=tmp_path)
    assert json.loads(shown.stdout)["status"] == "Completed"
    listing = aml_run("job", "list", cwd=tmp_path)
    assert listing.returncode == 2 and str(spec.parent / ".amllab") in listing.stderr


def test_http_inputs_are_downloaded_once_into_the_cache_and_offline_is_a_clear_failure(lab: Path) -> None:
    import functools
    import http.server
    import threading

    served = lab / "served"
    served.mkdir()
    (served / "rows.csv").write_text("a,b\n1,2\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/rows.csv"
    try:
        spec = write_job(lab / "http", "job", f"""\
            command: cat ${{{{inputs.rows}}}}
            inputs:
              rows: {{type: uri_file, path: "{url}"}}
            """)
        result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=lab)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "a,b\n1,2\n" in result.stdout
        cached = list((lab / ".amllab" / "cache" / "downloads").glob("*/rows.csv"))
        assert len(cached) == 1
    finally:
        server.shutdown()
        server.server_close()  # closed, so the next request is refused at once
    offline = write_job(lab / "offline", "job", f"""\
        command: cat ${{{{inputs.rows}}}}
        inputs:
          rows: {{type: uri_file, path: "{url.replace('rows.csv', 'other.csv')}"}}
        """)
    result = aml_run("job", "create", "--file", str(offline), "--stream", cwd=lab)
    assert result.returncode == 1
    assert "Status: Failed" in result.stdout and "cannot download http://127.0.0.1:" in result.stdout
    assert "Offline?" in result.stdout and "Traceback" not in result.stdout


def test_a_registered_environment_can_name_a_virtual_environment(lab: Path) -> None:
    venv = lab / "other-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    folder = lab / "venv-env"
    folder.mkdir()
    (folder / "conda.yml").write_text("dependencies:\n  - pip:\n      - pyyaml\n")
    (folder / "env.yml").write_text("name: bare-venv\nversion: '1'\nconda_file: conda.yml\n")
    created = aml_run("environment", "create", "--file", str(folder / "env.yml"), "--python", str(venv),
                      "-o", "json", cwd=lab)
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["python"] == str(venv)
    spec = write_job(folder, "job", """\
        command: python -c "import sys; print('prefix', sys.prefix)"
        environment: azureml:bare-venv@latest
        """)
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=lab)
    assert result.returncode == 0, result.stdout
    assert f"prefix {venv}" in result.stdout
    # The bare venv has none of the conda file's packages, and the warning says so.
    assert "pyyaml (not installed)" in result.stdout


def test_data_and_component_registration_from_files(tmp_path: Path) -> None:
    (tmp_path / "rows").mkdir()
    (tmp_path / "data.yml").write_text("$schema: https://azuremlschemas.azureedge.net/latest/data.schema.json\n"
                                       "name: rows\nversion: '4'\ntype: uri_folder\npath: ./rows\n")
    created = aml_run("data", "create", "--file", "data.yml", "-o", "json", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout) == {"name": "rows", "version": "4", "type": "uri_folder",
                                          "path": str(tmp_path / "rows")}
    again = aml_run("data", "create", "--name", "rows", "--path", "rows", "-o", "json", cwd=tmp_path)
    assert json.loads(again.stdout)["version"] == "5"  # no version: the next one, like the service
    latest = aml_run("data", "show", "--name", "rows", "--label", "latest", "-o", "json", cwd=tmp_path)
    assert json.loads(latest.stdout)["version"] == "5"
    (tmp_path / "component.yml").write_text(textwrap.dedent("""\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        name: echo_rows
        version: 1
        type: command
        inputs:
          rows: {type: uri_folder}
        command: ls ${{inputs.rows}}
        environment:
          image: python:3.11-slim
        """))
    component = aml_run("component", "create", "--file", "component.yml", "-o", "json", cwd=tmp_path)
    assert component.returncode == 0, component.stderr
    assert json.loads(component.stdout)["name"] == "echo_rows"
    as_job = aml_run("job", "create", "--file", "component.yml", cwd=tmp_path)
    assert as_job.returncode == 2 and "is a component, not a job" in as_job.stderr
    missing = aml_run("data", "create", "--name", "gone", "--path", "nowhere", cwd=tmp_path)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_show_reads_metrics_live_while_running_and_the_snapshot_honours_amlignore(lab: Path) -> None:
    spec = write_job(lab / "live", "job", """\
        code: src
        command: python main.py
        """, script="""\
        import pathlib, time, mlflow
        mlflow.log_metric("loss", 0.5)
        pathlib.Path("logged").touch()
        time.sleep(300)
        """)
    (lab / "live" / "src" / ".amlignore").write_text("secrets.env\n")
    (lab / "live" / "src" / "secrets.env").write_text("TOKEN=x\n")
    workspace = Workspace.locate(lab / ".amllab")
    name = submit(lab, spec)
    wd = workspace.run_dir(name) / "wd"
    deadline = time.monotonic() + 60
    while not (wd / "logged").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    shown = json.loads(aml_run("job", "show", name, "-o", "json", cwd=lab).stdout)
    assert shown["status"] == "Running" and shown["metrics"] == {"loss": 0.5}
    assert (wd / "main.py").is_file() and not (wd / "secrets.env").exists()
    assert jobs.cancel(workspace, name)["status"] == "Canceled"
    from mlflow import MlflowClient

    run = MlflowClient(tracking_uri=shown["mlflow"]["tracking_uri"]).get_run(shown["mlflow"]["run_id"])
    assert run.info.status == "KILLED" and run.data.metrics == {"loss": 0.5}


def test_cancel_right_after_submission(lab: Path) -> None:
    """Cancelled before the supervisor has even set up its signal handlers: still Canceled,
    promptly, and nothing runs."""
    spec = write_job(lab / "early", "job", "command: touch ran; sleep 300\n")
    workspace = Workspace.locate(lab / ".amllab")
    name = jobs.submit(spec, workspace)
    final = jobs.cancel(workspace, name)
    assert final["status"] == "Canceled"
    if final.get("pgid"):  # it got as far as starting the command: that is stopped too
        assert group_gone(final["pgid"])


@pytest.mark.parametrize("name", ["../escape", "a/b", "-dash-first", "white space"])
def test_job_names_cannot_leave_the_runs_folder(lab: Path, name: str) -> None:
    spec = write_job(lab / "names", "job", "command: echo hi\n")
    result = aml_run("job", "create", "--file", str(spec), f"--name={name}", cwd=lab)
    assert result.returncode == 2 and "is not valid" in result.stderr
    assert not (lab / ".amllab" / "escape").exists()


def test_a_relative_tracking_uri_means_the_submitting_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.workspace import absolute_tracking_uri

    monkeypatch.chdir(tmp_path)
    assert absolute_tracking_uri("sqlite:///mlflow.db") == f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert absolute_tracking_uri("sqlite:////abs/x.db") == "sqlite:////abs/x.db"
    assert absolute_tracking_uri("./mlruns") == (tmp_path / "mlruns").as_uri()
    assert absolute_tracking_uri("http://127.0.0.1:5000") == "http://127.0.0.1:5000"


def test_the_tracking_agent_exits_when_idle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.tracking import Tracking

    monkeypatch.setenv("AMLLAB_TRACKING_IDLE", "1")
    tracking = Tracking(tmp_path, f"sqlite:///{tmp_path / 'mlflow.db'}", tmp_path / "mlruns")
    assert tracking.call("ping") == "pong"
    assert tracking.agent_pid is not None
    run = tracking.start_run("idle-check", "one", {})
    tracking.end_run(run["run_id"], "FINISHED")
    deadline = time.monotonic() + 30
    while not pid_gone(tracking.agent_pid) and time.monotonic() < deadline:
        os.waitpid(tracking.agent_pid, os.WNOHANG)  # ours: reap it once it exits
        time.sleep(0.1)
    assert pid_gone(tracking.agent_pid)


# -- found in review: each of these once went wrong -----------------------------------------

def test_a_workspace_deleted_and_made_again_gets_a_fresh_tracking_agent(tmp_path: Path) -> None:
    """rm -rf .amllab between two jobs: the first job's tracking agent is still up (it idles
    out later) with the deleted database open; the second job must not write into it."""
    import shutil

    spec = write_job(tmp_path, "job", "command: python -c \"import mlflow; mlflow.log_metric('m', 1)\"\n")
    for attempt in range(2):
        result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path,
                         env={"AMLLAB_TRACKING_IDLE": "120"})
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr
        assert "Status: Completed" in result.stdout
        if attempt == 0:
            shutil.rmtree(tmp_path / ".amllab")


def test_what_cannot_run_distributed_here_is_refused_rather_than_run_as_one_process(tmp_path: Path) -> None:
    for name, body, words in (
            ("nodes", "resources: {instance_count: 2}", "has no `distribution`"),
            ("ray", "distribution: {type: ray}", "cannot run here")):
        spec = write_job(tmp_path, name, f"command: echo RANK=$RANK\n{body}\n")
        result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
        assert result.returncode == 2 and words in result.stderr, result.stderr
    assert nothing_ran(tmp_path)


def test_value_form_inputs_and_lint_warnings_at_submission(lab: Path) -> None:
    spec = write_job(lab / "value", "job", """\
        command: echo "lr=${{inputs.lr}} flag=$FLAG"
        inputs:
          lr: {value: 0.01}
        environment_variables: {FLAG: yes}
        """)
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=lab)
    assert result.returncode == 0, result.stderr
    assert "lr=0.01 flag=True" in result.stdout
    assert "AML213 warning" in result.stderr and "Found 0 errors and 1 warning" in result.stderr


@pytest.mark.parametrize("variables", ['{"A=B": x}', '{"1ST": x}'])
def test_invalid_environment_variable_names_are_refused_at_submission(tmp_path: Path, variables: str) -> None:
    spec = write_job(tmp_path, "job", f"command: echo hi\nenvironment_variables: {variables}\n")
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode in (1, 2) and "Traceback" not in result.stderr
    assert "environment variable" in result.stderr and nothing_ran(tmp_path)


def test_an_input_without_value_is_refused_at_submission(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", "command: echo ${{inputs.lr}}\ninputs:\n  lr: {value: null}\n")
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode in (1, 2) and "Traceback" not in result.stderr
    assert nothing_ran(tmp_path)


def test_system_paths_the_os_refuses_are_one_line(lab: Path) -> None:
    spec = write_job(lab / "oneline", "job", "command: echo hi\n")
    name = submit(lab, spec)
    jobs.wait(Workspace.locate(lab / ".amllab"), name, timeout=60)
    (lab / "a-file").write_text("")
    result = aml_run("job", "download", name, "--download-path", str(lab / "a-file"), cwd=lab)
    assert result.returncode == 2 and result.stderr.startswith("aml-run: error: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_multi_line_commands_stream_as_runner_lines_and_a_last_line_without_newline_shows(lab: Path) -> None:
    spec = write_job(lab / "multiline", "job", """\
        command: |
          echo first
          printf 'no newline at the end'
        """)
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=lab)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "[aml-run] printf 'no newline at the end'" in lines  # the command's second line, marked
    assert lines.index("no newline at the end") < lines.index("[aml-run] state: Finalizing")


def test_a_damaged_status_file_does_not_hide_the_other_jobs(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", "command: echo hi\n")
    names = [submit(tmp_path, spec) for _ in range(2)]
    workspace = Workspace.locate(tmp_path / ".amllab")
    for name in names:
        jobs.wait(workspace, name, timeout=60)
    (workspace.run_dir(names[0]) / "status.json").write_text('{"status": "Compl')
    rows = json.loads(aml_run("job", "list", "-o", "json", cwd=tmp_path).stdout)
    assert {row["name"]: row["status"] for row in rows} == {names[0]: "Damaged", names[1]: "Completed"}
    shown = aml_run("job", "show", names[0], cwd=tmp_path)
    assert shown.returncode == 2 and "is damaged" in shown.stderr


def test_an_unreachable_mlflow_server_fails_the_job_promptly(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = write_job(tmp_path, "job", "command: echo hi\n")
    # Without the reachability check MLflow's client retries for minutes: the CLI would run
    # past this timeout instead of printing the message.
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path,
                     env={"MLFLOW_TRACKING_URI": f"http://127.0.0.1:{port}"}, timeout=120)
    assert result.returncode == 1
    assert f"the MLflow tracking server http://127.0.0.1:{port} (MLFLOW_TRACKING_URI) is not reachable" in result.stdout


def test_registered_versions_do_not_change(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
    assert aml_run("data", "create", "--name", "d", "--version", "1", "--path", "a", cwd=tmp_path).returncode == 0
    same = aml_run("data", "create", "--name", "d", "--version", "1", "--path", "a", cwd=tmp_path)
    assert same.returncode == 0  # the same thing again: a no-op
    other = aml_run("data", "create", "--name", "d", "--version", "1", "--path", "b", cwd=tmp_path)
    assert other.returncode == 2 and "already registered with other contents" in other.stderr
    assert "register version 2" in other.stderr


def test_cancel_does_not_wait_for_a_stuck_preparation(lab: Path) -> None:
    import socket

    silent = socket.socket()  # accepts connections (the backlog) and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/rows.csv"
        spec = write_job(lab / "stuck", "job", f"""\
            command: cat ${{{{inputs.rows}}}}
            inputs:
              rows: {{type: uri_file, path: "{url}"}}
            """)
        workspace = Workspace.locate(lab / ".amllab")
        name = submit(lab, spec)
        wait_for(workspace, name, "Preparing")
        time.sleep(1.0)  # well inside the download
        final = jobs.cancel(workspace, name)
        assert final["status"] == "Canceled"
        # The supervisor itself recorded it, from inside the stuck download; had it waited, job
        # cancel would have killed it and recorded the state on its behalf, without this line.
        assert "canceled while preparing" in (workspace.run_dir(name) / "system_logs" / "amllab.log").read_text()
    finally:
        silent.close()
