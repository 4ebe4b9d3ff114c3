"""Text edits for fixes, built from a Document's positions (validator/fixes.py applies them).

A fix edits the source text where the finding is, never a re-dump of the YAML: comments, key
order and quoting elsewhere stay byte for byte. Each helper checks that the source at the
position is the text it expects, and returns None rather than an edit it is not sure of: a
value written over several lines, a block scalar, an anchor, a tag, or any file that uses YAML
aliases (an edit at an anchor would change every place that aliases it).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from .diagnostic import Edit
from .loader import Document, Path_

_SCANNER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml scans ~20x faster

# The line breaks YAML (libyaml) counts, so that positions and offsets agree.
_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")


def line_starts(text: str) -> list[int]:
    """The offset at which each line of ``text`` starts (the first is 0)."""
    return [0] + [match.end() for match in _BREAK.finditer(text)]


def line_text(text: str, starts: list[int], line: int) -> str | None:
    """Line ``line`` (1-based) of ``text`` without its break, or None past the end."""
    if not 0 < line <= len(starts):
        return None
    start = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    match = _BREAK.search(text, start, end)
    return text[start:match.start() if match else end]


def _starts(document: Document) -> list[int]:
    cached = document.__dict__.get("_line_starts")
    if cached is None:
        cached = document.__dict__["_line_starts"] = line_starts(document.text)
    return cached


def uses_aliases(document: Document) -> bool:
    """Whether the file reuses a node through an alias (``*name``, ``<<: *name``)."""
    cached = document.__dict__.get("_uses_aliases")
    if cached is None:
        try:
            cached = "*" in document.text and any(
                isinstance(token, yaml.AliasToken) for token in yaml.scan(document.text, Loader=_SCANNER))
        except yaml.YAMLError:
            cached = True  # not sure: no fixes
        document.__dict__["_uses_aliases"] = cached
    return cached


def _token(document: Document, where: Path_, key: bool) -> tuple[int, int, int, str] | None:
    """(line, column, end column, source text) of the key or the scalar value at ``where``,
    when it sits on one line."""
    position = document.positions.get(tuple(where))
    if position is None:
        return None
    if key:
        line, column, end = position.key_line, position.key_column, position.key_end
    else:
        line, column, end = position.value_line, position.value_column, position.value_end
    if not line or end <= column:
        return None
    source = line_text(document.text, _starts(document), line)
    if source is None or end - 1 > len(source):
        return None
    return line, column, end, source[column - 1:end - 1]


def _plain_is_string(text: str, key: bool) -> bool:
    """Whether ``text`` written without quotes reads back as that very string."""
    if not text or text != text.strip() or any(c in text for c in "\n\r\t#"):
        return False
    probe = f"{text}: 1" if key else f"k: {text}"
    try:
        loaded = yaml.safe_load(probe)
    except yaml.YAMLError:
        return False
    return loaded == ({text: 1} if key else {"k": text})


def scalar_text(new: str, source: str, key: bool = False) -> str | None:
    """``new`` written in the style of ``source`` (plain, 'single' or "double" quoted)."""
    quote = source[:1]
    if quote == "'":
        return "'" + new.replace("'", "''") + "'"
    if quote == '"':
        return json.dumps(new, ensure_ascii=False)
    if _plain_is_string(new, key):
        return new
    return json.dumps(new, ensure_ascii=False)


def _unquoted(source: str) -> str | None:
    """The string a one-line scalar's source text reads as, or None for other forms."""
    if not source or source[0] in "|>&*!":
        return None
    try:
        loaded = yaml.safe_load(f"k: {source}")
    except yaml.YAMLError:
        return None
    value = loaded.get("k") if isinstance(loaded, dict) else None
    return value if isinstance(value, str) else None


def replace_scalar(document: Document, where: Path_, new: str, *, key: bool = False,
                   expected: Any = None) -> Edit | None:
    """The edit that writes the string ``new`` in place of the key (``key=True``) or the scalar
    value at ``where``, in the same quoting style. ``expected`` is what the source must read as
    (default: the key's name, or the value in the data)."""
    if uses_aliases(document):
        return None
    token = _token(document, where, key)
    if token is None:
        return None
    line, column, end, source = token
    if expected is None:
        expected = where[-1] if key and where else _value_at(document.data, where)
    if not isinstance(expected, str) or _unquoted(source) != expected:
        return None
    text = scalar_text(new, source, key)
    return None if text is None else (line, column, line, end, text)


def replace_span(document: Document, span: tuple[int, int, int], expected: str, new: str) -> Edit | None:
    """The edit that writes ``new`` over ``span`` (line, column, end column), when the source
    there is exactly ``expected`` (a rule located a word inside a value: a reference in a
    command, a binding)."""
    if uses_aliases(document):
        return None
    line, column, end = span
    source = line_text(document.text, _starts(document), line)
    if source is None or source[column - 1:end - 1] != expected or end - column != len(expected):
        return None
    return line, column, line, end, new


def _value_at(data: Any, where: Path_) -> Any:
    for part in where:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data
