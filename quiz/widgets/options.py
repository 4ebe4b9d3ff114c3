"""The answer widgets: keyed options (single, multiple, fill-blank, ordering, build-list, yes/no),
one row of options per blank (multi-blank), and a typed answer (a wrong line's number, a number).

They hold only what the learner has put together so far and report it as a response in the
engine's shape (a key, a list of keys, a list in order, a boolean, a key per blank); grading is
the engine's.

Keys: ``1``-``9`` pick the option at that position, ``a``-``h`` the option with that key (except
letters the screen reserves for itself: an exam's ``f`` flags), ``y``/``n`` a yes/no answer,
``space`` the option under the cursor (``up``/``down`` move it), ``backspace`` undoes the last
pick of an ordering or build-list. In a multi-blank answer a pick fills the blank the cursor
(``▸``) is on, and the cursor moves on to the next blank (it stays on the last); ``up``/``down``
move it, without wrapping round. A click picks too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from textual import events
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input

from ..bank import Question
from ..qtypes import type_of
from .text import Hanging, inline

ORDERED = ("ordering", "build_list")
YES_NO = {"y": "Yes", "n": "No"}
NUMBER_KEYS = "0123456789.-+eE"
NUMBER_CHARACTERS = r"[0-9.eE+-]*"


class OptionRow(Hanging):
    """One option: its mark (chosen or not, or its place in an ordering), its key, its text."""

    DEFAULT_CSS = """
    OptionRow {
        padding: 0 1;
    }
    """

    def __init__(self, index: int, key: str, text: str) -> None:
        super().__init__("", inline(text), classes="option")
        self.index = index
        self.key = key
        self.text = text

    def show(self, mark: str, chosen: bool, digit: bool) -> None:
        self.set_class(chosen, "-chosen")
        label = f"{self.index + 1} {self.key})" if digit else f"{self.key})"
        self.set(Content.assemble((f"{mark} ", "bold"), (label, "bold")))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        parent = self.parent
        if isinstance(parent, OptionsAnswer):
            parent.focus()
            parent.choose(self.key)


class OptionsAnswer(Vertical, can_focus=True):
    """Options chosen by key: one (single, fill_blank, yes/no), a set (multiple) or a sequence
    (ordering, build_list)."""

    DEFAULT_CSS = """
    OptionsAnswer {
        height: auto;
        width: 1fr;
    }
    """

    class Changed(Message):
        """The learner's response changed (None: nothing, or an incomplete ordering)."""

        def __init__(self, answer: OptionsAnswer, response: Any) -> None:
            super().__init__()
            self.answer = answer
            self.response = response

    def __init__(self, question: Question, response: Any = None, *,
                 reserved: Collection[str] = (), on_change: Callable[[Any], None] | None = None,
                 leaving_keys: Collection[str] = (), id: str | None = None) -> None:
        super().__init__(id=id)
        # Keys that take the screen to another question (an exam's arrows and Enter): after one,
        # keys still queued for this widget are dropped until the screen says it stayed
        # (``leaving = False``), so a burst of keys never lands on the question being left.
        self.leaving_keys = frozenset(leaving_keys)
        self.leaving = False
        # Called at once with each new response, in the key's own handling: an exam records the
        # answer before any later key (a move to the next question) is handled.
        self.on_change = on_change
        kind = question.type
        if not type_of(question).keyed and kind != "yes_no":
            raise ValueError(f"{kind} questions have no options")
        self.kind = kind
        self.options = dict(YES_NO if kind == "yes_no" else question.options)
        self.keys = list(self.options)
        # How many picks make an answer (a multiple choice's "Choose three", a list's length).
        wanted = getattr(type_of(question), "wanted", None)
        self.wanted = wanted(question) if wanted else 1
        self.reserved = frozenset(reserved) - ({"y", "n"} if kind == "yes_no" else set())
        self.cursor = 0
        self.chosen: list[str] = []
        if isinstance(response, bool) and kind == "yes_no":
            self.chosen = ["y" if response else "n"]
        elif isinstance(response, str):
            self.chosen = [response] if response in self.options else []
        elif isinstance(response, list):
            self.chosen = [str(k) for k in response if str(k) in self.options]

    def compose(self):
        for index, key in enumerate(self.keys):
            yield OptionRow(index, key, self.options[key])

    def on_mount(self) -> None:
        self._show()

    @property
    def response(self) -> Any:
        if self.kind in ("single", "fill_blank"):
            return self.chosen[0] if self.chosen else None
        if self.kind == "yes_no":
            return (self.chosen[0] == "y") if self.chosen else None
        if self.kind == "multiple":
            return [k for k in self.keys if k in self.chosen] or None
        return list(self.chosen) if len(self.chosen) == self.wanted else None

    @property
    def letters_shown(self) -> bool:
        """Whether every option's letter picks it (else the digits are shown as well)."""
        return not any(k in self.reserved for k in self.keys)

    def choose(self, key: str) -> None:
        if key not in self.options:
            return
        self.cursor = self.keys.index(key)
        if self.kind in ("single", "fill_blank", "yes_no"):
            self.chosen = [key]
        elif key in self.chosen:
            if self.kind in ORDERED:
                return  # placed already: backspace takes back the last one
            self.chosen.remove(key)
        elif self.kind in ORDERED and len(self.chosen) >= self.wanted:
            return  # the list is full
        else:
            self.chosen.append(key)
        self._changed()

    def undo(self) -> None:
        if self.chosen:
            self.chosen.pop()
            self._changed()

    def _changed(self) -> None:
        self._show()
        if self.on_change is not None:
            self.on_change(self.response)
        self.post_message(self.Changed(self, self.response))

    def _mark(self, key: str) -> str:
        if self.kind in ("single", "fill_blank", "yes_no"):
            return "◉" if key in self.chosen else "○"
        if self.kind == "multiple":
            return "☒" if key in self.chosen else "☐"
        return str(self.chosen.index(key) + 1) if key in self.chosen else "·"

    def _show(self) -> None:
        digit = not self.letters_shown
        for row in self.query(OptionRow):
            row.show(self._mark(row.key), row.key in self.chosen, digit)
            row.set_class(row.index == self.cursor, "-cursor")

    def on_key(self, event: events.Key) -> None:
        key = event.key
        if key in self.leaving_keys:
            self.leaving = True
            return
        if self.leaving:
            event.stop()
            event.prevent_default()
            return
        if key.isdigit() and 1 <= int(key) <= len(self.keys):
            self.choose(self.keys[int(key) - 1])
        elif key in self.options and key not in self.reserved:
            self.choose(key)
        elif key == "space":
            self.choose(self.keys[self.cursor])
        elif key == "backspace" and self.kind in ORDERED:
            self.undo()
        elif key in ("up", "down"):
            self.cursor = (self.cursor + (1 if key == "down" else -1)) % len(self.keys)
            self._show()
            rows = list(self.query(OptionRow))
            rows[self.cursor].scroll_visible()
        else:
            return
        event.stop()
        event.prevent_default()


class BlankRow(Hanging):
    """One blank of a multi-blank answer: its label, the option chosen, the options."""

    DEFAULT_CSS = """
    BlankRow {
        padding: 0 1;
    }
    """

    def __init__(self, index: int, label: str, options: dict[str, str]) -> None:
        super().__init__("", Content(""), classes="option")
        self.index = index
        self.label = label
        self.options = options

    def show(self, chosen: str | None, digit: bool, current: bool = False) -> None:
        self.set_class(chosen is not None, "-chosen")
        self.set_class(current, "-cursor")
        parts: list[Content] = []
        for number, (key, text) in enumerate(self.options.items(), 1):
            label = f"{number} {key})" if digit else f"{key})"
            style = "bold reverse" if key == chosen else "bold"
            parts.append(Content.assemble((label, style), " ", inline(text)))
        # The cursor is a mark, not only a colour: it shows on any terminal, and to a screen reader.
        self.set(Content.assemble(("▸ " if current else "  ", "bold $text-accent"),
                                  (f"{'◉' if chosen else '○'} ", "bold"), (f"[{self.label}]", "bold")),
                 Content("   ").join(parts))


class BlankAnswer(Vertical, can_focus=True):
    """A multi-blank answer: each blank's option, one row per blank."""

    DEFAULT_CSS = """
    BlankAnswer {
        height: auto;
        width: 1fr;
    }
    """

    def __init__(self, question: Question, response: Any = None, *, reserved: Collection[str] = (),
                 on_change: Callable[[Any], None] | None = None, leaving_keys: Collection[str] = (),
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.leaving_keys = frozenset(leaving_keys)
        self.leaving = False
        self.on_change = on_change
        self.blanks = question.blanks
        self.reserved = frozenset(reserved)
        self.cursor = 0
        given = response if isinstance(response, list) else []
        self.chosen: list[str | None] = [given[i] if i < len(given) else None for i in range(len(self.blanks))]

    def compose(self):
        for index, blank in enumerate(self.blanks):
            yield BlankRow(index, blank.label, blank.options)

    def on_mount(self) -> None:
        self._show()

    @property
    def response(self) -> Any:
        return list(self.chosen) if any(self.chosen) else None

    @property
    def digits(self) -> bool:
        return any(k in self.reserved for blank in self.blanks for k in blank.options)

    def choose(self, key: str) -> None:
        blank = self.blanks[self.cursor]
        if key not in blank.options:
            return
        self.chosen[self.cursor] = key
        if self.cursor < len(self.blanks) - 1:
            self.cursor += 1  # on to the next blank: "b a c" fills three blanks in order
        self._changed()

    def _changed(self) -> None:
        self._show()
        if self.on_change is not None:
            self.on_change(self.response)

    def _show(self) -> None:
        for row in self.query(BlankRow):
            row.show(self.chosen[row.index], self.digits, row.index == self.cursor)

    def on_key(self, event: events.Key) -> None:
        key = event.key
        if key in self.leaving_keys:
            self.leaving = True
            return
        if self.leaving:
            event.stop()
            event.prevent_default()
            return
        options = list(self.blanks[self.cursor].options)
        if key.isdigit() and 1 <= int(key) <= len(options):
            self.choose(options[int(key) - 1])
        elif key in options and key not in self.reserved:
            self.choose(key)
        elif key in ("up", "down"):
            # No wrapping round: after the last blank, down stays there rather than jumping back
            # to the first, where the next pick would overwrite an answer out of sight.
            self.cursor = max(0, min(len(self.blanks) - 1, self.cursor + (1 if key == "down" else -1)))
            self._show()
        else:
            return
        event.stop()
        event.prevent_default()


class TypedAnswer(Input):
    """A typed answer: a wrong line's number, or a number."""

    DEFAULT_CSS = """
    TypedAnswer {
        width: 30;
    }
    """

    def __init__(self, kind: str, response: Any = None, *, blink: bool = True,
                 on_change: Callable[[str], None] | None = None, leaving_keys: Collection[str] = (),
                 id: str | None = None) -> None:
        placeholder = "the wrong line's number" if kind == "wrong_line" else "a number"
        value = "" if response is None else _number_text(response)
        # Not selected on focus: a learner back at an answer edits it (Backspace takes one
        # character, a digit is added at the end) instead of replacing all of it unawares.
        super().__init__(value=value, placeholder=placeholder, restrict=NUMBER_CHARACTERS, select_on_focus=False,
                         id=id)
        self.kind = kind
        self.cursor_blink = blink
        self.on_change = on_change
        self.leaving_keys = frozenset(leaving_keys)  # as OptionsAnswer's
        self.leaving = False

    def watch_value(self, value: str) -> None:
        on_change = getattr(self, "on_change", None)  # None while Input's __init__ sets the value
        if on_change is not None:
            on_change(value)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A number is short: left and right stay the screen's (an exam moves between questions).
        if action in ("cursor_left", "cursor_right"):
            return False
        return super().check_action(action, parameters)

    def _on_key(self, event: events.Key) -> None:
        if event.key in self.leaving_keys:
            self.leaving = True
        elif self.leaving:
            event.stop()
            event.prevent_default()
        elif event.is_printable and (event.character or "") not in NUMBER_KEYS:
            # Not part of a number: Input does not type it, and it bubbles on to the screen's
            # and the app's keys (an exam's f and r, ? for help).
            event.prevent_default()

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """Only what a number is made of: other keys (an exam's f and r, ?) stay the screen's."""
        return character is not None and character in NUMBER_KEYS


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
