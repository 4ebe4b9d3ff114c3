"""What amllab reports: a :class:`Diagnostic` pointing at a place in a file. A rule's check
function yields :class:`Finding` values (what is wrong, where, and the fix); the code and the
severity come from the rule registry (validator/rules/_base.py), which stamps them on.

A finding may carry a :class:`Fix`: text edits that repair it (validator/fixes.py applies them
for ``aml-lint --fix``, and a language server can offer them as code actions)."""

from __future__ import annotations

import enum
from dataclasses import KW_ONLY, dataclass, field


class Severity(enum.IntEnum):
    """Ordered so that ``max()`` over findings gives the worst one."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    def __str__(self) -> str:  # "error", as users read and write it
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}; use error, warning or info") from None


# One text edit: (line, column, end_line, end_column, new_text), 1-based like a Diagnostic,
# columns in characters, the end exclusive; an insertion has end == start.
Edit = tuple[int, int, int, int, str]


@dataclass(frozen=True)
class Fix:
    """How to repair one finding: edits of the source text at the finding's span, never a
    rewrite of the document, so comments and formatting elsewhere stay as they are.

    ``safe`` fixes keep what the spec means (a spelling Azure ML reads the same way, or the
    evident intent: a misspelt key with one near match); unsafe ones change a value's meaning
    (the closest allowed value in place of an invalid one), and are applied only with
    ``--unsafe-fixes``."""

    edits: tuple[Edit, ...]
    safe: bool = True
    # What the fix does, for a code action's title: "rename 'comptue' to 'compute'".
    title: str = ""

    def to_dict(self) -> dict:
        return {
            "applicability": "safe" if self.safe else "unsafe",
            "title": self.title,
            "edits": [{"line": line, "column": column, "end_line": end_line, "end_column": end_column,
                       "content": text} for line, column, end_line, end_column, text in self.edits],
        }


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding. ``line`` and ``column`` are 1-based; ``pointer`` is the JSON pointer of the
    offending key or value inside the document (``""`` for the whole file)."""

    path: str
    line: int
    column: int
    code: str
    message: str
    severity: Severity = field(default=Severity.ERROR, compare=False)
    pointer: str = field(default="", compare=False)
    hint: str | None = field(default=None, compare=False)
    # Where the highlighted span ends on the same line (exclusive, 1-based); 0 = one caret.
    end_column: int = field(default=0, compare=False)
    # What azure-ai-ml does with this very finding, where the rule knows it better than its
    # rule-wide verdict (``Rule.service``): "accepts" (the client sends the spec to the
    # service) or "rejects". None: the rule's verdict applies.
    service: str | None = field(default=None, compare=False)
    # The edits that repair this finding, where the rule knows them (see Fix).
    fix: Fix | None = field(default=None, compare=False)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_column": self.end_column or self.column + 1,
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "pointer": self.pointer,
            "hint": self.hint,
            "fix": self.fix.to_dict() if self.fix is not None else None,
        }


@dataclass(frozen=True)
class Finding:
    """What a rule's check function yields: what is wrong, where, and the fix. No code and no
    severity: a rule is declared once, with both, by ``@check``, and :meth:`Rule.check` turns
    each finding into a :class:`Diagnostic` carrying them.

    ``at`` is the path of the offending value in the data (``("jobs", "train", "compute")``;
    ``()`` for the whole file), ``key`` points at its key rather than its value, and ``span``
    (line, column, end column) places the finding on a word inside the value where the rule
    located one."""

    message: str
    at: tuple = ()
    _: KW_ONLY
    key: bool = False
    hint: str | None = None
    span: tuple[int, int, int] | None = None
    service: str | None = None  # see Diagnostic.service
    fix: Fix | None = None
