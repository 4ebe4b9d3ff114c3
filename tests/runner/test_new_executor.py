"""docs/architecture.md says a new job type is two files: its executor module and one line in
runner/executors.py. This follows that page to the letter on a copy of the packages: the code
blocks are taken from the page, the job is submitted, walked by the real supervisor in its own
process, shown and listed, and nothing else in the runner is touched."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import ROOT

SECTION = "## Add an executor: these two files"


def walkthrough_files() -> dict[str, str]:
    """The page's python blocks, by the file their first line names (``# runner/echo.py``)."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    assert SECTION in page, f"docs/architecture.md has no section {SECTION!r}"
    section = page.split(SECTION, 1)[1].split("\n## ", 1)[0]
    files = {}
    for block in re.findall(r"```python\n(.*?)```", section, re.S):
        first, _, rest = block.partition("\n")
        assert first.startswith("# "), f"a walkthrough block must start by naming its file: {first!r}"
        files[first[2:].strip()] = block
    return files


def run(args: list[str], packages: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(packages))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


SUBMIT = textwrap.dedent("""
    import sys
    from pathlib import Path

    from runner import jobs
    from runner.workspace import Workspace
    from validator.spec import Spec

    workspace = Workspace.locate(sys.argv[1])
    spec = Spec(Path(sys.argv[2]).resolve(), "echoJob", {"type": "echo", "message": sys.argv[3]})
    print(jobs.submit_spec(spec, workspace))
""")


def test_an_executor_added_as_the_architecture_page_says_is_registered_planned_run_and_shown(tmp_path: Path) -> None:
    files = walkthrough_files()
    assert sorted(files) == ["runner/echo.py", "runner/executors.py"], sorted(files)

    packages = tmp_path / "packages"
    for package in ("runner", "validator"):
        shutil.copytree(ROOT / package, packages / package, ignore=shutil.ignore_patterns("__pycache__"))
    (packages / "runner" / "echo.py").write_text(files["runner/echo.py"])
    registry = packages / "runner" / "executors.py"
    registry.write_text(registry.read_text() + "\n" + files["runner/executors.py"])

    lab = tmp_path / "lab"
    lab.mkdir()
    spec = lab / "echo.yml"
    spec.write_text("type: echo\nmessage: hello from a new job type\n")
    workspace = lab / ".amllab"

    listed = run(["-c", "from runner import executors; print(sorted(e.type for e in executors.executors()))"],
                 packages, lab)
    assert listed.returncode == 0, listed.stderr
    assert "'echo'" in listed.stdout, listed.stdout

    submitted = run(["-c", SUBMIT, str(workspace), str(spec), "hello from a new job type"], packages, lab)
    assert submitted.returncode == 0, submitted.stderr
    name = submitted.stdout.strip()
    assert name

    deadline = time.monotonic() + 60
    while True:
        shown = run(["-m", "runner", "job", "show", name, "-w", str(workspace), "-o", "json"], packages, lab)
        assert shown.returncode == 0, shown.stderr
        job = json.loads(shown.stdout)
        if job["status"] in ("Completed", "Failed", "Canceled") or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert job["status"] == "Completed", (job, (Path(job["system_log_path"])).read_text())
    assert job["type"] == "echo"
    assert job["message"] == "hello from a new job type"  # the executor's own `show` field
    assert Path(job["log_path"]).read_text() == "hello from a new job type\n"
    assert [entry["status"] for entry in job["history"]][-2:] == ["Running", "Completed"]

    listing = run(["-m", "runner", "job", "list", "-w", str(workspace), "-o", "json"], packages, lab)
    assert listing.returncode == 0, listing.stderr
    assert [(row["name"], row["type"]) for row in json.loads(listing.stdout)] == [(name, "echo")]

    # Without the registry line the same packages know no echo job: the line is what registers it.
    registry.write_text(registry.read_text().replace(files["runner/executors.py"], ""))
    refused = run(["-m", "runner", "job", "show", name, "-w", str(workspace), "-o", "json"], packages, lab)
    assert refused.returncode != 0
    assert "echo" in refused.stderr and "Traceback" not in refused.stderr, refused.stderr
