"""Text edits that fix a finding: the one seam between diagnostics and quick fixes.

:func:`fixes_for` takes a :class:`~validator.diagnostic.Diagnostic` and the text it was found in
and returns the fixes on offer, each a title and the edits that make it, in the diagnostic's own
coordinates (1-based lines and columns, end exclusive). The language server turns them into code
actions; ``aml-lint --fix`` can apply the same edits to files. A rule gains a fix by one entry in
:data:`FIXERS`, keyed by its code; a fixer returns ``None`` when it cannot be sure of the edit
(the text moved since the lint, a message it cannot read), and then no fix is offered.

A finding that carries its own fix (``Diagnostic.fix``: what ``aml-lint --fix`` applies,
validator/fixes.py) is offered that fix first; an unsafe one (it changes a value's meaning) is
not marked preferred.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..diagnostic import Diagnostic


@dataclass(frozen=True)
class Edit:
    """Replace the text from (line, column) up to (end_line, end_column) with ``new_text``:
    1-based, end exclusive, columns counted in characters (as in :class:`Diagnostic`)."""

    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    # Whether an editor may apply it as the quick fix (false for a change of meaning).
    preferred: bool = True


Fixer = Callable[[Diagnostic, str], "Fix | None"]

# "... 'comptue' ...; did you mean 'compute'?": the first quoted name is what was written.
_SUGGESTION = re.compile(r"did you mean '([^']+)'\?")
_QUOTED = re.compile(r"'([^']+)'")


def replace_with_suggestion(diagnostic: Diagnostic, text: str) -> Fix | None:
    """The "did you mean 'X'?" of a finding, applied: the name the message quotes first is
    replaced by X inside the finding's span, and only where it occurs there exactly once, so a
    span that no longer holds the name (the text changed) gets no fix."""
    suggestion = _SUGGESTION.search(diagnostic.message)
    written = _QUOTED.search(diagnostic.message)
    if suggestion is None or written is None or written.start() >= suggestion.start():
        return None
    old, new = written.group(1), suggestion.group(1)
    lines = text.splitlines()
    if not 1 <= diagnostic.line <= len(lines) or diagnostic.end_column <= diagnostic.column:
        return None
    span = lines[diagnostic.line - 1][diagnostic.column - 1:diagnostic.end_column - 1]
    if old == new or span.count(old) != 1:
        return None
    start = diagnostic.column + span.index(old)
    return Fix(f"Replace '{old}' with '{new}'",
               (Edit(diagnostic.line, start, diagnostic.line, start + len(old), new),))


# The codes whose "did you mean" names a replacement for the quoted text in the finding's span
# (checked over the golden cases by tests/validator/test_lsp_edits.py: the fix clears the finding).
# Elsewhere the first quoted name is a whole `${{...}}` reference whose suggestion is only its
# last part (AML202), or a file the finding is about rather than the text at the span.
FIXERS: dict[str, Fixer] = {code: replace_with_suggestion for code in (
    "AML010", "AML101", "AML104", "AML307", "AML411", "AML518", "AML620", "AML647", "AML701",
    "AML704", "AML804")}


def fixes_for(diagnostic: Diagnostic, text: str) -> list[Fix]:
    """The fixes on offer for ``diagnostic`` found in ``text`` (empty: none)."""
    own = diagnostic.fix
    if own is not None and own.edits:
        title = own.title[:1].upper() + own.title[1:] if own.title else "Fix"
        return [Fix(title if own.safe else f"{title} (changes the value)",
                    tuple(Edit(*edit) for edit in own.edits), preferred=own.safe)]
    fixer = FIXERS.get(diagnostic.code)
    if fixer is None:
        return []
    fix = fixer(diagnostic, text)
    return [fix] if fix is not None else []


def apply(text: str, edits: tuple[Edit, ...] | list[Edit]) -> str:
    """``text`` with ``edits`` made (non-overlapping; any order)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return starts[min(line - 1, len(lines))] + column - 1

    out = text
    for edit in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        out = out[:offset(edit.line, edit.column)] + edit.new_text + out[offset(edit.end_line, edit.end_column):]
    return out
