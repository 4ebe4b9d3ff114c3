"""The examples runner's offline data: a data asset asked for by a name the checkout's asset files
no longer give it is registered from the file that defines the same data, and remote data with no
true copy is logged with why. Registration is recorded, not run: no checkout is needed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("run_examples", ROOT / "tools" / "run_examples.py")
run_examples = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("run_examples", run_examples)  # its dataclasses look their module up
_SPEC.loader.exec_module(run_examples)


def registrar(tmp_path: Path, assets=None):
    log: list[str] = []
    calls: list[tuple[str, ...]] = []
    reg = run_examples.Registrar(tmp_path / "workspace", tmp_path / "checkout", assets or run_examples.Assets(), log)
    reg._aml = lambda *args: calls.append(args)  # record, do not run aml-run
    return reg, calls, log


def test_a_renamed_data_asset_is_registered_from_the_file_that_defines_it(tmp_path):
    reg, calls, _ = registrar(tmp_path)
    reg.reference("path", "sampledata", tmp_path / "spec.yml", set())
    reg.reference("path", "sampledata", tmp_path / "spec.yml", set())
    renamed = run_examples.RENAMED_DATA["sampledata"]
    assert calls == [("data", "create", "--file", str(tmp_path / "checkout" / renamed.file), "--name", "sampledata")]


def test_a_data_asset_the_checkout_defines_by_that_name_is_registered_from_its_own_file(tmp_path):
    assets = run_examples.Assets({"data": {"sampledata": [tmp_path / "own.yml"]}})
    reg, calls, _ = registrar(tmp_path, assets)
    reg.reference("path", "sampledata", tmp_path / "spec.yml", set())
    assert calls == [("data", "create", "--file", str(tmp_path / "own.yml"))]


def test_an_unknown_name_registers_nothing(tmp_path):
    reg, calls, _ = registrar(tmp_path)
    reg.reference("path", "no-such-asset", tmp_path / "spec.yml", set())
    assert calls == []


def test_remote_data_with_no_true_copy_is_logged_with_why(tmp_path):
    reg, calls, log = registrar(tmp_path)
    reg.remote("https://azuremlexamples.blob.core.windows.net/datasets/diabetes.csv")
    assert any(line.startswith("no local copy of https://azuremlexamples.blob.core.windows.net/datasets/diabetes.csv: ")
               for line in log)
    # The container is still mapped for the files it does have copies of (iris.csv).
    assert calls and calls[0][:2] == ("data", "map")


def test_the_titanic_url_maps_to_the_checkouts_copy(tmp_path):
    mirror = next(m for m in run_examples.MIRRORS if any("dprepdata" in p for p in m.prefixes))
    assert mirror.copies == {"Titanic.csv": "cli/jobs/spark/data/titanic.csv"}
    reg, calls, _ = registrar(tmp_path)
    reg.remote("https://dprepdata.blob.core.windows.net/demo/Titanic.csv")
    assert calls == [("data", "map", "--uri-prefix", "https://dprepdata.blob.core.windows.net/demo/",
                      "--path", str(tmp_path / "mirrors" / "dprepdata-demo"))]


def test_a_data_asset_with_no_true_copy_is_logged_with_why(tmp_path):
    reg, calls, log = registrar(tmp_path)
    reg.reference("path", "cifar-10-example", tmp_path / "spec.yml", set())
    assert calls == []
    assert log == [f"no local copy of data asset 'cifar-10-example': {run_examples.NO_ASSET['cifar-10-example']}"]
