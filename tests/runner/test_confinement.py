"""Nothing a spec or a command line names can make aml-run read or write outside its workspace:
datastore paths with `..`, and names (computes, data, environments, components, versions) that
become folders. Real `aml-run` processes in a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amlrun import aml_run, nothing_ran, write_job
from validator.errors import UsageError
from validator.names import KINDS, name_problem
from validator.workspace import register

ESCAPE = "azureml://datastores/workspaceblobstore/paths/../../../../X/"
# The same path in the long form, which names a workspace first: the local one stands for it.
LONG_ESCAPE = ESCAPE.replace("azureml://", "azureml://subscriptions/0/resourceGroups/rg/workspaces/ws/")


# -- R3: datastore paths ------------------------------------------------------------------------

def test_lint_refuses_a_datastore_path_that_climbs_out(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", f"""\
        command: echo ${{{{outputs.model}}}}
        outputs:
          model: {{type: uri_folder, path: {ESCAPE}}}
        """)
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode == 1 and "AML807" in result.stderr, result.stderr
    assert not (tmp_path / "X").exists() and nothing_ran(tmp_path)


@pytest.mark.parametrize("escape", [ESCAPE, LONG_ESCAPE], ids=["short", "long"])
@pytest.mark.parametrize("port", ["output", "input"])
def test_the_runner_refuses_it_even_with_the_rule_suppressed(tmp_path: Path, port: str, escape: str) -> None:
    """Defence in depth: the runner checks where a datastore path lands, whatever lint said."""
    lab = tmp_path / "deep" / "er" / "lab"
    (lab / ".amllab").mkdir(parents=True)
    outside = tmp_path / "deep" / "X"
    if port == "input":
        outside.mkdir(parents=True)
        (outside / "secret.txt").write_text("not yours\n")
        body = f"""\
            command: ls ${{{{inputs.data}}}}
            inputs:
              data:
                type: uri_folder
                path: {escape}  # amllab: ignore[AML807]
            """
    else:
        body = f"""\
            command: touch ${{{{outputs.model}}}}/written
            outputs:
              model:
                type: uri_folder
                path: {escape}  # amllab: ignore[AML807]
            """
    spec = write_job(lab, "job", body)
    result = aml_run("job", "create", "--file", str(spec), cwd=lab)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "leaves the datastore" in result.stderr and "Traceback" not in result.stderr
    assert nothing_ran(lab)
    assert (not outside.exists()) if port == "output" else sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


@pytest.mark.parametrize("port,path", [
    ("output", "azureml://datastores/workspaceblobstore/models/"),
    ("output", "azureml://subscriptions/0/resourcegroups/rg/workspaces/ws/datastores/workspaceblobstore"),
    ("input", "azureml://subscriptions/0/resourcegroups/rg/workspaces/ws/datastores/workspaceblobstore/rows/"),
])
def test_a_malformed_datastore_uri_is_refused_not_read_or_written_somewhere_else(tmp_path: Path, port: str,
                                                                                 path: str) -> None:
    # With the linter's finding suppressed, an output that is no datastore path would otherwise
    # land in the run folder, where the job that reads the URI next never finds it.
    section = "outputs" if port == "output" else "inputs"
    spec = write_job(tmp_path, "job", f"""\
        command: echo ${{{{{section}.data}}}}
        {section}:
          data:
            type: uri_folder
            path: {path}  # amllab: ignore[AML801]
        """)
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert f"{port} 'data': {path} is not a datastore path: write azureml://datastores/<datastore>/paths/<path>" \
        in result.stderr and "Traceback" not in result.stderr
    assert nothing_ran(tmp_path)


def test_a_datastore_path_inside_the_datastore_still_works(tmp_path: Path) -> None:
    (tmp_path / ".amllab" / "datastores" / "workspaceblobstore" / "iris").mkdir(parents=True)
    (tmp_path / ".amllab" / "datastores" / "workspaceblobstore" / "iris" / "rows.csv").write_text("a\n1\n")
    spec = write_job(tmp_path, "job", """\
        command: cat ${{inputs.data}}/rows.csv > ${{outputs.copy}}/rows.csv
        inputs:
          data: {type: uri_folder, path: "azureml://datastores/workspaceblobstore/paths/iris/"}
        outputs:
          copy: {type: uri_folder, path: "azureml://datastores/${{default_datastore}}/paths/copies/${{name}}/"}
        """)
    result = aml_run("job", "create", "--file", str(spec), "--stream", "-o", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    copies = tmp_path / ".amllab" / "datastores" / "workspaceblobstore" / "copies"
    assert [p.read_text() for p in copies.glob("*/rows.csv")] == ["a\n1\n"]


# -- R4: names that become paths ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../../X", "a/b", "..", ".", "-x", "x" * 25, "cluster-1", "ab"])
def test_compute_create_refuses_a_name_the_service_refuses(tmp_path: Path, name: str) -> None:
    result = aml_run("compute", "create", f"--name={name}", cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert "compute name" in result.stderr and "is not valid" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "X").exists() and not (tmp_path.parent / "X").exists()
    assert not (tmp_path / ".amllab" / "workspace.yml").exists()


@pytest.mark.parametrize("group,extra", [("data", ["--path", "rows"]), ("environment", [])])
@pytest.mark.parametrize("name,version", [("../evil", "1"), ("a/b", "1"), ("good", "../1"), ("good", "1/2")])
def test_data_and_environments_refuse_names_that_are_paths(tmp_path: Path, group: str, extra: list[str],
                                                          name: str, version: str) -> None:
    (tmp_path / "rows").mkdir()
    result = aml_run(group, "create", f"--name={name}", f"--version={version}", *extra, cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert "is not valid" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / ".amllab" / "workspace.yml").exists()


def test_a_job_on_a_compute_with_a_hand_edited_name_never_writes_outside(tmp_path: Path) -> None:
    """The registry is a file a team may edit by hand: the name is checked where it is used too."""
    (tmp_path / ".amllab").mkdir()
    (tmp_path / ".amllab" / "workspace.yml").write_text(
        "version: 1\ncomputes:\n  ../../X: {type: cpu, max_instances: 1}\n")
    spec = write_job(tmp_path, "job", "command: echo hi\ncompute: azureml:../../X\n")
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "X").exists() and not (tmp_path.parent / "X").exists()


def test_valid_names_register(tmp_path: Path) -> None:
    assert aml_run("compute", "create", "--name", "cpu-cluster", cwd=tmp_path).returncode == 0
    (tmp_path / "rows").mkdir()
    created = aml_run("data", "create", "--name", "churn_raw-2", "--version", "1.0.2", "--path", "rows",
                      "-o", "json", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["version"] == "1.0.2"


def test_the_registry_itself_refuses_path_names(tmp_path: Path) -> None:
    """validator.workspace.register is the one writer of workspace.yml: it checks too."""
    with pytest.raises(UsageError, match="compute name '../x' is not valid"):
        register(tmp_path, "computes", "../x", None, {"type": "cpu"})
    with pytest.raises(UsageError, match="version '../1' is not valid"):
        register(tmp_path, "data", "rows", "../1", {"type": "uri_folder", "path": "p"})
    assert not (tmp_path / "workspace.yml").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_no_kind_admits_a_name_that_is_a_path(kind: str) -> None:
    for name in ("..", ".", "../x", "a/b", "a\\b", "", "x\n", "/abs"):
        assert name_problem(kind, name) is not None, (kind, name)


def test_the_linter_agrees_with_the_names_the_runner_accepts() -> None:
    """Every name aml-run registers is one AML801 accepts in a reference, and the component name
    rule of AML530 is the one validator.names holds."""
    from validator.rules import assets, components

    for name in ("cpu-cluster", "churn_raw-2", "A1", "x" * 255):
        assert name_problem("data", name) is None
        assert assets.reference_problem(f"azureml:{name}:1", "data")[0] is None
    assert components.COMPONENT_NAME_RE.pattern == "[a-z][a-z0-9_]*"
    assert name_problem("component definition", "Train") is not None
    assert name_problem("component definition", "train_model") is None


def test_a_step_name_that_is_a_path_is_refused_even_with_its_rule_suppressed(tmp_path: Path) -> None:
    spec = tmp_path / "pipeline.yml"
    spec.write_text("$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json\n"
                    "type: pipeline\njobs:\n  ../../../escaped:  # amllab: ignore[AML501]\n    type: command\n"
                    "    command: echo hi\n    environment: {image: python:3.11-slim}\n")
    result = aml_run("job", "create", "--file", str(spec), "--stream", cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "step name '../../../escaped' is not valid" in result.stderr
    assert not list(tmp_path.rglob("escaped")) and nothing_ran(tmp_path)


def test_an_output_registered_under_a_path_name_is_refused_before_it_runs(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", """\
        command: echo hi > ${{outputs.report}}/r.txt
        outputs:
          report: {type: uri_folder, name: ../evil, version: "1"}
        """)
    result = aml_run("job", "create", "--file", str(spec), cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "data name '../evil' is not valid" in result.stderr and "Traceback" not in result.stderr
    assert nothing_ran(tmp_path)
