"""Where a spec runs a command with its own `code`, and where a word sits inside a command:
shared by the training-code rules (AML7xx: the script a command runs) and the asset rules
(AML8xx: the entry script must exist). A helper module, not a family: it declares no rule."""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple

from ..loader import Document, Path_, count_before
from ..values import mapping as _mapping


class Holder(NamedTuple):
    """A mapping with `command` and `code` (a job, a sweep's trial, a component, an inline
    step), the document its paths are relative to, and where its command sits in the linted
    document (``None`` when it lives in another file, a referenced trial component)."""

    document: Document
    data: dict
    command_path: Path_ | None
    owner: str


def command_owners(document: Document) -> Iterator[tuple[dict, Path_, str]]:
    """Every mapping of the linted document that may run a command, with where its `command`
    sits and who owns it, in document order: the job or component itself, a sweep's `trial`, a
    pipeline step, and a step's inline `component` or `trial`. The one walk behind
    :func:`holders` and the expression rules' command sites."""
    data = _mapping(document.data)
    kind = document.kind
    if kind in ("commandJob", "commandComponent"):
        yield data, ("command",), "the job" if kind == "commandJob" else "the component"
    elif kind == "sweepJob":
        trial = data.get("trial")
        if isinstance(trial, dict):
            yield trial, ("trial", "command"), "the trial"
    elif kind in ("pipelineJob", "pipelineComponent"):
        for name, node in _mapping(data.get("jobs")).items():
            if not isinstance(node, dict):
                continue
            base: Path_ = ("jobs", name)
            yield node, base + ("command",), f"step '{name}'"
            for key in ("component", "trial"):
                inline = node.get(key)
                if isinstance(inline, dict):
                    yield inline, base + (key, "command"), f"the inline component of step '{name}'"


def holders(document: Document) -> Iterator[Holder]:
    """Every mapping of the linted document that runs a command with its own `code` (a
    pipeline step only when it has a `command` of its own, not when it uses a component)."""
    for node, command_path, owner in command_owners(document):
        if command_path[0] == "jobs" and len(command_path) == 3 and "command" not in node:
            continue
        yield Holder(document, node, command_path, owner)


def word_span(document: Document, path: Path_, text: str, needle: str, nth: int) -> tuple[int, int, int]:
    """Where the ``nth`` whole-word ``needle`` of the command ``text`` at ``path`` sits in the
    source (line, column, end column); the command's own position when it is not found."""
    starts = [m.start() for m in re.finditer(r"(?<![\w-])" + re.escape(needle) + r"(?![\w-])", text)]
    if not starts:
        return document.locate(path)
    start = starts[min(nth, len(starts) - 1)]
    return document.locate_text(path, needle, count_before(text, needle, start))
