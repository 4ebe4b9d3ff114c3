"""Patterns of Microsoft's public pipeline and data examples, each on a small fixture of our own:
a model handed between steps and loaded with MLflow, pipeline-level outputs, the reserved
`artifacts`/`default` outputs, a step's own input paths, a compute bound to a pipeline input,
a sweep step without a best trial, and remote URIs mapped to local copies. Real processes,
real MLflow."""

from __future__ import annotations

import textwrap
from pathlib import Path

from amlrun import aml_run
from runner import jobs
from runner.workspace import Workspace


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def run(workspace: Workspace, spec: Path, timeout: float = 240) -> dict:
    name = jobs.submit(spec, workspace)
    jobs.wait(workspace, name, timeout=timeout)
    return jobs.show(workspace, name)


def failures(shown: dict) -> tuple:
    return shown.get("error"), {name: node["error"] for name, node in (shown.get("jobs") or {}).items()}


def pipeline(folder: Path, body: str, name: str = "pipeline.yml") -> Path:
    return write(folder, name, "$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json\n"
                 "type: pipeline\n" + textwrap.dedent(body))


def test_an_mlflow_model_handed_between_steps_loads_with_mlflow(tmp_path: Path) -> None:
    # nyc_taxi's and the sweep pipeline's predict steps: mlflow.<flavor>.load_model on a
    # read-only input refuses a path that resolves outside the folder it was given.
    write(tmp_path, "src/train.py", """\
        import sys
        import mlflow.sklearn
        from sklearn.linear_model import LinearRegression
        model = LinearRegression().fit([[0.0], [1.0], [2.0]], [1.0, 3.0, 5.0])
        mlflow.sklearn.save_model(model, sys.argv[1])
        """)
    write(tmp_path, "src/predict.py", """\
        import pathlib, sys
        import mlflow.sklearn
        model = mlflow.sklearn.load_model(sys.argv[1])
        pathlib.Path(sys.argv[2], "prediction.txt").write_text(str(round(float(model.predict([[3.0]])[0]), 3)))
        """)
    spec = pipeline(tmp_path, """\
        jobs:
          train:
            type: command
            code: ./src
            command: python train.py ${{outputs.model}}
            environment: {image: python:3.11-slim}
            outputs:
              model: {type: mlflow_model}
          predict:
            type: command
            code: ./src
            command: python predict.py ${{inputs.model}} ${{outputs.scores}}
            environment: {image: python:3.11-slim}
            inputs:
              model: ${{parent.jobs.train.outputs.model}}
            outputs:
              scores: {type: uri_folder}
        """)
    shown = run(Workspace.locate(tmp_path / ".amllab"), spec)
    assert shown["status"] == "Completed", failures(shown)
    assert (Path(shown["jobs"]["predict"]["outputs"]["scores"]) / "prediction.txt").read_text() == "7.0"


def test_a_read_only_input_is_a_real_folder_and_the_source_stays_as_it_was(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write(data, "a.txt", "alpha")
    write(data, "sub/b.txt", "beta")
    spec = write(tmp_path, "job.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
        command: >-
          python -c "import os, sys; p = sys.argv[1]; print(os.path.islink(p), os.path.realpath(p) == os.path.abspath(p),
          open(os.path.join(p, 'sub', 'b.txt')).read()); os.remove(os.path.join(p, 'a.txt'))" ${{inputs.data}}
        environment: {image: python:3.11-slim}
        inputs:
          data: {type: uri_folder, path: ./data}
        """)
    shown = run(Workspace.locate(tmp_path / ".amllab"), spec)
    assert shown["status"] == "Completed", shown["error"]
    assert Path(shown["log_path"]).read_text().split() == ["False", "True", "beta"]
    # Removing a file from the input folder leaves the source alone.
    assert (data / "a.txt").read_text() == "alpha"


def test_job_show_node_shows_a_step_that_failed_while_preparing(tmp_path: Path) -> None:
    # The command the execution summary names, for a step whose input never appeared.
    spec = pipeline(tmp_path, """\
        jobs:
          make:
            type: command
            command: echo nothing written
            environment: {image: python:3.11-slim}
            outputs:
              out: {type: uri_file}
          use:
            type: command
            command: cat ${{inputs.data}}
            environment: {image: python:3.11-slim}
            inputs:
              data: ${{parent.jobs.make.outputs.out}}
        """)
    shown = run(Workspace.locate(tmp_path / ".amllab"), spec)
    assert shown["status"] == "Failed" and shown["jobs"]["use"]["status"] == "Failed"
    assert f"job show {shown['name']} --node use" in shown["error"]["message"]
    result = aml_run("job", "show", shown["name"], "--node", "use", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Failed" in result.stdout and "input 'data'" in result.stdout and "does not exist" in result.stdout
    as_json = aml_run("job", "show", shown["name"], "--node", "use", "-o", "json", cwd=tmp_path)
    assert as_json.returncode == 0, as_json.stderr


def test_a_steps_own_input_path_is_relative_to_the_pipeline_file_not_its_component(tmp_path: Path) -> None:
    # 1b_e2e_registered_components: a registered component, and `path: ./data` on the step.
    write(tmp_path, "components/count/count.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        type: command
        name: count_files
        version: "1"
        command: ls ${{inputs.data}} > ${{outputs.listing}}/listing.txt
        environment: {image: python:3.11-slim}
        inputs:
          data: {type: uri_folder}
        outputs:
          listing: {type: uri_folder}
        """)
    write(tmp_path, "components/count/data/component-side.txt", "not this one")
    write(tmp_path, "pipelines/data/pipeline-side.txt", "this one")
    workspace = Workspace.locate(tmp_path / ".amllab")
    registered = aml_run("component", "create", "--file", "components/count/count.yml", cwd=tmp_path,
                         env={"AMLLAB_WORKSPACE": str(workspace.folder)})
    assert registered.returncode == 0, registered.stderr
    spec = pipeline(tmp_path / "pipelines", """\
        jobs:
          count:
            type: command
            component: azureml:count_files@latest
            inputs:
              data:
                type: uri_folder
                path: ./data
        """)
    shown = run(workspace, spec)
    assert shown["status"] == "Completed", failures(shown)
    assert (Path(shown["jobs"]["count"]["outputs"]["listing"]) / "listing.txt").read_text().split() == \
        ["pipeline-side.txt"]


def test_a_compute_bound_to_a_pipeline_input_runs_there_in_a_step_and_in_a_pipeline_component(
        tmp_path: Path) -> None:
    # pipeline_with_train_eval_pipeline_component: the compute promoted to a pipeline input.
    workspace = Workspace.locate(tmp_path / ".amllab")
    created = aml_run("compute", "create", "--name", "cpu-small", cwd=tmp_path,
                      env={"AMLLAB_WORKSPACE": str(workspace.folder)})
    assert created.returncode == 0, created.stderr
    write(tmp_path, "inner.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json
        type: pipeline
        name: inner
        inputs:
          node_compute: {type: string}
        jobs:
          work:
            type: command
            compute: ${{parent.inputs.node_compute}}
            command: echo inner
            environment: {image: python:3.11-slim}
        """)
    spec = pipeline(tmp_path, """\
        inputs:
          compute_name: cpu-small
        jobs:
          outer:
            type: command
            compute: ${{parent.inputs.compute_name}}
            command: echo outer
            environment: {image: python:3.11-slim}
          nested:
            type: pipeline
            component: ./inner.yml
            inputs:
              node_compute: ${{parent.inputs.compute_name}}
        """)
    shown = run(workspace, spec)
    assert shown["status"] == "Completed", failures(shown)
    assert jobs.show(workspace, shown["jobs"]["outer"]["name"])["compute"] == "cpu-small"
    inner = jobs.show(workspace, shown["jobs"]["nested"]["name"])
    assert jobs.show(workspace, inner["jobs"]["work"]["name"])["compute"] == "cpu-small"


def test_a_sweep_step_whose_trials_log_no_primary_metric_fails_and_its_consumer_does_not_run(
        tmp_path: Path) -> None:
    write(tmp_path, "fit.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        type: command
        name: fit
        version: "1"
        command: echo ${{inputs.lr}} > ${{outputs.model_output}}/lr.txt
        environment: {image: python:3.11-slim}
        inputs:
          lr: {type: number, default: 0.0}
        outputs:
          model_output: {type: uri_folder}
        """)
    spec = pipeline(tmp_path, """\
        jobs:
          tune:
            type: sweep
            trial: ./fit.yml
            outputs:
              model_output: {type: uri_folder}
            sampling_algorithm: grid
            search_space:
              lr: {type: choice, values: [0.1, 0.5]}
            objective: {goal: maximize, primary_metric: accuracy}
            limits: {max_total_trials: 2, max_concurrent_trials: 2}
          use:
            type: command
            command: cat ${{inputs.model}}/lr.txt
            environment: {image: python:3.11-slim}
            inputs:
              model: ${{parent.jobs.tune.outputs.model_output}}
        """)
    shown = run(Workspace.locate(tmp_path / ".amllab"), spec)
    assert shown["status"] == "Failed"
    tune = shown["jobs"]["tune"]
    assert tune["status"] == "Failed", failures(shown)
    assert tune["error"]["code"] == "NoBestTrial" and "'accuracy'" in tune["error"]["message"]
    assert shown["jobs"]["use"]["status"] == "Canceled"


def test_a_consumer_of_a_steps_artifacts_or_default_output_reads_its_outputs_and_logs(tmp_path: Path) -> None:
    # hello-pipeline-default-artifacts: `artifacts` is the producer's ./outputs and ./logs.
    spec = pipeline(tmp_path, """\
        jobs:
          hello:
            type: command
            command: echo world > ./outputs/world.txt && echo note > ./logs/note.txt
            environment: {image: python:3.11-slim}
            outputs:
              artifacts:
              default:
          world:
            type: command
            command: cat ${{inputs.from_artifacts}}/outputs/world.txt ${{inputs.from_default}}/logs/note.txt
            environment: {image: python:3.11-slim}
            inputs:
              from_artifacts: ${{parent.jobs.hello.outputs.artifacts}}
              from_default: ${{parent.jobs.hello.outputs.default}}
        """)
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = run(workspace, spec)
    assert shown["status"] == "Completed", failures(shown)
    log = Path(jobs.show(workspace, shown["jobs"]["world"]["name"])["log_path"]).read_text()
    assert log.split() == ["world", "note"]


def test_pipeline_outputs_give_their_type_path_and_mode_to_the_step_and_a_steps_own_path_is_kept(
        tmp_path: Path) -> None:
    # hello-pipeline-customize-output-file/-folder and 4b_datastore_datapath_uri.
    spec = pipeline(tmp_path, """\
        outputs:
          greeting:
            type: uri_file
            path: azureml://datastores/workspaceblobstore/paths/${{name}}/hello_world.txt
            mode: rw_mount
          report:
            path: azureml://datastores/workspaceblobstore/paths/reports/fixed
        jobs:
          to_file:
            type: command
            command: echo world > ${{outputs.output}}
            environment: {image: python:3.11-slim}
            outputs:
              output: ${{parent.outputs.greeting}}
          to_folder:
            type: command
            command: echo folder > ${{outputs.output}}/hello-folder.txt
            environment: {image: python:3.11-slim}
            outputs:
              output:
                type: uri_folder
                path: azureml://datastores/workspaceblobstore/paths/custom/${{name}}/
          write_report:
            type: command
            command: echo report > ${{outputs.out}}/r.txt
            environment: {image: python:3.11-slim}
            outputs:
              out: ${{parent.outputs.report}}
          read_report:
            type: command
            component:
              command: cat ${{inputs.report}} && ls ${{inputs.after}}
              environment: {image: python:3.11-slim}
              inputs:
                report: {type: uri_file}
                after: {type: uri_folder}
            inputs:
              report:
                type: uri_file
                path: azureml://datastores/workspaceblobstore/paths/reports/fixed/r.txt
              after: ${{parent.jobs.write_report.outputs.out}}
        """)
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = run(workspace, spec)
    assert shown["status"] == "Completed", failures(shown)
    store = workspace.folder / "datastores" / "workspaceblobstore"
    assert (store / shown["name"] / "hello_world.txt").read_text() == "world\n"
    assert shown["outputs"]["greeting"] == str(store / shown["name"] / "hello_world.txt")
    step_job = shown["jobs"]["to_folder"]["name"]
    assert (store / "custom" / step_job / "hello-folder.txt").read_text() == "folder\n"
    assert (store / "reports" / "fixed" / "r.txt").read_text() == "report\n"
    log = Path(jobs.show(workspace, shown["jobs"]["read_report"]["name"])["log_path"]).read_text()
    assert log.split() == ["report", "r.txt"]


def test_remote_uris_mapped_to_local_copies_run_offline_and_an_unmapped_one_names_the_map_command(
        tmp_path: Path) -> None:
    # Microsoft's examples read https://azuremlexamples.blob.core.windows.net/datasets/..., wasbs://
    # and datastore paths; offline, a local copy stands for each without editing the spec.
    write(tmp_path, "copy/iris/iris.csv", "5.1,3.5\n")
    write(tmp_path, "blob/titanic.csv", "1,0\n")
    write(tmp_path, "store/folder/a.txt", "from the datastore copy\n")
    env = {"AMLLAB_WORKSPACE": str(tmp_path / ".amllab")}
    for prefix, folder in (("https://example.blob.core.windows.net/datasets/", "copy"),
                           ("wasbs://data@example.blob.core.windows.net/", "blob"),
                           ("azureml://datastores/shared/paths/", "store")):
        mapped = aml_run("data", "map", "--uri-prefix", prefix, "--path", folder, cwd=tmp_path, env=env)
        assert mapped.returncode == 0, mapped.stderr
    listed = aml_run("data", "map", "--list", "-o", "json", cwd=tmp_path, env=env)
    assert listed.returncode == 0 and "wasbs://data@example.blob.core.windows.net/" in listed.stdout
    spec = write(tmp_path, "job.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
        command: cat ${{inputs.iris}}/iris.csv ${{inputs.titanic}} ${{inputs.stored}}/a.txt
        environment: {image: python:3.11-slim}
        inputs:
          iris: {type: uri_folder, path: https://example.blob.core.windows.net/datasets/iris/}
          titanic: {type: uri_file, path: wasbs://data@example.blob.core.windows.net/titanic.csv}
          stored: {type: uri_folder, path: azureml://datastores/shared/paths/folder}
        """)
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = run(workspace, spec)
    assert shown["status"] == "Completed", shown["error"]
    assert Path(shown["log_path"]).read_text() == "5.1,3.5\n1,0\nfrom the datastore copy\n"
    unmapped = write(tmp_path, "unmapped.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
        command: cat ${{inputs.data}}
        environment: {image: python:3.11-slim}
        inputs:
          data: {type: uri_file, path: abfss://lake@example.dfs.core.windows.net/raw/2024/data.csv}
        """)
    refused = aml_run("job", "create", "--file", str(unmapped), cwd=tmp_path, env=env)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "aml-run data map --uri-prefix abfss://lake@example.dfs.core.windows.net/raw/2024/ --path" \
        in refused.stderr


LONG = "azureml://subscriptions/{sub}/{groups}/{rg}/workspaces/{ws}/datastores/{store}/paths/"


def test_the_long_and_short_forms_of_a_datastore_uri_name_the_same_path_as_output_input_and_map(
        tmp_path: Path) -> None:
    # Microsoft's distributed CIFAR-10 notebook writes an output to the long form
    # (azureml://subscriptions/.../workspaces/<ws>/datastores/workspaceblobstore/paths/CIFAR-10)
    # and the next job reads it back. Either form, any workspace named: the local workspace.
    first = LONG.format(sub="00000000-1111", groups="resourcegroups", rg="rg-a", ws="ws-a", store="workspaceblobstore")
    other = LONG.format(sub="2222", groups="resourceGroups", rg="other-rg", ws="other-ws", store="workspaceblobstore")
    short = "azureml://datastores/workspaceblobstore/paths/"
    write(tmp_path, "copy/folder/m.txt", "from the mapped copy\n")
    env = {"AMLLAB_WORKSPACE": str(tmp_path / ".amllab")}
    mapped = aml_run("data", "map", "--uri-prefix", LONG.format(sub="3", groups="resourcegroups", rg="r", ws="w",
                                                               store="shared"),
                     "--path", "copy", "-o", "json", cwd=tmp_path, env=env)
    assert mapped.returncode == 0, mapped.stderr
    assert '"uri_prefix": "azureml://datastores/shared/paths/"' in mapped.stdout  # kept as the short form
    writer = write(tmp_path, "writer.yml", f"""\
        $schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
        command: echo long > ${{{{outputs.long}}}}/a.txt && echo short > ${{{{outputs.short}}}}/b.txt
        environment: {{image: python:3.11-slim}}
        outputs:
          long: {{type: uri_folder, path: "{first}handoff/long/"}}
          short: {{type: uri_folder, path: "{short}handoff/short/"}}
        """)
    reader = write(tmp_path, "reader.yml", f"""\
        $schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
        command: >-
          cat ${{{{inputs.long_as_short}}}}/a.txt ${{{{inputs.long_as_long}}}}/a.txt ${{{{inputs.short_as_long}}}}
          ${{{{inputs.mapped}}}}/m.txt
        environment: {{image: python:3.11-slim}}
        inputs:
          long_as_short: {{type: uri_folder, path: "{short}handoff/long"}}
          long_as_long: {{type: uri_folder, path: "{other}handoff/long/"}}
          short_as_long: {{type: uri_file, path: "{other}handoff/short/b.txt", mode: download}}
          mapped: {{type: uri_folder, path: "{first.replace('workspaceblobstore', 'shared')}folder"}}
        """)
    workspace = Workspace.locate(tmp_path / ".amllab")
    wrote = run(workspace, writer)
    assert wrote["status"] == "Completed", wrote["error"]
    store = workspace.folder / "datastores" / "workspaceblobstore"
    assert Path(wrote["outputs"]["long"]) == store / "handoff" / "long"
    assert (store / "handoff" / "long" / "a.txt").read_text() == "long\n"
    read = run(workspace, reader)
    assert read["status"] == "Completed", read["error"]
    assert Path(read["log_path"]).read_text() == "long\nlong\nshort\nfrom the mapped copy\n"


def test_the_default_datastores_azureml_folder_exists_in_a_new_workspace(tmp_path: Path) -> None:
    # Microsoft's datastore-path pipeline mounts the default datastore's azureml/ folder (where the
    # service keeps jobs' files) and writes under it through a pipeline output.
    write(tmp_path, "src/list.py", """\
        import os, sys
        os.makedirs(sys.argv[2], exist_ok=True)
        open(os.path.join(sys.argv[2], "hello.txt"), "w").write(f"saw {os.path.isdir(sys.argv[1])}")
        """)
    spec = pipeline(tmp_path, """\
        outputs:
          written:
            path: azureml://datastores/workspaceblobstore/paths/azureml/from_pipeline
        jobs:
          mount_root:
            type: command
            code: src
            command: python list.py ${{inputs.root}} ${{outputs.out}}
            environment: {image: python:3.11-slim}
            inputs:
              root: {type: uri_folder, path: azureml://datastores/workspaceblobstore/paths/azureml, mode: ro_mount}
            outputs:
              out: ${{parent.outputs.written}}
          read_back:
            type: command
            command: cat ${{inputs.file}}
            environment: {image: python:3.11-slim}
            inputs:
              file:
                type: uri_file
                path: azureml://datastores/workspaceblobstore/paths/azureml/from_pipeline/hello.txt
              after: ${{parent.jobs.mount_root.outputs.out}}
        """)
    shown = run(Workspace.locate(tmp_path / ".amllab"), spec)
    assert shown["status"] == "Completed", failures(shown)


def test_a_components_inline_environment_reads_the_conda_file_beside_the_component(tmp_path: Path) -> None:
    # image_classification_with_densenet: each component folder holds its own conda.yaml and
    # names it `conda_file: ./conda.yaml`; the pipeline's folder has none.
    write(tmp_path, "components/tell/tell.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        type: command
        name: tell
        version: "1"
        command: python -c "import yaml; print('yaml', yaml.__version__)"
        environment:
          conda_file: ./conda.yaml
          image: mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04:latest
        """)
    write(tmp_path, "components/tell/conda.yaml", """\
        name: tell
        dependencies:
          - pip
          - pip:
            - pyyaml
        """)
    spec = pipeline(tmp_path / "pipelines", """\
        jobs:
          tell:
            type: command
            component: ../components/tell/tell.yml
        """)
    shown = run(Workspace.locate(tmp_path / ".amllab"), spec)
    assert shown["status"] == "Completed", failures(shown)


def test_a_steps_primitive_output_reaches_the_next_step_as_its_value(tmp_path: Path) -> None:
    # The python-function components of Microsoft's 1b notebook (@command_component returning a
    # str): `mldesigner execute` writes the value under the output's path, and the next step's
    # input is that value, not a path.
    write(tmp_path, "pick.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        type: command
        name: pick
        command: printf '0.25\\n' > ${{outputs.rate}}/output && printf 'adam' > ${{outputs.name}}/output
        environment: {image: python:3.11-slim}
        outputs:
          rate: {type: number}
          name: {type: string}
        """)
    write(tmp_path, "use.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        type: command
        name: use
        command: echo "rate=${{inputs.rate}} optimizer=${{inputs.optimizer}}"
        environment: {image: python:3.11-slim}
        inputs:
          rate: {type: number}
          optimizer: {type: string}
        """)
    spec = pipeline(tmp_path, """\
        jobs:
          pick: {type: command, component: ./pick.yml}
          use:
            type: command
            component: ./use.yml
            inputs:
              rate: ${{parent.jobs.pick.outputs.rate}}
              optimizer: ${{parent.jobs.pick.outputs.name}}
        """)
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = run(workspace, spec)
    assert shown["status"] == "Completed", failures(shown)
    log = Path(jobs.show(workspace, shown["jobs"]["use"]["name"])["log_path"]).read_text()
    assert log.strip() == "rate=0.25 optimizer=adam"
    # A producer that wrote no value fails its consumer, saying where the value was looked for.
    write(tmp_path, "pick.yml", (tmp_path / "pick.yml").read_text().replace(
        "printf '0.25\\n' > ${{outputs.rate}}/output && ", ""))
    shown = run(workspace, spec)
    assert shown["status"] == "Failed"
    message = shown["jobs"]["use"]["error"]["message"]
    assert "step 'pick' wrote no value for its 'rate' output" in message, message
