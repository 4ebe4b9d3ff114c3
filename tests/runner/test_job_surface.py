"""What a real job's script sees and what aml-run says about it: the AZURE_ML_INPUT_/OUTPUT_
variables, the end of the log in a failed job's error, and what Preparing says of image,
build, services and identity. Real processes in a real workspace."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

from amlrun import aml_run, lab, submit, write_job  # noqa: F401
from runner import jobs
from runner.workspace import Workspace

DUMP_ENV = """\
    import json, os, pathlib
    pathlib.Path("outputs").mkdir(exist_ok=True)
    seen = {k: v for k, v in os.environ.items() if k.startswith("AZURE_ML_")}
    pathlib.Path("outputs/seen.json").write_text(json.dumps(seen))
    """


def test_a_job_sees_its_data_inputs_and_outputs_as_azure_ml_variables(lab: Path) -> None:
    folder = lab / "bindings"
    (folder / "rows").mkdir(parents=True)
    (folder / "rows" / "a.csv").write_text("x\n1\n")
    spec = write_job(folder, "job", """\
        code: src
        command: python main.py --dataset-dir $AZURE_ML_INPUT_dataset
        inputs:
          dataset: {type: uri_folder, path: ./rows}
          epochs: 3
        outputs:
          checkpoints: {type: uri_folder}
        """, script=DUMP_ENV)
    name = submit(lab, spec)
    workspace = Workspace.locate(lab / ".amllab")
    record = jobs.wait(workspace, name, timeout=60)
    assert record["status"] == "Completed", record
    run_dir = workspace.run_dir(name)
    seen = json.loads((run_dir / "wd" / "outputs" / "seen.json").read_text())
    dataset = Path(seen["AZURE_ML_INPUT_dataset"])
    assert (dataset / "a.csv").read_text() == "x\n1\n"
    assert seen["AZURE_ML_INPUT_DATASET"] == seen["AZURE_ML_INPUT_dataset"]
    assert Path(seen["AZURE_ML_OUTPUT_checkpoints"]) == Path(seen["AZURE_ML_OUTPUT_CHECKPOINTS"])
    assert Path(seen["AZURE_ML_OUTPUT_checkpoints"]).is_dir()
    # A literal input has no such variable in any public example: none is invented.
    assert "AZURE_ML_INPUT_epochs" not in seen


PLOT_AND_DUMP_ENV = """\
    import json, os, pathlib
    pathlib.Path("outputs").mkdir(exist_ok=True)
    pathlib.Path("outputs/env.json").write_text(json.dumps(dict(os.environ)))
    import matplotlib.pyplot as plt
    plt.plot([0, 1], [1, 0])
    plt.savefig("outputs/plot.png")
    """


def test_a_job_sees_its_own_variables_and_the_machines_never_the_submitters_session(lab: Path) -> None:
    # A Jupyter kernel sets MPLBACKEND to its inline backend; a job submitted from a notebook
    # must not inherit it (nor a token of the submitter's shell, nor its PYTHONPATH), as a job on
    # the service sees its image, the service's variables and the spec's environment_variables.
    spec = write_job(lab / "leak", "job", """\
        code: src
        command: python main.py
        environment_variables:
          SPEC_VARIABLE: from the spec
        """, script=PLOT_AND_DUMP_ENV)
    submitter = {"MPLBACKEND": "module://nonexistent", "SOME_SECRET": "x"}
    created = aml_run("job", "create", "--file", str(spec), "-o", "json", cwd=lab, env=submitter)
    assert created.returncode == 0, created.stderr
    name = json.loads(created.stdout)["name"]
    workspace = Workspace.locate(lab / ".amllab")
    record = jobs.wait(workspace, name, timeout=120)
    run_dir = workspace.run_dir(name)
    seen = json.loads((run_dir / "wd" / "outputs" / "env.json").read_text())
    assert "MPLBACKEND" not in seen and "SOME_SECRET" not in seen and "PYTHONPATH" not in seen
    # matplotlib picks its default backend and the plot is written.
    assert record["status"] == "Completed", (run_dir / "user_logs" / "std_log.txt").read_text()[-2000:]
    assert (run_dir / "wd" / "outputs" / "plot.png").stat().st_size > 0
    assert seen["HOME"] == os.environ["HOME"]
    assert Path(seen["PATH"].split(os.pathsep)[0]) == run_dir / "env" / "bin"
    assert seen["SPEC_VARIABLE"] == "from the spec"
    assert seen["AZUREML_RUN_ID"] == name and seen["MLFLOW_RUN_ID"] == record["mlflow"]["run_id"]
    assert {"AZUREML_ARM_SUBSCRIPTION", "AZUREML_ARM_RESOURCEGROUP", "AZUREML_ARM_WORKSPACE_NAME"} <= set(seen)


FAILING = """\
    import sys
    print("loading the data")
    print()


    def load(path):
        raise FileNotFoundError(f"no such table: {path}")


    load(sys.argv[1])
    """


def test_a_failed_command_jobs_error_shows_the_end_of_its_log(lab: Path) -> None:
    spec = write_job(lab / "failing", "job", """\
        code: src
        command: python main.py churn.csv
        """, script=FAILING)
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=lab)
    assert result.returncode == 1, result.stdout
    summary = result.stdout.split("Execution Summary", 1)[1]
    # The exception line and the frame that raised it, not only "exited with code 1".
    assert "FileNotFoundError: no such table: churn.csv" in summary
    assert 'raise FileNotFoundError(f"no such table: {path}")' in summary
    assert "the command exited with code 1; end of " in summary
    name = summary.split("RunId: ", 1)[1].split()[0]
    error = jobs.show(Workspace.locate(lab / ".amllab"), name)["error"]["message"]
    assert error.endswith("FileNotFoundError: no such table: churn.csv")
    assert "\n\n" not in error  # blank lines carry nothing


def test_a_program_the_image_would_provide_is_named_as_missing_here(lab: Path) -> None:
    # Microsoft's R and Julia examples run `Rscript`/`julia` from their environment's image.
    spec = write_job(lab / "r-job", "job", """\
        command: amllab-no-such-program-here iris.R
        environment: {image: rocker/tidyverse:latest}
        """)
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=lab)
    assert result.returncode == 1, result.stdout
    name = result.stdout.split("RunId: ", 1)[1].split()[0]
    error = jobs.show(Workspace.locate(lab / ".amllab"), name)["error"]["message"]
    assert "amllab-no-such-program-here: command not found" in error
    assert "exit code 127: the shell found no such program" in error


def test_a_failed_pipeline_step_says_why_in_the_pipelines_stream_and_summary(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text(textwrap.dedent(FAILING))
    spec = tmp_path / "pipeline.yml"
    spec.write_text(textwrap.dedent("""\
        $schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
        type: pipeline
        jobs:
          prep:
            type: command
            code: src
            command: python main.py rows.csv
            environment: {image: python:3.11-slim}
        """))
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    stream, summary = result.stdout.split("Execution Summary", 1)
    assert "step prep failed: the command exited with code 1" in stream
    assert "FileNotFoundError: no such table: rows.csv" in stream
    assert "step prep: " in summary and "FileNotFoundError: no such table: rows.csv" in summary


SHM_GB = """\
    command: echo ran
    resources:
      shm_size: 16GB
    """


def test_a_refusal_says_whether_the_client_refuses_it_too_and_ignore_submits_it(tmp_path: Path) -> None:
    # AML403 (a Docker-style '16GB'): azure-ai-ml loads and validates such a spec and sends it on.
    spec = write_job(tmp_path / "shm", "job", SHM_GB)
    refused = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert refused.returncode == 1
    assert "the service would refuse it too" not in refused.stderr
    assert "aml-run: the spec has lint errors, so it was not submitted:\n  AML403: azure-ai-ml accepts this and " \
           "sends it to the service; aml-lint flags it because: `resources.shm_size` is not" in refused.stderr
    assert "(for example `16g`); to submit it anyway: --ignore AML403, or `# amllab: ignore[AML403]` on its line\n" \
        in refused.stderr
    assert "--ignore AML403" in refused.stderr
    ran = aml_run("job", "create", "--file", str(spec), "--ignore", "aml403", "--stream", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "ran" in ran.stdout and "Status: Completed" in ran.stdout


SENT_ON = """\
    $schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
    type: pipeline
    settings:
      default_datestore: azureml:workspaceblobstore
    jobs:
      crop:
        type: command
        component: ./crop.yml
        inputs:
          center_crop: 224
          split_ratio: 0.2
    """
CROP = """\
    $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
    type: command
    name: crop
    version: "1"
    inputs:
      center_crop: {type: string, enum: ["True", "False"], default: "False"}
    command: echo "center_crop=${{inputs.center_crop}}"
    environment: {image: python:3.11-slim}
    """


def test_a_spec_whose_every_error_the_client_sends_on_is_submitted_and_strict_refuses_it(tmp_path: Path) -> None:
    # Three patterns of Microsoft's pipelines that azure-ai-ml submits: a misspelt setting the
    # service ignores (AML101 in `settings`), a literal outside a component input's enum
    # (AML519), an input the component does not declare, which the client drops (AML511).
    (tmp_path / "crop.yml").write_text(textwrap.dedent(CROP))
    spec = tmp_path / "pipeline.yml"
    spec.write_text(textwrap.dedent(SENT_ON))
    ran = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "Status: Completed" in ran.stdout
    workspace = Workspace.locate(tmp_path / ".amllab")
    name = ran.stdout.split("RunId: ", 1)[1].split()[0]
    step = jobs.show(workspace, name)["jobs"]["crop"]["name"]
    # The literal reaches the command as given.
    assert "center_crop=224" in (workspace.run_dir(step) / "user_logs" / "std_log.txt").read_text()
    assert "aml-run: submitted despite these lint errors, as az ml job create would (--strict refuses it " \
           "instead):\n" in ran.stderr
    for code in ("AML101", "AML519", "AML511"):
        assert f"  {code}: azure-ai-ml accepts this and sends it to the service; aml-lint flags it because: " \
            in ran.stderr, code
    assert "so it was not submitted" not in ran.stderr
    strict = aml_run("job", "create", "--file", str(spec), "--strict", cwd=tmp_path)
    assert strict.returncode == 1
    assert "aml-run: the spec has lint errors, so it was not submitted:\n" in strict.stderr
    assert "without --strict, aml-run job create submits it, as az ml job create does" in strict.stderr


def test_one_error_the_client_refuses_stops_a_spec_whose_other_errors_it_would_send_on(tmp_path: Path) -> None:
    # An unknown key at a command job's top level: azure-ai-ml refuses the file ("Unknown field.").
    spec = write_job(tmp_path / "typo", "job", "command: echo ran\ncomptue: azureml:cpu-cluster\n")
    refused = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert refused.returncode == 1
    assert "  AML101: azure-ai-ml refuses such a spec too (az ml job create would stop here); fix it\n" \
        in refused.stderr
    (tmp_path / "crop.yml").write_text(textwrap.dedent(CROP))
    mixed = tmp_path / "mixed.yml"
    mixed.write_text(textwrap.dedent(SENT_ON).replace("jobs:\n", "jobz: {}\njobs:\n"))
    refused = aml_run("job", "create", "--file", str(mixed), cwd=tmp_path)
    assert refused.returncode == 1, refused.stderr
    assert "so it was not submitted" in refused.stderr


def test_a_refusal_the_client_shares_says_so(tmp_path: Path) -> None:
    # AML803: a code folder that does not exist; azure-ai-ml refuses it before it is sent.
    spec = write_job(tmp_path / "nocode", "job", "code: ./missing\ncommand: echo ran\n")
    refused = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert refused.returncode == 1
    assert "  AML803: azure-ai-ml refuses such a spec too (az ml job create would stop here); fix it\n" \
        in refused.stderr
    assert "--ignore AML803" not in refused.stderr


def test_an_unregistered_asset_is_not_offered_to_ignore(tmp_path: Path) -> None:
    # Ignoring AML805 cannot help: the runner needs the asset itself.
    spec = write_job(tmp_path / "unregistered", "job", "command: echo ran\nenvironment: azureml:sklearn-train:2\n")
    refused = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert refused.returncode == 1
    assert "  AML805: the local workspace lacks what the spec names" in refused.stderr
    assert "--ignore AML805" not in refused.stderr


def test_job_create_honours_the_projects_lint_configuration_and_checks_ignore_codes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    spec = write_job(project / "jobs", "job", SHM_GB)
    (project / "pyproject.toml").write_text('[tool.amllab.lint]\nignore = ["AML403"]\n')
    ran = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    typo = aml_run("job", "create", "--file", str(spec), "--ignore", "AML4033", cwd=tmp_path)
    assert typo.returncode == 2
    assert "unknown rule code 'AML4033'" in typo.stderr and "Traceback" not in typo.stderr


def test_preparing_says_once_what_image_build_services_and_identity_mean_here(tmp_path: Path) -> None:
    folder = tmp_path / "surface"
    (folder / "docker").mkdir(parents=True)
    (folder / "docker" / "Dockerfile").write_text("FROM python:3.11-slim\n")
    spec = write_job(folder, "job", """\
        command: echo ran
        identity:
          type: user_identity
        services:
          my_jupyter:
            type: jupyter_lab
          my_ssh:
            type: ssh
        environment:
          image: mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04:latest
        """)
    ran = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    lines = ran.stdout.splitlines()
    said = [line for line in lines if "image mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04:latest: recorded, "
            "not pulled; the job runs in a local environment" in line]
    assert len(said) == 1
    assert sum("services my_jupyter (jupyter_lab), my_ssh (ssh): not started here" in line for line in lines) == 1
    assert sum("identity user_identity: not used here" in line for line in lines) == 1

    built = write_job(folder, "built", """\
        command: echo ran
        environment:
          build:
            path: ./docker
        """)
    ran = aml_run("job", "create", "--file", str(built), "--stream", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert sum("build context ./docker: not built; the job runs in a local environment" in line
               for line in ran.stdout.splitlines()) == 1


def test_a_sweep_whose_every_trial_failed_says_why(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    # Logs its metric where it would, had it not failed first.
    (tmp_path / "src" / "main.py").write_text(textwrap.dedent(FAILING) + "import mlflow\nmlflow.log_metric('score', 1.0)\n")
    spec = tmp_path / "sweep.yml"
    spec.write_text(textwrap.dedent("""\
        $schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
        type: sweep
        trial:
          code: src
          command: python main.py part-${{search_space.x}}.csv
          environment: {image: python:3.11-slim}
        sampling_algorithm: grid
        search_space:
          x: {type: choice, values: [1, 2]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 2}
        """))
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path,
                     env={"AMLLAB_PLAIN_STREAM": "1"})
    assert result.returncode == 1, result.stdout
    summary = result.stdout.split("Execution Summary", 1)[1]
    assert "every trial failed; " in summary
    assert "FileNotFoundError: no such table: part-" in summary


def test_single_braces_in_a_command_job_are_rewritten_as_the_client_does(tmp_path: Path) -> None:
    # azure-ai-ml's CommandJob._to_rest_object rewrites `{inputs.x}` to `${{inputs.x}}` (with a
    # deprecation warning) before it submits; aml-lint warns (AML205).
    spec = write_job(tmp_path / "braces", "job", "command: echo value={inputs.greeting} kept={{inputs.greeting}}\n"
                     "inputs:\n  greeting: hello\n")
    ran = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "AML205" in ran.stderr
    assert "value=hello kept={{inputs.greeting}}" in ran.stdout
