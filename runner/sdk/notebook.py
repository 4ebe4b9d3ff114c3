"""``aml-run notebook PATH.ipynb`` and ``aml-run script PATH.py``: a notebook or script that uses
azure-ai-ml (SDK v2), run as it is against the local workspace.

The notebook runs in a Jupyter kernel of aml-run's own interpreter (nbclient), in the
notebook's folder; the script in a child interpreter (``python -m runner.sdk.launch``), in the
current folder. Either way the user's file is not edited: the hook in runner/sdk/hook.py makes
``azure.ai.ml.MLClient`` the offline client and azure.identity's credentials stand-ins. For a
notebook it is installed by one cell aml-run adds in front, visible in the saved copy and
tagged ``amllab-injected`` (papermill's way of injecting parameters), which also turns ``%pip``
and ``%conda`` into a printed no-op: the kernel is aml-run's interpreter, which a notebook's
``%pip install`` must not change.

Every job the client submits is recorded in a session file. When the notebook or script ends,
aml-run waits for each of them and prints one line per job (its status and the YAML it became);
the executed notebook is saved with its outputs. Exit status: 0 when it ran to its end and every
job completed, 3 when it stopped at a verb that needs Azure's cloud and every job before it
completed, 1 otherwise (a job that did not complete, a cell or the script that failed), 130
when interrupted (the jobs it started are canceled).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from validator.errors import UsageError

from ..workspace import Workspace
from . import session
from .overrides import Override

INJECTED_TAG = "amllab-injected"
CLOUD_STOP = 3
SESSIONS = "sdk/sessions"
NOTEBOOKS = "sdk/notebooks"


def injected_source(workspace: Workspace) -> str:
    return (
        "# Added by aml-run (your notebook is unchanged): azure-ai-ml's MLClient and azure.identity's\n"
        f"# credentials answer from the local workspace {workspace.folder}; nothing reaches Azure.\n"
        "import runner.sdk.hook\n"
        "runner.sdk.hook.install()\n"
        "\n"
        "def _amllab_no_install(line, cell=None):\n"
        "    print('[aml-run] not run: %pip/%conda ' + line + ' (the kernel is aml-run\\'s interpreter, which a '\n"
        "          'notebook must not change; install what a job needs in its environment)')\n"
        "\n"
        "get_ipython().register_magic_function(_amllab_no_install, 'line_cell', 'pip')\n"
        "get_ipython().register_magic_function(_amllab_no_install, 'line_cell', 'conda')\n"
        "del _amllab_no_install\n"
    )


def _environment(workspace: Workspace, session_file: Path, overrides: list[Override], ignore: list[str]) -> dict[str, str]:
    env = dict(os.environ)
    env[session.WORKSPACE] = str(workspace.folder)
    env[session.SESSION] = str(session_file)
    env[session.SETTINGS] = json.dumps({"overrides": [o.as_json() for o in overrides], "ignore": ignore})
    env.setdefault("MPLBACKEND", "Agg")  # a figure is an output of the notebook, never a window
    return env


def _session_file(workspace: Workspace, stem: str) -> Path:
    folder = workspace.folder / SESSIONS
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{stem}-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.jsonl"


def _announce(out: TextIO, overrides: list[Override]) -> None:
    for override in overrides:
        out.write(f"[aml-run] override {override.flag}: applied to every job it changes, and said there\n")
    out.flush()


def run_notebook(path: Path, workspace: Workspace, output: Path | None = None, overrides: list[Override] = (),
                 ignore: list[str] = (), timeout: float | None = None, out: TextIO = sys.stdout) -> int:
    """Run the notebook at ``path``; return the exit status described in the module's docstring."""
    try:
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    except ImportError:
        raise UsageError("aml-run notebook needs nbclient and ipykernel: pip install 'amllab[sdk]'") from None
    if not path.is_file():
        raise UsageError(f"{path}: no such notebook")
    try:
        notebook = nbformat.read(str(path), as_version=4)
    except Exception as error:  # nbformat raises several kinds for a file that is not a notebook
        raise UsageError(f"{path}: not a notebook nbformat can read ({str(error).splitlines()[0]})") from None
    workspace.ensure()
    session_file = _session_file(workspace, path.stem)
    env = _environment(workspace, session_file, list(overrides), list(ignore))
    injected = nbformat.v4.new_code_cell(injected_source(workspace))
    injected.metadata["tags"] = [INJECTED_TAG]
    notebook.cells.insert(0, injected)
    target = output or (workspace.folder / NOTEBOOKS / path.name)
    out.write(f"[aml-run] running {path} in its folder, against the workspace {workspace.folder}\n")
    _announce(out, list(overrides))

    client = _Client(notebook, out, timeout=int(timeout) if timeout else None, allow_errors=False,
                     kernel_manager_class=_kernel_manager(env), resources={"metadata": {"path": str(path.parent)}})
    stopped: dict[str, Any] | None = None
    interrupted = False
    try:
        client.execute(cwd=str(path.parent.resolve()))
    except CellExecutionError as error:
        stopped = {"cell": client.current, "ename": getattr(error, "ename", ""), "evalue": getattr(error, "evalue", "")}
    except (CellTimeoutError, DeadKernelError) as error:
        stopped = {"cell": client.current, "ename": type(error).__name__, "evalue": str(error).splitlines()[0]}
    except KeyboardInterrupt:
        interrupted = True
    finally:
        _save(notebook, target)
    out.write(f"\n[aml-run] the executed notebook, with its outputs: {target}\n")
    if stopped is not None:
        # The cell aml-run added is cell 0, so the index is the notebook's own cell number.
        where = f"the notebook's cell {stopped['cell']} of {len(notebook.cells) - 1}" if stopped["cell"] else "a cell"
        out.write(f"[aml-run] stopped at {where}: {stopped['ename']}: {stopped['evalue']}\n")
    return _finish(workspace, session_file, stopped, interrupted, out)


def run_script(path: Path, arguments: list[str], workspace: Workspace, overrides: list[Override] = (),
               ignore: list[str] = (), out: TextIO = sys.stdout) -> int:
    """Run the script at ``path`` with ``arguments``, in the current folder, as ``python`` would."""
    if not path.is_file():
        raise UsageError(f"{path}: no such script")
    workspace.ensure()
    session_file = _session_file(workspace, path.stem)
    env = _environment(workspace, session_file, list(overrides), list(ignore))
    out.write(f"[aml-run] running {path} against the workspace {workspace.folder}\n")
    _announce(out, list(overrides))
    out.flush()
    stopped = None
    interrupted = False
    process = subprocess.Popen([sys.executable, "-m", "runner.sdk.launch", str(path), *arguments], env=env)
    try:
        code = process.wait()
    except KeyboardInterrupt:
        process.wait()
        code, interrupted = 130, True
    if code != 0 and not interrupted:
        stopped = {"cell": None, "ename": "exit status", "evalue": str(code)}
    return _finish(workspace, session_file, stopped, interrupted, out)


def _finish(workspace: Workspace, session_file: Path, stopped: dict[str, Any] | None, interrupted: bool,
            out: TextIO) -> int:
    """Wait for every job the session submitted, print one line each, and say the outcome."""
    from .. import jobs

    events = session.events(session_file)
    submitted = [event for event in events if event.get("event") == "job"]
    cloud = [event for event in events if event.get("event") == "cloud"]
    if interrupted:
        for event in submitted:
            try:
                jobs.cancel(workspace, event["job"])
            except Exception:  # already gone or ended: nothing to cancel
                pass
        out.write("[aml-run] interrupted: the jobs it started are canceled\n")
        return 130
    rows = []
    for event in submitted:
        try:
            final = jobs.wait(workspace, event["job"])
            state = final.get("status")
        except KeyboardInterrupt:
            out.write(f"\n[aml-run] stopped waiting; the jobs go on (aml-run job list --workspace {workspace.folder})\n")
            return 130
        except Exception as error:  # a job whose record is gone or damaged: say so, count it as not completed
            state = f"unknown ({error})"
        rows.append((event["job"], event.get("type") or "", state, event.get("spec") or ""))
    if rows:
        out.write("\n[aml-run] jobs:\n")
        width = max(len(row[0]) for row in rows)
        for name, kind, state, spec in rows:
            out.write(f"  {name.ljust(width)}  {kind:<9} {state:<10} {spec}\n")
    else:
        out.write("[aml-run] no job was submitted\n")
    completed = all(row[2] == "Completed" for row in rows)
    at_cloud = stopped is not None and (stopped.get("ename") == "CloudOnlyError" or (
        stopped.get("cell") is None and cloud))
    if stopped is not None and at_cloud:
        verb = cloud[-1]["verb"] if cloud else "a cloud verb"
        out.write(f"[aml-run] it stopped at {verb}, which needs Azure's cloud; "
                  f"{'every job before it completed' if completed else 'not every job completed'}\n")
        return CLOUD_STOP if completed else 1
    if stopped is None and completed:
        out.write("[aml-run] ran to its end; every job completed\n" if rows else "[aml-run] ran to its end\n")
        return 0
    if not completed:
        out.write("[aml-run] not every job completed\n")
    return 1


def _save(notebook: Any, target: Path) -> None:
    import nbformat

    from validator.paths import write_text_atomic

    target.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(target, nbformat.writes(notebook))


def _kernel_manager(env: dict[str, str]) -> type:
    """A kernel manager whose kernel is aml-run's own interpreter (whatever kernel the notebook
    names: Microsoft's name ``python310-sdkv2`` exists on their compute instances only), with the
    session's environment."""
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager

    spec = KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                      display_name="aml-run", language="python", env=env)

    class Manager(AsyncKernelManager):
        def __init__(self, **kwargs: Any) -> None:
            # Local sockets in a private folder rather than TCP on the loopback: nothing else on
            # the machine can connect, and the kernel has no unencrypted-TCP warning to print.
            kwargs.setdefault("transport", "ipc")
            super().__init__(**kwargs)

        @property
        def kernel_spec(self) -> KernelSpec:  # type: ignore[override]
            return spec

    return Manager


def _client_class() -> type:
    from nbclient import NotebookClient

    class Client(NotebookClient):
        """nbclient's, echoing what the cells print as they print it (a job's log streams live)."""

        def __init__(self, notebook: Any, out: TextIO, **kwargs: Any) -> None:
            super().__init__(notebook, **kwargs)
            self.echo = out
            self.current: int | None = None

        async def async_execute_cell(self, cell: Any, cell_index: int, *args: Any, **kwargs: Any) -> Any:
            self.current = cell_index
            return await super().async_execute_cell(cell, cell_index, *args, **kwargs)

        def output(self, outs: list, msg: dict, display_id: str | None, cell_index: int) -> Any:
            kind = msg.get("msg_type")
            content = msg.get("content") or {}
            if kind == "stream":
                self.echo.write(content.get("text", ""))
            elif kind == "error":
                self.echo.write("\n".join(_plain(line) for line in content.get("traceback") or []) + "\n")
            self.echo.flush()
            return super().output(outs, msg, display_id, cell_index)

    return Client


def _plain(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


class _Client:
    """Built on first use: nbclient is imported only by ``aml-run notebook``."""

    def __new__(cls, notebook: Any, out: TextIO, **kwargs: Any) -> Any:  # type: ignore[misc]
        return _client_class()(notebook, out, **kwargs)
