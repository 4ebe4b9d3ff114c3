"""Text both UIs show: times, counts, a prompt's first line, Markdown as plain text, what a
question shows beside its prompt. Plain strings only (the Textual screens style them)."""

from __future__ import annotations

import re

from .bank import EVIDENCE, Question

_FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")
_EMPHASIS = re.compile(r"\*\*([^*\n]+)\*\*|\*([^*\n]+)\*")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.MULTILINE)


def clock_text(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour)."""
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    if hours:
        return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def minutes_text(seconds: float) -> str:
    """A duration in whole minutes, rounded (an exam of 40 questions is 80 minutes, not 79)."""
    return plural(max(1, round(seconds / 60)), "minute")


def first_line(markdown: str, width: int = 60) -> str:
    """The first line of text of a prompt (no heading marks, no code), cut to ``width``."""
    for line in _inline(_FENCE.sub("", markdown)).splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= width else line[:width - 1] + "…"
    return ""


def plain_markdown(text: str) -> str:
    """Markdown read aloud: no asterisks or backquotes, headings as lines ending in a colon,
    links as their text and address, code blocks as indented lines headed by their language."""

    def block(match: re.Match[str]) -> str:
        language = (match.group(1) or "code").upper() if match.group(1) in ("yaml", "yml") else \
            (match.group(1) or "code").capitalize()
        lines = match.group(2).rstrip("\n").splitlines()
        return f"{language}:\n" + "\n".join(f"    {line}" for line in lines)

    parts: list[str] = []
    position = 0
    for match in _FENCE.finditer(text):
        parts.append(_inline(text[position:match.start()]))
        parts.append(block(match))
        position = match.end()
    parts.append(_inline(text[position:]))
    return "".join(parts).strip()


def _inline(text: str) -> str:
    text = _HEADING.sub(lambda m: m.group(1).strip() + ":", text)
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)
    text = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)
    return text.replace("`", "")


def evidence_line(question: Question) -> str:
    """How the answer is known, as the learner reads it."""
    return f"How this is known: {EVIDENCE.get(question.evidence, question.evidence)}"


def sources_lines(question: Question) -> list[str]:
    return list(question.sources)


def how_many(question: Question) -> str | None:
    """What the question asks the learner to pick, when the type needs saying."""
    from .qtypes import COUNT_WORDS

    if question.type == "multiple":
        n = len(question.answer)
        return f"Choose {COUNT_WORDS.get(n, n)}."
    if question.type == "build_list":
        n = len(question.answer)
        return f"Build a list of {n} from the {len(question.options)} items, in order."
    return None
