"""Explicit laptop-scale overrides for the jobs a notebook or script submits, each one printed
where it changes a job (never a silent change):

    --set-sweep limits.max_total_trials=4    every sweep (a sweep job, a pipeline's sweep step):
                                             the dotted key of its YAML set to the value
    --set-input epochs=1                     every literal input of that name: a job's own, a
                                             pipeline's, and its steps' (a binding is left alone)

Applied to the CLI YAML a submission became, after its translation is checked against what the
SDK would send, so the check proves the translation and the override is the one change. The
value is read as YAML (``4`` is a number, ``true`` a boolean, ``'4'`` a string). Standard
library and PyYAML only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from validator.errors import UsageError

SCOPES = ("sweep", "input")
_UNSET = object()


@dataclass(frozen=True)
class Override:
    scope: str
    key: str
    text: str

    @property
    def value(self) -> Any:
        return yaml.safe_load(self.text)

    @property
    def flag(self) -> str:
        return f"--set-{self.scope} {self.key}={self.text}"

    def as_json(self) -> dict[str, str]:
        return {"scope": self.scope, "key": self.key, "text": self.text}


def parse(scope: str, given: str) -> Override:
    """``KEY=VALUE`` for ``--set-<scope>``; a malformed one is one usage error."""
    key, equals, text = given.partition("=")
    key = key.strip()
    if not equals or not key or any(not part for part in key.split(".")):
        raise UsageError(f"--set-{scope} {given!r}: write KEY=VALUE (e.g. --set-{scope} "
                         f"{'limits.max_total_trials=4' if scope == 'sweep' else 'epochs=1'})")
    if scope == "input" and "." in key:
        raise UsageError(f"--set-input {given!r}: name one input (epochs=1), not a path")
    try:
        yaml.safe_load(text)
    except yaml.YAMLError:
        raise UsageError(f"--set-{scope} {given!r}: the value is not YAML; quote it") from None
    return Override(scope, key, text)


def from_json(items: list[dict[str, str]]) -> list[Override]:
    return [Override(item["scope"], item["key"], item["text"]) for item in items
            if isinstance(item, dict) and item.get("scope") in SCOPES]


def apply(data: dict[str, Any], overrides: list[Override]) -> list[str]:
    """Apply ``overrides`` to a job's YAML (``data``, changed in place); one line per change,
    ``where: key old -> new (flag)``."""
    changes: list[str] = []
    kind = data.get("type")
    for override in overrides:
        if override.scope == "sweep":
            if kind == "sweep":
                changes += _set(data, override, "")
            for step, node in _steps(data):
                if node.get("type") == "sweep":
                    changes += _set(node, override, f"step {step}: ")
        else:
            changes += _input(data, override, "")
            for step, node in _steps(data):
                changes += _input(node, override, f"step {step}: ")
    return changes


def _steps(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    jobs = data.get("jobs")
    if not isinstance(jobs, dict):
        return []
    return [(name, node) for name, node in jobs.items() if isinstance(node, dict)]


def _set(target: dict[str, Any], override: Override, where: str) -> list[str]:
    *parents, last = override.key.split(".")
    node = target
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    old = node.get(last, _UNSET)
    new = override.value
    if old == new and type(old) is type(new):
        return []
    node[last] = new
    shown = "unset" if old is _UNSET else repr(old)
    return [f"{where}{override.key} {shown} -> {new!r} ({override.flag})"]


def _input(target: dict[str, Any], override: Override, where: str) -> list[str]:
    inputs = target.get("inputs")
    if not isinstance(inputs, dict) or override.key not in inputs:
        return []
    old = inputs[override.key]
    if isinstance(old, dict) or (isinstance(old, str) and "${{" in old):
        return []  # data, or a binding: not a literal this override replaces
    new = override.value
    if old == new and type(old) is type(new):
        return []
    inputs[override.key] = new
    return [f"{where}inputs.{override.key} {old!r} -> {new!r} ({override.flag})"]
