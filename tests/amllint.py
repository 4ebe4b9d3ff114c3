"""What the aml-lint tests share: running the command as a user does (also as a user without
root's override of permissions), and a clean spec with its broken and warned variants."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

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


# Permission bits bind a user, not root: these tests run aml-lint as `nobody`.
NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="running as another user needs root")

# aml-lint in a child that becomes `nobody` (no groups) once it has loaded what the linter
# imports, lazily too (a lint, a fix and a baseline of a spec with a fixable error, in a folder
# of its own, while still root): the interpreter and the checkout need not be readable by nobody
# (a clone in a private folder, a Python under /root).
AS_NOBODY = f"""
import contextlib, io, os, sys, tempfile
from pathlib import Path
from validator import cli
with tempfile.TemporaryDirectory() as warm, contextlib.redirect_stdout(io.StringIO()), \\
        contextlib.redirect_stderr(io.StringIO()):
    spec = Path(warm, "job.yml")
    spec.write_text({BAD!r})
    for arguments in (["--diff"], ["--write-baseline", str(Path(warm, "b.json"))], ["--fix"], []):
        cli.main(["--isolated", *arguments, str(spec)])
os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY})
sys.exit(cli.main(sys.argv[1:]))
"""


def run_as_nobody(*args: str, cwd: Path, text: bool = True) -> subprocess.CompletedProcess:
    """aml-lint as the user `nobody`, in ``cwd``: see :func:`shared_folder`."""
    environment = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    return subprocess.run([sys.executable, "-c", AS_NOBODY, *args], cwd=cwd, capture_output=True, text=text,
                          env=environment, timeout=120, stdin=subprocess.DEVNULL)


@contextmanager
def shared_folder(owner: int = NOBODY) -> Iterator[Path]:
    """A folder under /tmp that `nobody` can reach (pytest's own are private to root), owned by
    ``owner``; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="amllab-nobody-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        os.chown(folder, owner, owner)
        yield folder
    finally:
        shutil.rmtree(folder)
