"""Generate docs/cli.md from the argparse parsers of aml-lint, aml-run and aml-quiz, so the
command-line reference and `--help` cannot drift.

    python tools/build_cli_docs.py          # rewrite docs/cli.md
    python tools/build_cli_docs.py --check  # exit 1 when it is stale (tests/repo/test_generated.py runs this)

What a parser cannot say (exit statuses, environment variables, examples, what a command
refuses) is hand-written in tools/cli_template.md. There, `<!-- commands -->` becomes a table of
the three commands and their descriptions, and each `<!-- parser: PROG -->` line that command's
arguments, and for aml-run its groups and verbs, as Markdown tables.
Every argument needs a help text (tests/repo/test_generated.py checks), so no row is left empty.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generated import write_or_check  # noqa: E402

TARGET = ROOT / "docs" / "cli.md"
TEMPLATE = ROOT / "tools" / "cli_template.md"
MARKER = re.compile(r"^<!-- parser: (\S+) -->$", re.MULTILINE)


def parsers() -> dict[str, argparse.ArgumentParser]:
    """The three commands' parsers, by program name (importing them loads no optional extra)."""
    from quiz.cli import build_parser as quiz_parser
    from runner.cli import build_parser as run_parser
    from validator.cli import build_parser as lint_parser

    return {"aml-lint": lint_parser(), "aml-run": run_parser(), "aml-quiz": quiz_parser()}


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each subcommand, in the order the parser declares them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            return [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return []


def arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The arguments a user gives (not -h/--help, hidden ones or the subcommand slot)."""
    return [action for action in parser._actions
            if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
            and action.help is not argparse.SUPPRESS]


def leaves(parser: argparse.ArgumentParser,
           words: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every runnable command under ``parser``: (its words after the program, its parser)."""
    subs = _subcommands(parser)
    if not subs:
        return [(words, parser)]
    return [leaf for name, _, sub in subs for leaf in leaves(sub, (*words, name))]


def _signature(action: argparse.Action) -> tuple:
    return (tuple(sorted(action.option_strings)), action.help, tuple(action.choices or ()), repr(action.default))


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices:
        return "|".join(str(choice) for choice in action.choices)
    metavar = action.metavar
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    return metavar or action.dest.upper()


def _options(action: argparse.Action) -> list[str]:
    """Short options first (-f/--file), the rest in the parser's order."""
    return sorted(action.option_strings, key=lambda option: option.startswith("--"))


def label(action: argparse.Action) -> str:
    value = _value(action)
    if not action.option_strings:
        if action.nargs == "?":
            return f"[{value}]"
        if action.nargs in ("*", "+"):
            return f"[{value} ...]" if action.nargs == "*" else f"{value} ..."
        return value
    return "/".join(_options(action)) + (f" {value}" if value else "")


def usage_word(action: argparse.Action) -> str:
    """One argument in a synopsis: the shortest option, its value, brackets unless required."""
    if not action.option_strings:
        return label(action)
    value = _value(action)
    word = min(_options(action), key=len) + (f" {value}" if value else "")
    if isinstance(action, argparse._AppendAction):
        word += " ..."
    return word if action.required else f"[{word}]"


def meaning(action: argparse.Action) -> str:
    text = (action.help or "").strip()
    if "%(" in text:
        text = text % {**vars(action), "prog": ""}
    notes = []
    if action.required and action.option_strings:  # a positional's brackets say whether it is optional
        notes.append("Required.")
    default = action.default
    if (default not in (None, False, argparse.SUPPRESS) and not (isinstance(default, (list, tuple)) and not default)
            and "default" not in text.lower()):
        notes.append(f"Default: `{default}`.")
    if isinstance(action, argparse._AppendAction) and "repeatable" not in text.lower():
        notes.append("Repeatable.")
    if text and not text.endswith(".") and notes:
        text += "."
    return " ".join([text, *notes]).strip()


def _cell(text: str) -> str:
    """Text safe in a table cell: a pipe would end the cell, <...> would be read as HTML."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def table(actions: list[argparse.Action]) -> list[str]:
    rows = ["| argument | meaning |", "|---|---|"]
    rows += [f"| `{_cell(label(action))}` | {_cell(meaning(action))} |" for action in actions]
    return rows


def _groups(parser: argparse.ArgumentParser, skip: set[tuple]) -> list[tuple[str | None, list[argparse.Action]]]:
    """The parser's arguments: the ungrouped ones first, then each argument group with its title."""
    shown = [action for action in arguments(parser) if _signature(action) not in skip]
    grouped: list[tuple[str | None, list[argparse.Action]]] = [(None, [])]
    for group in parser._action_groups:
        members = [action for action in group._group_actions if action in shown]
        if group in parser._action_groups[:2]:  # positionals and options: argparse's own two
            grouped[0][1].extend(members)
        elif members:
            grouped.append((group.title, members))
    grouped[0][1].sort(key=shown.index)
    return [(title, members) for title, members in grouped if members]


def synopsis(prog: str, parser: argparse.ArgumentParser) -> list[str]:
    words = [usage_word(action) for action in arguments(parser)
             if action.option_strings and not isinstance(action, argparse._VersionAction)]
    words += [usage_word(action) for action in arguments(parser) if not action.option_strings]
    lines, line = [], prog
    for word in words:
        if len(line) + 1 + len(word) > 96:
            lines.append(line)
            line = " " * (len(prog.split()[0]) + 1) + word
        else:
            line += " " + word
    return ["```text", *lines, line, "```"]


def command(prog: str, parser: argparse.ArgumentParser, skip: set[tuple]) -> list[str]:
    out = synopsis(prog, parser)
    for title, members in _groups(parser, skip):
        out += [""] + ([f"{title[0].upper()}{title[1:]}:", ""] if title else []) + table(members)
    return out


def render_program(prog: str, parser: argparse.ArgumentParser) -> list[str]:
    """A program's synopsis and arguments; or its verbs, then each group and verb under it."""
    if not _subcommands(parser):
        return command(prog, parser, set())
    commands = leaves(parser)
    # Options every verb (or nearly) repeats are said once, in "Common options".
    counts = Counter(_signature(action) for _, leaf in commands for action in arguments(leaf)
                     if action.option_strings)
    common = {signature for signature, count in counts.items() if count * 4 >= len(commands) * 3}
    first: dict[tuple, argparse.Action] = {}
    for _, leaf in commands:
        for action in arguments(leaf):
            if _signature(action) in common:
                first.setdefault(_signature(action), action)
    out = ["| command | what it does |", "|---|---|"]
    for words, leaf in commands:
        help_text = _help_of(parser, words)
        out.append(f"| [`{prog} {' '.join(words)}`](#{_anchor(prog, words)}) | {_cell(help_text)} |")
    top = arguments(parser)
    if top:
        out += ["", f"`{prog}` itself takes:", "", *table(top)]
    if first:
        out += ["", "### Common options", "", "Every verb below takes these unless its own table says otherwise:",
                "", *table(list(first.values()))]
    group = None
    for words, leaf in commands:
        heading = " ".join((prog, *words))
        if words[0] != group:
            group = words[0]
            out += ["", f"### {prog} {group}", "", _sentence(_help_of(parser, words[:1]))]
        if len(words) > 1:
            out += ["", f"#### {heading}", "", _sentence(_help_of(parser, words))]
        out += [""] + command(heading, leaf, common)
        taken = [action for action in arguments(leaf) if _signature(action) in common]
        if taken:
            names = ", ".join(f"`{'/'.join(_options(action))}`" for action in taken)
            out += ["", f"And the [common options](#common-options): {names}."]
    return out


def _sentence(text: str) -> str:
    text = text.strip()
    return _cell(text[:1].upper() + text[1:] + ("" if text.endswith(".") else "."))


def summary(found: dict[str, argparse.ArgumentParser]) -> list[str]:
    """One row per program: its description, as its parser gives it."""
    return ["| command | what it is |", "|---|---|",
            *(f"| [`{prog}`](#{prog}) | {_cell(parser.description or '')} |" for prog, parser in found.items())]


def _help_of(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> str:
    for name, help_text, sub in _subcommands(parser):
        if name == words[0]:
            return help_text if len(words) == 1 else _help_of(sub, words[1:])
    raise KeyError(words)


def _anchor(prog: str, words: tuple[str, ...]) -> str:
    """GitHub's anchor for a heading made of plain words."""
    return "-".join((prog, *words))


def render() -> str:
    found = parsers()
    template = TEMPLATE.read_text().replace("<!-- commands -->", "\n".join(summary(found)))

    def expand(match: re.Match[str]) -> str:
        prog = match.group(1)
        if prog not in found:
            raise SystemExit(f"{TEMPLATE.relative_to(ROOT)}: no parser named {prog!r}")
        return "\n".join(render_program(prog, found.pop(prog))).rstrip("\n")

    text = MARKER.sub(expand, template)
    if found:
        raise SystemExit(f"{TEMPLATE.relative_to(ROOT)} places no <!-- parser: {next(iter(found))} -->")
    header = ("<!-- Generated from the argparse parsers and tools/cli_template.md by "
              "tools/build_cli_docs.py; do not edit by hand. -->\n")
    return header + text.rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    return write_or_check(TARGET, render(), argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
