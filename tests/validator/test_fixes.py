"""`aml-lint --fix`, `--unsafe-fixes` and `--diff`, and the fixes API (validator/fixes.py).

Beside each golden case that has something to fix, `<case>.fixed.yml` holds what `--fix` makes
of it (with `--unsafe-fixes` where the folder's rule has an unsafe fix); `pytest
--update-golden` rewrites them. A fixed text must lint without the findings that were fixed and
without any new error, and fixing it again must change nothing."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amllint import NOBODY, needs_root, run, run_as_nobody, shared_folder
from golden import GOLDEN, ROOT, case_files, case_config, fix_case, fixed_file
from validator import cli
from validator.config import Config
from validator.diagnostic import Severity
from validator.engine import lint_text
from validator.fixes import apply_fixes, fix_text, fixes_for
from validator.rules import RULES

FIXABLE_CODES = {code for code, rule in RULES.items() if rule.fix}


def _may_fix(case: Path) -> bool:
    """Whether the case's recorded output names a rule that has fixes (only those findings can
    carry one, test_only_fixable_rules_carry_fixes): the other cases need no linting here."""
    out = case.with_suffix(".out")
    return not out.exists() or any(f" {code} " in out.read_text() for code in FIXABLE_CODES)


CASES = case_files()
FAIL_CASES = [case for case in CASES if case.name.startswith("fail_") and _may_fix(case)]

JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
# the training job
type: command
command: python train.py --lr {inputs.lr}   # keep this comment
environment: sklearn-train:2
comptue: cpu-cluster
inputs:
  lr: 0.01
  data:
    type: uri_folder
    path: azureml:churn-raw:3
    mode: rw_mount
"""
FIXED = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
# the training job
type: command
command: python train.py --lr ${{inputs.lr}}   # keep this comment
environment: azureml:sklearn-train:2
compute: azureml:cpu-cluster
inputs:
  lr: 0.01
  data:
    type: uri_folder
    path: azureml:churn-raw:3
    mode: rw_mount
"""


def _unsafe(case: Path) -> bool:
    rule = RULES.get(case.parent.name)
    return rule is not None and rule.fix == "unsafe"


def _key(diagnostic) -> tuple[str, str, str]:
    return diagnostic.code, diagnostic.pointer, diagnostic.message


def _errors(diagnostics) -> set[tuple[str, str]]:
    return {(d.code, d.pointer) for d in diagnostics if d.severity is Severity.ERROR}


@pytest.mark.parametrize("case", FAIL_CASES, ids=lambda p: p.relative_to(GOLDEN).as_posix())
def test_fixing_a_golden_case_gives_its_fixed_file(case: Path, update_golden: bool) -> None:
    outcome = fix_case(case, unsafe=_unsafe(case))
    expected = fixed_file(case)
    if outcome is None or not outcome.changed:
        if update_golden and expected.exists():
            expected.unlink()
        assert not expected.exists(), f"{expected.relative_to(ROOT)}: nothing to fix in the case any more"
        return
    if update_golden:
        expected.write_bytes(outcome.text.encode("utf-8"))
    assert expected.exists(), f"missing {expected.relative_to(ROOT)}; run pytest --update-golden"
    assert outcome.text == expected.read_bytes().decode("utf-8")
    # Only a rule declared fixable fixes; what was fixed is gone, and no new error came.
    assert all(RULES[d.code].fix for d in outcome.fixed)
    assert outcome.report is not None
    left = {_key(d) for d in outcome.report.diagnostics}
    assert not left & {_key(d) for d in outcome.fixed}
    original = lint_text(outcome.original, outcome.report.path, case_config(case)[0], case.parent)
    assert _errors(outcome.report.diagnostics) <= _errors(original.diagnostics)
    # A second --fix changes nothing.
    again = fix_text(outcome.text, outcome.report.path, case_config(case)[0], case.parent, unsafe=_unsafe(case))
    assert again.text == outcome.text and not again.fixed


def test_every_fixable_rule_has_a_golden_case_its_fix_repairs() -> None:
    fixed_codes = set()
    for case in FAIL_CASES:
        if fixed_file(case).exists():
            outcome = fix_case(case, unsafe=_unsafe(case))
            assert outcome is not None
            fixed_codes |= {d.code for d in outcome.fixed}
    assert FIXABLE_CODES <= fixed_codes


def test_only_fixable_rules_carry_fixes() -> None:
    """A check function's fix is refused unless its rule is declared with one (Rule.check); the
    schema stage's fixes are AML101's, AML104's and AML105's."""
    from validator.diagnostic import Finding, Fix
    from validator.loader import parse
    from validator.rules import Rule

    def fixing(document):
        yield Finding("x", (), fix=Fix(((1, 1, 1, 1, "x"),)))

    rule = Rule("AML999", "x", Severity.WARNING, "x", "x", "x", "x", "check", function=fixing)
    document, _ = parse("job.yml", "a: 1\n")
    with pytest.raises(TypeError, match="declared without a fix"):
        list(rule.check(document))
    assert {code for code, rule in RULES.items() if rule.fix and rule.stage == "schema"} == {"AML101", "AML104", "AML105"}


def test_fixed_files_sit_beside_a_case() -> None:
    for path in GOLDEN.rglob("*.fixed.yml"):
        case = path.with_name(path.name.replace(".fixed.yml", ".yml"))
        assert case.exists(), f"{path.relative_to(ROOT)} has no case beside it"
        assert path not in CASES


def test_a_fix_edits_the_text_and_keeps_comments_and_order() -> None:
    outcome = fix_text(JOB, "job.yml", Config())
    assert outcome.text == FIXED
    # The renamed key revealed a compute without `azureml:` (AML412), fixed in the next pass.
    assert sorted(d.code for d in outcome.fixed) == ["AML101", "AML105", "AML205", "AML412"]
    assert [d.code for d in outcome.report.diagnostics if d.severity is Severity.ERROR] == ["AML104"]
    unsafe = fix_text(JOB, "job.yml", Config(), unsafe=True)
    assert unsafe.text == FIXED.replace("mode: rw_mount", "mode: ro_mount")


def test_quoting_and_line_endings_are_kept() -> None:
    text = JOB.replace("environment: sklearn-train:2", "environment: 'sklearn-train:2'").replace("\n", "\r\n")
    outcome = fix_text(text, "job.yml", Config())
    assert outcome.text == FIXED.replace("environment: azureml:sklearn-train:2",
                                         "environment: 'azureml:sklearn-train:2'").replace("\n", "\r\n")


def test_no_fix_where_it_would_guess() -> None:
    # The meant key is set already: renaming would make a duplicate key.
    both = FIXED.replace("compute: azureml:cpu-cluster", "compute: azureml:cpu-cluster\ncomptue: gpu")
    assert not [d for d, _ in fixes_for(both, "job.yml") if d.code == "AML101"]
    # A file that uses aliases: an edit at the anchor would change every alias of it.
    aliased = FIXED.replace("environment: azureml:sklearn-train:2", "environment: &env sklearn-train:2") \
        + "environment_variables:\n  ENV: *env\n"
    assert not [d for d, _ in fixes_for(aliased, "job.yml") if d.code == "AML105"]
    # A local path is not a bare asset name.
    path = FIXED.replace("environment: azureml:sklearn-train:2", "environment: ./env.yml")
    assert not [d for d, _ in fixes_for(path, "job.yml") if d.code == "AML105"]


def test_fixes_for_and_apply_fixes_are_what_a_language_server_needs() -> None:
    found = fixes_for(JOB, "job.yml")
    by_code = {d.code: fix for d, fix in found}
    assert by_code["AML101"].edits == ((6, 1, 6, 8, "compute"),)
    assert by_code["AML101"].safe and by_code["AML101"].title == "rename 'comptue' to 'compute'"
    assert not by_code["AML104"].safe
    one = [d for d, _ in found if d.code == "AML101"]
    assert apply_fixes(JOB, one) == JOB.replace("comptue:", "compute:")
    assert apply_fixes(JOB, [d for d, _ in found], unsafe=True).count("ro_mount") == 1


def test_json_output_carries_the_fix(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "job.yml").write_text(JOB)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--isolated", "--format", "json", "job.yml"]) == 1
    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    fix = next(d["fix"] for d in diagnostics if d["code"] == "AML101")
    assert fix == {"applicability": "safe", "title": "rename 'comptue' to 'compute'",
                   "edits": [{"line": 6, "column": 1, "end_line": 6, "end_column": 8, "content": "compute"}]}
    assert next(d["fix"] for d in diagnostics if d["code"] == "AML104")["applicability"] == "unsafe"
    assert all("fix" in d for d in diagnostics)


def test_fix_writes_in_place_keeping_mode_and_bom(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "job.yml"
    spec.write_bytes(b"\xef\xbb\xbf" + JOB.encode())
    spec.chmod(0o640)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--isolated", "--diff", "job.yml"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("--- job.yml\n+++ job.yml\n") and "+comptue" not in out and "+compute:" in out
    assert "Would fix 4 findings." in err
    assert spec.read_bytes() == b"\xef\xbb\xbf" + JOB.encode()  # --diff writes nothing

    assert cli.main(["--isolated", "--fix", "job.yml"]) == 1  # AML104 is left: its fix is unsafe
    out, err = capsys.readouterr()
    assert spec.read_bytes() == b"\xef\xbb\xbf" + FIXED.encode()
    assert stat.S_IMODE(spec.stat().st_mode) == 0o640
    assert "AML104" in out and "AML101" not in out
    assert "Fixed 4 findings (2 remaining)." in err
    assert [p.name for p in tmp_path.iterdir()] == ["job.yml"]  # no temporary file left

    assert cli.main(["--isolated", "--fix", "--unsafe-fixes", "job.yml"]) == 0
    assert "Fixed 1 finding (1 remaining)." in capsys.readouterr().err
    assert cli.main(["--isolated", "--diff", "job.yml"]) == 0  # nothing left to fix: no diff


def test_report_says_what_fix_would_do(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "job.yml").write_text(JOB)
    monkeypatch.chdir(tmp_path)
    cli.main(["--isolated", "job.yml"])
    assert "3 fixable with `aml-lint --fix` (1 more with `--unsafe-fixes`)." in capsys.readouterr().err


def test_fix_on_standard_input_prints_the_fixed_text(tmp_path: Path) -> None:
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    environment.pop("GITHUB_ACTIONS", None)
    done = subprocess.run([sys.executable, "-m", "validator", "--isolated", "--fix", "-"], input=JOB.encode(),
                          capture_output=True, env=environment, cwd=tmp_path, timeout=120)
    assert done.stdout.decode() == FIXED
    assert "AML104" in done.stderr.decode() and "Fixed 4 findings" in done.stderr.decode()
    assert done.returncode == 1


def test_explain_and_docs_say_which_rules_fix() -> None:
    assert "Fix: safe." in RULES["AML101"].explain()
    assert "Fix: unsafe." in RULES["AML104"].explain()
    assert "Fix:" not in RULES["AML102"].explain()


def test_fix_in_process_reads_standard_input(capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(JOB.encode())))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    assert cli.main(["--isolated", "--diff", "-"]) == 1
    sys.stdout.flush()
    shown = sys.stdout.buffer.getvalue().decode()  # type: ignore[attr-defined]
    assert "-comptue: cpu-cluster" in shown and "+compute: azureml:cpu-cluster" in shown


# ----------------------------------------------------------------------------- property
_FIXABLE = [case for case in FAIL_CASES if fixed_file(case).exists()]


def _top_level_blocks(text: str) -> list[str]:
    """The text cut before each top-level key (comments and blank lines stay with what follows)."""
    blocks: list[str] = []
    for line in text.splitlines(keepends=True):
        if not blocks or line[:1] not in (" ", "-", "#", "\n"):
            blocks.append(line)
        else:
            blocks[-1] += line
    return blocks


@st.composite
def variants(draw: st.DrawFn) -> tuple[Path, str]:
    case = draw(st.sampled_from(_FIXABLE))
    blocks = _top_level_blocks(case.read_text(encoding="utf-8"))
    order = draw(st.permutations(range(len(blocks))))
    comment = draw(st.sampled_from(["# note: keep\n", "# amllab rocks: {inputs.x} azureml:\n", "\n"]))
    where = draw(st.integers(0, len(blocks)))
    reordered = [blocks[i] for i in order]
    reordered.insert(where, comment)
    text = "".join(reordered)
    return case, text if text.endswith("\n") else text + "\n"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variants())
def test_fixing_any_variant_removes_what_it_fixed_and_is_idempotent(variant: tuple[Path, str]) -> None:
    case, text = variant
    config = case_config(case)[0]
    path = case.relative_to(ROOT).as_posix()
    unsafe = _unsafe(case)
    before = lint_text(text, path, config, case.parent)
    outcome = fix_text(text, path, config, case.parent, unsafe=unsafe, report=before)
    assert outcome.report is not None
    assert not {_key(d) for d in outcome.report.diagnostics} & {_key(d) for d in outcome.fixed}
    assert _errors(outcome.report.diagnostics) <= _errors(before.diagnostics)
    again = fix_text(outcome.text, path, config, case.parent, unsafe=unsafe)
    assert again.text == outcome.text
    # Outside the edited spans nothing changed: every comment is still there (but the unused
    # suppressions AML012's fix removes).
    def comments(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.lstrip().startswith("#") and "amllab:" not in line]

    assert comments(text) == comments(outcome.text)


def test_unused_suppressions_are_removed_and_used_codes_kept() -> None:
    text = FIXED.replace("mode: rw_mount", "mode: ro_mount").replace(
        "compute: azureml:cpu-cluster", "compute: local  # amllab: ignore[AML101, AML413]")
    outcome = fix_text(text, "job.yml", Config())
    assert "compute: local\n" in outcome.text
    assert [d.code for d in outcome.fixed] == ["AML012", "AML012"]  # one edit repairs both
    # A `#` inside a quoted value is no comment: nothing is offered there.
    quoted = FIXED.replace("compute: azureml:cpu-cluster",
                           "compute: azureml:cpu-cluster\ndisplay_name: 'run # amllab: ignore[AML101]'")
    assert not [d for d, _ in fixes_for(quoted, "job.yml") if d.code == "AML012"]


def test_a_used_code_stays_in_its_suppression() -> None:
    text = FIXED.replace("compute: azureml:cpu-cluster", "comptue: azureml:cpu-cluster  # amllab: ignore[AML101, AML999]")
    outcome = fix_text(text, "job.yml", Config())
    assert "comptue: azureml:cpu-cluster  # amllab: ignore[AML101]\n" in outcome.text


def test_the_language_server_offers_a_findings_own_fix() -> None:
    from validator.lsp.edits import Edit, fixes_for as lsp_fixes_for

    report = lint_text(JOB, "job.yml")
    by_code = {d.code: d for d in report.diagnostics}
    (fix,) = lsp_fixes_for(by_code["AML105"], JOB)  # no message-based fixer for AML105
    assert fix.edits == (Edit(5, 14, 5, 29, "azureml:sklearn-train:2"),) and fix.preferred
    (unsafe,) = lsp_fixes_for(by_code["AML104"], JOB)
    assert not unsafe.preferred and unsafe.title.endswith("(changes the value)")


def test_fix_through_a_symbolic_link_rewrites_its_target(tmp_path: Path) -> None:
    from validator.fixes import write_fixed_text

    target = tmp_path / "real.yml"
    target.write_text(JOB)
    link = tmp_path / "job.yml"
    link.symlink_to(target)
    write_fixed_text(link, FIXED)
    assert link.is_symlink() and target.read_text() == FIXED


# ----------------------------------------------------------------------------- writing, safely
def _fixed_bytes(text: str) -> bytes:
    return fix_text(text, "job.yml", Config()).text.encode()


def test_a_file_edited_after_the_lint_keeps_the_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The two halves of `aml-lint --fix folder/`: the lint, then the writes; a user saves one
    # file in between.
    from validator.engine import lint_paths
    from validator.fixes import fix_paths

    (tmp_path / "edited.yml").write_text(JOB)
    (tmp_path / "other.yml").write_text(JOB)
    result = lint_paths([tmp_path], Config())
    edited = JOB.encode() + b"# added while aml-lint ran\n"
    (tmp_path / "edited.yml").write_bytes(edited)
    summary = fix_paths(result, Config())
    assert (tmp_path / "edited.yml").read_bytes() == edited
    assert (tmp_path / "other.yml").read_bytes() == _fixed_bytes(JOB)  # the untouched one is fixed
    err = capsys.readouterr().err
    assert err == (f"aml-lint: warning: {tmp_path / 'edited.yml'} not fixed: it changed while aml-lint ran; "
                   "run aml-lint again\n")
    assert summary.fixed == 4  # the other file's findings alone
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


_EDITS = st.one_of(
    st.binary(max_size=40).map(lambda extra: lambda data: data + extra),
    st.tuples(st.integers(0, 10_000), st.binary(min_size=1, max_size=8)).map(
        lambda edit: lambda data: data[:edit[0] % (len(data) + 1)] + edit[1] + data[edit[0] % (len(data) + 1):]),
    st.tuples(st.integers(0, 10_000), st.integers(1, 30)).map(
        lambda cut: lambda data: data[:cut[0] % len(data)] + data[cut[0] % len(data) + cut[1]:]),
    st.just(lambda data: b"\xef\xbb\xbf" + data),
    st.just(lambda data: data.replace(b"\n", b"\r\n")),
    st.binary(max_size=200).map(lambda other: lambda data: other),
    st.just(lambda data: data),  # no edit: then the fix is written
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.sampled_from([JOB, JOB.replace("\n", "\r\n"), FIXED.replace("compute:", "comptue:")]),
       bom=st.booleans(), edit=_EDITS, from_text=st.booleans())
def test_fix_never_loses_an_edit_made_after_the_lint(text: str, bom: bool, edit, from_text: bool) -> None:
    import contextlib
    import tempfile

    from validator.engine import LintResult, lint_file
    from validator.fixes import fix_paths

    original = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "job.yml"
        spec.write_bytes(original)
        # A report of the file as read (with the digest of its bytes), or of its text alone
        # (lint_text, as a library caller may hand in).
        report = lint_text(text, str(spec), Config()) if from_text else lint_file(spec, Config())
        edited = edit(original)
        spec.write_bytes(edited)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            summary = fix_paths(LintResult([report]), Config())
        marked = edited.startswith(b"\xef\xbb\xbf")
        # A report of a text knows no byte-order mark: a mark added or removed leaves its text.
        same = edited == original or (from_text and edited[3 if marked else 0:] == text.encode())
        if not same:
            assert spec.read_bytes() == edited
            assert err.getvalue() == f"aml-lint: warning: {spec} not fixed: it changed while aml-lint ran; " \
                                     "run aml-lint again\n"
            assert summary.fixed == 0
        else:
            assert spec.read_bytes() == (b"\xef\xbb\xbf" if marked else b"") + fix_text(text, "job.yml").text.encode()
            assert summary.fixed > 0 and err.getvalue() == ""
        assert sorted(p.name for p in Path(folder).iterdir()) == ["job.yml"]


@needs_root
def test_fix_refuses_a_read_only_file() -> None:
    with shared_folder() as folder:
        spec = folder / "a.yml"
        spec.write_text(JOB)
        os.chown(spec, NOBODY, NOBODY)
        spec.chmod(0o444)  # nobody's own file, in nobody's folder: only the file's mode says no
        done = run_as_nobody("--isolated", "--fix", "a.yml", cwd=folder)
        assert spec.read_text() == JOB and stat.S_IMODE(spec.stat().st_mode) == 0o444
        assert done.returncode == 2, done.stderr
        errors = [line for line in done.stderr.splitlines() if "error" in line]
        assert errors == ["aml-lint: error: cannot write a.yml: Permission denied (mode 0444): it is read-only "
                          "for you, and left as it was"]
        assert "Fixed 0 findings" in done.stderr and "Traceback" not in done.stderr


@needs_root
def test_fix_keeps_hard_links_line_endings_bom_and_mode() -> None:
    with shared_folder() as folder:
        text = JOB.replace("\n", "\r\n")
        spec, other = folder / "a.yml", folder / "b.yml"
        spec.write_bytes(b"\xef\xbb\xbf" + text.encode())
        os.chown(spec, NOBODY, NOBODY)
        spec.chmod(0o640)
        os.link(spec, other)
        done = run_as_nobody("--isolated", "--fix", "a.yml", cwd=folder)
        assert done.returncode == 1 and "Fixed 4 findings" in done.stderr, done.stderr
        fixed = b"\xef\xbb\xbf" + fix_text(text, "a.yml").text.encode()
        assert b"\r\ncompute: azureml:cpu-cluster\r\n" in fixed
        assert spec.read_bytes() == fixed and other.read_bytes() == fixed
        assert spec.stat().st_ino == other.stat().st_ino and spec.stat().st_nlink == 2
        assert stat.S_IMODE(spec.stat().st_mode) == 0o640
        assert sorted(p.name for p in folder.iterdir()) == ["a.yml", "b.yml"]


@needs_root
@pytest.mark.parametrize("folder_owner, file_owner, mode", [
    (NOBODY, 0, 0o666),   # root's file, writable by all, in nobody's folder: a rename would give it to nobody
    (0, NOBODY, 0o644),   # nobody's file in root's folder: no temporary file can be made beside it
], ids=["another-users-file", "folder-takes-no-new-file"])
def test_fix_keeps_the_owner_and_writes_where_it_may(folder_owner: int, file_owner: int, mode: int) -> None:
    with shared_folder(owner=folder_owner) as folder:
        spec = folder / "a.yml"
        spec.write_text(JOB)
        os.chown(spec, file_owner, file_owner)
        spec.chmod(mode)
        done = run_as_nobody("--isolated", "--fix", "a.yml", cwd=folder)
        assert done.returncode == 1 and "Fixed 4 findings" in done.stderr, done.stderr
        assert spec.read_bytes() == _fixed_bytes(JOB)
        status = spec.stat()
        assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (file_owner, file_owner, mode)
        assert [p.name for p in folder.iterdir()] == ["a.yml"]


def test_fix_on_a_folder_writes_no_file_outside_the_paths_named(tmp_path: Path) -> None:
    jobs, outside = tmp_path / "jobs", tmp_path / "outside"
    jobs.mkdir()
    outside.mkdir()
    (outside / "real.yml").write_text(JOB)
    (jobs / "away.yml").symlink_to(outside / "real.yml")
    (jobs / "real.yml").write_text(JOB)
    (jobs / "alias.yml").symlink_to("real.yml")  # leads inside the folder: written through
    done = run("--isolated", "--fix", "jobs", cwd=tmp_path)
    assert (outside / "real.yml").read_text() == JOB
    assert done.stderr.splitlines()[0] == (
        f"aml-lint: warning: jobs/away.yml not fixed: it is a link to {outside / 'real.yml'}, outside the paths "
        "named on the command line; name the file itself to fix it")
    assert (jobs / "real.yml").read_bytes() == _fixed_bytes(JOB)
    assert (jobs / "alias.yml").is_symlink() and (jobs / "away.yml").is_symlink()
    assert "changed while aml-lint ran" not in done.stderr  # the link to a file fixed already
    assert "jobs/away.yml:6:1: AML101" in done.stdout and "jobs/alias.yml:6" not in done.stdout
    assert done.returncode == 1

    # Named itself, the link is written through to its target, and stays a link.
    done = run("--isolated", "--fix", "jobs/away.yml", cwd=tmp_path)
    assert (outside / "real.yml").read_bytes() == _fixed_bytes(JOB) and (jobs / "away.yml").is_symlink()
    assert "Fixed 4 findings" in done.stderr
