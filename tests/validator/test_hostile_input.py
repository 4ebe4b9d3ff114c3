"""`aml-lint` on hostile input, as a real process: malformed values, FIFOs, huge files and
endless standard input, file names that are not UTF-8, megabyte lines, unreadable folders. Each
ends with a clear message and exit status 0 or 1, never a traceback, a hang or an internal error."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from amllint import needs_root, run_as_nobody
from conftest import BIN
from validator.config import Config
from validator.engine import lint_file

GOOD = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
command: python train.py
code: ./src
environment: azureml:sklearn-train:2
compute: azureml:cpu-cluster
"""


def run(*args: str, cwd: Path, env: dict | None = None, stdin: object = None, timeout: float = 60,
        preexec_fn: object = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "PYTHONIOENCODING")}
    environment.update(env or {})
    return subprocess.run([str(BIN / "aml-lint"), "--isolated", *args], cwd=cwd, capture_output=True,
                          env=environment, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                          timeout=timeout, preexec_fn=preexec_fn)  # type: ignore[arg-type]


def _text(result: subprocess.CompletedProcess) -> str:
    return (result.stdout + result.stderr).decode("utf-8", "replace")


def _no_crash(result: subprocess.CompletedProcess) -> None:
    text = _text(result)
    assert result.returncode in (0, 1), text
    assert "Traceback" not in text and "internal error" not in text, text


@pytest.fixture
def job(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("print('hi')\n")
    return tmp_path


@pytest.mark.parametrize("kind", ["[]", "{a: 1}"])
def test_a_list_or_mapping_as_an_input_type_is_reported_not_crashed_on(job: Path, kind: str) -> None:
    (job / "job.yml").write_text(GOOD + f"inputs:\n  a:\n    type: {kind}\n    path: x\n")
    result = run("job.yml", cwd=job)
    _no_crash(result)
    assert result.returncode == 1  # the schema check reports the type; no rule crashes on it


def test_a_dockerfile_path_over_255_characters_is_a_missing_dockerfile(job: Path) -> None:
    (job / "docker").mkdir()
    spec = GOOD.replace("environment: azureml:sklearn-train:2\n",
                        f"environment:\n  build:\n    path: ./docker\n    dockerfile_path: {'d' * 300}\n")
    (job / "job.yml").write_text(spec)
    result = run("job.yml", cwd=job)
    _no_crash(result)
    assert "AML803" in _text(result) and "has no 'ddd" in _text(result)


def test_a_fifo_named_explicitly_gets_one_message_and_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yml")
    result = run("pipe.yml", cwd=tmp_path, timeout=30)
    assert result.returncode == 1, _text(result)
    assert "pipe.yml:1:1: AML000 error: cannot read file: not a regular file but a named pipe (FIFO)" in _text(result)


def test_a_fifo_found_in_a_folder_or_beside_a_component_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("print('hi')\n")
    (tmp_path / "component.yml").write_text(
        "$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json\n"
        "type: command\nname: train\nversion: 1\ncommand: python train.py\ncode: ./src\n"
        "environment: azureml:sklearn-train:2\n")
    os.mkfifo(tmp_path / "pipe.yml")
    os.mkfifo(tmp_path / "src" / "other.py")
    for target in (".", "component.yml"):  # a component's siblings are read for the pipelines using it
        result = run(target, cwd=tmp_path, timeout=30)
        _no_crash(result)
        assert "pipe.yml" not in _text(result)
        assert "1 spec checked" in _text(result)


def _memory_cap() -> None:
    # 600 MB of address space: the interpreter and the linter need a tenth of it.
    resource.setrlimit(resource.RLIMIT_AS, (600 << 20, 600 << 20))


def test_a_huge_file_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    with open(tmp_path / "huge.yml", "wb") as out:
        out.truncate(1500 << 20)  # sparse: 1.5 GB to read, no disk used
    result = run("huge.yml", cwd=tmp_path, preexec_fn=_memory_cap)
    _no_crash(result)
    assert "huge.yml:1:1: AML009 error: file is 1,572,864,000 bytes, over the 1,048,576-byte limit" in _text(result)


def test_endless_standard_input_is_refused_at_the_limit(tmp_path: Path) -> None:
    with open("/dev/zero", "rb") as zeros:
        result = run("-", cwd=tmp_path, stdin=zeros, preexec_fn=_memory_cap)
    _no_crash(result)
    assert "<stdin>:1:1: AML009 error: file is more than 1,048,576 bytes" in _text(result)


def _bad_name_env(strict: bool) -> dict:
    # Strict: stdout encodes UTF-8 with no escape for the surrogate a bad byte decodes to (where
    # the report once crashed with UnicodeEncodeError); else the C.UTF-8 locale's defaults.
    return {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", **({"PYTHONIOENCODING": "utf-8:strict"} if strict else {})}


@pytest.mark.parametrize("strict", [False, True], ids=["locale", "strict-utf8"])
@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_a_file_name_that_is_not_utf8_is_printed_escaped(tmp_path: Path, fmt: str, strict: bool) -> None:
    (tmp_path / os.fsdecode(b"bad\xff.yml")).write_text(GOOD.replace("compute:", "comptue:"))
    result = run("--format", fmt, ".", cwd=tmp_path, env=_bad_name_env(strict))
    assert result.returncode == 1, _text(result)
    assert b"Traceback" not in result.stderr
    out = result.stdout.decode("utf-8")  # valid UTF-8 in every format
    if fmt in ("json", "sarif"):
        document = json.loads(out)
        assert "bad\\xff.yml" in json.dumps(document, ensure_ascii=False).replace("\\\\", "\\")
    else:
        assert "bad\\xff.yml" in out


def test_a_long_line_is_cut_around_the_column_with_the_caret_in_place(tmp_path: Path) -> None:
    padding = "a" * 200_000
    (tmp_path / "job.yml").write_text(GOOD + f"description: {padding}\ncomptue: {padding}\n")
    result = run("job.yml", cwd=tmp_path)
    lines = result.stdout.decode().splitlines()
    assert len(result.stdout) < 5000, len(result.stdout)
    head = next(i for i, line in enumerate(lines) if "AML101" in line)
    assert lines[head].startswith("job.yml:8:1: AML101 error: unknown key 'comptue'")
    source, caret = lines[head + 2], lines[head + 3]
    assert source.startswith("8 | comptue: aaa") and source.endswith("…")
    assert caret == "  | ^~~~~~~"


def test_a_caret_far_into_a_long_line_stays_under_its_character() -> None:
    from validator.report import SNIPPET_WIDTH, snippet

    source = "x" * 5000 + "HERE" + "y" * 5000
    excerpt, at, width = snippet(source, 5001, 4)
    assert len(excerpt) <= SNIPPET_WIDTH + 2 and excerpt.startswith("…") and excerpt.endswith("…")
    assert excerpt[at - 1:at - 1 + width] == "HERE"
    assert snippet("short", 2, 1) == ("short", 2, 1)


@pytest.fixture
def locked() -> Path:
    """A tree readable by anyone but for one folder."""
    import shutil
    import tempfile

    tree = Path(tempfile.mkdtemp(prefix="amllab-locked-", dir="/tmp"))
    tree.chmod(0o755)
    (tree / "locked").mkdir()
    (tree / "job.yml").write_text(GOOD.replace("code: ./src\n", ""))
    (tree / "locked" / "secret.yml").write_text(GOOD)
    (tree / "locked").chmod(0o000)
    yield tree
    (tree / "locked").chmod(0o755)
    shutil.rmtree(tree)


@needs_root
def test_an_unreadable_folder_is_skipped_with_a_warning(locked: Path) -> None:
    result = run_as_nobody("--isolated", ".", cwd=locked, text=False)
    _no_crash(result)
    assert result.returncode == 0, _text(result)
    assert "aml-lint: warning: cannot read folder ./locked: Permission denied; skipped" in result.stderr.decode()
    assert "1 spec checked" in result.stdout.decode()


@needs_root
def test_a_file_inside_an_unreadable_folder_is_one_message(locked: Path) -> None:
    result = run_as_nobody("--isolated", "locked/secret.yml", cwd=locked, text=False)
    assert result.returncode == 1, _text(result)
    assert "Traceback" not in _text(result)
    assert "locked/secret.yml:1:1: AML000 error: cannot read file: Permission denied" in _text(result)


def test_a_schema_url_that_urllib_cannot_split_is_not_an_internal_error(tmp_path: Path) -> None:
    # An unclosed IPv6 bracket: urllib raises "Invalid IPv6 URL" (found by the mutation property).
    from validator.rules.file_level import outdated_schema

    for url in ("https://[azuremlschemas.azureedge.net/latest/commandJob.schema.json",
                "http://azureml]/sdk-2-0/CommandJob.json"):
        assert outdated_schema(url) is None
        spec = tmp_path / "job.yml"
        spec.write_text(f"$schema: {url}\ncommand: echo hi\nenvironment: azureml:env:1\n")
        codes = [d.code for d in lint_file(spec, Config(root=tmp_path)).diagnostics]
        assert "AML000" not in codes, codes
