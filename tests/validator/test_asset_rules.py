"""The asset family (AML8xx): the `azureml:` reference grammar, local paths and entry scripts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator.engine import lint_file
from validator.rules.assets import NOUNS, reference_problem

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ARM = "azureml:/subscriptions/0/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/ws"


@pytest.mark.parametrize("value,role", [
    ("azureml:my-env:3", "environment"),
    ("azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest", "environment"),
    ("azureml://registries/azureml/environments/sklearn-1.5/labels/latest", "environment"),
    ("azureml://registries/azureml/environments/sklearn-1.5/versions/14", "environment"),
    (ARM + "/environments/my-env/versions/2", "environment"),
    ("azureml://registries/contoso/components/train/versions/1", "component"),
    ("azureml:train_model@latest", "component"),
    ("azureml://datastores/workspaceblobstore/paths/iris/iris.csv", "data"),
    ("azureml://datastores/${{default_datastore}}/paths/${{name}}/", "output"),
    ("azureml://subscriptions/0/resourcegroups/rg/workspaces/ws/datastores/blob/paths/p/", "data"),
    ("azureml://jobs/brave_river/outputs/artifacts/paths/model/", "model"),
    ("azureml://registries/contoso/models/clf/versions/1", "model"),
    ("azureml:${{parent.inputs.env_name}}:1", "environment"),
])
def test_accepted_forms(value: str, role: str) -> None:
    assert reference_problem(value, role) == (None, None, False)


@pytest.mark.parametrize("value,role", [
    ("azureml:my-env", "environment"),
    ("azureml:iris", "data"),
    ("azureml:train_model", "component"),
    (ARM + "/environments/my-env", "environment"),
    # Registry URIs without /versions/ or /labels/: the default version (issue 10, pattern 5).
    ("azureml://registries/azureml/environments/sklearn-1.5", "environment"),
    ("azureml://registries/contoso/components/train/", "component"),
    ("azureml://registries/contoso/models/clf", "model"),
])
def test_unpinned_forms(value: str, role: str) -> None:
    problem, _, unpinned = reference_problem(value, role)
    assert problem is None and unpinned


@pytest.mark.parametrize("value,role,words", [
    ("azureml:my-env:", "environment", "no version"),
    ("azureml:@latest", "data", "no data asset name"),
    ("azureml:iris@", "data", "no label"),
    ("azureml:", "environment", "names no environment"),
    ("azureml:a:1:2", "environment", "one colon"),
    ("azureml:my data:1", "data", "not a valid name"),
    ("azureml:x:1@latest", "data", "not both"),
    ("azureml://registries/azureml/environments/sklearn-1.5/version/3", "environment", "after the name"),
    ("azureml://registries/azureml/models/sklearn", "environment", "names models"),
    ("azureml://registries/azureml", "environment", "not a registry reference"),
    ("azureml://registries/azureml/models/sklearn/versions/1", "environment", "names models"),
    ("azureml://registries/azureml/widgets/x/versions/1", "data", "not an asset type"),
    ("azureml://datastores/blob/iris.csv", "data", "not a datastore URI"),
    ("azureml://datastores/blob/paths/x", "environment", "datastore path cannot"),
    ("azureml://my-env:1", "environment", "not an Azure ML URI"),
    ("azureml:model:1", "output", "storage location"),
    ("azureml:/subscriptions/0/rg", "component", "not a valid ARM id"),
])
def test_malformed_forms(value: str, role: str, words: str) -> None:
    problem, hint, _ = reference_problem(value, role)
    assert problem is not None and words in problem + " " + (hint or "")


@SETTINGS
@given(st.text(max_size=80), st.sampled_from(sorted(NOUNS)))
def test_reference_grammar_never_raises(text: str, role: str) -> None:
    problem, hint, unpinned = reference_problem("azureml:" + text, role)
    assert problem is None or problem.strip() == problem


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: report
version: "1"
code: {code}
environment: azureml:AzureML-sklearn-1.5@latest
command: {command}
"""


@pytest.mark.parametrize("code,command,includes,expected", [
    ("./src", "python report.py", [], set()),
    ("./src", "python shared/tool.py", ["./lib/shared"], set()),
    ("./src", "python tool.py", ["./lib/shared"], {"AML804"}),
    ("./src/report.py", "python report.py", [], set()),
    ("./src/report.py", "python other.py", [], {"AML804"}),
    ("./src", "git clone https://x/y.git && python y/train.py", [], set()),
    ("./src", "python ${{inputs.script}}", [], set()),
    ("./missing", "python report.py", [], {"AML803"}),
    ("./src", "python report.py", ["./lib/absent"], {"AML803"}),
])
def test_entry_script_and_includes(tmp_path: Path, code: str, command: str, includes: list[str],
                                   expected: set[str]) -> None:
    write(tmp_path, {"src/report.py": "print('report')\n", "lib/shared/tool.py": "print('tool')\n"})
    text = COMPONENT.format(code=code, command=command)
    if includes:
        text += "additional_includes:\n" + "".join(f"  - {item}\n" for item in includes)
    spec = tmp_path / "component.yml"
    spec.write_text(text)
    found = {d.code for d in lint_file(spec).diagnostics if d.code.startswith("AML8")}
    assert found == expected


def test_conda_file_must_be_a_yaml_mapping(tmp_path: Path) -> None:
    write(tmp_path, {"src/report.py": "print(1)\n", "env/conda.yml": "channels: [conda-forge]\ndependencies: [python=3.11]\n",
                     "env/requirements.txt": "mlflow\nscikit-learn\n"})
    for conda, expected in (("./env/conda.yml", set()), ("./env/requirements.txt", {"AML803"}),
                            ("./env", {"AML803"}), ("./env/absent.yml", {"AML803"})):
        spec = tmp_path / "component.yml"
        spec.write_text(COMPONENT.format(code="./src", command="python report.py").replace(
            "environment: azureml:AzureML-sklearn-1.5@latest",
            f"environment:\n  image: mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04\n  conda_file: {conda}"))
        assert {d.code for d in lint_file(spec).diagnostics if d.code.startswith("AML8")} == expected, conda


ENV_FILE = "image: mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04\nconda_file: conda.yml\n"
CONDA = "channels: [conda-forge]\ndependencies: [python=3.11]\n"


@pytest.mark.parametrize("environment,files,expected", [
    # The older `file:` form (issue 10, pattern 6): the file is read as an inline environment.
    ("file:./env/env.yml", {"env/env.yml": ENV_FILE, "env/conda.yml": CONDA}, {"AML810"}),
    ("file:env/env.yml", {"env/env.yml": "$schema: x\nname: e\nversion: 2\n" + ENV_FILE,
                          "env/conda.yml": CONDA}, {"AML810"}),
    ("file:./env/absent.yml", {}, {"AML810", "AML811"}),
    ("file:./env", {"env/conda.yml": CONDA}, {"AML810", "AML811"}),
    ("file:./env/conda.yml", {"env/conda.yml": CONDA}, {"AML810", "AML811"}),
    ("file:./env/env.yml", {"env/env.yml": ENV_FILE.replace("conda_file", "conda_fle"),
                            "env/conda.yml": CONDA}, {"AML810", "AML811"}),
    ("file:./env/env.yml", {"env/env.yml": ENV_FILE}, {"AML810", "AML811"}),  # conda file not next to it
    ("file:./env/env.yml", {"env/env.yml": ENV_FILE.replace("conda.yml", "file:conda.yml"),
                            "env/conda.yml": CONDA}, {"AML810", "AML811"}),
])
def test_file_prefix_environment(tmp_path: Path, environment: str, files: dict[str, str],
                                 expected: set[str]) -> None:
    write(tmp_path, {"src/report.py": "print(1)\n", **files})
    spec = tmp_path / "component.yml"
    spec.write_text(COMPONENT.format(code="./src", command="python report.py").replace(
        "azureml:AzureML-sklearn-1.5@latest", environment))
    found = {d.code for d in lint_file(spec).diagnostics}
    assert found == expected, environment


def test_file_prefix_component_is_linted_as_its_path(tmp_path: Path) -> None:
    write(tmp_path, {"src/report.py": "print(1)\n",
                     "report.yml": COMPONENT.format(code="./src", command="python report.py"),
                     "broken.yml": COMPONENT.format(code="./src", command="python absent.py")})
    pipeline = ("$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json\ntype: pipeline\n"
                "settings:\n  default_compute: azureml:cpu-cluster\njobs:\n  a:\n    type: command\n"
                "    component: {a}\n  b:\n    type: command\n    component: {b}\n")
    spec = tmp_path / "pipeline.yml"
    for prefix in ("", "file:"):
        spec.write_text(pipeline.format(a=f"{prefix}./report.yml", b=f"{prefix}./broken.yml"))
        codes = sorted(d.code for d in lint_file(spec).diagnostics if d.code != "AML810")
        assert codes == ["AML516"], (prefix, codes)


# -- datastore URIs: the long form is the short form ----------------------------------------------

_DATASTORES = st.sampled_from(["workspaceblobstore", "${{default_datastore}}", "my_store-2", "bad name", "-x", "é"])
_PATHS = st.lists(st.sampled_from(["raw", "iris.csv", "..", ".", "${{name}}", "a b", ""]), max_size=4).map("/".join)
_WORKSPACES = st.tuples(st.sampled_from(["00000000-0000-0000-0000-000000000000", "sub"]),
                        st.sampled_from(["resourcegroups", "resourceGroups"]), st.sampled_from(["rg", "my-rg"]),
                        st.sampled_from(["ws", "other-ws"]))


@settings(max_examples=100, deadline=None)
@given(_DATASTORES, _PATHS, _WORKSPACES, st.sampled_from(["data", "model", "output"]))
def test_the_long_form_of_a_datastore_uri_is_linted_as_its_short_form(datastore: str, path: str,
                                                                      workspace: tuple, role: str) -> None:
    # azure-ai-ml reads azureml://subscriptions/<s>/resourcegroups/<rg>/workspaces/<ws>/datastores/<d>/paths/<p>
    # as the datastore path azureml://datastores/<d>/paths/<p> (AzureMLDatastorePathUri).
    from validator.references import datastore_path
    from validator.rules.assets import datastore_path_problem

    short_start = "azureml://"
    long_start = "azureml://subscriptions/{}/{}/{}/workspaces/{}/".format(*workspace)
    short = f"{short_start}datastores/{datastore}/paths/{path}"
    long = f"{long_start}datastores/{datastore}/paths/{path}"
    assert datastore_path(long) == datastore_path(short) == (datastore, path)
    assert reference_problem(long, role) == reference_problem(short, role) == (None, None, False)
    found = datastore_path_problem(long)
    as_short = tuple(part.replace(long_start, short_start) for part in found) if found else None
    assert as_short == datastore_path_problem(short)


@pytest.mark.parametrize("kind", ["job", "pipeline"])
def test_a_spec_with_long_form_datastore_uris_gets_the_findings_of_its_short_form(tmp_path: Path, kind: str) -> None:
    # Every place a datastore path is written: a job's inputs and outputs, a pipeline's, a step's.
    job = """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
        command: python main.py ${{inputs.data}} ${{inputs.f}} ${{outputs.model}} ${{outputs.escape}}
        code: src
        environment: azureml:AzureML-sklearn-1.5@latest
        inputs:
          data: {type: uri_file, path: "STORE/churn/raw/"}
          f: {type: uri_file, path: "STORE/churn/train.csv", mode: download}
        outputs:
          model: {type: uri_folder, path: "STORE/models/${{name}}/${{inputs.f}}/"}
          escape: {type: uri_folder, path: "STORE/../x/"}
        """
    pipeline = """\
        $schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
        type: pipeline
        inputs:
          raw: {type: uri_folder, path: "STORE/churn/raw/"}
        outputs:
          final: {type: uri_folder, path: "STORE/final/./${{name}}/"}
        jobs:
          step:
            type: command
            command: python main.py ${{inputs.x}} ${{inputs.y}} ${{outputs.o}} ${{outputs.p}}
            code: src
            environment: azureml:AzureML-sklearn-1.5@latest
            inputs:
              x: ${{parent.inputs.raw}}
              y: {type: uri_folder, path: "STORE/other/"}
            outputs:
              o: ${{parent.outputs.final}}
              p: {type: uri_folder, path: "STORE/step/${{name}}/"}
        """
    import textwrap

    findings = {}
    for form, store in (("short", "azureml://datastores/workspaceblobstore/paths"),
                        ("long", "azureml://subscriptions/0/resourceGroups/rg/workspaces/ws/datastores/"
                                 "workspaceblobstore/paths")):
        folder = tmp_path / form
        (folder / "src").mkdir(parents=True)
        (folder / "src" / "main.py").write_text("")
        spec = folder / f"{kind}.yml"
        spec.write_text(textwrap.dedent(job if kind == "job" else pipeline).replace("STORE", store))
        findings[form] = sorted((d.code, d.line, d.message.replace(store, "STORE")) for d in lint_file(spec).diagnostics)
    assert findings["long"] == findings["short"]
    expected = {"AML219", "AML217", "AML807"} if kind == "job" else {"AML807"}
    assert expected <= {code for code, _, _ in findings["short"]}, findings["short"]
