"""Substitute ``${{...}}`` references into a command job's ``command`` for ``bash -c``.

The command is parsed with :func:`validator.expressions.parse`, the same parser the linter uses,
so the runner understands exactly what the linter accepted. Optional blocks ``$[[ ... ]]`` are
dropped whole when a reference inside them has the value ``None`` (an optional input without a
value); otherwise only their ``$[[`` and ``]]`` markers are removed. Deprecated single-brace
forms such as ``{inputs.x}`` are left as they are.

Every substituted value is shell-quoted for the bash quoting state at the reference, so that the
program receives exactly the value's text as (part of) one word and no value can run a command.
The state is tracked by a small state machine with a stack of frames:

========================  ====================================================================
reference position        what is inserted
========================  ====================================================================
unquoted word             ``shlex.quote(value)``: safe values such as ``0.01`` or ``/tmp/x``
                          stay as they are; ``--lr=${{inputs.lr}}`` stays one argument
``"..."``                 the value with ``\\``, ``$``, backquote and ``"`` backslash-escaped
``'...'``                 the value with each ``'`` written as ``'\\''``
``$'...'``                the value with ``\\`` and ``'`` backslash-escaped
``$( ... )``, backquotes  quoting restarts as unquoted, also within ``"..."``; nesting is
                          tracked. Inside backquotes the quoted text is escaped once more
                          (``\\``, ``$``, backquote, and ``"`` within ``"..."``) per level,
                          since bash removes one level of those backslashes before it parses
                          the inner command
``${name...}``            as its surroundings; within ``"..."`` also ``}`` is escaped, and a
                          value containing ``'`` is refused (bash cannot take it there)
arithmetic                ``$(( ))``, ``(( ))``, ``$[ ]``, an array subscript ``${a[...]}`` or a
                          substring ``${x:off:len}``: only an integer (``[+-]?[0-9]+``) is
                          accepted, inserted as is, because bash evaluates that text as code
comment (``#`` ...)       ``shlex.quote(value)`` with each newline written as ``\\n``, so the
                          comment cannot end inside the value
here-document body        no newline allowed, and the line must not become the delimiter; with
                          a quoted delimiter (``<<'EOF'``) the value goes in as is, with an
                          unquoted one only values made of ASCII letters, digits and
                          ``_@%+=:,./-`` are accepted (bash would expand the rest), and not an
                          empty one after a ``$(`` or backquote on the line
*uncertain* (below)       only a non-empty value made of ASCII letters, digits and
                          ``_@%+=:,./-`` (an integer where the position is still known to be
                          arithmetic), inserted as is; any other value is refused with the
                          input, its line and column in the command, and the fix: assign the
                          value to a shell variable where quoting is certain
                          (``VALUE=${{inputs.x}};`` first) and write ``"$VALUE"`` there
========================  ====================================================================

A position is *uncertain* where bash reads the text in a way the state machine does not model
exactly, so a quoted value could still be read as code there. Such positions are found by a
differential test that runs generated commands and payloads under real bash
(``tools/shell_differential.py``). Uncertain are:

* anything inside a ``$( )`` or backquotes within ``${name...}`` (quoted or not): bash reads
  that word twice, once to find the ``}`` and once to expand it, with quote rules of its own;
* double quotes within ``"${name...}"``: bash drops them before it reads ``$name`` there;
* a ``$( )`` inside backquotes: bash parses it before it removes the backquotes' backslashes;
* everything after a construct the renderer cannot follow to its end, to the end of the
  command: a here-document inside ``$( )`` or backquotes (bash ends it at a line that *starts*
  with the delimiter, ``EOF)``, or at the backquote), a here-document whose line continues
  into a ``$( )``, ``((``/``$((`` that bash re-reads as nested subshells (a ``'``, newline,
  ``;`` outside ``for ((...))``, or an unmatched ``)``), and a ``case`` inside ``$( )`` not
  written ``case WORD in``, or whose ``case``/``esac`` follows a reference.

``case`` and ``esac`` count as keywords inside ``$( )`` only where bash reads a keyword: at the
start of a command, or after ``then``, ``do``, ``!``, ... (``echo case x in y`` is not one).

A backslash, or a ``$``, right before a reference is refused: it would combine with the first
character of the quoted value. So is ``$name`` right before one (also across quotes, as in
``"$X"${{inputs.x}}``): bash would read the value's first letters as part of the variable's
name; write ``${name}``. A value containing NUL is refused: no process can receive it.

Known limits (the command's author, not a value, controls these):

* An inert value in an uncertain position is inserted as it is; it cannot start a command, but
  it is a word bash may read as a keyword (``esac``), a here-document delimiter or an
  assignment, and the renderer cannot tell there whether the program receives exactly its text.
* Inside ``"${name...}"`` only the default-value operators (``:-``, ``-``, ``:=``, ``:+``, ...)
  are modelled; a reference within quotes there accepts only the inert values above.
* Here-document bodies are read line by line and not parsed further; ``<<-`` strips leading
  tabs of each line, including a value's when it starts the line.
* Quoting controls how bash *parses* the command. It cannot stop bash from *evaluating* a
  value as arithmetic where the command asks for that on a word or on a command's output:
  ``[[ x -eq y ]]``, ``let``, ``declare -i``, an assignment to an array element, or
  ``$(( $(...) ))``. There an array subscript in the value (``a[$(cmd)]``) runs ``cmd``.
* Brace expansion and tilde expansion written around a reference by the author (``{a,${{x}}}``,
  ``~${{x}}``) also apply to a safe value that ``shlex.quote`` leaves unquoted.
* History expansion (``!``) is assumed off, as it is in ``bash -c``; the locale's encoding is
  assumed to be UTF-8 or single-byte, so no multibyte character ends in a quote or backslash.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from validator.expressions import BLOCK_CLOSE, BLOCK_OPEN, Reference, Template, parse

__all__ = ["CONTEXTS", "RenderError", "quote_for_context", "render_command"]

CONTEXTS = ("unquoted", "double", "single", "ansi-c")

_WORD_BREAK = frozenset(" \t\n;&|()<>")
_INERT = re.compile(r"[\w@%+=:,./-]*", re.ASCII)
_INTEGER = re.compile(r"[+-]?[0-9]+")
# After "${": a subscript still open, or a substring offset (":" not followed by an operator).
_PARAM_ARITHMETIC = re.compile(r"[!#]?[\w@*#?$!-]*\[[^\]]*|[!#]?[\w@*#?$!-]+(\[[^\]]*\])?:(?![-=?+]).*",
                               re.DOTALL)
_CASE = re.compile(r"case[ \t]+[^ \t\n;&|()<>]+[ \t\n]+in(?=[ \t\n])")
_ESAC = re.compile(r"esac(?=[ \t\n;&|)]|$)")
_INERT_HINT = "ASCII letters, digits and _@%+=:,./-"
# Words after which the next word is again in command position (so "case" there is a keyword).
_LEADING_RESERVED = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "{", "time"})
_COMMAND_BREAK = frozenset(";&|(\n)")


class RenderError(ValueError):
    """The command cannot be rendered with these values; the message says why and what to do."""


def quote_for_context(value: str, context: str) -> str:
    """Quote ``value`` for one of :data:`CONTEXTS` so that bash reads it back exactly."""
    if "\0" in value:
        raise RenderError("a value containing a NUL character cannot be passed to a process")
    if context == "unquoted":
        return shlex.quote(value)
    if context == "double":
        return re.sub(r'([\\$`"])', r"\\\1", value)
    if context == "single":
        return value.replace("'", "'\\''")
    if context == "ansi-c":
        return value.replace("\\", "\\\\").replace("'", "\\'")
    raise ValueError(f"unknown quoting context {context!r}; expected one of {', '.join(CONTEXTS)}")


def render_command(command: str, values: Mapping[str, str | None]) -> str:
    """Return ``command`` with its references replaced by their quoted values, for ``bash -c``.

    ``values`` maps a dotted reference ("inputs.lr", "outputs.model", "search_space.lr") to its
    text, or to ``None`` for an optional input that has no value. Raises :class:`RenderError`
    when the command does not parse, uses a name missing from ``values``, uses a ``None`` value
    outside ``$[[ ]]``, or a value cannot be placed safely where it is used (see the module).
    """
    template = parse(command)
    _check_references(template, values)
    renderer = _Renderer(_items(template, values))
    renderer.run()
    return "".join(renderer.out)


# -- references and optional blocks ---------------------------------------------------------------

def _check_references(template: Template, values: Mapping[str, str | None]) -> None:
    if template.problems:
        raise RenderError(f"the command cannot be parsed: {template.problems[0].message}")
    for ref in template.references:
        if ref.dotted not in values:
            available = ", ".join(sorted(values)) or "none"
            raise RenderError(f"the command uses {ref.text}, but '{ref.dotted}' has no value to "
                              f"substitute (available: {available})")
        value = values[ref.dotted]
        if value is None and ref.block is None:
            raise RenderError(f"the command uses {ref.text}, which has no value; give the input a "
                              f"value or wrap the part of the command that uses it in an optional "
                              f"block '$[[ ... ]]'")
        if value is not None and not isinstance(value, str):
            raise TypeError(f"the value of {ref.text} must be a str or None, not {type(value).__name__}")


@dataclass(frozen=True)
class _Slot:
    ref: Reference
    value: str
    where: str  # "line L, column C", for messages


def _items(template: Template, values: Mapping[str, str | None]) -> list[str | _Slot]:
    """The command after optional blocks are resolved, as characters and slots."""
    dropped = {ref.block for ref in template.references
               if ref.block is not None and values[ref.dotted] is None}
    opens = {block.start: (index, block) for index, block in enumerate(template.blocks)}
    closes = {block.end - len(BLOCK_CLOSE) for block in template.blocks}
    refs = {ref.start: ref for ref in template.references}
    text, items, i = template.text, [], 0
    while i < len(text):
        if i in opens:
            index, block = opens[i]
            i = block.end if index in dropped else i + len(BLOCK_OPEN)
        elif i in closes:
            i += len(BLOCK_CLOSE)
        elif i in refs:
            ref = refs[i]
            line = text.count("\n", 0, i) + 1
            column = i - (text.rfind("\n", 0, i) + 1) + 1
            items.append(_Slot(ref, values[ref.dotted], f"line {line}, column {column}"))
            i = ref.end
        else:
            items.append(text[i])
            i += 1
    return items


# -- the quoting-state machine ----------------------------------------------------------------------

@dataclass
class _Frame:
    kind: str  # "top", "cmd", "dq", "sq", "ansi", "param", "arith"
    # param: "unquoted", "double" or "arithmetic", from its surroundings; sq/dq inside a param:
    # the slot context to use instead of their own ("opaque", "arithmetic")
    quoting: str = ""
    depth: int = 0  # open "(" in cmd/arith, open "{" in param
    closer: str = ""  # arith: "))" or "]"
    start: int = 0  # index of the first item after the opening
    cases: int = 0  # cmd: "case" statements open, whose patterns end in ")"
    loop: bool = False  # arith: "for ((...))", whose ";" are arithmetic
    # Why bash's reading of this frame is not modelled with certainty ("" when it is); inherited
    # by every frame inside it.
    uncertain: str = ""


@dataclass(frozen=True)
class _Heredoc:
    delimiter: str
    strip_tabs: bool
    quoted: bool


class _Renderer:
    """Walks the items once, copying characters and quoting each slot for the current frame."""

    def __init__(self, items: list[str | _Slot], uncertain: str = "", nested: bool = False) -> None:
        self.items = items
        self.i = 0
        self.out: list[str] = []
        self.stack = [_Frame("top", uncertain=uncertain)]
        self.nested = nested  # the command inside backquotes: its "top" is itself nested
        # Set once the state machine can no longer be sure it follows bash: every later slot is
        # uncertain. Why, for the message.
        self.lost = ""
        self.word_start = True  # only meaningful in "top"/"cmd": may "#" or "((" start here?
        self.heredocs: list[_Heredoc] = []
        self.rendered: dict[_Slot, str] = {}

    def run(self) -> None:
        steps = {"top": self._shell, "cmd": self._shell, "dq": self._double, "sq": self._single,
                 "ansi": self._ansi, "param": self._param, "arith": self._arith}
        while self.i < len(self.items):
            frame = self.stack[-1]
            steps[frame.kind](frame, self.items[self.i])

    # helpers

    def _peek(self, offset: int) -> str | _Slot | None:
        index = self.i + offset
        return self.items[index] if index < len(self.items) else None

    def _emit(self, count: int = 1) -> None:
        chunk = self.items[self.i:self.i + count]
        self.out.extend(chunk)  # callers only emit characters, never slots
        self.i += len(chunk)
        self.word_start = bool(chunk) and chunk[-1] in _WORD_BREAK

    def _push(self, frame: _Frame, count: int) -> None:
        self._emit(count)
        frame.start = self.i
        outer = self.stack[-1]
        if not frame.uncertain:
            frame.uncertain = outer.uncertain
        if not frame.uncertain and outer.kind == "param" and frame.kind == "cmd":
            # Bash reads the word of "${x:-...}" twice (to find its "}", then to expand it), with
            # quoting rules for a nested "$( )" that depend on the version and the surrounding
            # quotes: not modelled.
            frame.uncertain = "inside a command substitution within '${...}'"
        self.stack.append(frame)

    def _uncertainty(self) -> str:
        return self.lost or self.stack[-1].uncertain

    def _lose(self, why: str) -> None:
        if not self.lost:
            self.lost = why

    def _pop(self, count: int = 1) -> None:
        self._emit(count)
        self.stack.pop()
        self.word_start = False  # a closing quote or parenthesis continues the word

    def _slot(self, slot: _Slot, context: str) -> None:
        if context not in ("single", "ansi-c", "comment"):
            _check_not_after_name(slot, self.items[max(0, self.i - 200):self.i])
        uncertain = self._uncertainty()
        if uncertain and context == "arithmetic":
            # Still known to be arithmetic: a name there would be evaluated, so only an integer.
            text = _render_value(slot, context)
        elif uncertain:
            text = _uncertain_value(slot, uncertain)
        else:
            text = _render_value(slot, context)
        self.rendered[slot] = text
        self.out.append(text)
        self.i += 1
        self.word_start = False

    def _escape(self) -> None:
        if isinstance(self._peek(1), _Slot):
            raise RenderError(f"a backslash right before {self._peek(1).ref.text} (at {self._peek(1).where} of the command) would escape the "
                              f"first character of its quoted value; remove the backslash")
        self._emit(2)
        self.word_start = False

    def _dollar(self, quoting: str) -> None:
        """``$`` in a frame where it expands; ``quoting`` is what a ``${`` here inherits."""
        nxt, after = self._peek(1), self._peek(2)
        if isinstance(nxt, _Slot):
            raise RenderError(f"a '$' right before {nxt.ref.text} (at {nxt.where} of the command) would make bash expand its "
                              f"value; remove the '$' or put the reference after it in quotes")
        if nxt == "(" and after == "(":
            self._push(_Frame("arith", closer="))"), 3)
        elif nxt == "(":
            # Bash reads a "$( )" inside backquotes twice: to find the backquotes' end, before
            # it removes their backslashes, and then to run it.
            why = "inside a command substitution within backquotes" if self.nested else ""
            self._push(_Frame("cmd", uncertain=why), 2)
        elif nxt == "[":
            self._push(_Frame("arith", closer="]"), 2)
        elif nxt == "{":
            self._push(_Frame("param", quoting=quoting), 2)
        elif nxt == "'" and quoting == "unquoted":
            self._push(_Frame("ansi"), 2)
        elif nxt == '"' and quoting == "unquoted":
            self._push(_Frame("dq"), 2)
        else:
            self._emit(2 if nxt == "$" else 1)  # "$$" is one parameter; its "$" opens nothing

    # frames

    def _shell(self, frame: _Frame, item: str | _Slot) -> None:
        if isinstance(item, _Slot):
            self._slot(item, "unquoted")
        elif item == "\\":
            self._escape()
        elif item == "'":
            self._push(_Frame("sq"), 1)
        elif item == '"':
            self._push(_Frame("dq"), 1)
        elif item == "$":
            self._dollar("unquoted")
        elif item == "`":
            self._backquotes(in_double=False)
        elif item == "#" and self.word_start:
            self._comment()
        elif item == "(" and self.word_start and self._peek(1) == "(":
            loop = "".join(str(x) for x in self.out[-8:]).rstrip(" \t").endswith("for")
            self._push(_Frame("arith", closer="))", loop=loop), 2)
        elif item == "<" and self._peek(1) == "<" and self._peek(2) != "<":
            if frame.kind != "top" or self.nested:
                # Bash ends a here-document inside "$( )" at a line that starts with the
                # delimiter ("EOF)" too), and inside backquotes at the closing backquote.
                self._lose("after a here-document inside '$( )' or backquotes")
            self._heredoc_operator()
        elif item == "\n":
            self._emit()
            if self.heredocs and frame.kind != "top":
                self._lose("after a here-document whose line continues inside '$( )'")
            if self.heredocs:
                self._heredoc_bodies()
        else:
            if frame.kind == "cmd" and self.word_start and item in "ce":
                self._case_keyword(frame)
            self._parenthesis(frame, item)

    def _case_keyword(self, frame: _Frame) -> None:
        # In "$(case x in a) ...;; esac)" the pattern's ")" does not end the substitution.
        ahead = "".join(item if isinstance(item, str) else "x" for item in self.items[self.i:self.i + 200])
        keyword = ahead.startswith("case") and (len(ahead) == 4 or ahead[4] in _WORD_BREAK)
        if not keyword and not (frame.cases and _ESAC.match(ahead)):
            return
        position = self._command_position(self.i, frame)
        if position is None:
            self._lose("after a 'case' or 'esac' next to a reference, inside '$( )'")
        elif not position:
            return  # an argument, such as "echo case"
        elif keyword and _CASE.match(ahead):
            frame.cases += 1
        elif keyword:
            self._lose("after a 'case' inside '$( )' not written 'case WORD in'")
        else:
            frame.cases -= 1

    def _command_position(self, index: int, frame: _Frame) -> bool | None:
        """Whether the word starting at ``index`` is where bash reads a keyword; None: unknown."""
        k = index - 1
        while k >= frame.start and self.items[k] in (" ", "\t"):
            k -= 1
        if k < frame.start:
            return True
        if isinstance(self.items[k], _Slot):
            return None
        if self.items[k] in _COMMAND_BREAK:
            return True
        end = k + 1
        while k >= frame.start and isinstance(self.items[k], str) and self.items[k] not in _WORD_BREAK:
            k -= 1
        if k >= frame.start and isinstance(self.items[k], _Slot):
            return None
        previous = "".join(self.items[k + 1:end])
        if previous == "in":
            return None  # "case x in esac", or "for x in esac": not told apart
        if previous in _LEADING_RESERVED:
            return self._command_position(k + 1, frame)
        return False

    def _parenthesis(self, frame: _Frame, item: str) -> None:
        if frame.kind == "cmd" and item == ")" and frame.depth == 0:
            if not frame.cases:
                self._pop()
                return
        elif frame.kind == "cmd":
            frame.depth += {"(": 1, ")": -1}.get(item, 0)
        self._emit()

    def _double(self, frame: _Frame, item: str | _Slot) -> None:
        if isinstance(item, _Slot):
            self._slot(item, frame.quoting or "double")
        elif item == "\\":
            self._escape()
        elif item == '"':
            self._pop()
        elif item == "$":
            self._dollar("double")
        elif item == "`":
            self._backquotes(in_double=True)
        else:
            self._emit()

    def _single(self, frame: _Frame, item: str | _Slot) -> None:
        if isinstance(item, _Slot):
            self._slot(item, frame.quoting or "single")
        elif item == "'":
            self._pop()
        else:
            self._emit()

    def _ansi(self, frame: _Frame, item: str | _Slot) -> None:
        if isinstance(item, _Slot):
            self._slot(item, "ansi-c")
        elif item == "\\":
            self._escape()
        elif item == "'":
            self._pop()
        else:
            self._emit()

    def _param(self, frame: _Frame, item: str | _Slot) -> None:
        if isinstance(item, _Slot):
            self._slot(item, self._param_context(frame))
        elif item == "\\":
            self._escape()
        elif item == "}" and frame.depth == 0:
            self._pop()
        elif item in "{}":
            frame.depth += 1 if item == "{" else -1
            self._emit()
        elif item == "$":
            self._dollar(frame.quoting)
        elif item == "`":
            self._backquotes(in_double=frame.quoting != "unquoted")
        elif item == "'":
            # Within "${x:-'...'}" bash pairs the quotes but keeps them: nothing is modelled there.
            self._push(_Frame("sq", quoting="" if frame.quoting == "unquoted" else "opaque"), 1)
        elif item == '"':
            arithmetic = frame.quoting == "arithmetic"
            # Within '"${x:-"..."}"' bash drops the inner quotes before it reads "$name"s.
            why = "inside double quotes within '\"${...}\"'" if frame.quoting == "double" else ""
            self._push(_Frame("dq", quoting="arithmetic" if arithmetic else "", uncertain=why), 1)
        else:
            self._emit()

    def _param_context(self, frame: _Frame) -> str:
        if frame.quoting == "arithmetic":
            return "arithmetic"
        head = "".join(item if isinstance(item, str) else "x" for item in self.items[frame.start:self.i])
        if _PARAM_ARITHMETIC.fullmatch(head):
            return "arithmetic"
        return "unquoted" if frame.quoting == "unquoted" else "param-double"

    def _arith(self, frame: _Frame, item: str | _Slot) -> None:
        opener, closer = ("(", ")") if frame.closer == "))" else ("[", "]")
        if isinstance(item, _Slot):
            self._slot(item, "arithmetic")
        elif item == "\\":
            self._escape()
        elif item == "$":
            self._dollar("arithmetic")
        elif item == "`":
            self._backquotes(in_double=True)
        elif item == opener:
            frame.depth += 1
            self._emit()
        elif item == closer and frame.depth > 0:
            frame.depth -= 1
            self._emit()
        elif item == "]" and closer == "]":
            self._pop()
        elif item == ")" and closer == ")" and self._peek(1) == ")":
            self._pop(2)
        elif item == ")" and closer == ")":
            # "$((a) b)" is a subshell inside "$( )": from here on it is a command substitution,
            # and what came before was not read as bash read it.
            self._lose("after '((' that bash reads as nested subshells")
            frame.kind, frame.depth = "cmd", 0
            self._emit()
        elif item in ("'", "\n") or (item == ";" and not frame.loop):
            # Not arithmetic: bash will read "((" as nested subshells, whose quoting differs.
            self._lose("after '((' that bash reads as nested subshells")
            self._emit()
        else:
            self._emit()

    # constructs read ahead

    def _backquotes(self, in_double: bool) -> None:
        """Bash finds the closing backquote first, removes one level of backslashes before
        ``$``, backquote, ``\\`` (and ``"`` within double quotes), then parses the rest as a
        command: render that command on its own and escape its slots back by one level."""
        end = self.i + 1
        while end < len(self.items) and self.items[end] != "`":
            end += 2 if self.items[end] == "\\" else 1
        end = min(end, len(self.items))
        raw = self.items[self.i + 1:end]
        uncertain = self._uncertainty()
        if not uncertain and self.stack[-1].kind == "param":
            uncertain = "inside backquotes within '${...}'"
        inner = _Renderer(_unescape_backquoted(raw, in_double), uncertain=uncertain, nested=True)
        inner.run()
        if inner.lost:
            self._lose(inner.lost)
        self.out.append("`")
        for item in raw:
            if isinstance(item, _Slot):
                text = _escape_backquoted(inner.rendered[item], in_double)
                self.rendered[item] = text
                item = text
            self.out.append(item)
        if end < len(self.items):
            self.out.append("`")
        self.i = end + 1
        self.word_start = False

    def _comment(self) -> None:
        while self.i < len(self.items) and self.items[self.i] != "\n":
            item = self.items[self.i]
            if isinstance(item, _Slot):
                self._slot(item, "comment")
            else:
                self._emit()

    def _heredoc_operator(self) -> None:
        self._emit(2)
        strip_tabs = self._peek(0) == "-"
        if strip_tabs:
            self._emit()
        while self._peek(0) in (" ", "\t"):
            self._emit()
        word, quoted = self._heredoc_word()
        if word:
            self.heredocs.append(_Heredoc(word, strip_tabs, quoted))
        self.word_start = False

    def _heredoc_word(self) -> tuple[str, bool]:
        word: list[str] = []
        quoted = False
        while self.i < len(self.items):
            item = self.items[self.i]
            if isinstance(item, _Slot):
                raise RenderError(f"{item.ref.text} (at {item.where} of the command) cannot be a here-document delimiter")
            if item in _WORD_BREAK:
                break
            self._emit()
            if item in "'\"":
                quoted = True
                while self.i < len(self.items) and self.items[self.i] != item:
                    inner = self.items[self.i]
                    if isinstance(inner, _Slot):
                        raise RenderError(f"{inner.ref.text} (at {inner.where} of the command) cannot be a here-document delimiter")
                    word.append(inner)
                    self._emit()
                self._emit()
            elif item == "\\":
                quoted = True
                nxt = self._peek(0)
                if isinstance(nxt, _Slot):
                    raise RenderError(f"{nxt.ref.text} (at {nxt.where} of the command) cannot be a here-document delimiter")
                if nxt is not None:
                    word.append(nxt)
                    self._emit()
            else:
                word.append(item)
        return "".join(word), quoted

    def _heredoc_bodies(self) -> None:
        pending, self.heredocs = self.heredocs, []
        for heredoc in pending:
            self._heredoc_body(heredoc)

    def _heredoc_body(self, heredoc: _Heredoc) -> None:
        while self.i < len(self.items):
            line: list[str] = []
            last_slot = None
            while self.i < len(self.items) and self.items[self.i] != "\n":
                item = self.items[self.i]
                if isinstance(item, _Slot):
                    last_slot = item
                    opened = "".join(str(x) for x in line)
                    if not heredoc.quoted and ("$(" in opened or "`" in opened) and not self._uncertainty():
                        # Bash runs a "$( )" or backquotes in the body as a command, which is
                        # not parsed here.
                        _uncertain_value(item, "inside a command substitution in a here-document")
                    if self._uncertainty():
                        if line and line[-1] in ("$", "\\"):
                            raise RenderError(f"a {line[-1]!r} right before {item.ref.text} (at "
                                              f"{item.where} of the command) would combine with "
                                              f"its value; remove it")
                        _uncertain_value(item, self._uncertainty())
                    self.rendered[item] = _heredoc_value(item, heredoc)
                    if not heredoc.quoted:
                        _check_not_after_name(item, line)
                    item = self.rendered[item]
                line.append(item)
                self.i += 1
            text = "".join(line)
            self.out.append(text)
            if self.i < len(self.items):
                self.out.append("\n")
                self.i += 1
            if (text.lstrip("\t") if heredoc.strip_tabs else text) == heredoc.delimiter:
                if last_slot is not None:
                    raise RenderError(f"the value of {last_slot.ref.text} (at {last_slot.where} of the command) would make a line equal "
                                      f"to '{heredoc.delimiter}' and end the here-document early")
                return


# -- values ------------------------------------------------------------------------------------------

def _render_value(slot: _Slot, context: str) -> str:
    value, name = slot.value, f"{slot.ref.text} (at {slot.where} of the command)"
    if "\0" in value:
        raise RenderError(f"the value of {name} contains a NUL character, which cannot be passed "
                          f"to a process")
    if context in CONTEXTS:
        return quote_for_context(value, context)
    if context == "comment":
        return shlex.quote(value).replace("\n", "\\n")
    if context == "arithmetic":
        if not _INTEGER.fullmatch(value):
            raise RenderError(f"{name} is inside an arithmetic expression, where bash evaluates "
                              f"text as code; only an integer can be substituted there, not {value!r}")
        return value
    if context == "param-double":
        if "'" in value:
            raise RenderError(f"{name} is inside '${{...}}' within double quotes, where bash cannot "
                              f"take a single quote; move the reference out of the '${{...}}'")
        return re.sub(r'([\\$`"}])', r"\\\1", value)
    if not _INERT.fullmatch(value):  # "opaque": a spot whose quoting is not modelled
        raise RenderError(f"{name} is inside quotes within '\"${{...}}\"', where only values made "
                          f"of {_INERT_HINT} can be substituted; move the reference out")
    return value


def _check_not_after_name(slot: _Slot, before: list[str | _Slot]) -> None:
    """Refuse ``$name`` right before a slot: bash would read the value's first letters as part of
    the variable's name (``$X`` and ``abc`` give ``$Xabc``)."""
    k = len(before)
    while k > 0 and before[k - 1] in ('"', "'"):
        k -= 1  # within '"${x:-"$X"..."}"' bash joins "$X" and the value across the quotes
    end = k
    while k > 0 and isinstance(before[k - 1], str) and len(before[k - 1]) == 1 and \
            (before[k - 1].isascii() and (before[k - 1].isalnum() or before[k - 1] == "_")):
        k -= 1
    name = "".join(before[k:end])  # type: ignore[arg-type]
    if not name or name[0].isdigit() or k == 0 or before[k - 1] != "$":
        return
    if k >= 2 and before[k - 2] == "\\":
        return  # "\$X" is not an expansion
    raise RenderError(f"'${name}' right before {slot.ref.text} (at {slot.where} of the command) would "
                      f"make bash read the value's first characters as part of the variable's name; "
                      f"write '${{{name}}}' instead")


def _uncertain_value(slot: _Slot, why: str) -> str:
    """A slot where the renderer is not sure how bash reads the text: only an inert value."""
    value, name = slot.value, slot.ref.text
    if not value:
        raise RenderError(f"{name} (at {slot.where} of the command) is {why}, where the quoting bash "
                          f"applies is not certain and an empty value would vanish; give it a value, "
                          f"or assign it to a shell variable first, where its quoting is certain "
                          f"(start the command with VALUE={name};) and write \"$VALUE\" here instead")
    if not _INERT.fullmatch(value):
        raise RenderError(f"{name} (at {slot.where} of the command) is {why}, where the quoting bash "
                          f"applies is not certain; only values made of {_INERT_HINT} can be "
                          f"substituted there, not {value!r}. To pass any value, assign it to a shell "
                          f"variable first, where its quoting is certain (start the command with "
                          f"VALUE={name};) and write \"$VALUE\" here instead")
    return value


def _heredoc_value(slot: _Slot, heredoc: _Heredoc) -> str:
    value, name = slot.value, f"{slot.ref.text} (at {slot.where} of the command)"
    if "\0" in value:
        raise RenderError(f"the value of {name} contains a NUL character, which cannot be passed "
                          f"to a process")
    if "\n" in value:
        raise RenderError(f"{name} is inside a here-document, which cannot take a multi-line value "
                          f"(one of its lines could end the here-document)")
    if not heredoc.quoted and not _INERT.fullmatch(value):
        raise RenderError(f"{name} is inside a here-document with an unquoted delimiter, where bash "
                          f"expands '$', backquotes and backslashes; quote the delimiter "
                          f"(<<'{heredoc.delimiter}') to pass the value as it is, or use a value "
                          f"made of {_INERT_HINT}")
    return value


def _unescape_backquoted(raw: list[str | _Slot], in_double: bool) -> list[str | _Slot]:
    special = "$`\\" + ('"' if in_double else "")
    items: list[str | _Slot] = []
    k = 0
    while k < len(raw):
        nxt = raw[k + 1] if k + 1 < len(raw) else None
        if raw[k] == "\\" and isinstance(nxt, str) and nxt in special:
            items.append(nxt)
            k += 2
        else:
            items.append(raw[k])
            k += 1
    return items


def _escape_backquoted(text: str, in_double: bool) -> str:
    # Within "...", an unescaped '"' would also end the double quotes for brace expansion, which
    # bash runs on the outer word and which does not know backquotes: "`echo '"'{a,b}`" splits.
    return re.sub(r'([\\$`"])' if in_double else r"([\\$`])", r"\\\1", text)
