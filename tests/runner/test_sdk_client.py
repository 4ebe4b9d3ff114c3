"""`aml-run script` and `aml-run notebook`: SDK v2 scripts and notebooks run unchanged against
the local workspace, through the offline MLClient (runner/sdk/client.py) that the import hook
(runner/sdk/hook.py) puts in place of azure.ai.ml.MLClient and azure.identity's credentials.

Real processes throughout: aml-run as a user runs it, a real Jupyter kernel (nbclient), real
jobs in a workspace in a temporary folder. Each script or notebook is this folder's own small
fixture (tests/runner/sdk_project), written in the shapes Microsoft's notebooks use."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

pytest.importorskip("azure.ai.ml")
pytest.importorskip("nbclient")

from amlrun import aml_run  # noqa: E402

PROJECT = Path(__file__).resolve().parent / "sdk_project"
OPENING = """\
from azure.ai.ml import MLClient, Input, Output, command, load_component
from azure.identity import DefaultAzureCredential, InteractiveBrowserCredential

try:
    credential = DefaultAzureCredential()
    credential.get_token("https://management.azure.com/.default")
except Exception as ex:
    credential = InteractiveBrowserCredential()
ml_client = MLClient(credential, "<SUBSCRIPTION_ID>", "<RESOURCE_GROUP>", "<AML_WORKSPACE_NAME>")
"""


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(PROJECT, folder, ignore=shutil.ignore_patterns("__pycache__", ".amllab", "forms.py"))
    return folder


def lines(text: str, prefix: str) -> list[str]:
    return [line[len(prefix):].strip() for line in text.splitlines() if line.startswith(prefix)]


def test_a_script_reaches_every_covered_verb_and_gets_the_sdks_own_objects(tmp_path: Path) -> None:
    folder = project(tmp_path)
    (folder / "tour.py").write_text(OPENING + textwrap.dedent("""\
        from azure.ai.ml.entities import (AmlCompute, CronTrigger, Data, Environment, JobSchedule, Model)
        from azure.ai.ml.dsl import pipeline
        from azure.core.exceptions import ResourceNotFoundError

        print("CREDENTIAL", type(credential).__name__, credential.get_token("x").token != "")
        try:
            ml_client.compute.get("cpu-cluster")
        except ResourceNotFoundError as error:
            print("MISSING", "aml-run compute create --name cpu-cluster" in str(error))
        compute = ml_client.compute.begin_create_or_update(AmlCompute(name="cpu-cluster", max_instances=2)).result()
        print("COMPUTE", type(compute).__name__, compute.name, compute.max_instances)
        env = ml_client.environments.create_or_update(
            Environment(name="local-env", image="python:3.11-slim", conda_file="./src/conda.yml"))
        print("ENVIRONMENT", type(env).__name__, env.name, env.version, ml_client.environments.get("local-env").version)
        data = ml_client.data.create_or_update(Data(name="rows", path="./data/rows.csv", type="uri_file"))
        print("DATA", type(data).__name__, data.name, data.version)
        train = ml_client.components.create_or_update(load_component("./components/train.yml"))
        print("COMPONENT", type(train).__name__, train.name, train.version,
              sorted(c.name for c in ml_client.components.list()))

        job = command(code="./src", command="python train.py --data ${{inputs.data}} --lr ${{inputs.lr}}",
                      inputs={"data": Input(type="uri_file", path="azureml:rows:1"), "lr": 0.2},
                      environment="AzureML-sklearn-1.5@latest", compute="cpu-cluster", display_name="tour")
        returned = ml_client.jobs.create_or_update(job)
        print("JOB", type(returned).__name__, returned.display_name, returned.studio_url.startswith("file://"))
        ml_client.jobs.stream(returned.name)
        print("GOT", ml_client.jobs.get(returned.name).status, returned.name in [j.name for j in ml_client.jobs.list()])
        ml_client.jobs.download(returned.name, download_path="./downloaded", all=True)
        model = ml_client.models.create_or_update(Model(
            name="tour-model", type="custom_model",
            path=f"azureml://jobs/{returned.name}/outputs/artifacts/paths/outputs/"))
        print("MODEL", type(model).__name__, model.name, model.version,
              [m.version for m in ml_client.models.list(name="tour-model")], ml_client.models.get("tour-model").version)
        print("WORKSPACE", ml_client.workspaces.get(ml_client.workspace_name).id.split("/")[2],
              ml_client.workspaces.get().mlflow_tracking_uri.startswith("sqlite:///"))

        @pipeline()
        def nightly_pipeline(training_data):
            train(data=training_data, epochs=1)

        nightly = nightly_pipeline(training_data=Input(type="uri_folder", path="./data/"))
        nightly.settings.default_compute = "cpu-cluster"
        schedule = JobSchedule(name="nightly", trigger=CronTrigger(expression="0 2 * * *"), create_job=nightly)
        created = ml_client.schedules.begin_create_or_update(schedule).result()
        print("SCHEDULE", type(created).__name__, created.name, created.is_enabled)
        print("DISABLED", ml_client.schedules.begin_disable("nightly").result().is_enabled,
              ml_client.schedules.get("nightly").is_enabled, [s.name for s in ml_client.schedules.list()])
        enabled = ml_client.schedules.begin_enable("nightly").result()
        enabled.trigger.expression = "30 3 * * *"
        ml_client.schedules.begin_create_or_update(enabled).result()
        print("UPDATED", ml_client.schedules.get("nightly").trigger.expression, ml_client.schedules.get("nightly").is_enabled)
        ml_client.schedules.begin_delete("nightly").result()
        print("DELETED", [s.name for s in ml_client.schedules.list()])
        ml_client.online_endpoints.begin_create_or_update(None)
        print("NEVER")
        """))
    result = aml_run("script", "tour.py", cwd=folder, timeout=600)
    out = result.stdout
    assert result.returncode == 3, out + result.stderr
    assert lines(out, "CREDENTIAL") == ["DefaultAzureCredential True"]
    assert lines(out, "MISSING") == ["True"]
    assert lines(out, "COMPUTE") == ["AmlCompute cpu-cluster 2"]
    assert lines(out, "ENVIRONMENT") == ["Environment local-env 1 1"]
    assert lines(out, "DATA") == ["Data rows 1"]
    assert lines(out, "COMPONENT") == ["CommandComponent sdk_train 1 ['sdk_train']"]
    assert lines(out, "JOB") == ["Command tour True"] or lines(out, "JOB") == ["CommandJob tour True"]
    assert lines(out, "GOT") == ["Completed True"]
    assert (folder / "downloaded" / "artifacts" / "outputs" / "model.txt").is_file()
    assert lines(out, "MODEL") == ["Model tour-model 1 ['1'] 1"]
    assert lines(out, "WORKSPACE") == ["00000000-0000-0000-0000-000000000000 True"]
    assert lines(out, "SCHEDULE") == ["JobSchedule nightly True"]
    assert lines(out, "DISABLED") == ["False False ['nightly']"]
    assert lines(out, "UPDATED") == ["30 3 * * * True"]
    assert lines(out, "DELETED") == ["[]"]
    assert "NEVER" not in out
    assert "CloudOnlyError: ml_client.online_endpoints.begin_create_or_update: it needs Azure Machine Learning's " \
           "cloud" in result.stderr
    assert "it stopped at ml_client.online_endpoints.begin_create_or_update, which needs Azure's cloud; every job " \
           "before it completed" in out
    # The YAML each submission became is beside its run, and is the spec the run holds.
    job_name = next(line.split()[2] for line in out.splitlines() if line.startswith("[aml-run] job "))
    spec = folder / ".amllab" / "sdk" / job_name / "job.yml"
    assert yaml.safe_load(spec.read_text())["command"].startswith("python train.py")
    assert (folder / ".amllab" / "runs" / job_name / "job.yml").read_text() == spec.read_text()


def test_failures_refusals_and_cancels_say_so_and_the_exit_status_counts_them(tmp_path: Path) -> None:
    folder = project(tmp_path)
    (folder / "failing.py").write_text(OPENING + textwrap.dedent("""\
        from azure.ai.ml.entities import AmlCompute, Environment

        ml_client.compute.begin_create_or_update(AmlCompute(name="cpu-cluster", max_instances=4))
        local = Environment(image="python:3.11-slim")
        try:  # the SDK's own validation refuses it, as create_or_update does
            ml_client.jobs.create_or_update(command(command="echo ${{inputs.missing}}", environment=local,
                                                    compute="cpu-cluster"))
        except Exception as error:
            print("INVALID", type(error).__name__, "missing" in str(error))
        try:  # the SDK sends it; aml-lint refuses it, as aml-run job create does
            ml_client.jobs.create_or_update(command(code="./src", command="python nothere.py", environment=local,
                                                    compute="cpu-cluster"))
        except Exception as error:
            print("REFUSED", type(error).__name__, "AML804" in str(error))
        try:
            ml_client.jobs.create_or_update(command(command="echo hi", environment=local, compute="gpu-cluster"))
        except Exception as error:
            print("UNKNOWN", type(error).__name__, "aml-run compute create --name gpu-cluster" in str(error))
        sleeper = ml_client.jobs.create_or_update(command(command="sleep 120", environment=local,
                                                          compute="cpu-cluster"))
        ml_client.jobs.begin_cancel(sleeper.name).result()
        print("CANCELED", ml_client.jobs.get(sleeper.name).status)
        failing = ml_client.jobs.create_or_update(command(command="echo broken >&2; exit 3", environment=local,
                                                          compute="cpu-cluster"))
        ml_client.jobs.stream(failing.name)
        """))
    result = aml_run("script", "failing.py", cwd=folder, timeout=600)
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert lines(out, "INVALID") == ["ValidationException True"]
    assert lines(out, "REFUSED") == ["SubmissionRefused True"]
    assert lines(out, "UNKNOWN") == ["SubmissionRefused True"]  # AML805, with the command that registers it
    assert lines(out, "CANCELED") == ["Canceled"]
    assert "azure.ai.ml.exceptions.JobException" in result.stderr and '"code": "UserError"' in result.stderr
    statuses = [line.split()[2] for line in out.split("[aml-run] jobs:", 1)[1].splitlines()[1:3]]
    assert statuses == ["Canceled", "Failed"]
    assert out.rstrip().endswith("[aml-run] not every job completed")


def _notebook(path: Path, cells: list[str]) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    # Microsoft's notebooks name a kernel that exists on their compute instances only.
    notebook.metadata["kernelspec"] = {"name": "python310-sdkv2", "display_name": "Python 3.10 - SDK v2",
                                       "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    nbformat.write(notebook, str(path))


def test_a_notebook_runs_unchanged_with_its_overrides_printed_and_is_saved_with_its_outputs(tmp_path: Path) -> None:
    folder = project(tmp_path)
    notebook = folder / "tune.ipynb"
    _notebook(notebook, [
        OPENING,
        "%pip install azure-ai-ml==0.1.0",
        textwrap.dedent("""\
            from azure.ai.ml.dsl import pipeline
            from azure.ai.ml.entities import AmlCompute
            from azure.ai.ml.sweep import Choice, Uniform

            ml_client.begin_create_or_update(AmlCompute(name="cpu-cluster", max_instances=2)).result()
            train = load_component(source="./components/train.yml")
            score = load_component(source="./components/score.yml")

            @pipeline()
            def tuned(training_data):
                trial = train(data=training_data, lr=Uniform(0.01, 0.5), epochs=Choice([1, 2]), flag=False)
                sweep_step = trial.sweep(primary_metric="acc", goal="maximize", sampling_algorithm="random")
                sweep_step.set_limits(max_total_trials=6, max_concurrent_trials=2)
                score(model=sweep_step.outputs.model)

            pipeline_job = tuned(training_data=Input(type="uri_folder", path="./data/"))
            pipeline_job.settings.default_compute = "cpu-cluster"
            pipeline_job = ml_client.jobs.create_or_update(pipeline_job, experiment_name="pipeline_samples")
            print("SUBMITTED", pipeline_job.name, pipeline_job.experiment_name)"""),
        "ml_client.jobs.stream(pipeline_job.name)",
        "ml_client.batch_endpoints.get('scoring')",
        "print('NEVER')",
    ])
    before = hashlib.sha256(notebook.read_bytes()).hexdigest()
    result = aml_run("notebook", "tune.ipynb", "--set-sweep", "limits.max_total_trials=2", cwd=folder, timeout=600)
    out = result.stdout
    assert result.returncode == 3, out + result.stderr
    assert hashlib.sha256(notebook.read_bytes()).hexdigest() == before  # the notebook itself is never written
    name = lines(out, "SUBMITTED")[0].split()[0]
    assert lines(out, "SUBMITTED") == [f"{name} pipeline_samples"]
    assert f"[aml-run] override for job {name}: step sweep_step: limits.max_total_trials 6 -> 2 " \
           "(--set-sweep limits.max_total_trials=2)" in out
    assert "[aml-run] not run: %pip/%conda install azure-ai-ml==0.1.0" in out
    assert "the notebook's cell 5 of 6: CloudOnlyError: ml_client.batch_endpoints.get" in out
    assert "NEVER" not in out
    spec = folder / ".amllab" / "sdk" / name / "job.yml"
    data = yaml.safe_load(spec.read_text())
    assert data["jobs"]["sweep_step"]["limits"]["max_total_trials"] == 2
    assert "# Overridden by aml-run" in spec.read_text()
    shown = json.loads(aml_run("job", "show", name, "-o", "json", cwd=folder).stdout)
    assert shown["status"] == "Completed" and shown["jobs"]["sdk_score"]["status"] == "Completed"
    children = json.loads(aml_run("job", "list", "--parent-job-name", f"{name}--sweep_step", "-o", "json",
                                  cwd=folder).stdout)
    assert len(children) == 2
    saved = json.loads((folder / ".amllab" / "sdk" / "notebooks" / "tune.ipynb").read_text())
    assert saved["cells"][0]["metadata"]["tags"] == ["amllab-injected"]
    streamed = "".join("".join(o.get("text", "")) for o in saved["cells"][4]["outputs"])
    assert "Execution Summary" in streamed and "Status: Completed" in streamed


def test_the_hook_patches_the_sdk_and_the_credentials_whenever_they_are_imported(tmp_path: Path) -> None:
    code = textwrap.dedent("""\
        import sys
        import azure.identity
        import runner
        assert not [m for m in sys.modules if m.startswith("azure.ai.ml")], "import runner loaded azure-ai-ml"
        import runner.sdk.hook as hook
        hook.install()
        from azure.identity import DefaultAzureCredential, AzureCliCredential  # imported before: patched now
        from azure.identity.aio import DefaultAzureCredential as AsyncCredential  # imported after: patched then
        from azure.ai.ml import MLClient
        import azure.ai.ml._ml_client as inner
        from runner.sdk.client import CloudOnlyError, OfflineMLClient
        assert MLClient is OfflineMLClient and inner.MLClient is OfflineMLClient
        assert DefaultAzureCredential().get_token("x").token and AzureCliCredential(tenant_id="t").close() is None
        assert AsyncCredential.__name__ == "DefaultAzureCredential" and hasattr(AsyncCredential(), "__aenter__")
        client = MLClient.from_config(credential=DefaultAzureCredential(), path="./config.json")
        assert client.workspaces.get().name == "ws" and client.workspace_name == "ws"
        for call in (lambda: MLClient(DefaultAzureCredential(), registry_name="azureml"),
                     lambda: client.registries.get("azureml"), lambda: client.jobs.archive("x")):
            try:
                call()
            except CloudOnlyError as error:
                print("CLOUD", str(error).split(":")[0])
        """)
    workspace = tmp_path / "ws" / ".amllab"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                            env={**__import__("os").environ, "AMLLAB_WORKSPACE": str(workspace)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result.stdout, "CLOUD") == ["MLClient(registry_name='azureml')", "ml_client.registries.get",
                                            "ml_client.jobs.archive"]


@pytest.mark.parametrize("args, message", [
    (("notebook", "missing.ipynb"), "missing.ipynb: no such notebook"),
    (("notebook", "broken.ipynb"), "broken.ipynb: not a notebook nbformat can read"),
    (("script", "missing.py"), "missing.py: no such script"),
    (("notebook", "--set-sweep", "limits", "broken.ipynb"), "--set-sweep 'limits': write KEY=VALUE"),
])
def test_bad_arguments_are_one_line_and_exit_2(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    (tmp_path / "broken.ipynb").write_text("{not json")
    result = aml_run(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr and "Traceback" not in result.stderr
