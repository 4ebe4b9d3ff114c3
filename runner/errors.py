"""The runner's errors. Each ``str()`` is one line a user can act on: what is wrong, where, and
the command that fixes it. The CLI prints it and exits 2 (usage) or 1 (the job failed).

    AmllabError (validator.errors)
    └── RunnerError          anything the runner refuses before a job starts
        ├── NotFound         an unknown job, asset, environment or compute
        └── InputError       an input that cannot be materialised (missing file, offline URL)
    SpecError (validator.spec) a spec that lint refuses; rendered with file:line:col excerpts
"""

from __future__ import annotations

from validator.errors import AmllabError


class RunnerError(AmllabError):
    pass


class NotFound(RunnerError):
    pass


class InputError(RunnerError):
    pass
