"""`aml-lint --lsp` as an editor meets it: the server runs as a subprocess speaking JSON-RPC over
stdio (tests/lspclient.py), and the tests check what comes back: diagnostics with their codes
and ranges, a quick fix whose edit clears the finding, hover, completion, re-lint when a file a
spec uses changes on disk, and a clean shutdown. The pieces without the protocol
(validator/lsp/analysis.py, validator/lsp/edits.py) are tested in-process below."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lspclient import ROOT, LspClient  # noqa: E402

from validator.config import Config  # noqa: E402
from validator.engine import lint_file, lint_text  # noqa: E402
from validator.lsp import analysis  # noqa: E402
from validator.lsp.edits import FIXERS, apply, fixes_for  # noqa: E402

JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
command: python train.py
environment: azureml:sklearn-train:2
comptue: azureml:cpu-cluster
"""

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: train_model
version: "1"
inputs:
  {name}:
    type: number
    default: 0.01
environment: azureml:sklearn-train:2
command: python train.py --lr ${{{{inputs.{name}}}}}
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  train:
    type: command
    component: ./train.yml
    inputs:
      learning_rate: 0.05
"""


@pytest.fixture
def client(tmp_path: Path):
    server = LspClient(tmp_path)
    server.initialize(tmp_path)
    yield server
    if server.process.poll() is None:
        server.process.kill()
        server.process.wait()


def test_plain_aml_lint_never_imports_pygls() -> None:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "import validator.cli"],
                            capture_output=True, text=True, env=environment, timeout=60)
    assert result.returncode == 0, result.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()]
    assert not [m for m in imported if m.split(".")[0] in ("pygls", "lsprotocol", "cattrs") or m.startswith("validator.lsp")]


def test_session_diagnostics_fix_hover_completion_and_exit(client: LspClient, tmp_path: Path) -> None:
    uri = client.open(tmp_path / "job.yml", JOB)
    found = client.diagnostics(uri)
    assert [(d["code"], d["severity"], d["source"]) for d in found] == [("AML101", 1, "aml-lint")]
    # Line 5, columns 1-8 (1-based, end exclusive) in aml-lint's terms.
    assert found[0]["range"] == {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 7}}
    assert "did you mean 'compute'" in found[0]["message"]

    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": found[0]["range"], "context": {"diagnostics": found}})
    assert [a["kind"] for a in actions] == ["quickfix"]
    (edit,) = actions[0]["edit"]["changes"][uri]
    lines = JOB.splitlines(keepends=True)
    line = lines[edit["range"]["start"]["line"]]
    start, end = edit["range"]["start"]["character"], edit["range"]["end"]["character"]
    lines[edit["range"]["start"]["line"]] = line[:start] + edit["newText"] + line[end:]
    fixed = "".join(lines)
    assert "compute: azureml:cpu-cluster" in fixed

    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 3}})
    assert "AML101" in hover["contents"]["value"] and "unknown-key" in hover["contents"]["value"]

    client.change(uri, fixed, 2)
    assert client.diagnostics(uri) == []
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 3}})
    assert hover["contents"]["value"].startswith("**compute**")
    assert "reference-yaml-job-command" in hover["contents"]["value"]

    client.change(uri, fixed + "reso", 3)  # half-typed: a spec's syntax error shows
    assert [d["code"] for d in client.diagnostics(uri)] == ["AML001"]
    completion = client.request("textDocument/completion", {
        "textDocument": {"uri": uri}, "position": {"line": 5, "character": 4}})
    assert [item["label"] for item in completion["items"]] == ["resources"]
    assert completion["items"][0]["insertText"] == "resources: "

    assert client.close() == 0


def test_ranges_count_utf16_units_and_other_yaml_is_quiet(client: LspClient, tmp_path: Path) -> None:
    # An emoji is one character to aml-lint and two UTF-16 units to the editor.
    text = JOB.replace("comptue: azureml:cpu-cluster", 'resources: {docker_args: "😀", instance_cont: 2}')
    uri = client.open(tmp_path / "job.yml", text)
    found = client.diagnostics(uri)
    # Info findings (no compute named: serverless) come as hints, as faint as -v is optional.
    assert {d["code"]: d["severity"] for d in found} == {"AML101": 1, "AML413": 4}
    (found,) = [d for d in found if d["code"] == "AML101"]
    line = text.splitlines()[4]
    column = line.index("instance_cont")
    assert found["code"] == "AML101"
    assert found["range"]["start"] == {"line": 4, "character": column + 1}
    assert found["range"]["end"] == {"line": 4, "character": column + 1 + len("instance_cont")}

    workflow = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    other = client.open(tmp_path / ".github" / "ci.yml", workflow)
    assert client.diagnostics(other) == []
    client.change(other, workflow + "  build: [unclosed\n", 2)  # half-typed: still none of ours
    assert client.diagnostics(other) == []
    # An editor that dies closes the pipe: the server ends too, with the status for an exit
    # that no shutdown preceded.
    assert client.process.stdin is not None
    client.process.stdin.close()
    assert client.process.wait(timeout=10) == 1


def test_a_changed_component_relints_the_pipeline_and_config_comes_from_the_folder(
        client: LspClient, tmp_path: Path) -> None:
    component = tmp_path / "train.yml"
    component.write_text(COMPONENT.format(name="learning_rate"))
    uri = client.open(tmp_path / "pipeline.yml", PIPELINE)
    assert client.diagnostics(uri) == []

    component.write_text(COMPONENT.format(name="lr"))
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": component.as_uri(), "type": 2}]})
    assert [d["code"] for d in client.diagnostics(uri)] == ["AML511"]

    # The configuration aml-lint would read for this file: the nearest pyproject.toml.
    (tmp_path / "pyproject.toml").write_text('[tool.amllab.lint]\nignore = ["AML511"]\n')
    client.notify("textDocument/didSave", {"textDocument": {"uri": (tmp_path / "pyproject.toml").as_uri()}})
    assert client.diagnostics(uri) == []

    # A broken configuration is said once, and the defaults apply meanwhile.
    (tmp_path / "pyproject.toml").write_text('[tool.amllab.lint]\nignroe = ["AML511"]\n')
    client.notify("textDocument/didSave", {"textDocument": {"uri": (tmp_path / "pyproject.toml").as_uri()}})
    shown = client.wait(lambda m: m.get("method") == "window/showMessage")
    assert "unknown key 'ignroe'" in shown["params"]["message"] and "did you mean 'ignore'" in shown["params"]["message"]
    assert [d["code"] for d in client.diagnostics(uri)] == ["AML511"]

    # The configured baseline hides what it records, as on the command line.
    (tmp_path / "pipeline.yml").write_text(PIPELINE)
    (tmp_path / "pyproject.toml").write_text('[tool.amllab.lint]\nbaseline = "b.json"\n')
    written = subprocess.run([sys.executable, "-m", "validator", "--write-baseline", "b.json", "pipeline.yml"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert written.returncode == 0, written.stderr
    client.notify("textDocument/didSave", {"textDocument": {"uri": (tmp_path / "b.json").as_uri()}})
    assert client.diagnostics(uri) == []
    assert client.close() == 0


def _reply(client: LspClient, ident: object, timeout: float = 10) -> dict:
    """The server's answer to the request ``ident`` (None: an error it could not tie to one)."""
    return client.wait(lambda m: isinstance(m, dict) and "method" not in m and m.get("id") == ident
                       and ("error" in m or ident is not None), timeout)


def test_a_document_over_max_file_size_gets_one_finding_and_no_analysis(client: LspClient, tmp_path: Path) -> None:
    configured = tmp_path / "configured"
    configured.mkdir()
    (configured / "pyproject.toml").write_text("[tool.amllab.lint]\nmax-file-size = 4096\n")
    padding = "".join(f"# note {index}: a long comment that fills the file\n" for index in range(100))
    text = JOB + "\n" + padding  # the misspelt key on line 5, an empty line 6, then the padding
    size = len(text.encode())
    assert size > 4096
    uri = client.open(configured / "job.yml", text)
    (found,) = client.diagnostics(uri)
    assert (found["code"], found["severity"], found["range"]["start"]) == ("AML009", 1, {"line": 0, "character": 0})
    assert f"{size:,} bytes, over the 4,096-byte limit" in found["message"]
    assert "too large to lint" in found["message"]
    assert f"raise `max-file-size` in [tool.amllab.lint] of {configured / 'pyproject.toml'}" in found["message"]
    # Nothing is computed over the text: no hover on the misspelt key, no completion, no fix.
    where = {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 3}}
    assert client.request("textDocument/hover", where) is None
    assert client.request("textDocument/completion", {**where, "position": {"line": 5, "character": 0}}) is None
    assert client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {
        "start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 7}},
        "context": {"diagnostics": [found]}}) == []
    # A keystroke that leaves it over the limit: the same one finding, with the new size.
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 6, "character": 0}, "end": {"line": 6, "character": 0}}, "text": "#"}]})
    (found,) = client.diagnostics(uri)
    assert found["code"] == "AML009" and f"{size + 1:,} bytes" in found["message"]
    # Back under the limit (the padding deleted): linted again.
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [
        {"range": {"start": {"line": 6, "character": 0}, "end": {"line": 106, "character": 0}}, "text": ""}]})
    assert [d["code"] for d in client.diagnostics(uri)] == ["AML101"]

    # Without a configuration: aml-lint's default of 1 MiB, and where to set another.
    default = tmp_path / "default"
    default.mkdir()
    huge = JOB + "# " + "x" * (1 << 20) + "\n"
    uri = client.open(default / "job.yml", huge)
    (found,) = client.diagnostics(uri)
    assert found["code"] == "AML009"
    assert f"{len(huge.encode()):,} bytes, over the 1,048,576-byte limit" in found["message"]
    assert "add `max-file-size = <bytes>` to [tool.amllab.lint] in a pyproject.toml" in found["message"]
    assert client.close() == 0


def test_every_malformed_request_gets_a_json_rpc_error_and_the_server_keeps_serving(
        client: LspClient, tmp_path: Path) -> None:
    uri = client.open(tmp_path / "job.yml", JOB)
    assert [d["code"] for d in client.diagnostics(uri)] == ["AML101"]
    hover = {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 3}}

    def body(message: object) -> bytes:
        return json.dumps(message).encode()

    cases = [  # (what, the body sent, the error code expected, the id the error must carry)
        ("a position of -1/-1", body({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {
            **hover, "position": {"line": -1, "character": -1}}}), -32602, 1),
        ("an id that is an object", body({"jsonrpc": "2.0", "id": {"n": 2}, "method": "textDocument/hover",
                                          "params": hover}), -32600, None),
        ("a batch", body([{"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": hover},
                          {"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": hover}]), -32600, None),
        ("an empty batch", b"[]", -32600, None),
        ("invalid JSON", b'{"jsonrpc": "2.0", "id": 5, "method": ', -32700, None),
        ("bytes that are not UTF-8", b'{"jsonrpc": "2.0", "id": 6, "method": "\xff"}', -32700, None),
        ("JSON nested too deep to read", b"[" * 100_000 + b"]" * 100_000, -32700, None),
        ("a number, not an object", b"42", -32600, None),
        ("no method", body({"jsonrpc": "2.0", "id": 7}), -32600, 7),
        ("a method that is no string", body({"jsonrpc": "2.0", "id": 8, "method": {"name": "x"}}), -32600, 8),
        ("no jsonrpc member", body({"id": 9, "method": "shutdown"}), -32600, 9),
        ("jsonrpc 1.0", body({"jsonrpc": "1.0", "id": 10, "method": "shutdown"}), -32600, 10),
        ("an id of null", body({"jsonrpc": "2.0", "id": None, "method": "shutdown"}), -32600, None),
        ("a fractional id", body({"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"}), -32600, None),
        ("params that are a string", body({"jsonrpc": "2.0", "id": 11, "method": "textDocument/hover",
                                           "params": "job.yml"}), -32602, 11),
        ("params that are a list", body({"jsonrpc": "2.0", "id": 12, "method": "textDocument/hover",
                                         "params": [uri, 4, 3]}), -32602, 12),
        ("no params", body({"jsonrpc": "2.0", "id": 13, "method": "textDocument/completion"}), -32602, 13),
        ("a notification sent as a request", body({"jsonrpc": "2.0", "id": 14, "method": "textDocument/didClose",
                                                   "params": {"textDocument": {"uri": uri}}}), -32601, 14),
        ("an unknown method", body({"jsonrpc": "2.0", "id": 15, "method": "aml/unknown"}), -32601, 15),
        # Its body cannot be told from the next message's header; the next message is still read.
        ("no valid Content-Length", (b"Content-Length: many\r\n\r\n" + body({"jsonrpc": "2.0", "id": 16,
                                                                            "method": "shutdown"}),), -32700, None),
        ("the message after it", body({"jsonrpc": "2.0", "id": 17, "method": "aml/unknown"}), -32601, 17),
    ]
    for what, sent, code, ident in cases:
        if isinstance(sent, tuple):  # framed by hand
            assert client.process.stdin is not None
            client.process.stdin.write(sent[0])
            client.process.stdin.flush()
        else:
            client.send_body(sent)
        try:
            reply = _reply(client, ident)
        except TimeoutError:
            pytest.fail(f"{what}: no reply")
        assert isinstance(reply, dict), f"{what}: {reply!r}"
        assert reply["error"]["code"] == code, f"{what}: {reply}"
        assert reply["jsonrpc"] == "2.0" and "result" not in reply and reply["error"]["message"], what
    # Nothing above was acted on (none was a valid shutdown, the document is still open), and the
    # server still serves.
    assert "AML101" in client.request("textDocument/hover", hover)["contents"]["value"]
    client.change(uri, JOB.replace("comptue", "compute"), 2)
    assert client.diagnostics(uri) == []
    assert client.close() == 0
    assert b"Traceback" not in client.all_stderr()


def test_a_bogus_content_length_is_not_allocated(client: LspClient) -> None:
    # pygls read a body in one allocation of its announced length: this ended the server with a
    # MemoryError. Now it waits for the bytes, and ends as usual when the input does.
    assert client.process.stdin is not None
    client.process.stdin.write(b"Content-Length: 100000000000000\r\n\r\n{}")
    client.process.stdin.flush()
    client.process.stdin.close()
    assert client.process.wait(timeout=20) == 1
    stderr = client.all_stderr()
    assert b"Traceback" not in stderr and b"MemoryError" not in stderr, stderr


def test_requests_before_initialize_and_after_shutdown_are_refused(tmp_path: Path) -> None:
    client = LspClient(tmp_path)
    try:
        hover = {"textDocument": {"uri": (tmp_path / "job.yml").as_uri()}, "position": {"line": 0, "character": 0}}
        # Before initialize: ServerNotInitialized, and notifications are dropped.
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": hover["textDocument"]["uri"], "languageId": "yaml", "version": 1, "text": JOB}})
        client.send({"id": "early", "method": "textDocument/hover", "params": hover})
        assert _reply(client, "early")["error"]["code"] == -32002
        client.initialize(tmp_path)
        uri = client.open(tmp_path / "job.yml", JOB)
        assert [d["code"] for d in client.diagnostics(uri)] == ["AML101"]
        assert client.request("shutdown") is None
        # After shutdown: InvalidRequest for any request, known or not, until exit.
        for ident, method, params in ((21, "textDocument/hover", {**hover, "position": {"line": 4, "character": 3}}),
                                      (22, "shutdown", None), (23, "aml/unknown", {})):
            client.send({"id": ident, "method": method, **({"params": params} if params is not None else {})})
            reply = _reply(client, ident)
            assert reply["error"]["code"] == -32600, (method, reply)
            assert "shut" in reply["error"]["message"]
        client.notify("exit")
        assert client.process.wait(timeout=10) == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()
            client.process.wait()


# The editor's stand-in: starts the server with this process's standard input and output (the
# test's pipes, which the test keeps open), says the server's pid, and waits.
LAUNCHER = """\
import subprocess, sys
from pathlib import Path
server = subprocess.Popen([sys.executable, "-m", "validator", "--lsp"])
Path(sys.argv[1], "server.pid").write_text(str(server.pid))
server.wait()
"""

# Starts the launcher as a child subreaper (Linux): the server, orphaned when the launcher is
# killed, becomes this process's child, which can then read its exit status.
REAPER = """\
import ctypes, json, os, subprocess, sys
from pathlib import Path
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit(f"prctl: {os.strerror(ctypes.get_errno())}")
launcher = subprocess.Popen([sys.executable, "-c", sys.argv[2], sys.argv[1]])
Path(sys.argv[1], "launcher.pid").write_text(str(launcher.pid))
statuses = {}
while True:
    try:
        pid, status = os.wait()
    except ChildProcessError:
        break
    statuses[pid] = os.waitstatus_to_exitcode(status)
Path(sys.argv[1], "statuses.json").write_text(json.dumps(statuses))
"""


def _written(path: Path, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.05)
    raise TimeoutError(f"{path} not written within {timeout} s")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper (prctl) is Linux's")
def test_the_server_exits_when_the_client_process_dies(tmp_path: Path) -> None:
    client = LspClient(tmp_path, command=[sys.executable, "-c", REAPER, str(tmp_path), LAUNCHER])
    server = None
    try:
        launcher = int(_written(tmp_path / "launcher.pid"))
        server = int(_written(tmp_path / "server.pid"))
        client.initialize(tmp_path, process_id=launcher)
        uri = client.open(tmp_path / "job.yml", JOB)
        assert [d["code"] for d in client.diagnostics(uri)] == ["AML101"]
        os.kill(launcher, signal.SIGKILL)
        # The server's standard input stays open (this test holds it): only the watch on the
        # client's process can end it. The reaper ends once the server has.
        try:
            client.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("the server outlived the process named in initialize.processId")
        statuses = json.loads((tmp_path / "statuses.json").read_text())
        assert statuses == {str(launcher): -signal.SIGKILL, str(server): 1}
    finally:
        if client.process.poll() is None:
            if server is not None:
                try:
                    os.kill(server, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            client.process.kill()
            client.process.wait()


def test_a_client_process_the_server_cannot_see_is_not_watched(tmp_path: Path) -> None:
    # An editor on the host and the server in a container: the editor's pid names no process the
    # server can see. Exiting would end every session at once; the closed pipe still ends it.
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    other = LspClient(tmp_path)
    try:
        other.initialize(tmp_path, process_id=gone.pid)
        uri = other.open(tmp_path / "job.yml", JOB)
        assert [d["code"] for d in other.diagnostics(uri)] == ["AML101"]
        assert other.close() == 0
    finally:
        if other.process.poll() is None:
            other.process.kill()
            other.process.wait()


def test_without_the_lsp_extra_one_clear_message() -> None:
    code = "import sys; sys.modules['pygls'] = None; from validator.cli import main; sys.exit(main(['--lsp']))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2
    assert result.stderr == "aml-lint: error: --lsp needs the lsp extra (pygls is missing): pip install 'amllab[lsp]'\n"


def test_fixes_clear_their_findings_on_the_golden_cases() -> None:
    """Every code with a quick fix: on its golden cases, the fix's edit makes the finding go
    away and brings no new error or warning."""
    tried = 0
    for code in FIXERS:
        for case in sorted((ROOT / "tests" / "golden" / code).glob("*.y*ml")):
            report = lint_file(case, Config(root=ROOT))
            for diagnostic in report.diagnostics:
                if diagnostic.code != code:
                    continue
                for fix in fixes_for(diagnostic, report.text or ""):
                    tried += 1
                    after = lint_text(apply(report.text or "", fix.edits), str(case), Config(root=ROOT), case.parent)
                    before = {(d.code, d.message) for d in report.diagnostics}
                    assert not [d for d in after.diagnostics if d.code == code and d.line == diagnostic.line
                                and d.column == diagnostic.column], (case, fix)
                    assert not [d for d in after.diagnostics if d.severity >= 2 and (d.code, d.message) not in before], (case, fix)
    assert tried >= len(FIXERS)


def test_completion_follows_the_step_type_while_the_text_does_not_parse() -> None:
    text = (PIPELINE + "  tune:\n    type: sweep\n    \n")
    keys = [c.key for c in analysis.completions("pipelineJob", text, 12, 4)]
    assert {"trial", "search_space", "objective"} <= set(keys) and "type" not in keys and "command" not in keys
    keys = [c.key for c in analysis.completions("pipelineJob", text.replace("    \n", "    com"), 12, 7)]
    assert keys == ["comment", "compute"]
    broken = "type: command\ndistribution:\n  type: pytorch\n  \ncommand: [unclosed\n"
    assert [c.key for c in analysis.completions("commandJob", broken, 3, 2)] == ["process_count_per_instance"]
    assert analysis.completions("commandJob", "type: command\ncommand: |\n  python train.py\n  \n", 3, 2) == []


def test_hover_on_a_key_names_both_forms_of_a_value_that_has_two() -> None:
    text = analysis.describe("commandJob", ("environment",), analysis.schemas_at("commandJob", ("environment",)))
    assert text.startswith("**environment** (command job)")
    assert "Type: string, mapping" in text and "`image`" in text and "azureml:my-env:1" in text
    # Known data narrows it: a pytorch distribution has no worker_count.
    data = {"distribution": {"type": "pytorch"}}
    text = analysis.describe("commandJob", ("distribution",), analysis.schemas_at("commandJob", ("distribution",), data))
    assert "`process_count_per_instance`" in text and "worker_count" not in text
