"""Read one YAML file into plain data plus a position for every key and value.

PyYAML's composer gives a node tree with marks; we build the Python data ourselves from it so
that we can (a) remember where every key and value sits, (b) report duplicate keys that
``yaml.safe_load`` silently collapses, (c) refuse unsafe or unknown tags, and (d) stop alias
bombs before they expand. Nothing here raises on bad input: problems become diagnostics.
"""

from __future__ import annotations

import errno
import os
import stat as stat_module
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Iterator, NamedTuple

import yaml
from yaml.constructor import SafeConstructor

from .diagnostic import Diagnostic, Fix, Severity
from .paths import resolved

try:  # libyaml's composer is ~10x faster and keeps marks
    _Base: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Base = yaml.SafeLoader

# The implicit tag of a plain scalar (`true`, `12`, `1e-3`, `~`, or a string) depends on its text
# alone for the safe loader (it has no path resolvers). A tree of specs repeats the same keys and
# values thousands of times, and the resolver's regular expressions ran for each: a fifth of the
# composing time.
_PLAIN_TAGS: dict[str, str] = {}
_PLAIN_TAGS_LIMIT = 100_000


class _Loader(_Base):  # type: ignore[misc, valid-type]
    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            tag = _PLAIN_TAGS.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(_PLAIN_TAGS) < _PLAIN_TAGS_LIMIT:
                    _PLAIN_TAGS[value] = tag
            return tag
        return super().resolve(kind, value, implicit)

DEFAULT_MAX_BYTES = 1024 * 1024
UTF8_BOM = b"\xef\xbb\xbf"
# A real spec repeats a handful of anchored blocks; a billion-laughs file repeats millions.
MAX_ALIAS_EXPANSIONS = 10_000
# Few nodes can still hold a lot of text: one long anchored string aliased 10,000 times is
# gigabytes once expanded (as the SDK expands it to send the job). Aliases may add at most a
# spec's size limit of text (keys and scalars) to the document.
MAX_ALIAS_TEXT = 1024 * 1024
MAX_DEPTH = 200

_YAML = "tag:yaml.org,2002:"
_STR = _YAML + "str"
_SCALAR_TAGS = {_YAML + t for t in ("str", "int", "float", "bool", "null")}
_KEEP_AS_TEXT_TAGS = {_YAML + "timestamp", _YAML + "binary"}
_SEQ, _MAP, _MERGE = _YAML + "seq", _YAML + "map", _YAML + "merge"
_OTHER_COLLECTION_TAGS = (_YAML + "omap", _YAML + "set", _YAML + "pairs")
_ScalarNode, _SequenceNode = yaml.ScalarNode, yaml.SequenceNode
_constructor = SafeConstructor()

Path_ = tuple  # a path into the data: ("jobs", "train", "inputs", 0)


class Position(NamedTuple):
    """1-based line/column of a key (for mapping members) and of its value. A tuple, not a
    dataclass: one is made for every node of every file, and tuples are made ~5x faster."""

    key_line: int
    key_column: int
    key_end: int
    value_line: int
    value_column: int
    value_end: int


@dataclass
class Document:
    """A loaded YAML file: its data, where each part of it sits, and its source lines."""

    path: str
    text: str
    data: Any = None
    positions: dict[Path_, Position] = field(default_factory=dict)
    base_dir: Path = field(default_factory=Path)
    kind: str | None = None
    # The local workspace registry (validator.workspace.Registry) when linting with --workspace.
    workspace: Any = None

    @property
    def lines(self) -> list[str]:
        cached = self.__dict__.get("_lines")
        if cached is None:
            cached = self.text.splitlines()
            self.__dict__["_lines"] = cached
        return cached

    def locate(self, where: Path_, *, key: bool = False) -> tuple[int, int, int]:
        """(line, column, end_column) of the value at ``where`` (or of its key), falling back
        to the nearest ancestor that has a position."""
        probe = tuple(where)
        while True:
            pos = self.positions.get(probe)
            if pos is not None:
                if key and pos.key_line:
                    return pos.key_line, pos.key_column, pos.key_end
                return pos.value_line, pos.value_column, pos.value_end
            if not probe:
                return 1, 1, 0
            probe = probe[:-1]

    def locate_text(self, where: Path_, needle: str, occurrence: int = 0) -> tuple[int, int, int]:
        """Position of the ``occurrence``-th ``needle`` inside the scalar at ``where``: a value may
        be quoted, folded or a block scalar, so search the source from the value's start."""
        line, column, end = self.locate(where)
        if is_reference_token(needle) and needle.splitlines() == [needle]:
            return self._locate_token(line, column, end, needle, occurrence)
        # A value with thousands of findings asks for the 0th, 1st, 2nd... occurrence in turn:
        # the hits found so far are kept, so the source is searched once per needle, not once
        # per finding (which made a long command quadratic).
        scans = self.__dict__.setdefault("_text_hits", {})
        scan = scans.get((line, column, needle))
        if scan is None:
            scan = scans[(line, column, needle)] = ([], self._hits(line, column, needle))
        hits, more = scan
        while len(hits) <= occurrence:
            hit = next(more, None)
            if hit is None:
                return line, column, end
            hits.append(hit)
        return hits[occurrence]

    def _locate_token(self, line: int, column: int, end: int, needle: str,
                      occurrence: int) -> tuple[int, int, int]:
        """locate_text for a `${{...}}` token: the source lines from the value's start on are
        indexed by token, as far as asked, so that thousands of different references in one
        value are found in one pass (searching for each from the value's start was quadratic)."""
        windows = self.__dict__.setdefault("_token_windows", {})
        window = windows.get((line, column))
        if window is None:
            window = windows[(line, column)] = ({}, [line - 1])
        found, next_line = window
        lines = self.lines
        last = min(len(lines), line - 1 + 1000)
        hits = found.get(needle)
        while (hits is None or len(hits) <= occurrence) and next_line[0] < last:
            index = next_line[0]
            next_line[0] += 1
            for start, token in reference_tokens(lines[index], column - 1 if index == line - 1 else 0):
                found.setdefault(token, []).append((index + 1, start + 1, start + 1 + len(token)))
            hits = found.get(needle)
        if hits is not None and len(hits) > occurrence:
            return hits[occurrence]
        return line, column, end

    def _hits(self, line: int, column: int, needle: str) -> Iterator[tuple[int, int, int]]:
        """Every (overlapping) ``needle`` in the 1,000 source lines from (line, column) on."""
        lines = self.lines
        start = column - 1
        for index in range(line - 1, min(len(lines), line - 1 + 1000)):
            text = lines[index]
            found = text.find(needle, start)
            while found != -1:
                yield index + 1, found + 1, found + 1 + len(needle)
                found = text.find(needle, found + 1)
            start = 0

    def diagnostic(
        self,
        code: str,
        message: str,
        where: Path_ = (),
        *,
        key: bool = False,
        severity: Severity = Severity.ERROR,
        hint: str | None = None,
        span: tuple[int, int, int] | None = None,
        service: str | None = None,
        fix: Fix | None = None,
    ) -> Diagnostic:
        line, column, end = span or self.locate(where, key=key)
        return Diagnostic(
            path=self.path,
            line=line,
            column=column,
            code=code,
            message=message,
            severity=severity,
            pointer=to_pointer(where),
            hint=hint,
            end_column=end,
            service=service,
            fix=fix,
        )


# A `${{...}}` token longer than this is not indexed (the needles of findings are references,
# a few dozen characters): a text of unclosed '${{' followed far away by '}}' would otherwise
# copy most of itself for each.
_TOKEN_LIMIT = 256


def is_reference_token(needle: str) -> bool:
    """``needle`` is a `${{...}}` token that ends at its first '}}', as the expression parser
    cuts one (so it is found in a text exactly where :func:`reference_tokens` finds it, and two
    of them never overlap)."""
    inner = needle[3:-2]
    return (5 <= len(needle) <= _TOKEN_LIMIT and needle.startswith("${{") and needle.endswith("}}")
            and "}}" not in inner and not inner.endswith("}"))


def reference_tokens(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """(offset, token) of every `${{` in ``text`` from ``start`` on, with the text up to the
    first '}}' after it (tokens up to the size limit), in one pass over the text."""
    opening = text.find("${{", start)
    close = -1
    while opening != -1:
        if close < opening + 3:  # the first '}}' after the previous opening may serve this one
            close = text.find("}}", opening + 3)
            if close == -1:
                return
        if close + 2 - opening <= _TOKEN_LIMIT:
            yield opening, text[opening:close + 2]
        opening = text.find("${{", opening + 1)


# The `${{...}}` tokens of the latest few texts, with their offsets, for count_before.
_TOKENS: OrderedDict[str, dict[str, list[int]]] = OrderedDict()
_TOKENS_LIMIT = 32


def _tokens_of(text: str) -> dict[str, list[int]]:
    found = _TOKENS.get(text)
    if found is None:
        found = {}
        for start, token in reference_tokens(text):
            found.setdefault(token, []).append(start)
        _TOKENS[text] = found
        while len(_TOKENS) > _TOKENS_LIMIT:
            _TOKENS.popitem(last=False)
    else:
        _TOKENS.move_to_end(text)
    return found


# Where each needle was found in a text so far (match starts, and where to search on), for
# count_before: the texts of the latest few values only.
_FOUND: OrderedDict[tuple[str, str, bool], tuple[list[int], list[int]]] = OrderedDict()
_FOUND_LIMIT = 32


def count_before(text: str, needle: str, end: int, *, overlapping: bool = False) -> int:
    """How many ``needle`` sit in ``text`` before offset ``end``: ``text.count(needle, 0, end)``
    (non-overlapping matches that end by ``end``), or with ``overlapping`` the matches that start
    before it, as :meth:`Document.locate_text` counts. This is the ``occurrence`` a rule hands
    locate_text for a finding at ``end``; a value with thousands of findings asks for each in
    turn, so the matches found are kept and the text is searched once, not once per finding."""
    end = min(len(text), max(0, end + len(text) if end < 0 else end))  # as a slice bound
    if not needle:
        return end + 1  # str.count: an empty needle matches at every offset up to ``end``
    if is_reference_token(needle):
        # Thousands of different references in one text: one pass indexes them all. Such a
        # token never overlaps itself, so both ways of counting agree.
        starts = _tokens_of(text).get(needle, [])
        return bisect_left(starts, end) if overlapping else bisect_right(starts, end - len(needle))
    key = (text, needle, overlapping)
    state = _FOUND.get(key)
    if state is None:
        state = _FOUND[key] = ([], [0])
        while len(_FOUND) > _FOUND_LIMIT:
            _FOUND.popitem(last=False)
    else:
        _FOUND.move_to_end(key)
    starts, resume = state
    size = len(needle)
    # Search on until a match lies past ``end`` (or there are no more).
    while resume[0] != -1 and (not starts or starts[-1] + (0 if overlapping else size) <= end):
        found = text.find(needle, resume[0])
        if found == -1:
            resume[0] = -1
            break
        starts.append(found)
        resume[0] = found + (1 if overlapping else size)
    if overlapping:
        return bisect_left(starts, end)
    return bisect_right(starts, end - size)


def to_pointer(where: Path_) -> str:
    """RFC 6901 JSON pointer for a data path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in where)


class _Abort(Exception):
    """Raised inside the walk to stop at the first structural problem that makes the rest moot."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic


def _text_size(node: yaml.Node) -> int:
    """The characters a node adds to the document by itself: a scalar's text, a mapping's keys
    (its values and a sequence's items are nodes of their own)."""
    if isinstance(node, yaml.ScalarNode):
        return len(node.value)
    if isinstance(node, yaml.MappingNode):
        return sum(len(key.value) for key, _ in node.value if isinstance(key, yaml.ScalarNode))
    return 0


def _end_column(node: yaml.Node) -> int:
    if node.start_mark.line == node.end_mark.line:
        return node.end_mark.column + 1
    return 0


class _Builder:
    """Turns a composed node tree into plain data, recording positions and problems."""

    def __init__(self, path: str):
        self.path = path
        self.positions: dict[Path_, Position] = {}
        self.problems: list[Diagnostic] = []
        self.visited: set[int] = set()
        self.expansions = 0
        self.expanded_text = 0
        self.merged: set[int] = set()
        self.active: set[int] = set()

    def _diag(self, node: yaml.Node, code: str, message: str, hint: str | None = None,
              where: Path_ | None = None) -> Diagnostic:
        mark = node.start_mark
        return Diagnostic(
            path=self.path,
            line=mark.line + 1,
            column=mark.column + 1,
            code=code,
            message=message,
            hint=hint,
            end_column=_end_column(node),
            pointer=to_pointer(where) if where is not None else "",
        )

    def build(self, node: yaml.Node, where: Path_, key_node: yaml.Node | None, depth: int,
              owner: yaml.Node | None = None) -> Any:
        """``owner`` is the nearest mapping key above ``node``: an alias is the very same node
        object as its anchor, so problems found while expanding one are reported at the key
        that reached it, not at the anchor."""
        owner = key_node or owner
        node_id = id(node)
        if node_id in self.active:
            raise _Abort(self._diag(owner or node, "AML007",
                                    "recursive alias: this value contains the anchor it refers to",
                                    "remove the alias that points back into its own anchor", where))
        if node_id in self.visited:
            # The same node reached again means an alias is being expanded.
            self.expansions += 1
            if self.expansions > MAX_ALIAS_EXPANSIONS:
                raise _Abort(self._diag(
                    owner or node, "AML007",
                    f"aliases expand to more than {MAX_ALIAS_EXPANSIONS:,} nodes here (a 'billion laughs' file)",
                    "write the repeated blocks out, or use fewer nested aliases", where))
            self._add_expanded_text(_text_size(node), owner or node, where)
        self.visited.add(node_id)
        if depth > MAX_DEPTH:
            raise _Abort(self._diag(owner or node, "AML007", f"nesting deeper than {MAX_DEPTH} levels",
                                    "flatten the document", where))

        # Every node of every file passes here: _end_column is written out.
        start, end = node.start_mark, node.end_mark
        line = start.line
        if key_node is not None:
            key_start, key_end = key_node.start_mark, key_node.end_mark
            self.positions[where] = Position(
                key_start.line + 1, key_start.column + 1, key_end.column + 1 if key_start.line == key_end.line else 0,
                line + 1, start.column + 1, end.column + 1 if line == end.line else 0)
        else:
            self.positions[where] = Position(
                0, 0, 0, line + 1, start.column + 1, end.column + 1 if line == end.line else 0)

        if node.__class__ is _ScalarNode:
            return self._scalar(node, where)
        self.active.add(node_id)
        try:
            if node.__class__ is _SequenceNode:
                if node.tag != _SEQ:
                    self._check_collection_tag(node, _SEQ, where)
                return [self.build(item, where + (i,), None, depth + 1, owner)
                        for i, item in enumerate(node.value)]
            if node.tag != _MAP:
                self._check_collection_tag(node, _MAP, where)
            return self._mapping(node, where, depth)
        finally:
            self.active.discard(node_id)

    def _add_expanded_text(self, size: int, at: yaml.Node, where: Path_) -> None:
        self.expanded_text += size
        if self.expanded_text > MAX_ALIAS_TEXT:
            raise _Abort(self._diag(
                at, "AML007",
                f"aliases expand to more than {MAX_ALIAS_TEXT:,} characters of text here (a 'billion laughs' file)",
                "write the repeated text out, or alias it fewer times", where))

    def _check_collection_tag(self, node: yaml.Node, expected: str, where: Path_) -> None:
        if node.tag != expected and node.tag not in _OTHER_COLLECTION_TAGS:
            self._unsafe_tag(node, where)

    def _unsafe_tag(self, node: yaml.Node, where: Path_) -> None:
        tag = node.tag
        shown = "!!" + tag[len(_YAML):] if tag.startswith(_YAML) else tag
        if "python/" in tag:
            message = f"unsafe tag '{shown}': it asks the loader to run Python code"
        else:
            message = f"unknown tag '{shown}': Azure ML loads specs with a safe loader that rejects it"
        self.problems.append(self._diag(node, "AML006", message, "remove the tag and write a plain value", where))

    def _scalar(self, node: yaml.ScalarNode, where: Path_) -> Any:
        tag = node.tag
        if tag == _STR:
            return node.value  # most scalars: no constructor call needed
        if tag in _SCALAR_TAGS:
            try:
                return _constructor.yaml_constructors[tag](_constructor, node)
            except (ValueError, yaml.YAMLError):
                return node.value
        if tag in _KEEP_AS_TEXT_TAGS:
            # Keep dates as written: the schema speaks JSON, and messages quote the source text.
            return node.value
        self._unsafe_tag(node, where)
        return node.value

    def _mapping(self, node: yaml.MappingNode, where: Path_, depth: int) -> dict:
        result: dict = {}
        first_seen: dict[str, yaml.Node] = {}
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for source in sources:
                    if isinstance(source, yaml.MappingNode):
                        # A merge copies the source's keys (its values are built, and counted,
                        # like any alias): a source met before is an expansion of its text.
                        if id(source) in self.visited or id(source) in self.merged:
                            self._add_expanded_text(_text_size(source), key_node, where)
                        self.merged.add(id(source))
                        merged.extend(source.value)
                    else:
                        self.problems.append(self._diag(
                            key_node, "AML001", "a merge key '<<' must point at a mapping, "
                            f"not {'a list' if isinstance(source, yaml.SequenceNode) else 'a scalar'}",
                            "alias an anchored mapping: `<<: *defaults`", where))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.problems.append(self._diag(
                    key_node, "AML001", "mapping keys must be plain scalars, not collections",
                    "write the key as a plain string", where))
                continue
            key = key_node.value
            if key in first_seen:
                earlier = first_seen[key].start_mark
                self.problems.append(self._diag(
                    key_node, "AML002",
                    f"duplicate key '{key}' (first defined at line {earlier.line + 1}); "
                    "YAML loaders silently keep only the last one",
                    "remove one of the two, or merge their contents", where + (key,)))
            first_seen[key] = key_node
            result[key] = self.build(value_node, where + (key,), key_node, depth + 1)
        # Merged keys fill in only what the mapping does not set itself (YAML merge semantics).
        for key_node, value_node in merged:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is not None and key not in result:
                result[key] = self.build(value_node, where + (key,), key_node, depth + 1)
        return result


# For these, where the construct started says more than where the parser gave up (often the
# end of the file): an unclosed quote or bracket.
_START_MATTERS = ("while scanning a quoted scalar", "while parsing a flow", "while scanning a block scalar")


def _problem_mark(error: yaml.YAMLError, line_count: int) -> tuple[int, int]:
    problem = getattr(error, "problem_mark", None)
    context = getattr(error, "context_mark", None)
    started = str(getattr(error, "context", "") or "")
    mark = problem
    if context is not None and (started.startswith(_START_MATTERS) or problem is None
                                or problem.line >= line_count):
        mark = context
    if mark is None:
        return 1, 1
    return min(mark.line + 1, max(1, line_count)), mark.column + 1


def _syntax_diagnostic(path: str, text: str, error: yaml.YAMLError) -> Diagnostic:
    lines = text.splitlines()
    problem_mark = getattr(error, "problem_mark", None)
    if problem_mark is not None and problem_mark.line < len(lines):
        source_line = lines[problem_mark.line]
        indent = source_line[: len(source_line) - len(source_line.lstrip(" \t"))]
        if "\t" in indent:
            return Diagnostic(path, problem_mark.line + 1, indent.index("\t") + 1, "AML003",
                              "tab character used for indentation; YAML allows only spaces there",
                              hint="replace the tab with spaces")
    line, column = _problem_mark(error, len(lines))
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    context = getattr(error, "context", None)
    message = f"YAML syntax error: {problem}"
    if context:
        message += f" ({context})"
    if problem_mark is not None and problem_mark.line + 1 != line:
        message += f"; the parser gave up at line {min(problem_mark.line + 1, len(lines) + 1)}"
    return Diagnostic(path, line, column, "AML001", message,
                      hint="check the indentation and quoting around this position")


class NotAFile(OSError):
    """A path that names something other than a regular file (a FIFO, a device, a socket):
    reading it could block forever or never end."""


_KINDS = ((stat_module.S_ISFIFO, "a named pipe (FIFO)"), (stat_module.S_ISCHR, "a character device"),
          (stat_module.S_ISBLK, "a block device"), (stat_module.S_ISSOCK, "a socket"),
          (stat_module.S_ISDIR, "a folder"))


def not_a_file(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file ("a named pipe (FIFO)"), else None."""
    if stat_module.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_limited(path: Path | str, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes, int]:
    """The first ``max_bytes + 1`` bytes of the regular file ``path`` and its size: enough to
    tell a file over the limit without holding it in memory. Opened without blocking and checked
    after opening (no race between a check and the open), so a FIFO or a device is refused with
    :class:`NotAFile` rather than read. Raises OSError when it cannot be read."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        status = os.fstat(descriptor)
        what = not_a_file(status.st_mode)
        if what is not None:
            raise NotAFile(errno.EINVAL, f"not a regular file but {what}", str(path))
        os.set_blocking(descriptor, True)
        chunks = []
        wanted = max_bytes + 1
        while wanted > 0:
            chunk = os.read(descriptor, min(wanted, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
        raw = b"".join(chunks)
        return raw, max(status.st_size, len(raw))
    finally:
        os.close(descriptor)


def read_stream_limited(stream: BinaryIO, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """At most ``max_bytes + 1`` bytes of ``stream`` (standard input may never end: /dev/zero)."""
    chunks = []
    wanted = max_bytes + 1
    while wanted > 0:
        chunk = stream.read(min(wanted, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        wanted -= len(chunk)
    return b"".join(chunks)


def decode(path: str, raw: bytes, max_bytes: int = DEFAULT_MAX_BYTES,
           size: int | None = None) -> tuple[str | None, Diagnostic | None]:
    """Bytes to text, or the diagnostic that says why not. ``raw`` may be the start of a longer
    input (see :func:`read_limited`): ``size`` is the whole file's size when it is known."""
    if len(raw) > max_bytes:
        if size is not None:
            amount = f"{size:,} bytes"
        elif len(raw) == max_bytes + 1:  # the start of a stream: its length is not known
            amount = f"more than {max_bytes:,} bytes"
        else:
            amount = f"{len(raw):,} bytes"
        return None, Diagnostic(path, 1, 1, "AML009",
                                f"file is {amount}, over the {max_bytes:,}-byte limit for a spec",
                                hint="a job spec is a few kilobytes; raise `max-file-size` if this is intended")
    if raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM):]  # one mark, the one FileReport.bom records
    elif raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, Diagnostic(path, 1, 1, "AML008",
                                "file is UTF-16 (it starts with a UTF-16 byte-order mark), not UTF-8",
                                hint="save the file as UTF-8 (the service reads specs as UTF-8)")
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as error:
        before = raw[: error.start]
        line = before.count(b"\n") + 1
        column = error.start - (before.rfind(b"\n") + 1) + 1
        return None, Diagnostic(path, line, column, "AML008",
                                f"byte 0x{raw[error.start]:02x} is not valid UTF-8",
                                hint="save the file as UTF-8 (the service reads specs as UTF-8)")


# Files parsed lately, shared by the engine (a file linted in its own right) and the reference
# loader (the same file read as a pipeline's component, a sweep's trial, a schedule's
# create_job), so that a file is composed once. Keyed by the file's resolved path and checked
# against its text, so an edited file is parsed again. The most recent files only: a reference
# is read next to the file that makes it (and linted at once, validator.references), and keeping
# every file of a large tree would cost more memory and time than the parses it saves. The data
# and positions are shared by every Document made from one entry: rules read them and must never
# change them (tests/validator/test_parse_cache.py lints every fixture and compares with a new parse).
_PARSED: OrderedDict[str, tuple[str, Any, dict, tuple[Diagnostic, ...]]] = OrderedDict()
_PARSED_LIMIT = 64


def parse(path: str, text: str, base_dir: Path | None = None,
          source: str | None = None) -> tuple[Document, list[Diagnostic]]:
    """Compose ``text`` and build a :class:`Document`; ``data`` stays ``None`` when unusable.

    ``source`` is the real path (``str(paths.resolved(file))``) of the file ``text`` was read
    from: a file parsed lately with the same text gives a new Document (its own ``path``,
    ``base_dir``, ``kind``) over the parse already made."""
    if source is None:
        return _parse(path, text, base_dir)
    key = source
    hit = _PARSED.get(key)
    if hit is not None and (hit[0] is text or hit[0] == text):
        _PARSED.move_to_end(key)
        _, data, positions, problems = hit
        document = Document(path=path, text=text, base_dir=base_dir or Path(path).parent,
                            data=data, positions=positions)
        return document, [p if p.path == path else replace(p, path=path) for p in problems]
    document, found = _parse(path, text, base_dir)
    _PARSED[key] = (text, document.data, document.positions, tuple(found))
    _PARSED.move_to_end(key)
    while len(_PARSED) > _PARSED_LIMIT:
        _PARSED.popitem(last=False)
    return document, found


def _parse(path: str, text: str, base_dir: Path | None = None) -> tuple[Document, list[Diagnostic]]:
    document = Document(path=path, text=text, base_dir=base_dir or Path(path).parent)
    try:
        roots = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.YAMLError as error:
        return document, [_syntax_diagnostic(path, text, error)]
    except RecursionError:  # pragma: no cover - libyaml caps depth first
        return document, [Diagnostic(path, 1, 1, "AML007", "nesting too deep to read")]
    roots = [r for r in roots if r is not None]
    if len(roots) > 1:
        mark = roots[1].start_mark
        return document, [Diagnostic(
            path, mark.line + 1, mark.column + 1, "AML005",
            f"file holds {len(roots)} YAML documents; a spec file must hold exactly one",
            hint="split the documents into separate files (az ml reads only one)")]
    root = roots[0] if roots else None
    if root is None or (isinstance(root, yaml.ScalarNode) and root.tag == _YAML + "null"):
        return document, [Diagnostic(path, 1, 1, "AML004", "file is empty",
                                     hint="write the spec, or delete the file")]
    builder = _Builder(path)
    try:
        document.data = builder.build(root, (), None, 0)
    except _Abort as abort:
        return document, [abort.diagnostic]
    document.positions = builder.positions
    return document, builder.problems


def load_path(path: Path, display: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
              raw: bytes | None = None) -> tuple[Document | None, list[Diagnostic]]:
    """Read and parse a file on disk (``raw``: its bytes, when the caller has read them already);
    never raises for a missing or unreadable file."""
    shown = display or str(path)
    size = None
    try:
        if raw is None:
            raw, size = read_limited(path, max_bytes)
    except OSError as error:
        return None, [Diagnostic(shown, 1, 1, "AML000", f"cannot read file: {error.strerror or error}")]
    text, problem = decode(shown, raw, max_bytes, size)
    if problem:
        return None, [problem]
    return parse(shown, text, path.parent, source=str(resolved(path)))

