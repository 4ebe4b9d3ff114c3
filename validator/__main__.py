"""`python -m validator` is `aml-lint`."""

from .cli import run

run()
