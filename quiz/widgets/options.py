"""The answer widgets: keyed options (single, multiple, fill-blank, ordering) and a typed answer
(a wrong line's number, a number).

They hold only what the learner has put together so far and report it as a response in the
engine's shape (a key, a list of keys, a list in order); grading is the engine's.

Keys: ``1``-``9`` pick the option at that position, ``a``-``f`` the option with that key (except
letters the screen reserves for itself: an exam's ``f`` flags), ``space`` the option under the
cursor (``up``/``down`` move it), ``backspace`` undoes the last pick of an ordering. A click
picks too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from textual import events
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input

from .text import Hanging, inline

KEYED_TYPES = ("single", "multiple", "fill_blank", "ordering")
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
    """Options chosen by key: one (single, fill_blank), a set (multiple) or an order (ordering)."""

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

    def __init__(self, kind: str, options: dict[str, str], response: Any = None, *,
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
        if kind not in KEYED_TYPES:
            raise ValueError(f"{kind} questions have no options")
        self.kind = kind
        self.options = dict(options)
        self.keys = list(options)
        self.reserved = frozenset(reserved)
        self.cursor = 0
        self.chosen: list[str] = []
        if isinstance(response, str):
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
        if self.kind == "multiple":
            return [k for k in self.keys if k in self.chosen] or None
        return list(self.chosen) if len(self.chosen) == len(self.keys) else None

    @property
    def letters_shown(self) -> bool:
        """Whether every option's letter picks it (else the digits are shown as well)."""
        return not any(k in self.reserved for k in self.keys)

    def choose(self, key: str) -> None:
        if key not in self.options:
            return
        self.cursor = self.keys.index(key)
        if self.kind in ("single", "fill_blank"):
            self.chosen = [key]
        elif key in self.chosen:
            self.chosen.remove(key)
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
        if self.kind in ("single", "fill_blank"):
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
        elif key == "backspace" and self.kind == "ordering":
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
        super().__init__(value=value, placeholder=placeholder, restrict=NUMBER_CHARACTERS, id=id)
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
