"""runner.substitute against real bash on generated commands: no value runs a command, and where
a command shows a value the program receives its text; where the renderer cannot be sure how
bash reads a position it refuses any value that is not inert, with the input, the position and
the fix. The generator and the runner live in tools/shell_differential.py (which runs 15,000)."""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amlrun import aml_run, lab, write_job  # noqa: F401
from runner.substitute import RenderError, render_command

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("shell_differential", ROOT / "tools" / "shell_differential.py")
differential = importlib.util.module_from_spec(_SPEC)
sys.modules["shell_differential"] = differential
_SPEC.loader.exec_module(differential)

ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": "/tmp"}
EXAMPLES = int(os.environ.get("AMLLAB_EXAMPLES", "150"))
BATCH = 40  # renderings per bash run
SEEDED = 1600  # renderings of the seeded run: fast, as the choices cost nothing
REF = "${{inputs.name}}"
T = TypeVar("T")


def bash(text: str, cwd: Path) -> str:
    return subprocess.run(["bash", "-c", text], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=30).stdout


def refused(command: str, value: str) -> str:
    with pytest.raises(RenderError) as error:
        render_command(command, {"inputs.name": value})
    return str(error.value)


# -- the cases fuzzing found ------------------------------------------------------------------------

# A backquoted or "$( )" word inside "${...}": bash reads that word twice (to find the "}", then
# to expand it), which the renderer did not model; the value's quotes ended up as code.
PARAMETER_SHAPES = [
    'echo "label: ${LABEL:-`echo ' + REF + '`}"',  # as first reported
    'echo "label: ${HOME:+`echo ' + REF + '`}"',  # the word of ":+" on a set variable
    'echo "label: ${HOME#`echo ' + REF + '`}"',  # a pattern
    'echo "label: ${X:-${Y:-`echo ' + REF + '`}}"',  # nested
    'echo "label: ${LABEL:-$(echo ' + REF + ')}"',
    'echo label: ${LABEL:-`echo ' + REF + '`}',
]
# A here-document inside "$( )" closed by "EOF)": bash ends it there, the renderer read on.
HEREDOC_SHAPES = [
    "x=$(cat <<'EOF'\nhi\nEOF)\necho \"$x\" " + REF,
    "x=$(cat <<EOF\nhi\nEOF)\necho \"$x\" " + REF,
    "x=$(cat <<'EOF'\nhi\nEOF )\necho \"$x\" " + REF,
    "x=`cat <<'EOF'\nhi\nEOF`\necho \"$x\" " + REF,
]
INJECTIONS = ["'$(touch PWNED)'", "x';touch PWNED;'", "x;touch PWNED", "'`touch PWNED`'", "$(touch PWNED)"]


@pytest.mark.parametrize("command", PARAMETER_SHAPES + HEREDOC_SHAPES)
@pytest.mark.parametrize("value", INJECTIONS)
def test_a_reference_bash_reads_in_an_unmodelled_way_refuses_a_value_that_is_not_inert(
        command: str, value: str, tmp_path: Path) -> None:
    message = refused(command, value)
    assert "${{inputs.name}}" in message and "of the command" in message and "line " in message
    assert "VALUE=${{inputs.name}};" in message and '"$VALUE"' in message  # the fix
    assert "ASCII letters, digits and _@%+=:,./-" in message


@pytest.mark.parametrize("command", PARAMETER_SHAPES + HEREDOC_SHAPES)
def test_there_an_inert_value_still_renders_and_arrives(command: str, tmp_path: Path) -> None:
    text = render_command(command, {"inputs.name": "run-1.2/a=b"})
    shown = "label: /tmp" if "HOME#" in command else "run-1.2/a=b"  # a pattern takes it off $HOME
    assert shown in bash(text, tmp_path)


def test_the_first_report_names_the_position_and_the_fix() -> None:
    message = refused('echo "label: ${LABEL:-`echo ${{inputs.name}}`}"', "x';touch PWNED;'")
    assert message.startswith("${{inputs.name}} (at line 1, column 29 of the command) is inside "
                              "backquotes within '${...}'")


def test_a_reference_after_a_here_document_in_a_substitution_is_uncertain_to_the_end() -> None:
    command = "x=$(cat <<'EOF'\nhi\nEOF)\necho ok\necho \"${{inputs.name}}\""
    assert "line 5, column 7" in refused(command, "a b")
    assert "vanish" in refused(command, "")  # raw, an empty value would be no argument at all


def test_case_as_an_argument_does_not_open_a_case(tmp_path: Path) -> None:
    # The renderer counted "case x in" in "echo case x in y" as a case statement, so the ")"
    # after it did not end the "$( )" and the reference was quoted as if still inside it.
    command = 'printf "%s" "$(echo case x in y) ${{inputs.name}}"'
    value = "'$(touch PWNED)' `touch PWNED` \"x\""
    assert bash(render_command(command, {"inputs.name": value}), tmp_path) == f"case x in y {value}"
    assert not (tmp_path / "PWNED").exists()


def test_case_keywords_are_recognised_where_bash_reads_keywords(tmp_path: Path) -> None:
    command = ('printf "%s|" "$(if true; then case a in a) printf x;; esac; fi)" '
               '"$(case a in a) printf esac;; esac)${{inputs.name}}"')
    value = "$(touch PWNED) ')'"
    assert bash(render_command(command, {"inputs.name": value}), tmp_path) == f"x|esac{value}|"
    assert "not written 'case WORD in'" in refused('echo "$(case "a b" in a) :;; esac) ${{inputs.name}}"', "a b")


def test_arithmetic_that_bash_reads_as_subshells_makes_what_follows_uncertain() -> None:
    assert "nested subshells" in refused("echo $(( echo 'x' ))${{inputs.name}}", "a b")
    assert "nested subshells" in refused("echo $((echo a) )${{inputs.name}}", "a b")
    assert render_command("for ((i=0;i<${{inputs.name}};i++)); do :; done", {"inputs.name": "3"})


def test_a_substitution_inside_backquotes_is_uncertain() -> None:
    # Bash parses it once before removing the backquotes' backslashes, once after.
    assert "within backquotes" in refused('echo "`echo $(printf %s ${{inputs.name}})`"', "a\n|")


def test_a_name_right_before_a_reference_is_refused(tmp_path: Path) -> None:
    for command in ['echo "$X${{inputs.name}}"', "echo $X${{inputs.name}}", 'echo "${X-"$X""${{inputs.name}}"}"']:
        assert "write '${X}' instead" in refused(command, "abc")
    assert bash(render_command('printf %s "${X}${{inputs.name}}" $1${{inputs.name}} \\$X${{inputs.name}}',
                               {"inputs.name": "abc"}), tmp_path) == "abcabc$Xabc"


# -- generated commands -----------------------------------------------------------------------------

class DataChooser:
    """The tool's grammar, with hypothesis choosing (so a failure shrinks)."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def choice(self, options: Sequence[T]) -> T:
        return self.data.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))


def _explain(report: differential.Report) -> str:
    lines = [report.line()]
    lines += [f"executed: {command!r} with {value!r} as {text!r}" for command, value, text in report.executions[:3]]
    lines += [f"text: {c!r} with {v!r} as {t!r}: got {g!r}, want {w!r}" for c, v, t, g, w in report.mismatches[:3]]
    return "\n".join(lines)


@settings(max_examples=max(6, EXAMPLES // 12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_generated_command_runs_a_payload_and_shown_values_arrive(data: st.DataObject) -> None:
    chooser = DataChooser(data)
    report = differential.run_cases([differential.generate(chooser) for _ in range(BATCH)])
    assert not report.executions and not report.mismatches, _explain(report)


def test_a_seeded_run_renders_most_commands_and_reports_its_counts() -> None:
    chooser = differential.RandomChooser(random.Random(20261204))
    report = differential.run_cases([differential.generate(chooser) for _ in range(SEEDED)])
    print(report.line())
    assert not report.executions and not report.mismatches, _explain(report)
    # Refusing everything would also pass the check above: a good share must still run.
    assert report.renderings == SEEDED and report.run >= SEEDED * 0.3 and report.refused >= 20, report.line()


def test_the_check_sees_a_payload_that_runs_and_a_value_that_does_not_arrive() -> None:
    ran = differential.run_cases([differential.Case("touch M0; echo " + REF, "x")])
    assert len(ran.executions) == 1
    changed = differential.run_cases([differential.Case("echo " + REF + " | tr a b", "a")])
    assert len(changed.mismatches) == 1 and not changed.executions


def test_the_tool_prints_its_counts() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "shell_differential.py"), "200", "--seed", "7"],
                            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("renderings 200, refused ")
    assert result.stdout.rstrip().endswith("payload executions 0, text mismatches 0")


# -- through aml-run and --set ---------------------------------------------------------------------

def test_a_value_from_set_is_refused_there_and_nothing_runs(lab: Path) -> None:  # noqa: F811
    spec = write_job(lab / "shell", "job", """\
        command: |-
          echo "label: ${LABEL:-`echo ${{inputs.name}}`}"
        inputs:
          name: plain
        """)
    result = aml_run("job", "create", "--file", str(spec), "--stream", "--set", "inputs.name=x';touch PWNED;'",
                     cwd=lab)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout + result.stderr
    assert "Status: Failed" in out and "inside backquotes within '${...}'" in out and "Traceback" not in out
    assert not list(lab.rglob("PWNED"))
    result = aml_run("job", "create", "--file", str(spec), "--stream", "--set", "inputs.name=run-7", cwd=lab)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "label: run-7" in result.stdout
