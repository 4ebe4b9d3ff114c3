"""Parse the expression language inside spec strings.

``${{inputs.lr}}`` is a reference; ``$[[ --lr ${{inputs.lr}} ]]`` is an optional block, kept
only when the optional input inside it has a value (SPEC §3.10). The parser is total: any text
yields references, blocks and syntax problems, never an exception. The runner substitutes with
the same parser, so what the linter accepts is exactly what the runner understands.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

OPEN, CLOSE = "${{", "}}"
BLOCK_OPEN, BLOCK_CLOSE = "$[[", "]]"

# Names as the SDK writes them (node names, port names, search-space keys, attribute paths);
# hyphens pass here so the name rules can report them with a better message.
_PATH_RE = re.compile(r"^[A-Za-z_][\w-]*(?:\.[A-Za-z0-9_][\w-]*)*$")
_SINGLE_CLOSE_RE = re.compile(r"\$\{\{\s*[A-Za-z_][\w.-]*\s*\}(?!\})")
_SINGLE_BRACE_RE = re.compile(r"(?<![\$\{])\{(inputs|outputs|search_space)\.([A-Za-z0-9_.-]+)\}(?!\})")


class Reference(NamedTuple):
    """One ``${{...}}``: ``text`` is the whole token, ``parts`` the dotted path inside it."""

    text: str
    start: int
    end: int
    parts: tuple[str, ...]
    block: int | None = None  # index into Template.blocks when inside $[[ ]]

    @property
    def context(self) -> str:
        return self.parts[0] if self.parts else ""

    @property
    def dotted(self) -> str:
        return ".".join(self.parts)

    def port(self, declared: Container[str] = ()) -> str | None:
        """The input, output or search-space entry this reference names (``inputs.lr`` -> ``lr``),
        None when it names none (``${{inputs}}``). A parameter group (the SDK's ``@dsl.group``) is
        written in YAML as dotted input names, so ``${{inputs.opt.lr}}`` names the input
        ``opt.lr`` when ``declared`` holds that name; otherwise the first part after the context."""
        if len(self.parts) < 2:
            return None
        return ".".join(self.parts[1:]) if self._in_group(declared) else self.parts[1]

    def names_port(self, declared: Container[str] = ()) -> bool:
        """Whether the reference names a whole port: ``inputs.lr``, or ``inputs.opt.lr`` where
        ``opt`` is a declared parameter group (whether or not ``opt.lr`` is one of its members:
        the undefined-input rule says which); not ``inputs.lr.x`` nor ``inputs``."""
        return len(self.parts) == 2 or self._in_group(declared)

    def _in_group(self, declared: Container[str]) -> bool:
        if len(self.parts) < 3:
            return False
        if ".".join(self.parts[1:]) in declared:
            return True
        prefix = self.parts[1] + "."
        return isinstance(declared, Iterable) and any(str(name).startswith(prefix) for name in declared)


class Block(NamedTuple):
    start: int
    end: int  # offset after "]]"

    def body(self, text: str) -> str:
        return text[self.start + len(BLOCK_OPEN): self.end - len(BLOCK_CLOSE)]


class Problem(NamedTuple):
    start: int
    end: int
    token: str
    message: str


@dataclass
class Template:
    text: str
    references: list[Reference] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    deprecated: list[Reference] = field(default_factory=list)


def has_expression(text: str) -> bool:
    return OPEN in text or BLOCK_OPEN in text or "{inputs." in text or "{outputs." in text \
        or "{search_space." in text


def _next_construct(text: str, start: int, in_block: bool) -> int:
    """The first offset from ``start`` on where `$[[`, `${{` or (inside a block) `]]` begins,
    or the length of ``text``."""
    found = len(text)
    for mark in (BLOCK_OPEN, OPEN, BLOCK_CLOSE) if in_block else (BLOCK_OPEN, OPEN):
        at = text.find(mark, start, found)
        if at != -1:
            found = at
    return found


@lru_cache(maxsize=4096)
def parse(text: str) -> Template:
    """Split ``text`` into references and optional blocks, recording malformed parts.
    Results are cached (several rules read the same command): treat them as read-only."""
    template = Template(text)
    block_index: int | None = None
    block_start = -1
    i = 0
    n = len(text)
    while i < n:
        if text.startswith(BLOCK_OPEN, i):
            if block_index is not None:
                template.problems.append(Problem(i, i + 3, BLOCK_OPEN,
                                                 "optional blocks '$[[ ]]' cannot be nested"))
                i += 3
                continue
            block_index = len(template.blocks)
            block_start = i
            i += 3
            continue
        if text.startswith(BLOCK_CLOSE, i) and block_index is not None:
            block = Block(block_start, i + 2)
            template.blocks.append(block)
            inside = [r for r in template.references if r.block == block_index]
            if not inside:
                template.problems.append(Problem(
                    block.start, block.end, text[block.start:block.end],
                    "an optional block '$[[ ]]' must contain an input reference such as "
                    "'${{inputs.x}}'; without one it is never dropped"))
            block_index = None
            i += 2
            continue
        if text.startswith(OPEN, i):
            close = text.find(CLOSE, i + 3)
            # A new "${{" before the closing braces means this one was never closed.
            reopen = text.find(OPEN, i + 3)
            if close == -1 or (reopen != -1 and reopen < close):
                single = _SINGLE_CLOSE_RE.match(text, i)
                if single:
                    template.problems.append(Problem(
                        i, single.end(), single.group(0),
                        f"'{single.group(0)}' is closed with '}}' instead of '}}}}'"))
                    i = single.end()
                    continue
                token = text[i: (reopen if reopen != -1 else min(n, i + 40))].split("\n")[0]
                template.problems.append(Problem(i, i + 3, token.rstrip(),
                                                 "'${{' is never closed with '}}'"))
                i += 3
                continue
            token = text[i: close + 2]
            inner = text[i + 3: close].strip()
            if not inner:
                template.problems.append(Problem(i, close + 2, token, "empty expression '${{}}'"))
            elif not _PATH_RE.match(inner):
                template.problems.append(Problem(
                    i, close + 2, token,
                    f"'{token}' is not a reference: write a dotted name such as '${{{{inputs.lr}}}}' "
                    "or '${{parent.jobs.prep.outputs.data}}'"))
            else:
                template.references.append(Reference(token, i, close + 2, tuple(inner.split(".")),
                                                     block_index))
            i = close + 2
            continue
        # Nothing starts here: jump to where the next construct may (a command is hundreds of
        # characters, and stepping through them one by one was most of this function's time).
        i = _next_construct(text, i + 1, block_index is not None)
    if block_index is not None:
        template.problems.append(Problem(block_start, block_start + 3, BLOCK_OPEN,
                                         "'$[[' is never closed with ']]'"))
    for match in _SINGLE_BRACE_RE.finditer(text):
        parts = (match.group(1),) + tuple(match.group(2).split("."))
        template.deprecated.append(Reference(match.group(0), match.start(), match.end(), parts))
    return template


def group_conflicts(names: Iterable[object]) -> Iterator[tuple[str, str]]:
    """(name, group) for each input name that a parameter group's member also uses as its group
    (`train` next to `train.lr`): azure-ai-ml refuses the two together ("Conflict parameter key
    'train' and 'train.lr'"). ``name`` is the member, ``group`` the plain input."""
    declared = {str(name) for name in names}
    for name in declared:
        parts = name.split(".")
        for end in range(1, len(parts)):
            group = ".".join(parts[:end])
            if group in declared:
                yield name, group
                break
