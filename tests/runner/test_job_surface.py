"""What a real job's script sees and what aml-run says about it: the AZURE_ML_INPUT_/OUTPUT_
variables, the end of the log in a failed job's error, and what Preparing says of image,
build, services and identity. Real processes in a real workspace."""

from __future__ import annotations

import json
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
