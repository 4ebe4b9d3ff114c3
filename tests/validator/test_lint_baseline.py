"""`aml-lint --write-baseline FILE` / `--baseline FILE`: adopting aml-lint on a repository that
already has findings. The findings of the day are recorded by fingerprint (code, file, pointer,
value), not by line; later runs report only new ones."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amllint import BAD, GOOD, WARN, run
from conftest import ROOT
from validator import baseline as baselines
from validator.cli import main
from validator.engine import LintResult, lint_text

# Real folders with findings of many rules (a job, a sweep, a pipeline and its components).
BROKEN = ("broken-spec", "broken-sweep", "broken-pipeline", "command-job")


def entries(file: Path) -> list[dict]:
    return json.loads(file.read_text())["entries"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "bad.yml").write_text(BAD)
    (tmp_path / "jobs" / "warn.yml").write_text(WARN)
    (tmp_path / "jobs" / "good.yml").write_text(GOOD)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return tmp_path


class Run(NamedTuple):
    status: int
    out: str
    err: str


def lint(capsys: pytest.CaptureFixture, *args: str) -> Run:
    """aml-lint in this process (a process each would take seconds over a test)."""
    status = main(list(args))
    out, err = capsys.readouterr()
    return Run(status, out, err)


def test_adopting_on_an_existing_repository(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for name in BROKEN:
        shutil.copytree(ROOT / "scenarios" / name, tmp_path / name)
    before = lint(capsys, ".")
    assert before.status == 1 and "AML101" in before.out

    wrote = lint(capsys, "--write-baseline", "aml-lint-baseline.json", ".")
    assert wrote.status == 0, wrote.err
    assert wrote.out == ""
    baseline = tmp_path / "aml-lint-baseline.json"
    recorded = entries(baseline)
    assert len(recorded) >= 15
    assert {e["path"] for e in recorded} >= {"broken-spec/job.yml", "broken-sweep/sweep.yml",
                                             "broken-pipeline/pipeline.yml"}
    assert f"{len(recorded)} findings recorded in aml-lint-baseline.json" in wrote.err
    # One entry a line, sorted: the file diffs like source.
    lines = baseline.read_text().splitlines()
    assert lines[1] == '  "aml-lint-baseline": 1,' and len(lines) == len(recorded) + 5
    keys = [(e["path"], e["code"], e["pointer"], e["value"]) for e in recorded]
    assert keys == sorted(keys)

    clean = lint(capsys, "--baseline", "aml-lint-baseline.json", ".")
    assert clean.status == 0, clean.out
    assert clean.out.splitlines()[-1].endswith(f"{len(recorded)} findings suppressed by the baseline.")

    # Lines inserted above the findings (and between them) do not bring them back.
    job = tmp_path / "broken-spec" / "job.yml"
    source = job.read_text()
    job.write_text("# reviewed 2026\n\n# owner: data team\n" + source.replace(
        "environment:", "# pinned below\n\nenvironment:"))
    moved = lint(capsys, "--baseline", "aml-lint-baseline.json", ".")
    assert moved.status == 0, moved.out

    # A new defect is reported, alone, and fails the run.
    job.write_text(job.read_text().replace("experiment_name:", "experiment_nmae:"))
    new = lint(capsys, "--baseline", "aml-lint-baseline.json", ".")
    assert new.status == 1
    reported = [line for line in new.out.splitlines() if ": AML" in line]
    assert len(reported) == 1 and "unknown key 'experiment_nmae'" in reported[0]
    assert "(10 specs checked, 6 files skipped, " in new.out

    # Fixing a recorded finding leaves a stale entry, counted; rewriting drops it.
    job.write_text(job.read_text().replace("experiment_nmae:", "experiment_name:")
                   .replace("comptue:", "compute:"))
    stale = lint(capsys, "--baseline", "aml-lint-baseline.json", ".")
    assert stale.status == 0
    assert stale.out.splitlines()[-1] == (
        f"All clean: 10 specs checked, 6 files skipped, {len(recorded) - 1} findings suppressed by the "
        "baseline. 1 baseline entry no longer matches; rewrite the baseline with --write-baseline to drop it.")
    rewrote = lint(capsys, "--write-baseline", "aml-lint-baseline.json", ".")
    assert rewrote.status == 0 and "(0 new, 1 fixed or gone dropped)" in rewrote.err
    assert len(entries(baseline)) == len(recorded) - 1
    assert not any(e["code"] == "AML101" and e["path"] == "broken-spec/job.yml" for e in entries(baseline))
    after = lint(capsys, "--baseline", "aml-lint-baseline.json", ".")
    assert after.status == 0 and "no longer match" not in after.out


def test_the_program_writes_then_reads_a_baseline(project: Path) -> None:
    wrote = run("--write-baseline", "b.json", "jobs", cwd=project)
    assert wrote.returncode == 0 and wrote.stdout == "" and "2 findings recorded in b.json" in wrote.stderr
    read = run("--baseline", "b.json", "jobs", cwd=project)
    assert read.returncode == 0
    assert read.stdout == "All clean: 3 specs checked, 2 findings suppressed by the baseline.\n"


def test_every_format_leaves_out_what_the_baseline_records(project: Path, capsys) -> None:
    assert lint(capsys, "--write-baseline", "b.json", "jobs/bad.yml")[0] == 0
    status, out, err = lint(capsys, "--baseline", "b.json", "--format", "json", "jobs")
    payload = json.loads(out)
    assert status == 0 and [d["code"] for d in payload["diagnostics"]] == ["AML205"]
    assert payload["summary"]["baseline"] == {"suppressed": 1, "stale": 0}
    status, out, err = lint(capsys, "--baseline", "b.json", "--format", "sarif", "jobs")
    assert status == 0 and [r["ruleId"] for r in json.loads(out)["runs"][0]["results"]] == ["AML205"]
    assert "1 finding suppressed by the baseline" in err
    status, out, err = lint(capsys, "--baseline", "b.json", "--format", "github", "jobs")
    assert status == 0 and "AML101" not in out and "AML205" in out
    assert "1 finding suppressed by the baseline" in err
    # Without a baseline, nothing changes in the output.
    status, out, _ = lint(capsys, "--format", "json", "jobs")
    assert status == 1 and "baseline" not in json.loads(out)["summary"]


def test_configured_baseline_relative_to_pyproject_and_flags_over_it(project: Path, capsys,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "pyproject.toml").write_text('[tool.amllab.lint]\nbaseline = "lint/baseline.json"\n')
    (project / "lint").mkdir()
    assert lint(capsys, "--write-baseline", "lint/baseline.json", "jobs")[0] == 0
    assert entries(project / "lint" / "baseline.json")[0]["path"] == "../jobs/bad.yml"
    monkeypatch.chdir(project / "jobs")  # paths are relative to the baseline, not the working folder
    status, out, _ = lint(capsys, ".")
    assert status == 0 and "2 findings suppressed by the baseline" in out
    status, out, _ = lint(capsys, "--no-baseline", ".")
    assert status == 1 and "baseline" not in out
    (project / "other.json").write_text('{"aml-lint-baseline": 1, "entries": []}')
    status, out, _ = lint(capsys, "--baseline", "../other.json", ".")
    assert status == 1 and "0 findings suppressed by the baseline" in out


def test_identical_findings_count(project: Path, capsys) -> None:
    twice = WARN.replace("--lr {inputs.lr}", "--lr {inputs.lr} --lr2 {inputs.lr}")
    (project / "jobs" / "warn.yml").write_text(twice)
    assert lint(capsys, "--write-baseline", "b.json", "jobs/warn.yml")[0] == 0
    recorded = entries(project / "b.json")
    assert len(recorded) == 2 and recorded[0]["value"] == recorded[1]["value"]
    status, out, _ = lint(capsys, "--baseline", "b.json", "jobs/warn.yml")
    assert status == 0 and "2 findings suppressed" in out and "AML205" not in out
    (project / "jobs" / "warn.yml").write_text(twice.replace("--lr2", "--lr3 {inputs.lr} --lr2"))
    status, out, _ = lint(capsys, "--baseline", "b.json", "jobs/warn.yml")
    assert out.count("AML205 warning") == 1 and "2 findings suppressed" in out


def test_a_partial_run_neither_calls_the_rest_stale_nor_forgets_it(project: Path, capsys) -> None:
    assert lint(capsys, "--write-baseline", "b.json", "jobs")[0] == 0
    status, out, _ = lint(capsys, "--baseline", "b.json", "jobs/good.yml")
    assert status == 0 and "no longer match" not in out
    status, out, _ = lint(capsys, "--baseline", "b.json", "--select", "AML1", "jobs")
    assert status == 0 and "no longer match" not in out
    # Rewriting from one file keeps the other files' entries...
    assert lint(capsys, "--write-baseline", "b.json", "jobs/good.yml")[0] == 0
    assert [e["code"] for e in entries(project / "b.json")] == ["AML101", "AML205"]
    # ...but not those of a file that is gone.
    (project / "jobs" / "warn.yml").unlink()
    status, out, _ = lint(capsys, "--baseline", "b.json", "jobs/bad.yml")
    assert "1 baseline entry no longer matches" in out
    assert lint(capsys, "--write-baseline", "b.json", "jobs/bad.yml")[0] == 0
    assert [e["code"] for e in entries(project / "b.json")] == ["AML101"]


@pytest.mark.parametrize("content, expected", [
    (None, "b.json: baseline file not found; create it with `aml-lint --write-baseline b.json PATH`"),
    ('{"aml-lint-baseline": 1,\n<<<<<<< HEAD\n', "b.json:2:1: the baseline is not valid JSON"),
    ("[]", 'b.json: not an aml-lint baseline (expected a JSON object with "aml-lint-baseline": 1'),
    ('{"aml-lint-baseline": 1, "entries": {}}', 'b.json: "entries" must be a list of findings'),
    ('{"aml-lint-baseline": 1, "entries": [{"code": "AML101"}]}', 'b.json: entry 1 of "entries" has no text "path"'),
    ('{"aml-lint-baseline": 9, "entries": []}', "b.json: baseline format 9 is not one this aml-lint reads"),
])
def test_a_bad_baseline_is_one_clear_message(project: Path, capsys, content: str | None, expected: str) -> None:
    if content is not None:
        (project / "b.json").write_text(content)
    status, out, err = lint(capsys, "--baseline", "b.json", "jobs")
    assert status == 2 and out == ""
    assert err.startswith(f"aml-lint: error: {expected}") and err.count("\n") == 1, err


def test_write_baseline_refuses_to_overwrite_another_file(project: Path, capsys) -> None:
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    status, _, err = lint(capsys, "--write-baseline", "pyproject.toml", "jobs")
    assert status == 2 and "--write-baseline overwrites only a baseline" in err
    assert (project / "pyproject.toml").read_text() == "[project]\nname = 'x'\n"
    status, _, err = lint(capsys, "--write-baseline", "nowhere/b.json", "jobs")
    assert status == 2 and err.startswith("aml-lint: error: nowhere/b.json: cannot write the baseline")


# A spec with findings of several kinds: keys, values, references inside a block scalar, a
# value written over two lines (no span: its hash is the value's), an output never used.
SPEC = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
command: |
  python train.py --lr {inputs.lr}
  --data ${{inputs.missing}}
environment: >-
  sklearn-train:2
comptue: azureml:cpu-cluster
inputs:
  lr: 0.01
  unused:
    type: uri_folder
    path: azureml:data:1
    mode: rw_mount
resources:
  instance_count: "2"
limits:
  timeout: 10
  max_trials: 3
outputs:
  model:
    type: mlflow_model
"""


def _safe_points(lines: list[str]) -> list[int]:
    """Indexes before which a line may be inserted without changing the data: any line except
    those of a block scalar's body."""
    safe, block = [], None
    for index, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if block is not None and (not line.strip() or indent > block):
            continue
        block = None
        safe.append(index)
        if line.rstrip().endswith(("|", ">", "|-", ">-")):
            block = indent
    return safe + [len(lines)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 100), st.sampled_from(["", "# note", "#", "  "])),
                max_size=6))
def test_inserted_blank_and_comment_lines_never_change_what_is_suppressed(inserts) -> None:
    folder = Path.cwd()
    original = lint_text(SPEC, "job.yml")
    assert len(original.diagnostics) >= 8
    recorded = Counter(f for _, f in baselines.fingerprints(original, folder))
    lines = SPEC.splitlines()
    points = _safe_points(lines)
    for point, text in sorted(((points[choice % len(points)], text) for choice, text in inserts),
                              reverse=True):
        lines.insert(point, text)
    edited = lint_text("\n".join(lines) + "\n", "job.yml")
    assert Counter(f for _, f in baselines.fingerprints(edited, folder)) == recorded
    entries = tuple(baselines.Entry(f) for f in recorded.elements())
    from validator.config import Config

    match = baselines.apply(baselines.Baseline(folder / "b.json", entries), LintResult([edited]), Config())
    assert edited.diagnostics == [] and (match.suppressed, match.stale) == (len(entries), 0)


def test_a_bad_configured_baseline_key_is_one_clear_message(project: Path, capsys) -> None:
    (project / "pyproject.toml").write_text("[tool.amllab.lint]\nbaseline = 3\n")
    status, _, err = lint(capsys, "jobs")
    assert status == 2 and "`baseline` must be the path of a baseline file, relative to this file" in err
    (project / "pyproject.toml").write_text('[tool.amllab.lint]\nbaseline = "missing.json"\n')
    status, _, err = lint(capsys, "jobs")
    assert status == 2 and "missing.json: baseline file not found" in err
    assert lint(capsys, "--no-baseline", "jobs").status == 1


# ----------------------------------------------------------------------------- hostile baselines
def _baseline(*entries: dict) -> str:
    return json.dumps({"aml-lint-baseline": 1, "entries": list(entries)})


ENTRY = {"code": "AML101", "path": "jobs/bad.yml", "pointer": "/comptue", "value": "0123456789ab"}


@pytest.mark.parametrize("content, expected", [
    ('{"aml-lint-baseline": 1, "entries": [{"code": "AML101", "path": "jobs/bad.yml", "pointer": "/x", '
     '"value": "a", "line": ' + "9" * 5000 + "}]}", "b.json: the baseline holds a number too long to read; "),
    ('{"aml-lint-baseline": 1, "entries": [' + "[" * 200_000 + "]" * 200_000 + "]}",
     "b.json: the baseline is nested too deeply to be one (its entries are flat objects); "),
    (_baseline(dict(ENTRY, path="x" * 300 + "/bad.yml")),
     'b.json: entry 1 of "entries": its path has a part of 300 characters (a file or folder name has at most 255)'),
    (_baseline(dict(ENTRY, path="jobs/\u0000.yml")), 'b.json: entry 1 of "entries": its path holds a NUL character'),
    ('{"aml-lint-baseline": true, "entries": []}', "b.json: baseline format true is not one this aml-lint reads"),
], ids=["long-number", "deep", "long-name", "nul", "true-is-no-version"])
@pytest.mark.parametrize("flag", ["--baseline", "--write-baseline"])
def test_a_hostile_baseline_is_one_line_and_status_2(project: Path, capsys, content: str, expected: str,
                                                     flag: str) -> None:
    (project / "b.json").write_text(content)
    status, out, err = lint(capsys, flag, "b.json", "jobs")
    assert status == 2 and out == "", err
    assert err.startswith(f"aml-lint: error: {expected}") and err.count("\n") == 1, err
    assert (project / "b.json").read_text() == content


def test_a_baseline_over_the_limit_is_refused_before_it_is_read(project: Path, capsys) -> None:
    # 64 times max-file-size: with a 100-byte limit for specs, 6,400 bytes for a baseline.
    big = _baseline(*[dict(ENTRY, message="x" * 100)] * 60)
    assert len(big) > 6400
    (project / "b.json").write_text(big)
    for flag in ("--baseline", "--write-baseline"):
        status, _, err = lint(capsys, "--max-file-size", "100", flag, "b.json", "jobs/warn.yml")
        assert status == 2
        assert err == (f"aml-lint: error: b.json: the baseline is {len(big):,} bytes, over the 6,400-byte limit "
                       "for a baseline (64 times max-file-size); if it is one, raise `max-file-size`, else name "
                       "the right file\n")
    read = lint(capsys, "--baseline", "b.json", "jobs")  # 64 MiB by default: read, and matched
    assert read.status == 1 and "60 baseline entries no longer match" in read.out, read


def test_a_baseline_that_is_a_fifo_is_refused_not_read(project: Path, capsys) -> None:
    import os

    os.mkfifo(project / "b.json")
    status, _, err = lint(capsys, "--baseline", "b.json", "jobs")
    assert status == 2 and err == "aml-lint: error: b.json: cannot read the baseline: not a regular file but " \
                                  "a named pipe (FIFO)\n"


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)
# Entries close to real ones, so that the fuzz gets past the shape checks to matching and writing.
TEXT = st.one_of(st.text(max_size=20), st.sampled_from(["jobs/bad.yml", "AML101", "/comptue", "", "<stdin>",
                                                        "x" * 256, "../up.yml", "/abs.yml", "\udcff.yml", "\ud800"]))
ENTRIES = st.lists(st.fixed_dictionaries(
    {"code": TEXT, "path": TEXT, "pointer": TEXT, "value": TEXT},
    optional={"line": JSON, "message": st.one_of(TEXT, JSON), "extra": JSON}), max_size=5)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.binary(max_size=200),
    JSON.map(lambda document: json.dumps(document).encode()),
    ENTRIES.map(lambda entries: json.dumps({"aml-lint-baseline": 1, "entries": entries}).encode()),
))
def test_any_baseline_file_is_a_baseline_or_one_clear_error(raw: bytes) -> None:
    import tempfile

    from validator.config import Config
    from validator.errors import UsageError

    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "b.json"
        file.write_bytes(raw)
        try:
            baseline = baselines.load(file)
        except UsageError as error:
            assert str(error).startswith(f"{file}") and "\n" not in str(error)
            return
        # Read, it can be matched against a run and written again.
        report = lint_text(BAD, str(Path(folder) / "jobs" / "bad.yml"))
        baselines.apply(baseline, LintResult([report]), Config())
        baselines.write(file, LintResult([lint_text(BAD, str(Path(folder) / "bad.yml"))]), Config())
        assert baselines.load(file).entries is not None


# ----------------------------------------------------------------------------- writing, safely
def test_two_runs_writing_one_baseline_keep_both_sets(tmp_path: Path) -> None:
    import subprocess

    from amllint import BIN

    for group in ("a", "b"):
        (tmp_path / group).mkdir()
        for number in range(6):
            (tmp_path / group / f"job{number}.yml").write_text(BAD.replace("cpu-cluster", f"cluster-{number}"))
    for trial in range(4):
        (tmp_path / "b.json").unlink(missing_ok=True)
        environment = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
        runs = [subprocess.Popen([str(BIN / "aml-lint"), "--isolated", "-j", "1", "--write-baseline", "b.json", group],
                                 cwd=tmp_path, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True) for group in ("a", "b")]
        for process in runs:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
        recorded = {e["path"].split("/")[0] for e in entries(tmp_path / "b.json")}
        assert recorded == {"a", "b"}, f"trial {trial}: only {recorded} recorded"
        assert len(entries(tmp_path / "b.json")) == 12
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "b.json"]  # no lock file left


def test_write_baseline_writes_through_a_link_and_keeps_it(project: Path, capsys) -> None:
    (project / "store").mkdir()
    (project / "store" / "b.json").write_text(_baseline())
    (project / "store" / "b.json").chmod(0o640)
    (project / "b.json").symlink_to("store/b.json")
    assert lint(capsys, "--write-baseline", "b.json", "jobs").status == 0
    assert (project / "b.json").is_symlink()
    assert [e["code"] for e in entries(project / "store" / "b.json")] == ["AML101", "AML205"]
    assert (project / "store" / "b.json").stat().st_mode & 0o777 == 0o640  # its mode kept
    assert lint(capsys, "--baseline", "b.json", "jobs").status == 0


def test_a_file_name_that_is_not_utf8_is_recorded_and_matched(project: Path, capsys) -> None:
    # Its bad byte reaches aml-lint as a surrogate (os.fsdecode); written unescaped, it could
    # not be encoded as UTF-8.
    (project / os.fsdecode(b"jobs/bad\xff.yml")).write_text(BAD)
    wrote = lint(capsys, "--write-baseline", "b.json", "jobs")
    assert wrote.status == 0 and "3 findings recorded" in wrote.err, wrote.err
    assert '"path": "jobs/bad\\udcff.yml"' in (project / "b.json").read_text()
    read = lint(capsys, "--baseline", "b.json", "jobs")
    assert read.status == 0 and "3 findings suppressed by the baseline." in read.out
