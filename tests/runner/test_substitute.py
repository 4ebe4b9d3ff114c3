"""runner.substitute: what real bash passes to the program is exactly each value's text, in
every quoting context, and no value can run a command. Every check runs ``bash -c``."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.substitute import CONTEXTS, RenderError, quote_for_context, render_command

ENV = {**os.environ, "LC_ALL": "C.UTF-8"}
EXAMPLES = int(os.environ.get("AMLLAB_EXAMPLES", "150"))

# label -> (template using {ref}, what the program receives for value v)
TEMPLATES = {
    "unquoted": ("{ref}", lambda v: v),
    "double": ('"{ref}"', lambda v: v),
    "single": ("'a{ref}b'", lambda v: f"a{v}b"),
    "ansi-c": ("$'a{ref}b'", lambda v: f"a{v}b"),
    "option": ("--lr={ref}", lambda v: f"--lr={v}"),
    "concatenated": ("x{ref}\"y\"'z'", lambda v: f"x{v}yz"),
    # "$( )" drops trailing newlines of its output: the "." keeps them.
    "command-substitution": ("\"$(printf '%s.' {ref})\"", lambda v: f"{v}."),
    "double-in-command-substitution": ("\"$(printf '%s.' \"{ref}\")\"", lambda v: f"{v}."),
    "single-in-command-substitution": ("\"$(printf '%s.' 'a{ref}')\"", lambda v: f"a{v}."),
    "nested-command-substitution": ("\"$(printf '%s.' \"$(printf '%s.' {ref})\")\"", lambda v: f"{v}.."),
    "backquotes": ("\"`printf '%s.' {ref}`\"", lambda v: f"{v}."),
    "double-in-backquotes": ("\"`printf '%s.' \\\"{ref}\\\"`\"", lambda v: f"{v}."),
    "ansi-c-in-backquotes": ("\"`printf '%s.' $'{ref}'`\"", lambda v: f"{v}."),
    "nested-backquotes": ("\"`printf '%s.' \\\"\\`printf '%s.' {ref}\\`\\\"`\"", lambda v: f"{v}.."),
    "backquotes-in-command-substitution": ("\"$(printf '%s.' \"`printf '%s.' {ref}`\")\"",
                                           lambda v: f"{v}.."),
    "parameter-default": ("${{AMLLAB_UNSET:-{ref}}}", lambda v: v),
    "double-in-parameter-default": ("${{AMLLAB_UNSET:-\"{ref}\"}}", lambda v: v),
}
# Where a single quote cannot be represented (RenderError says so), checked without one.
NO_SINGLE_QUOTE = {"parameter-default-in-double": ('"${{AMLLAB_UNSET:-{ref}}}"', lambda v: v)}

FRAGMENTS = ["'", '"', "\\", "$(", ")", "`", "${", "}", "$", "\n", ";", "&&", "|", "*", "?", "[a]",
             "-", "--", "'\\''", "$'", "\\'", "#", " ", "\t", "~", "{a,b}", "!", "<<EOF", "EOF",
             "$((", "))", "touch PWNED", "%s", "\\n", "\r", "é", "☃"]
CHARS = st.characters(codec="utf-8", exclude_characters="\0")
VALUES = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(CHARS, max_size=4)), max_size=8).map("".join)
HOSTILE = ["$(touch PWNED)", "`touch PWNED`", "; touch PWNED", "'; touch PWNED; '", '" ; touch PWNED ; "',
           '\\"; touch PWNED #', "\\'; touch PWNED #", "\n touch PWNED", "$'\\'; touch PWNED'", "}; touch PWNED",
           "${IFS}touch${IFS}PWNED", "a\\", "\\", "$(( 1 ))$(touch PWNED)", "'\"`$(touch PWNED)`\"'"]


def bash(command: str, cwd: Path) -> list[str]:
    """The NUL-terminated records ``command`` prints."""
    result = subprocess.run(["bash", "-c", command], cwd=cwd, env=ENV, capture_output=True, timeout=30)
    assert result.returncode == 0, (command, result.stderr.decode(errors="replace"))
    out = result.stdout.decode("utf-8")
    assert out.endswith("\0") or not out, out
    return out.split("\0")[:-1]


def ref(i: int) -> str:
    return "${{inputs.v%d}}" % i


def received(command: str, values: dict[str, str | None], cwd: Path) -> list[str]:
    return bash(render_command(command, values), cwd)


def batch(values: list[str]) -> tuple[str, dict[str, str], list[str]]:
    """One command that prints a labelled record per context and value, with its expectation."""
    lines, expected = [], []
    for i, value in enumerate(values):
        templates = {**TEMPLATES, **({} if "'" in value else NO_SINGLE_QUOTE)}
        for label, (template, receives) in templates.items():
            lines.append(f"printf '%s\\0' {label} " + template.format(ref=ref(i)))
            expected += [label, receives(value)]
        # A comment ends at a newline: one inside the value must not end it.
        lines.append(f"printf '%s\\0' comment # {ref(i)} ; touch PWNED")
        expected.append("comment")
    return "\n".join(lines), {f"inputs.v{i}": v for i, v in enumerate(values)}, expected


# -- every context, arbitrary values ----------------------------------------------------------------

@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(VALUES, min_size=1, max_size=3))
def test_bash_receives_each_value_exactly_in_every_context(values: list[str], tmp_path: Path) -> None:
    command, mapping, expected = batch(values)
    assert received(command, mapping, tmp_path) == expected
    assert not (tmp_path / "PWNED").exists()


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=VALUES)
def test_quote_for_context_round_trips_through_bash(value: str, tmp_path: Path) -> None:
    lines = ["printf '%s\\0' " + quote_for_context(value, "unquoted"),
             "printf '%s\\0' \"" + quote_for_context(value, "double") + '"',
             "printf '%s\\0' '" + quote_for_context(value, "single") + "'",
             "printf '%s\\0' $'" + quote_for_context(value, "ansi-c") + "'"]
    assert bash("\n".join(lines), tmp_path) == [value] * len(CONTEXTS)


@pytest.mark.parametrize("value", ["", "-", "--help", "*", "a b", "\n", "x\n\n", "'", '"', "\\", "$HOME",
                                   "~", "{a,b}", "-n", "-e", "é☃"])
def test_edge_values_arrive_exactly(value: str, tmp_path: Path) -> None:
    (tmp_path / "glob-bait").write_text("")
    command, mapping, expected = batch([value])
    assert received(command, mapping, tmp_path) == expected


# -- injection -------------------------------------------------------------------------------------

INJECTION_TEMPLATES = [t for t, _ in TEMPLATES.values()] + [t for t, _ in NO_SINGLE_QUOTE.values()] + [
    "`printf %s {ref}`", "$(printf %s {ref})", "# {ref}", "\"${{AMLLAB_UNSET:-'{ref}'}}\"",
    "$(( {ref} ))", "${{AMLLAB_UNSET:0:{ref}}}", "\ncat <<'EOF'\n{ref}\nEOF\n", "\ncat <<EOF\n{ref}\nEOF\n",
    "$[[--flag {ref}]]", "$[[\"--flag={ref}\"]]",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_no_value_runs_a_command(value: str, tmp_path: Path) -> None:
    rendered = 0
    for template in INJECTION_TEMPLATES:
        command = "printf '%s\\0' " + template.format(ref=ref(0))
        try:
            text = render_command(command, {"inputs.v0": value})
        except RenderError:
            continue  # refused: nothing runs
        subprocess.run(["bash", "-c", text], cwd=tmp_path, env=ENV, capture_output=True, timeout=30)
        rendered += 1
        assert not (tmp_path / "PWNED").exists(), (template, text)
    assert rendered >= len(TEMPLATES)


def test_the_injection_check_would_see_an_unquoted_substitution(tmp_path: Path) -> None:
    subprocess.run(["bash", "-c", "printf '%s\\0' " + "; touch PWNED"], cwd=tmp_path, capture_output=True)
    assert (tmp_path / "PWNED").exists()


# -- commands as a job writes them ---------------------------------------------------------------

JOB = ("printf '%s\\0' train.py --data ${{inputs.training_data}} --lr ${{inputs.lr}} "
       "$[[--epochs ${{inputs.epochs}}]] --out ${{outputs.model}}")


def test_a_job_command_with_an_optional_input_given(tmp_path: Path) -> None:
    values = {"inputs.training_data": "/data/my set", "inputs.lr": "0.01", "inputs.epochs": "3",
              "outputs.model": "/out/model"}
    assert render_command(JOB, values) == ("printf '%s\\0' train.py --data '/data/my set' --lr 0.01 "
                                           "--epochs 3 --out /out/model")
    assert received(JOB, values, tmp_path) == ["train.py", "--data", "/data/my set", "--lr", "0.01",
                                               "--epochs", "3", "--out", "/out/model"]


def test_a_job_command_with_an_optional_input_missing(tmp_path: Path) -> None:
    values = {"inputs.training_data": "d", "inputs.lr": "0.1", "inputs.epochs": None, "outputs.model": "m"}
    assert "epochs" not in render_command(JOB, values)
    assert received(JOB, values, tmp_path) == ["train.py", "--data", "d", "--lr", "0.1", "--out", "m"]


def test_a_block_is_dropped_whole_when_any_of_its_inputs_is_missing(tmp_path: Path) -> None:
    command = "printf '%s\\0' a $[[--pair ${{inputs.x}} ${{inputs.y}}]] b"
    assert received(command, {"inputs.x": "1", "inputs.y": None}, tmp_path) == ["a", "b"]
    assert received(command, {"inputs.x": "1", "inputs.y": "2"}, tmp_path) == ["a", "--pair", "1", "2", "b"]


def test_a_kept_block_quotes_by_its_own_context(tmp_path: Path) -> None:
    command = "printf '%s\\0' $[['--name=${{inputs.n}}']] $[[\"${{inputs.n}}\"]] ${{inputs.m}}"
    assert received(command, {"inputs.n": "it's \"x\"", "inputs.m": "a b"}, tmp_path) == [
        "--name=it's \"x\"", "it's \"x\"", "a b"]
    # Dropping a block that held a quote leaves the next reference unquoted, and quoted as such.
    assert received(command, {"inputs.n": None, "inputs.m": "a b"}, tmp_path) == ["a b"]


def test_several_references_and_kinds(tmp_path: Path) -> None:
    command = ("printf '%s\\0' ${{inputs.a}} \"${{search_space.lr}}\" '${{outputs.c}}' "
               "${{inputs.a}}${{outputs.c}}")
    values = {"inputs.a": "x y", "search_space.lr": "$lr", "outputs.c": "it's"}
    assert received(command, values, tmp_path) == ["x y", "$lr", "it's", "x yit's"]


def test_safe_values_stay_readable() -> None:
    assert render_command("python t.py --lr=${{inputs.lr}} --out ${{outputs.o}}",
                          {"inputs.lr": "0.01", "outputs.o": "/tmp/x"}) == "python t.py --lr=0.01 --out /tmp/x"


def test_deprecated_single_brace_form_is_left_alone(tmp_path: Path) -> None:
    command = "printf '%s\\0' {inputs.x} ${{inputs.x}}"
    assert render_command(command, {"inputs.x": "v"}) == "printf '%s\\0' {inputs.x} v"


def test_backslash_escapes_do_not_open_quotes(tmp_path: Path) -> None:
    command = "printf '%s\\0' \\\" ${{inputs.x}} \\' \"\\\"${{inputs.x}}\" $'\\'${{inputs.x}}'"
    assert received(command, {"inputs.x": "a b"}, tmp_path) == ['"', "a b", "'", '"a b', "'a b"]


def test_quotes_in_a_comment_do_not_count(tmp_path: Path) -> None:
    command = "printf '%s\\0' ok # don't \"\nprintf '%s\\0' ${{inputs.x}}"
    assert received(command, {"inputs.x": "a b"}, tmp_path) == ["ok", "a b"]


def test_hash_inside_a_word_is_not_a_comment(tmp_path: Path) -> None:
    command = "printf '%s\\0' a#'${{inputs.x}}' $#"
    assert received(command, {"inputs.x": "it's"}, tmp_path) == ["a#it's", "0"]


def test_command_substitution_closes_where_bash_closes_it(tmp_path: Path) -> None:
    command = "printf '%s\\0' \"$(echo \"(\" ')' $( (echo ok) ))${{inputs.x}}\""
    assert received(command, {"inputs.x": "a\"b"}, tmp_path) == ["( ) oka\"b"]


def test_a_case_pattern_does_not_end_a_command_substitution(tmp_path: Path) -> None:
    command = ("printf '%s\\0' \"$(case a in (a) printf %s \"${{inputs.x}}\" ;; b) echo;; esac)"
               "${{inputs.x}}\"")
    value = "$(touch PWNED) 'q' \"d\""
    assert received(command, {"inputs.x": value}, tmp_path) == [value + value]
    assert not (tmp_path / "PWNED").exists()


def test_arithmetic_takes_integers(tmp_path: Path) -> None:
    command = "printf '%s\\0' $(( ${{inputs.n}} * 2 )) $[${{inputs.n}}+1] ${X:-abcdef} ${HOME:0:${{inputs.n}}}"
    assert received(command, {"inputs.n": "-3"}, tmp_path)[:3] == ["-6", "-2", "abcdef"]
    assert received("(( ${{inputs.n}} > 2 )) && printf '%s\\0' big", {"inputs.n": "3"}, tmp_path) == ["big"]


def test_here_document_with_quoted_delimiter_takes_any_single_line(tmp_path: Path) -> None:
    command = "cat <<'EOF'\nvalue: ${{inputs.x}}\nEOF\nprintf '%s\\0' ${{inputs.x}}"
    value = "$(touch PWNED) `x` \\ 'q' \"d\""
    text = render_command(command, {"inputs.x": value})
    result = subprocess.run(["bash", "-c", text], cwd=tmp_path, capture_output=True, text=True)
    assert result.stdout == f"value: {value}\n{value}\0"
    assert not (tmp_path / "PWNED").exists()


def test_here_document_with_unquoted_delimiter_takes_inert_values(tmp_path: Path) -> None:
    command = "cat <<-END\n\t{\"lr\": ${{inputs.lr}}}\n\tEND\necho done"
    result = subprocess.run(["bash", "-c", render_command(command, {"inputs.lr": "0.01"})],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.stdout == '{"lr": 0.01}\ndone\n'


# -- errors ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("command", "values", "words"), [
    ("run ${{inputs.y}}", {"inputs.x": "1", "outputs.o": "2"}, ["${{inputs.y}}", "inputs.x, outputs.o"]),
    ("run ${{inputs.y}}", {}, ["${{inputs.y}}", "none"]),
    ("run ${{inputs.x}}", {"inputs.x": None}, ["${{inputs.x}}", "no value", "$[["]),
    ("run ${{inputs.x", {"inputs.x": "1"}, ["never closed"]),
    ("run ${{inputs.x}", {"inputs.x": "1"}, ["closed with '}'"]),
    ("run $[[ --flag ]]", {}, ["must contain an input reference"]),
    ("run $[[ --a ${{inputs.x}} $[[ ]] ]]", {"inputs.x": "1"}, ["nested"]),
    ("run ${{inputs.x}}", {"inputs.x": "a\0b"}, ["NUL"]),
    ("run \\${{inputs.x}}", {"inputs.x": "a"}, ["backslash"]),
    ("run \"\\${{inputs.x}}\"", {"inputs.x": "a"}, ["backslash"]),
    ("run $'\\${{inputs.x}}'", {"inputs.x": "a"}, ["backslash"]),
    ("run $${{inputs.x}}", {"inputs.x": "a"}, ["'$'"]),
    ("run \"$${{inputs.x}}\"", {"inputs.x": "a"}, ["'$'"]),
    ("run $(( ${{inputs.x}} ))", {"inputs.x": "a[$(id)]"}, ["arithmetic", "integer"]),
    ("run ${a[${{inputs.x}}]}", {"inputs.x": "1+1"}, ["arithmetic"]),
    ("run \"${X:-${{inputs.x}}}\"", {"inputs.x": "it's"}, ["single quote"]),
    ("run \"${X:-'${{inputs.x}}'}\"", {"inputs.x": "a b"}, ["only values"]),
    ("cat <<EOF\n${{inputs.x}}\nEOF", {"inputs.x": "a\nb"}, ["multi-line"]),
    ("cat <<EOF\n${{inputs.x}}\nEOF", {"inputs.x": "$(id)"}, ["unquoted delimiter", "<<'EOF'"]),
    ("cat <<'EOF'\n${{inputs.x}}\nEOF", {"inputs.x": "EOF"}, ["end the here-document"]),
    ("cat <<${{inputs.x}}\nEOF", {"inputs.x": "EOF"}, ["delimiter"]),
])
def test_render_errors(command: str, values: dict[str, str | None], words: list[str]) -> None:
    with pytest.raises(RenderError) as error:
        render_command(command, values)
    for word in words:
        assert word in str(error.value)


def test_render_error_is_a_value_error_and_type_errors_are_not_hidden() -> None:
    assert issubclass(RenderError, ValueError)
    with pytest.raises(TypeError):
        render_command("run ${{inputs.x}}", {"inputs.x": 3})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="unknown quoting context"):
        quote_for_context("x", "heredoc")


def test_unquoted_quoting_is_shlex() -> None:
    for value in ["0.01", "/tmp/x", "a b", "", "it's"]:
        assert quote_for_context(value, "unquoted") == shlex.quote(value)
