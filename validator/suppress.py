"""Inline suppression comments.

    compute: local  # amllab: ignore[AML401]       this line
    # amllab: ignore[AML202, AML203]                the next line
    # amllab: ignore-file                           the whole file (or ignore-file[AML101])

A suppression that suppresses nothing is itself reported (AML012), so stale ones do not pile up
and hide the next real problem on their line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Collection

from .diagnostic import Diagnostic, Fix, Severity
from .suggest import closest

_COMMENT_RE = re.compile(r"(?:^|(?<=\s))#\s*amllab:\s*(ignore-file|ignore)\b(?:\[([^\]]*)\])?")


@dataclass
class Suppression:
    line: int
    column: int  # where the comment's `#` is (1-based)
    codes: tuple[str, ...] | None  # None: every code
    applies_to: tuple[int, ...]  # lines it covers; () for the whole file
    used: set[str] = field(default_factory=set)
    # Where the code list sits in the line (0-based, between the brackets), when there is one.
    codes_span: tuple[int, int] | None = None

    def covers(self, diagnostic: Diagnostic) -> bool:
        if self.applies_to and diagnostic.line not in self.applies_to:
            return False
        if self.codes is None:
            return True
        return any(diagnostic.code.startswith(code) for code in self.codes)


def parse(text: str) -> list[Suppression]:
    if "amllab:" not in text:
        return []
    found = []
    for index, line in enumerate(text.splitlines(), start=1):
        if "amllab:" not in line:
            continue
        match = _COMMENT_RE.search(line)
        if not match:
            continue
        codes = None
        if match.group(2) is not None:
            codes = tuple(c.strip() for c in match.group(2).split(",") if c.strip())
        if match.group(1) == "ignore-file":
            applies: tuple[int, ...] = ()
        elif line[: match.start()].strip():
            applies = (index,)  # a trailing comment covers its own line
        else:
            applies = (index, index + 1)  # a comment line covers the line below
        found.append(Suppression(index, match.start() + 1, codes, applies,
                                 codes_span=match.span(2) if match.group(2) is not None else None))
    return found


def apply(path: str, diagnostics: list[Diagnostic], suppressions: list[Suppression],
          known_codes: Collection[str], reportable: Callable[[str], bool],
          text: str | None = None) -> list[Diagnostic]:
    """Drop suppressed findings; add AML012 for suppressions that matched nothing (with the fix
    that removes them, given the file's ``text``)."""
    if not suppressions:
        return diagnostics
    kept = []
    for diagnostic in diagnostics:
        covering = [s for s in suppressions if s.covers(diagnostic)]
        if covering:
            for suppression in covering:
                suppression.used.add(diagnostic.code)
        else:
            kept.append(diagnostic)
    first = len(kept)  # the AML012 findings follow
    for suppression in suppressions:
        if suppression.codes is None:
            if not suppression.used and reportable("AML012"):
                kept.append(_unused(path, suppression, "suppresses nothing"))
            continue
        for code in suppression.codes:
            if not any(k.startswith(code) for k in known_codes):
                if reportable("AML012"):
                    close = closest(code, known_codes, cutoff=0.8)
                    kept.append(_unused(path, suppression, f"names unknown rule code '{code}'",
                                        f"did you mean {close}?" if close else None))
            elif not any(u.startswith(code) for u in suppression.used) and reportable(code) \
                    and reportable("AML012"):
                kept.append(_unused(path, suppression, f"for {code} suppresses nothing"))
    if text is not None:
        kept = _with_fixes(kept, first, suppressions, text)
    return kept


def _with_fixes(kept: list[Diagnostic], first: int, suppressions: list[Suppression],
                text: str) -> list[Diagnostic]:
    """AML012 findings (from ``first`` on in ``kept``) with the fix that removes what is unused:
    the codes a finding names, or the whole comment when nothing of it is left. One fix per
    comment, shared by its findings (the same edits count once)."""
    from dataclasses import replace

    by_line: dict[int, list[int]] = {}
    for index in range(first, len(kept)):
        by_line.setdefault(kept[index].line, []).append(index)
    for suppression in suppressions:
        indexes = by_line.get(suppression.line, [])
        if not indexes:
            continue
        unused = set()
        for index in indexes:
            named = _NAMED.search(kept[index].message)
            if named:
                unused.add(named.group(1) or named.group(2))
        fix = _removal(suppression, unused, text)
        if fix is not None:
            for index in indexes:
                kept[index] = replace(kept[index], fix=fix)
    return kept


# The code an AML012 message names (see apply's messages).
_NAMED = re.compile(r"for (\S+) suppresses nothing|unknown rule code '([^']*)'")


def _removal(suppression: Suppression, unused: set[str], text: str) -> Fix | None:
    from .edits import line_starts, line_text

    starts = line_starts(text)
    line = line_text(text, starts, suppression.line)
    if line is None:
        return None
    hash_at = suppression.column - 1
    if not line[hash_at:].startswith("#") or "amllab:" not in line[hash_at:]:
        return None  # the lines are counted differently here (a form feed in the file): no guess
    left = [c for c in suppression.codes or () if c not in unused]
    if left and suppression.codes_span is not None:
        begin, end = suppression.codes_span
        edit = (suppression.line, begin + 1, suppression.line, end + 1, ", ".join(left))
        title = "remove the unused codes from the suppression"
    elif line[:hash_at].strip():  # a trailing comment: cut it and the spaces before it
        code_end = len(line[:hash_at].rstrip())
        edit = (suppression.line, code_end + 1, suppression.line, len(line) + 1, "")
        title = "remove the unused suppression comment"
    elif suppression.line < len(starts):  # a comment line: remove the line
        edit = (suppression.line, 1, suppression.line + 1, 1, "")
        title = "remove the unused suppression comment"
    else:
        edit = (suppression.line, 1, suppression.line, len(line) + 1, "")
        title = "remove the unused suppression comment"
    return Fix((edit,), title=title) if _same_data(text, starts, edit) else None


def _same_data(text: str, starts: list[int], edit: tuple) -> bool:
    """Whether ``text`` reads as the same YAML data after ``edit``: the `#` was a comment's, not
    a character inside a quoted value."""
    import yaml

    line, column, end_line, end_column, new = edit
    begin, end = starts[line - 1] + column - 1, starts[end_line - 1] + end_column - 1
    try:
        return yaml.safe_load(text) == yaml.safe_load(text[:begin] + new + text[end:])
    except yaml.YAMLError:
        return False


def _unused(path: str, suppression: Suppression, what: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(path, suppression.line, suppression.column, "AML012",
                      f"suppression comment {what}", Severity.WARNING,
                      hint=hint or "remove it, or correct the code")
