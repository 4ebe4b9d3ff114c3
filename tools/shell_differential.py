"""Differential test of runner.substitute against real bash: can a value run a command?

Commands are generated from a grammar of bash constructs (quotes, ``$( )``, backquotes,
``${X:-...}``, arithmetic, here-documents, comments, ``case``, nesting) with
``${{inputs.name}}`` references in them; values are payloads that would create a marker file if
any part of them ran as code. Each command is rendered twice: with the payload, and with an
inert token. A rendering that the renderer refuses is counted; every other one runs under real
``bash -c`` (minimal environment, a scratch directory, no network where ``unshare`` allows).
Two things must hold:

* no marker file exists afterwards (no payload ran), and
* the payload rendering prints what the token rendering prints with the token replaced by the
  payload: the program received the value's text, wherever the command shows it.

Usage: ``python tools/shell_differential.py [N] [--seed S]`` prints
``renderings N, refused R, rendered-and-run M, payload executions 0, text mismatches 0``.
The suite runs the same check at a smaller N (tests/runner/test_substitute_bash.py).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runner.substitute import RenderError, render_command  # noqa: E402

REF = "${{inputs.name}}"
TOKEN = "Tq9zTok"  # the inert twin of every payload; appears nowhere else in a command
MARK = "@M@"  # replaced by the rendering's own marker file name

T = TypeVar("T")


class Chooser(Protocol):
    """The source of choices: ``random.Random`` for the tool, hypothesis' ``data`` in the suite."""

    def choice(self, options: Sequence[T]) -> T: ...

    def integer(self, low: int, high: int) -> int: ...


class RandomChooser:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choice(self, options: Sequence[T]) -> T:
        return self.rng.choice(options)

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)


# -- the command grammar ----------------------------------------------------------------------------

def _bq(c: Chooser, inner: str, in_double: bool) -> str:
    """Backquotes around ``inner`` as an author writes them: escaped for nesting, or not."""
    style = c.integer(0, 2)
    if style == 0:
        escaped = inner.replace("\\", "\\\\").replace("`", "\\`").replace("$", "\\$")
        escaped = escaped.replace("\\${{", "${{")  # keep references references
    elif style == 1:
        escaped = inner.replace("\\", "\\\\").replace("`", "\\`")
    else:
        escaped = inner
    if in_double and c.integer(0, 1):
        escaped = escaped.replace('"', '\\"')
    return "`" + escaped + "`"


def dq_content(c: Chooser, depth: int) -> str:
    parts = []
    for _ in range(c.integer(1, 3)):
        kind = c.integer(0, 11 if depth > 0 else 5)
        if kind in (0, 1):
            parts.append(REF)
        elif kind == 2:
            parts.append(c.choice(["a b", "x:", "(", ")", "'", "}", "{", "#", "\\\"", "\\$x", "\\\\", "~", "*"]))
        elif kind == 3:
            parts.append("${X" + c.choice([":-", "-", "+"]) + "}")
        elif kind == 4:
            parts.append("$((" + c.choice(["1", "2", REF]) + "+1))")
        elif kind == 5:
            parts.append(c.choice(["$X", "$#", "$-x", "${#X}x"]))
        elif kind in (6, 7):
            parts.append("$(" + command(c, depth - 1) + ")")
        elif kind == 8:
            parts.append(_bq(c, command(c, depth - 1), in_double=True))
        elif kind in (9, 10):
            parts.append(param(c, depth - 1, in_double=True))
        else:
            parts.append("'" + REF + "'")
    return "".join(parts)


def param(c: Chooser, depth: int, in_double: bool) -> str:
    op = c.choice([":-", "-", ":+", "#", "%", "//a/", ":0:"])
    if op == ":0:":
        return "${X:0:" + c.choice(["1", REF]) + "}"
    if op == ":+" and c.integer(0, 1):
        head = "${HOME:+"  # set: the word is used
    else:
        head = "${X" + op
    parts = []
    for _ in range(c.integer(1, 2)):
        kind = c.integer(0, 8 if depth > 0 else 4)
        if kind in (0, 1):
            parts.append(REF)
        elif kind == 2:
            parts.append("'" + c.choice([REF, "a", "}", "x" + REF]) + "'")
        elif kind == 3:
            parts.append('"' + c.choice([REF, "a}", "$X"]) + '"')
        elif kind == 4:
            parts.append(c.choice(["a", "-", "\\}", "{b}", "$X"]))
        elif kind in (5, 6):
            parts.append(_bq(c, command(c, depth - 1), in_double))
        elif kind == 7:
            parts.append("$(" + command(c, depth - 1) + ")")
        else:
            parts.append(param(c, depth - 1, in_double))
    return head + "".join(parts) + "}"


def piece(c: Chooser, depth: int) -> str:
    kind = c.integer(0, 12 if depth > 0 else 6)
    if kind in (0, 1):
        return REF
    if kind == 2:
        return c.choice(["a", "--opt=", "x.txt", "-", "=", "{a,b}", "@", "+"])
    if kind in (3, 4):
        return '"' + dq_content(c, depth) + '"'
    if kind == 5:
        return "'" + c.choice([REF, "a" + REF + "b", "\"" + REF, "`" + REF]) + "'"
    if kind == 6:
        return "$'" + c.choice([REF, "\\n" + REF, "\\'" + REF]) + "'"
    if kind in (7, 8):
        return "$(" + command(c, depth - 1) + ")"
    if kind == 9:
        return _bq(c, command(c, depth - 1), in_double=False)
    if kind in (10, 11):
        return param(c, depth - 1, in_double=False)
    return '"$(' + command(c, depth - 1) + ')"'


def word(c: Chooser, depth: int) -> str:
    return "".join(piece(c, depth) for _ in range(c.integer(1, 2)))


def heredoc(c: Chooser, depth: int, nested: bool) -> str:
    delimiter = c.choice(["EOF", "END"])
    written = c.choice([delimiter, f"'{delimiter}'", f'"{delimiter}"', f"\\{delimiter}", f"-{delimiter}"])
    lines = []
    for _ in range(c.integer(1, 3)):
        lines.append(c.choice(["", "\t"]) + c.choice([
            REF, "v: " + REF, "$(printf %s " + REF + ")", "`printf %s " + REF + "`", "'" + REF + "'",
            "\"" + REF + "\"", "${X:-" + REF + "}", "plain", "$X", delimiter + "x", "# " + REF]))
    body = "\n".join(lines) + "\n."  # a last line: "$( )" drops trailing newlines, not this
    after = c.choice(["", " | cat", "; printf '<%s>' " + REF])
    close = "\n" + c.choice(["", "\t"]) + delimiter
    if nested:
        ending = c.choice([")", "\n)", " )"])
        return "x=$(cat <<" + written + after + "\n" + body + close + ending + "; printf '<%s>' \"$x\""
    return "cat <<" + written + after + "\n" + body + close


def case(c: Chooser, depth: int) -> str:
    subject = c.choice([REF, "a", '"' + REF + '"', "$X", '"$(printf a)"'])
    clauses = []
    for _ in range(c.integer(1, 2)):
        pattern = c.choice(["zz", "(zz", '"' + REF + 'q"', "zz|yy", "(a|b"])
        clauses.append(pattern + ") " + command(c, depth - 1) + c.choice([";;", ";&", ";;&"]))
    clauses.append("*) " + command(c, depth - 1) + ";;")
    return "case " + subject + " in " + " ".join(clauses) + " esac"


def simple(c: Chooser, depth: int) -> str:
    kind = c.integer(0, 13 if depth > 0 else 3)
    if kind in (0, 1, 2):
        return "printf '<%s>' " + " ".join(word(c, depth) for _ in range(c.integer(1, 2)))
    if kind == 3:
        return "printf '<%s>' " + word(c, depth) + " # " + c.choice([REF, "'", "\"" + REF, "`"]) + "\n"
    if kind == 4:
        return "(( " + c.choice([REF, "1"]) + " > 0 )); printf '<%s>' " + word(c, depth)
    if kind == 5:
        return "( " + command(c, depth - 1) + " )"
    if kind == 6:
        return "{ " + command(c, depth - 1) + "; }"
    if kind in (7, 8):
        return heredoc(c, depth, nested=c.integer(0, 1) == 1)
    if kind in (9, 10):
        return case(c, depth)
    if kind == 11:
        return "Y=" + word(c, depth) + "; printf '<%s>' \"$Y\""
    if kind == 12:
        return "printf '<%s>' " + c.choice(["case", "esac", "in", "'('", "then"]) + " " + word(c, depth)
    return "if true; then " + command(c, depth - 1) + "; fi"


def command(c: Chooser, depth: int = 3) -> str:
    parts = [simple(c, depth) for _ in range(c.integer(1, 2))]
    text = parts[0]
    for part in parts[1:]:
        text += c.choice(["; ", "\n", " && ", " | cat; "]) + part
    return text


# -- payloads ---------------------------------------------------------------------------------------

PAYLOADS = [
    "$(touch @M@)", "`touch @M@`", ";touch @M@;", "x';touch @M@;'", "'$(touch @M@)'", '"$(touch @M@)"',
    'x";touch @M@;"', "\ntouch @M@\n", "EOF\ntouch @M@\nEOF", "EOF)\ntouch @M@\n", ")\ntouch @M@\n(",
    "}\ntouch @M@\n", "};touch @M@;{", "|touch @M@", "&touch @M@", ">@M@", "<(touch @M@)",
    "$'\\';touch @M@;'", "\\';touch @M@;#", "esac;touch @M@;", ";;\n*) touch @M@;;", "a[$(touch @M@)]",
    "${X:-$(touch @M@)}", "`\\`touch @M@\\``", "'\"`touch @M@`\"'", "$((0))$(touch @M@)", "\\$(touch @M@)",
    "\\\\`touch @M@`", "'\\''$(touch @M@)", "')$(touch @M@)", "`)touch @M@", "\"'`touch @M@`'\"",
]
FRAGMENTS = ["'", '"', "\\", "`", "$", "(", ")", "{", "}", ";", "\n", "EOF", "END", "#", " ", "\t", "é", "☃",
             "esac", ";;", "*", "~", "a", "0", "-1", "$(", "${", "\\n", "'\\''", "\r", "|", "&", "<", ">"]


def payload(c: Chooser) -> str:
    parts = [c.choice(FRAGMENTS) for _ in range(c.integer(0, 3))]
    if c.integer(0, 4):
        parts.insert(c.integer(0, len(parts)), c.choice(PAYLOADS))
    return "".join(parts)


# -- running ------------------------------------------------------------------------------------------

@dataclass
class Case:
    command: str
    value: str  # contains MARK where a marker name goes


@dataclass
class Report:
    renderings: int = 0
    refused: int = 0
    run: int = 0
    executions: list[tuple[str, str, str]] = field(default_factory=list)  # command, value, rendered
    mismatches: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    refusals: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        return (f"renderings {self.renderings}, refused {self.refused}, rendered-and-run {self.run}, "
                f"payload executions {len(self.executions)}, text mismatches {len(self.mismatches)}")


def _render(command: str, value: str, report: Report) -> str | None:
    try:
        return render_command(command, {"inputs.name": value})
    except RenderError as error:
        reason = re.sub(r" \(at [^)]*\)", "", str(error)).split(", where")[0][:90]
        report.refusals[reason] = report.refusals.get(reason, 0) + 1
        return None


_DRIVER = r"""
cd "$1"
# No word splitting or globbing of unquoted expansions: the author's choice, not the value's.
prefix=$'IFS=\n'
for f in ../cmds/*; do
  IFS= read -r -d '' cmd < "$f"
  bash -f -c "$prefix$cmd" </dev/null >"../out/${f##*/}" 2>/dev/null
done
"""


def run_cases(cases: list[Case], report: Report | None = None, timeout: float = 600) -> Report:
    """Render and run every case (payload and token), adding to ``report``."""
    report = report or Report()
    root = Path(tempfile.mkdtemp(prefix="shell-differential-"))
    try:
        for folder in ("cmds", "out", "work"):
            (root / folder).mkdir()
        rendered: dict[int, tuple[Case, str, str, str | None]] = {}
        for index, case in enumerate(cases):
            value = case.value.replace(MARK, f"M{index}")
            report.renderings += 1
            text = _render(case.command, value, report)
            if text is None:
                report.refused += 1
                continue
            report.run += 1
            twin = _render(case.command, TOKEN, Report())
            rendered[index] = (case, value, text, twin)
            (root / "cmds" / f"{index}v").write_text(text)
            if twin is not None:
                (root / "cmds" / f"{index}t").write_text(twin)
        _execute(root, timeout)
        ran = {name.name for name in (root / "work").iterdir()}
        for index, (case, value, text, twin) in rendered.items():
            if f"M{index}" in ran:
                report.executions.append((case.command, value, text))
                continue
            if twin is None:
                continue
            got = (root / "out" / f"{index}v").read_bytes().decode("utf-8", "replace")
            want = (root / "out" / f"{index}t").read_bytes().decode("utf-8", "replace").replace(TOKEN, value)
            if got != want:
                report.mismatches.append((case.command, value, text, got, want))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report


def _execute(root: Path, timeout: float) -> None:
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": str(root / "work")}
    argv = ["bash", "-c", _DRIVER, "driver", str(root / "work")]
    if shutil.which("unshare") and subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0:
        argv = ["unshare", "-rn", *argv]  # no network for the payloads
    subprocess.run(argv, cwd=root / "work", env=env, stdin=subprocess.DEVNULL, capture_output=True,
                   timeout=timeout, check=False)


def generate(c: Chooser) -> Case:
    return Case(command(c, depth=c.integer(1, 3)), payload(c))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=15000, help="renderings (default 15000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=3, help="failures to print")
    args = parser.parse_args(argv)
    chooser = RandomChooser(random.Random(args.seed))
    report = Report()
    batch = 1000
    for start in range(0, args.n, batch):
        run_cases([generate(chooser) for _ in range(min(batch, args.n - start))], report)
    for command_, value, text in report.executions[:args.show]:
        print(f"EXECUTED\n  command: {command_!r}\n  value: {value!r}\n  rendered: {text!r}")
    for command_, value, text, got, want in report.mismatches[:args.show]:
        print(f"MISMATCH\n  command: {command_!r}\n  value: {value!r}\n  rendered: {text!r}\n"
              f"  got: {got!r}\n  want: {want!r}")
    if os.environ.get("SHELL_DIFFERENTIAL_REASONS"):
        for reason, count in sorted(report.refusals.items(), key=lambda kv: -kv[1]):
            print(f"  refused {count}: {reason}")
    print(report.line())
    return 1 if report.executions or report.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
