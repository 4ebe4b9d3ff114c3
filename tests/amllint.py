"""What the aml-lint tests share: running the command as a user does, and a clean spec with
its broken and warned variants."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import BIN

GOOD = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
command: python train.py --lr ${{inputs.lr}}
environment: azureml:sklearn-train:2
compute: azureml:cpu-cluster
inputs:
  lr: 0.01
"""
BAD = GOOD.replace("compute:", "comptue:")
WARN = GOOD.replace("${{inputs.lr}}", "{inputs.lr}")


def run(*args: str, cwd: Path, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    environment.update(env or {})
    return subprocess.run([str(BIN / "aml-lint"), *args], cwd=cwd, input=stdin, capture_output=True,
                          text=True, env=environment, timeout=120)
