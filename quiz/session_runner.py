"""Build the trainer from the command line and hand it to the app or to the plain prompts."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from .errors import QuizError
from .store import DamagedProgressError, Progress


def build_trainer(args: argparse.Namespace, agree_to_reset: Callable[[DamagedProgressError], bool] | None = None):
    """The trainer over the bank and the progress folder. A damaged progress file is set aside
    with ``--reset-damaged-progress``, or when ``agree_to_reset`` (the user, asked) says yes;
    otherwise its :class:`DamagedProgressError` goes up, the file untouched."""
    from .bank import load_bank, load_with_cards
    from .engine import Trainer
    from .store import default_data_dir

    bank = load_bank(args.bank) if args.bank else load_with_cards(args.data_dir or default_data_dir())
    if not len(bank):
        raise QuizError("the bank holds no questions")
    reset = bool(getattr(args, "reset_damaged_progress", False))
    try:
        progress = Progress(args.data_dir, reset_damaged=reset)
    except DamagedProgressError as error:
        if error.in_use or agree_to_reset is None or not agree_to_reset(error):
            raise
        progress = Progress(args.data_dir, reset_damaged=True)
    return Trainer(bank, progress)


def _ask_in_the_app(error: DamagedProgressError) -> bool:
    from .app import DamagedProgressApp

    return DamagedProgressApp(error).run() is True


def start(args: argparse.Namespace) -> int:
    if args.mode == "drill" and not args.domain:
        from .bank import DOMAINS

        raise QuizError(f"drill mode needs --domain (one of {', '.join(DOMAINS)})")
    if args.domain:
        from .bank import DOMAINS

        if args.domain not in DOMAINS:
            raise QuizError(f"unknown domain '{args.domain}' (one of {', '.join(DOMAINS)})")
    if args.plain:
        from .plain import ask_to_reset, run

        trainer = build_trainer(args, ask_to_reset)
        moved = trainer.progress.set_aside
        if moved is not None:
            print(f"The damaged progress file is now {moved}; starting with fresh progress.", flush=True)
        return run(trainer, mode=args.mode, domain=args.domain, count=args.count)
    trainer = build_trainer(args, _ask_in_the_app)
    from .app import QuizApp

    app = QuizApp(trainer, mode=args.mode, domain=args.domain, count=args.count)
    app.run()
    # Non-zero when the app ended on an error (its one line is printed by then).
    return app.return_code or 0
