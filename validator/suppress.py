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
from typing import Callable

from .diagnostic import Diagnostic, Severity
from .suggest import closest

_COMMENT_RE = re.compile(r"(?:^|(?<=\s))#\s*amllab:\s*(ignore-file|ignore)\b(?:\[([^\]]*)\])?")


@dataclass
class Suppression:
    line: int
    column: int
    codes: tuple[str, ...] | None  # None: every code
    applies_to: tuple[int, ...]  # lines it covers; () for the whole file
    used: set[str] = field(default_factory=set)

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
        found.append(Suppression(index, match.start() + 1, codes, applies))
    return found


def apply(path: str, diagnostics: list[Diagnostic], suppressions: list[Suppression],
          known_codes: set[str], reportable: Callable[[str], bool]) -> list[Diagnostic]:
    """Drop suppressed findings; add AML012 for suppressions that matched nothing."""
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
    return kept


def _unused(path: str, suppression: Suppression, what: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(path, suppression.line, suppression.column, "AML012",
                      f"suppression comment {what}", Severity.WARNING,
                      hint=hint or "remove it, or correct the code")
