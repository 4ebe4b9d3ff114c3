"""`aml-lint` as a user runs it: a real process in a temporary folder, checking its output and
exit status."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from amllint import BAD, GOOD, WARN, run
from conftest import BIN, ROOT

@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "good.yml").write_text(GOOD)
    (tmp_path / "jobs" / "bad.yml").write_text(BAD)
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ci.yml").write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n")
    (tmp_path / "docker-compose.yml").write_text("services:\n  web:\n    image: nginx\n")
    return tmp_path


def test_clean_file_exits_zero(project: Path) -> None:
    result = run("jobs/good.yml", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "All clean: 1 spec checked."


def test_errors_exit_one_with_position_excerpt_and_caret(project: Path) -> None:
    result = run("jobs", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == ("jobs/bad.yml:5:1: AML101 error: unknown key 'comptue' in the command job; "
                        "did you mean 'compute'?")
    assert lines[1:4] == ["  |", "5 | comptue: azureml:cpu-cluster", "  | ^~~~~~~"]
    assert lines[-1] == "Found 1 error and 0 warnings (2 specs checked)."


def test_directory_walk_skips_other_yaml_and_verbose_says_why(project: Path) -> None:
    result = run("-v", ".", cwd=project)
    assert result.returncode == 1
    assert "skipped docker-compose.yml: not an Azure ML spec" in result.stdout
    assert ".github" not in result.stdout  # hidden folders are not walked
    assert "checked jobs/good.yml as commandJob" in result.stdout


def test_other_azure_ml_kinds_are_info_only(project: Path) -> None:
    (project / "env.yml").write_text(
        "$schema: https://azuremlschemas.azureedge.net/latest/environment.schema.json\nname: e\nimage: x\n")
    quiet = run("env.yml", cwd=project)
    assert quiet.returncode == 0 and "AML013" not in quiet.stdout
    verbose = run("-v", "env.yml", cwd=project)
    assert verbose.returncode == 0
    assert "AML013 info: environment spec" in verbose.stdout


def test_warnings_exit_zero_unless_strict(project: Path) -> None:
    (project / "warn.yml").write_text(WARN)
    assert run("warn.yml", cwd=project).returncode == 0
    strict = run("--strict", "warn.yml", cwd=project)
    assert strict.returncode == 1
    assert "AML205 error:" in strict.stdout


def test_stdin_with_filename(project: Path) -> None:
    result = run("-", "--stdin-filename", "jobs/piped.yml", cwd=project, stdin=BAD)
    assert result.returncode == 1
    assert result.stdout.startswith("jobs/piped.yml:5:1: AML101 error:")


def test_json_format(project: Path) -> None:
    result = run("--format", "json", "jobs", cwd=project)
    payload = json.loads(result.stdout)
    assert payload["summary"] == {"errors": 1, "warnings": 0, "infos": 0}
    [diagnostic] = payload["diagnostics"]
    assert diagnostic["code"] == "AML101" and diagnostic["pointer"] == "/comptue"
    assert (diagnostic["line"], diagnostic["column"], diagnostic["end_column"]) == (5, 1, 8)


def test_github_format_is_chosen_under_github_actions(project: Path) -> None:
    result = run("jobs/bad.yml", cwd=project, env={"GITHUB_ACTIONS": "true"})
    assert result.returncode == 1
    assert result.stdout.startswith(
        "::error file=jobs/bad.yml,line=5,col=1,endColumn=8,title=AML101 unknown-key::unknown key 'comptue'")


def test_sarif_format_is_valid_sarif_2_1_0(project: Path) -> None:
    from jsonschema import Draft7Validator

    result = run("--format", "sarif", "jobs", cwd=project)
    document = json.loads(result.stdout)
    schema = json.loads((ROOT / "tests" / "data" / "sarif-2.1.0-subset.schema.json").read_text())
    errors = list(Draft7Validator(schema).iter_errors(document))
    assert errors == []
    [run_] = document["runs"]
    [finding] = run_["results"]
    assert finding["ruleId"] == "AML101"
    assert run_["tool"]["driver"]["rules"][finding["ruleIndex"]]["id"] == "AML101"
    assert finding["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "jobs/bad.yml"


def test_explain_and_list_rules(project: Path) -> None:
    explained = run("--explain", "aml101", cwd=project)
    assert explained.returncode == 0
    assert explained.stdout.startswith("AML101 unknown-key (error)")
    assert "Bad:" in explained.stdout and "Good:" in explained.stdout
    unknown = run("--explain", "AML999", cwd=project)
    assert unknown.returncode == 2 and "unknown rule code 'AML999'" in unknown.stderr
    listed = run("--list-rules", cwd=project)
    assert listed.returncode == 0 and "AML202  undefined-input" in listed.stdout


def test_usage_errors_exit_two_with_one_line(project: Path) -> None:
    missing = run("nope.yml", cwd=project)
    assert missing.returncode == 2
    assert missing.stderr == "aml-lint: error: no such file or directory: nope.yml\n"
    bad_select = run("--select", "AML99", "jobs", cwd=project)
    assert bad_select.returncode == 2 and "unknown rule code 'AML99'" in bad_select.stderr
    assert "Traceback" not in missing.stderr + bad_select.stderr


def test_pyproject_configuration_and_cli_override(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.amllab.lint]\nignore = ["AML101"]\n')
    assert run("jobs", cwd=project).returncode == 0
    assert run("--isolated", "jobs", cwd=project).returncode == 1
    (project / "pyproject.toml").write_text(
        '[tool.amllab.lint]\nper-file-ignores = { "jobs/bad.yml" = ["AML1"] }\n')
    assert run("jobs", cwd=project).returncode == 0
    (project / "pyproject.toml").write_text('[tool.amllab.lint]\nwarnings-as-errors = true\n')
    (project / "warn.yml").write_text(WARN)
    assert run("warn.yml", cwd=project).returncode == 1


def test_invalid_configuration_is_one_clear_message(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.amllab.lint]\nselct = ["AML1"]\n')
    result = run("jobs", cwd=project)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"aml-lint: error: {project / 'pyproject.toml'}: unknown key 'selct' in "
                                     "[tool.amllab.lint]; did you mean 'select'?")


def test_inline_suppressions(project: Path) -> None:
    same_line = BAD.replace("comptue: azureml:cpu-cluster", "comptue: azureml:cpu-cluster  # amllab: ignore[AML101]")
    (project / "same.yml").write_text(same_line)
    assert run("same.yml", cwd=project).returncode == 0
    above = BAD.replace("comptue:", "# amllab: ignore[AML101]\ncomptue:")
    (project / "above.yml").write_text(above)
    assert run("above.yml", cwd=project).returncode == 0
    (project / "file.yml").write_text("# amllab: ignore-file\n" + BAD)
    assert run("file.yml", cwd=project).returncode == 0
    stale = GOOD.replace("compute: azureml:cpu-cluster", "compute: azureml:cpu-cluster  # amllab: ignore[AML101]")
    (project / "stale.yml").write_text(stale)
    result = run("stale.yml", cwd=project)
    assert result.returncode == 0  # a warning
    assert "AML012 warning: suppression comment for AML101 suppresses nothing" in result.stdout


def test_python_dash_m_validator_is_the_same_command(project: Path) -> None:
    result = subprocess.run([str(BIN / "python"), "-m", "validator", "jobs/bad.yml"], cwd=project,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "AML101" in result.stdout


def test_a_command_job_imports_only_the_rule_families_that_check_it(project: Path) -> None:
    # The pre-commit case: one job file pays for its kind's rules, not for pipelines' or schedules'.
    code = ("import sys, validator.cli\n"
            "validator.cli.main(['jobs/good.yml'])\n"
            "print(','.join(sorted(m for m in sys.modules if m.startswith('validator.rules.'))))\n")
    result = subprocess.run([str(BIN / "python"), "-c", code], cwd=project, capture_output=True, text=True,
                            timeout=120)
    loaded = set(result.stdout.splitlines()[-1].split(","))
    assert "validator.rules.training_code" in loaded, result.stdout + result.stderr
    assert not loaded & {"validator.rules.pipeline", "validator.rules.schedule", "validator.rules.sweep"}


def test_version_is_fast_path_without_heavy_imports(project: Path) -> None:
    code = ("import sys, validator.cli\n"
            "try:\n    validator.cli.main(['--version'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('jsonschema', 'yaml', 'torch', 'mlflow', 'textual') if m in sys.modules]\n"
            "print(','.join(heavy))\n")
    result = subprocess.run([str(BIN / "python"), "-c", code], cwd=project, capture_output=True, text=True,
                            timeout=120)
    assert result.stdout.splitlines()[-1] == ""
