"""The local workspace registry that `aml-lint --workspace` checks references against."""

from __future__ import annotations

from pathlib import Path

import pytest

from amllint import GOOD, run
from validator.errors import UsageError
from validator.workspace import load_registry, parse_reference

REGISTRY = """\
version: 1
data:
  churn-raw:
    "3": {type: uri_folder, path: data/churn-raw}
environments:
  sklearn-train:
    "2": {python: python3, labels: [stable]}
computes:
  cpu-cluster: {type: cpu}
"""


@pytest.mark.parametrize("reference,parsed", [
    ("azureml:churn-raw:3", ("churn-raw", "3", None)),
    ("azureml:churn-raw@latest", ("churn-raw", None, "latest")),
    ("azureml:cpu-cluster", ("cpu-cluster", None, None)),
    ("azureml://registries/azureml/environments/x/versions/1", None),
    ("azureml:/subscriptions/s/resourceGroups/r/workspaces/w/data/d/versions/1", None),
    ("azureml:", None), ("azureml:x:", None), ("azureml:@latest", None),
])
def test_parse_reference(reference: str, parsed) -> None:
    assert parse_reference(reference) == parsed


def test_registry_lookups(tmp_path: Path) -> None:
    (tmp_path / "workspace.yml").write_text(REGISTRY)
    registry = load_registry(tmp_path)
    assert registry.has("data", "churn-raw", "3") and not registry.has("data", "churn-raw", "4")
    assert registry.has("data", "churn-raw", label="latest")
    assert registry.has("environments", "sklearn-train", label="stable")
    assert not registry.has("environments", "sklearn-train", label="beta")
    assert registry.has("computes", "cpu-cluster") and not registry.has("computes", "gpu-cluster")
    assert registry.versions("data", "churn-raw") == ["3"]


def test_an_empty_folder_is_an_empty_workspace(tmp_path: Path) -> None:
    assert not load_registry(tmp_path).has("computes", "cpu-cluster")


@pytest.mark.parametrize("text,message", [
    ("- a\n- b\n", "must be a mapping"),
    ("data: [1, 2]\n", "`data` must be a mapping of names"),
    ("data:\n  churn: 3\n", "`data.churn` must map versions to entries"),
    ("data: {\n", "cannot read the workspace registry"),
])
def test_a_broken_registry_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "workspace.yml").write_text(text)
    with pytest.raises(UsageError, match=message):
        load_registry(tmp_path)


def test_cli_workspace_flag_and_environment_variable(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "workspace.yml").write_text(REGISTRY)
    (tmp_path / "job.yml").write_text(GOOD)
    assert run("job.yml", cwd=tmp_path).returncode == 0  # no workspace: nothing to check against
    assert run("--workspace", "ws", "job.yml", cwd=tmp_path).returncode == 0  # all registered
    (tmp_path / "ws" / "workspace.yml").write_text(REGISTRY.replace('"2": {python', '"1": {python'))
    result = run("job.yml", cwd=tmp_path, env={"AMLLAB_WORKSPACE": "ws"})
    assert result.returncode == 1
    assert "AML805 error: environment 'sklearn-train' has no version 2 in workspace 'ws' (registered: 1)" \
        in result.stdout
    missing = run("--workspace", "nope", "job.yml", cwd=tmp_path)
    assert missing.returncode == 2 and "workspace folder nope does not exist" in missing.stderr


@pytest.mark.parametrize("reference", ["azureml:AzureML-sklearn-1.5@latest", "azureml:AzureML-sklearn-1.5:12",
                                       "azureml:AzureML-ACPT-pytorch-2.2-cuda12.1@latest"])
def test_curated_environments_need_no_registration(tmp_path: Path, reference: str) -> None:
    """They exist in every workspace (resource-curated-environments); a locally registered
    curated name is checked as any registered name is."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "workspace.yml").write_text(REGISTRY)
    (tmp_path / "job.yml").write_text(GOOD.replace("azureml:sklearn-train:2", reference))
    assert "AzureML-" in (tmp_path / "job.yml").read_text()
    result = run("--workspace", "ws", "job.yml", cwd=tmp_path)
    assert result.returncode == 0 and "AML805" not in result.stdout, result.stdout
    name = reference.split(":", 1)[1].split("@")[0].split(":")[0]
    (tmp_path / "ws" / "workspace.yml").write_text(
        REGISTRY.replace("computes:", f"  {name}:\n    \"99\": {{python: python3}}\ncomputes:"))
    registered = run("--workspace", "ws", "job.yml", cwd=tmp_path)
    if reference.endswith(":12"):
        assert registered.returncode == 1 and f"environment '{name}' has no version 12" in registered.stdout
    else:
        assert registered.returncode == 0, registered.stdout


def _register_many(folder: str, worker: int) -> None:
    from validator.workspace import register

    for index in range(10):
        register(Path(folder), "data", f"asset-{worker}", None, {"type": "uri_folder", "path": f"d{index}"})


def test_concurrent_registrations_lose_nothing(tmp_path: Path) -> None:
    """aml-run ... create from several shells at once: the lock and the atomic rename keep
    every entry, and auto-numbered versions never collide."""
    import multiprocessing

    from validator.workspace import load_registry

    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_register_many, args=(str(tmp_path), w)) for w in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    registry = load_registry(tmp_path)
    assert {name: registry.versions("data", name) for name in registry.assets["data"]} == {
        f"asset-{w}": [str(v) for v in range(1, 11)] for w in range(6)}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
