"""Errors a user can cause outside any one file. Problems inside a spec are never exceptions:
they are :class:`~validator.diagnostic.Diagnostic` values.

    AmllabError
    ├── ConfigError   invalid [tool.amllab.lint] table or --config file (exit 2)
    └── UsageError    a path that does not exist, an unknown rule code on the command line (exit 2)
"""

from __future__ import annotations


class AmllabError(Exception):
    """Base of amllab's own errors; ``str()`` is the one line shown to the user."""


class ConfigError(AmllabError):
    pass


class UsageError(AmllabError):
    pass
