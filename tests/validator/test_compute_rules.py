"""AML4xx support code: the GPU size table, the entry-script locator (validator/pycode.py) that
the training-code rules reuse, and the rules that need files on disk (a training script, a
component file referenced from a pipeline step)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import gpu_sizes, pycode
from validator.engine import lint_text
from validator.loader import Document
from validator.rules import RULES

# ----------------------------------------------------------------------------- GPU table


@pytest.mark.parametrize("size,gpus", [
    ("Standard_NC6", 1), ("Standard_NC24r", 4), ("Standard_NC6s_v3", 1), ("Standard_NC12s_v3", 2),
    ("Standard_NC24rs_v3", 4), ("Standard_NC4as_T4_v3", 1), ("Standard_NC16as_T4_v3", 1),
    ("Standard_NC64as_T4_v3", 4), ("Standard_NC48ads_A100_v4", 2), ("Standard_ND40rs_v2", 8),
    ("Standard_ND96amsr_A100_v4", 8), ("Standard_ND96isr_H100_v5", 8), ("Standard_NV6", 1),
    ("Standard_NV48s_v3", 4),
])
def test_gpu_count_of_known_sizes(size: str, gpus: int) -> None:
    assert gpu_sizes.gpu_count(size) == gpus


def test_gpu_lookup_ignores_case_and_the_standard_prefix() -> None:
    assert gpu_sizes.gpu_count("STANDARD_NC24S_V3") == 4
    assert gpu_sizes.gpu_count("standard_nc24s_v3") == 4
    assert gpu_sizes.gpu_count("  NC24s_v3 ") == 4
    assert gpu_sizes.canonical_name("standard_nd96asr_v4") == "Standard_ND96asr_v4"


@pytest.mark.parametrize("size", ["Standard_DS3_v2", "Standard_D4s_v3", "Standard_NC7_v9", "", "gpu",
                                  None, 4, ["Standard_NC6"]])
def test_unknown_sizes_are_not_judged(size: object) -> None:
    assert gpu_sizes.gpu_count(size) is None
    assert gpu_sizes.canonical_name(size) is None


def test_every_listed_size_has_a_positive_count() -> None:
    assert len(gpu_sizes.KNOWN_SIZES) >= 30
    assert all(gpu_sizes.gpu_count(name) >= 1 for name in gpu_sizes.KNOWN_SIZES)


# ----------------------------------------------------------------------------- entry scripts


@pytest.fixture
def project(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "pkg" / "cli").mkdir(parents=True)
    (src / "train.py").write_text("print('train')\n")
    (src / "tools").mkdir()
    (src / "tools" / "prep.py").write_text("print('prep')\n")
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "train.py").write_text("print('module')\n")
    (src / "pkg" / "cli" / "__init__.py").write_text("")
    (src / "pkg" / "cli" / "__main__.py").write_text("print('main')\n")
    return tmp_path


def _document(folder: Path) -> Document:
    return Document(path=str(folder / "job.yml"), text="", base_dir=folder)


@pytest.mark.parametrize("command,expected", [
    ("python train.py --epochs 3", "src/train.py"),
    ("python3 train.py", "src/train.py"),
    ("python3.11 ./train.py", "src/train.py"),
    ("python -u train.py --lr ${{inputs.lr}}", "src/train.py"),
    ("python -W ignore -u tools/prep.py", "src/tools/prep.py"),
    ("/usr/bin/python train.py", "src/train.py"),
    ("python -m pkg.train --epochs 2", "src/pkg/train.py"),
    ("python -mpkg.train", "src/pkg/train.py"),
    ("python -m pkg.cli", "src/pkg/cli/__main__.py"),
    ("torchrun --nproc_per_node 4 --nnodes=2 train.py --epochs 1", "src/train.py"),
    ("torchrun --standalone -m pkg.train", "src/pkg/train.py"),
    ("python -m torch.distributed.run --nproc_per_node=2 train.py", "src/train.py"),
    ("accelerate launch --config_file acc.yaml --num_processes 2 train.py", "src/train.py"),
    ("deepspeed train.py --deepspeed ds.json", "src/train.py"),
    ("mpirun -np 2 python train.py", "src/train.py"),
    ("OMP_NUM_THREADS=1 env python train.py", "src/train.py"),
    ("pip install -r requirements.txt && python train.py", "src/train.py"),
    ("python -m pip install lightgbm; python train.py", "src/train.py"),
    ("python train.py $[[--seed ${{inputs.seed}}]] --out ${{outputs.model}}", "src/train.py"),
    ("echo start\npython train.py \\\n  --epochs 3", "src/train.py"),
])
def test_find_entry_script(project: Path, command: str, expected: str) -> None:
    holder = {"code": "./src", "command": command}
    assert pycode.find_entry_script(_document(project), holder) == (project / expected).resolve()


@pytest.mark.parametrize("holder", [
    {"code": "./src", "command": "cd src && python train.py"},
    {"code": "./src", "command": "python -c 'import train'"},
    {"code": "./src", "command": "python missing.py"},
    {"code": "./src", "command": "bash run.sh"},
    {"code": "./src", "command": "python ${{inputs.script}}"},
    {"code": "./src", "command": "python /opt/app/train.py"},
    {"code": "azureml:training-code:3", "command": "python train.py"},
    {"code": "https://github.com/org/repo.git", "command": "python train.py"},
    {"code": "./elsewhere", "command": "python train.py"},
    {"command": "python train.py"},
    {"code": "./src", "command": 42},
    {"code": ["./src"], "command": "python train.py"},
    "python train.py",
])
def test_find_entry_script_gives_none(project: Path, holder: object) -> None:
    assert pycode.find_entry_script(_document(project), holder) is None


def test_code_naming_a_single_file(project: Path) -> None:
    holder = {"code": "src/train.py", "command": "python train.py"}
    assert pycode.find_entry_script(_document(project), holder) == (project / "src" / "train.py").resolve()


def test_source_reads_are_cached_and_follow_edits(project: Path) -> None:
    script = project / "src" / "train.py"
    assert pycode.read_source(script) == "print('train')\n"
    assert pycode.script_facts(script) is pycode.script_facts(script)
    script.write_text("open('outputs/model.pt', 'wb')\n# a longer file\n")
    assert pycode.mentions_outputs_folder(script) is True
    script.write_text("def broken(:\n")
    assert pycode.parse_source(script) is None and pycode.mentions_outputs_folder(script) is None
    assert pycode.read_source(project / "nope.py") is None


@pytest.mark.parametrize("source,expected", [
    ("import os\nos.makedirs('outputs', exist_ok=True)\n", True),
    ("import os\npath = os.path.join('outputs', 'ckpt.pt')\n", True),
    ("save(model, './outputs/model.pt')\n", True),
    ("name = 'x'\nsave(model, f'outputs/{name}.pt')\n", True),
    ("from pathlib import Path\nPath('outputs') / 'm.pt'\n", True),
    ("save(model, 'model.pt')\n", False),
    ("'''Writes its outputs to the model folder.'''\nparser.add_argument('--outputs-dir')\n", False),
    ("save(model, 'my_outputs/model.pt')\n", False),
])
def test_mentions_outputs_folder(tmp_path: Path, source: str, expected: bool) -> None:
    script = tmp_path / "train.py"
    script.write_text(source)
    assert pycode.mentions_outputs_folder(script) is expected


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_entry_points_never_raise(command: str) -> None:
    for entry in pycode.entry_points(command):
        assert entry.kind in ("script", "module") and entry.name


# ----------------------------------------------------------------------------- rules on disk


def _codes(text: str, folder: Path) -> set[str]:
    return {d.code for d in lint_text(text, str(folder / "spec.yml"), base_dir=folder).diagnostics}


def test_spot_rule_examples_run_next_to_a_real_script(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("import argparse\nparser = argparse.ArgumentParser()\n"
                                               "parser.add_argument('--lr', type=float)\n"
                                               "parser.add_argument('--checkpoint-dir', default='ckpt')\n"
                                               "parser.parse_args()\n")
    rule = RULES["AML416"]
    assert "AML416" in _codes(rule.bad, tmp_path)
    report = lint_text(rule.good, str(tmp_path / "good.yml"), base_dir=tmp_path)
    # Serverless is a fact the good example cannot avoid (spot is a serverless tier).
    assert {d.code for d in report.diagnostics if d.code.startswith("AML4")} == {"AML413"}


def test_spot_rule_is_silent_when_the_script_cannot_be_found(tmp_path: Path) -> None:
    assert "AML416" not in _codes(RULES["AML416"].bad, tmp_path)


COMPONENT_FILE = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: ddp_train
version: "1"
command: python train.py
environment: azureml:AzureML-acpt-pytorch-2.2-cuda12.1@latest
distribution:
  type: pytorch
  process_count_per_instance: 4
"""

PIPELINE_WITH_FILE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:serverless
jobs:
  train:
    type: command
    component: ./component.yml
    resources:
      instance_type: {size}
      instance_count: {nodes}
"""


def test_step_vm_size_is_checked_against_its_component_file(tmp_path: Path) -> None:
    (tmp_path / "component.yml").write_text(COMPONENT_FILE)
    report = lint_text(PIPELINE_WITH_FILE.format(size="Standard_NC12s_v3", nodes=2),
                       str(tmp_path / "pipeline.yml"), base_dir=tmp_path)
    [finding] = [d for d in report.diagnostics if d.code == "AML408"]
    assert finding.pointer == "/jobs/train/resources/instance_type"
    assert "2 GPUs of 'Standard_NC12s_v3'" in finding.message
    assert "AML408" not in _codes(PIPELINE_WITH_FILE.format(size="Standard_NC24s_v3", nodes=2), tmp_path)
    # The step's node count overrides the component's: one node, four processes, still distributed.
    assert "AML407" not in _codes(PIPELINE_WITH_FILE.format(size="Standard_NC24s_v3", nodes=1), tmp_path)


def test_registered_component_node_count_is_not_guessed(tmp_path: Path) -> None:
    spec = PIPELINE_WITH_FILE.format(size="Standard_NC24s_v3", nodes=2).replace(
        "component: ./component.yml", "component: azureml:ddp_train:1").replace(
        "      instance_count: 2\n", "") + "    distribution:\n      type: pytorch\n"
    assert "AML407" not in _codes(spec, tmp_path)


def test_compute_bound_to_a_pipeline_input_is_not_judged(tmp_path: Path) -> None:
    spec = PIPELINE_WITH_FILE.format(size="Standard_NC24s_v3", nodes=2).replace(
        "    component: ./component.yml\n",
        "    component: ./component.yml\n    compute: ${{parent.inputs.where}}\n").replace(
        "settings:\n  default_compute: azureml:serverless\n", "inputs:\n  where: cpu-cluster\n")
    (tmp_path / "component.yml").write_text(COMPONENT_FILE)
    codes = _codes(spec, tmp_path)
    assert not codes & {"AML409", "AML411", "AML412", "AML414"}


def test_a_misspelt_compute_key_is_not_called_serverless(tmp_path: Path) -> None:
    from validator.rules.file_level import JOB

    assert "AML413" in _codes(JOB.replace("compute: azureml:cpu-cluster\n", ""), tmp_path)
    codes = _codes(JOB.replace("compute:", "comptue:"), tmp_path)
    assert "AML101" in codes and "AML413" not in codes
