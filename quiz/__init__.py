"""amllab's exam trainer: a question bank the toolkit proves, an engine and a Textual app.

The public API is what ``__all__`` lists. Importing ``quiz`` loads no Textual: the engine and
the checks are usable (and tested) without a terminal.
"""

from __future__ import annotations

_EXPORTS = {
    "Bank": "bank", "Question": "bank", "load_bank": "bank", "DOMAINS": "bank",
    "run_checks": "checks", "CheckResult": "checks",
    "QuizError": "errors", "BankError": "errors",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'quiz' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = sorted(_EXPORTS)
