"""Output formats: text (actionlint-style, with the source line and a caret), json, github
(workflow annotations) and sarif (SARIF 2.1.0, for code-scanning dashboards)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from . import __version__
from .diagnostic import Diagnostic, Severity
from .engine import LintResult
from . import rules as registry
from .rules import declared

FORMATS = ("text", "json", "github", "sarif")

_COLORS = {"error": "\033[1;31m", "warning": "\033[1;33m", "info": "\033[1;36m",
           "bold": "\033[1m", "dim": "\033[2m", "reset": "\033[0m", "green": "\033[1;32m"}


def printable(text: str) -> str:
    """``text`` with what cannot be written as UTF-8 escaped: a file name that is not valid
    UTF-8 reaches us with its bad bytes as surrogates (os.fsdecode) and is shown as `\\xff`."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _printable(diagnostic: Diagnostic) -> Diagnostic:
    fixed = {name: printable(value) for name in ("path", "message", "hint")
             if isinstance(value := getattr(diagnostic, name), str) and printable(value) is not value}
    return replace(diagnostic, **fixed) if fixed else diagnostic


# The widest excerpt of a source line: a minified or generated line can be megabytes long, and it
# was printed once per finding on it.
SNIPPET_WIDTH = 240


def snippet(source: str, column: int, width: int) -> tuple[str, int, int]:
    """(excerpt, caret column, caret width) of ``source`` around ``column`` (1-based): the line
    itself when short, else a window of about SNIPPET_WIDTH characters with `…` where it was cut,
    the caret still under the same character."""
    if len(source) <= SNIPPET_WIDTH:
        return source, column, width
    width = min(width, SNIPPET_WIDTH // 2)
    start = max(0, min(column - 1 - SNIPPET_WIDTH // 4, len(source) - SNIPPET_WIDTH))
    end = start + SNIPPET_WIDTH
    excerpt = source[start:end]
    caret = column - start
    if start > 0:
        excerpt = "…" + excerpt
        caret += 1
    if end < len(source):
        excerpt += "…"
    return excerpt, caret, width


def _paint(text: str, style: str, color: bool) -> str:
    return f"{_COLORS[style]}{text}{_COLORS['reset']}" if color else text


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(result: LintResult, shown: list[Diagnostic]) -> str:
    errors = sum(1 for d in shown if d.severity is Severity.ERROR)
    warnings = sum(1 for d in shown if d.severity is Severity.WARNING)
    checked = sum(1 for f in result.files if f.kind is not None)
    skipped = sum(1 for f in result.files if f.kind is None and f.skipped)
    tail = f"{_plural(checked, 'spec')} checked"
    if skipped:
        tail += f", {_plural(skipped, 'file')} skipped"
    stale = ""
    if result.baselined is not None:
        suppressed, stale_entries = result.baselined
        tail += f", {_plural(suppressed, 'finding')} suppressed by the baseline"
        if stale_entries:
            stale = (f" {stale_entries} baseline entries no longer match; rewrite the baseline with "
                     "--write-baseline to drop them." if stale_entries > 1 else " 1 baseline entry "
                     "no longer matches; rewrite the baseline with --write-baseline to drop it.")
    if not errors and not warnings:
        return f"All clean: {tail}.{stale}"
    return f"Found {_plural(errors, 'error')} and {_plural(warnings, 'warning')} ({tail}).{stale}"


def cell_of(cells: tuple[tuple[int, int], ...], line: int) -> tuple[int, int] | None:
    """A notebook's (cell number, line in that cell) of a line of its code cells joined."""
    found = None
    for start, number in cells:
        if start > line:
            break
        found = (number, line - start + 1)
    return found


def location(diagnostic: Diagnostic, cells: tuple[tuple[int, int], ...] = ()) -> tuple[str, int]:
    """How a finding's place is written (``path:line:col``, in a notebook ``path:cell N:line:col``
    as Jupyter numbers cells), and the line number its excerpt shows."""
    cell = cell_of(cells, diagnostic.line) if cells else None
    if cell is None:
        return f"{diagnostic.path}:{diagnostic.line}:{diagnostic.column}", diagnostic.line
    return f"{diagnostic.path}:cell {cell[0]}:{cell[1]}:{diagnostic.column}", cell[1]


def write_text(result: LintResult, shown: list[Diagnostic], out: TextIO, *, color: bool,
               verbose: bool = False) -> None:
    sources = {printable(f.path): (f.source if f.source is not None else f.text).splitlines()
               for f in result.files if f.text is not None}
    cells = {printable(f.path): f.cells for f in result.files if f.cells}
    shown_lines: dict[tuple[str, int], str] = {}  # each source line prepared once, however many findings
    for diagnostic in map(_printable, shown):
        severity = str(diagnostic.severity)
        where, number = location(diagnostic, cells.get(diagnostic.path, ()))
        head = (f"{_paint(where + ':', 'bold', color)} "
                f"{_paint(diagnostic.code, severity, color)} {_paint(severity, severity, color)}: "
                f"{diagnostic.message}")
        out.write(head + "\n")
        lines = sources.get(diagnostic.path, [])
        if 0 < diagnostic.line <= len(lines):
            source = shown_lines.get((diagnostic.path, diagnostic.line))
            if source is None:
                source = shown_lines[(diagnostic.path, diagnostic.line)] = lines[diagnostic.line - 1].expandtabs(1)
            gutter = " " * len(str(number))
            width = 1
            if diagnostic.end_column > diagnostic.column:
                width = diagnostic.end_column - diagnostic.column
            width = max(1, min(width, len(source) - diagnostic.column + 1))
            source, at, width = snippet(source, diagnostic.column, width)
            caret = " " * (at - 1) + "^" + "~" * (width - 1)
            out.write(f"{gutter} |\n{number} | {source}\n{gutter} | {_paint(caret, severity, color)}\n")
            if diagnostic.hint:
                out.write(f"{gutter} = {_paint('help', 'bold', color)}: {diagnostic.hint}\n")
        elif diagnostic.hint:
            out.write(f"  = {_paint('help', 'bold', color)}: {diagnostic.hint}\n")
    if verbose:
        for report in result.files:
            if report.kind is None and report.skipped:
                out.write(_paint(f"skipped {printable(report.path)}: {report.skipped}", "dim", color) + "\n")
            elif report.kind is not None:
                out.write(_paint(f"checked {printable(report.path)} as {report.kind}", "dim", color) + "\n")
    text = summary(result, shown)
    out.write(_paint(text, "green" if text.startswith("All clean") else "bold", color) + "\n")


def _with_cell(diagnostic: Diagnostic, cells: dict[str, tuple[tuple[int, int], ...]]) -> dict:
    """A finding as JSON; in a notebook, with its cell and its line in that cell (``line`` counts
    the code cells joined)."""
    payload = _printable(diagnostic).to_dict()
    cell = cell_of(cells[diagnostic.path], diagnostic.line) if diagnostic.path in cells else None
    if cell is not None:
        payload["cell"], payload["cell_line"] = cell
    return payload


def write_json(result: LintResult, shown: list[Diagnostic], out: TextIO) -> None:
    cells = {f.path: f.cells for f in result.files if f.cells}
    payload = {
        "version": __version__,
        "diagnostics": [_with_cell(d, cells) for d in shown],
        "files": [{"path": printable(f.path), "kind": f.kind, "skipped": f.skipped} for f in result.files],
        "summary": {
            "errors": sum(1 for d in shown if d.severity is Severity.ERROR),
            "warnings": sum(1 for d in shown if d.severity is Severity.WARNING),
            "infos": sum(1 for d in shown if d.severity is Severity.INFO),
        },
    }
    if result.baselined is not None:
        payload["summary"]["baseline"] = {"suppressed": result.baselined[0], "stale": result.baselined[1]}
    json.dump(payload, out, indent=2)
    out.write("\n")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def write_github(shown: list[Diagnostic], out: TextIO) -> None:
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    for d in map(_printable, shown):
        rule = declared(d.code)
        title = f"{d.code} {rule.name}" if rule else d.code
        properties = f"file={_escape_property(d.path)},line={d.line},col={d.column}"
        if d.end_column > d.column:
            properties += f",endColumn={d.end_column}"
        message = d.message + (f"\n{d.hint}" if d.hint else "")
        out.write(f"::{level[d.severity]} {properties},title={_escape_property(title)}::{_escape_data(message)}\n")


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def sarif_document(shown: list[Diagnostic], root: Path | None = None) -> dict:
    root = (root or Path.cwd()).resolve()
    described = registry.RULES  # every rule, so every family
    codes = sorted(described)
    rules = [{
        "id": code,
        "name": described[code].name,
        "shortDescription": {"text": described[code].summary},
        "fullDescription": {"text": described[code].doc.strip()},
        "help": {"text": described[code].explain()},
        "defaultConfiguration": {"level": _SARIF_LEVEL[described[code].severity]},
    } for code in codes]
    results = []
    for d in map(_printable, shown):
        uri = Path(d.path)
        try:
            uri = uri.resolve().relative_to(root)
        except (ValueError, OSError):
            pass
        region = {"startLine": max(1, d.line), "startColumn": max(1, d.column)}
        if d.end_column > d.column:
            region["endColumn"] = d.end_column
        result = {
            "ruleId": d.code,
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": d.message + (f" ({d.hint})" if d.hint else "")},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": uri.as_posix(), "uriBaseId": "%SRCROOT%"},
                "region": region,
            }}],
        }
        if d.code in described:
            result["ruleIndex"] = codes.index(d.code)
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "aml-lint", "version": __version__,
                                "informationUri": "https://github.com/amllab/amllab",
                                "rules": rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def write_sarif(shown: list[Diagnostic], out: TextIO) -> None:
    json.dump(sarif_document(shown), out, indent=2)
    out.write("\n")


def default_format() -> str:
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
