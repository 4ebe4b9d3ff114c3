"""Build the trainer from the command line and hand it to the app or to the plain prompts."""

from __future__ import annotations

import argparse

from .errors import QuizError


def build_trainer(args: argparse.Namespace):
    from .bank import load_bank
    from .engine import Trainer
    from .store import Progress

    bank = load_bank(args.bank)
    if not len(bank):
        raise QuizError("the bank holds no questions")
    return Trainer(bank, Progress(args.data_dir))


def start(args: argparse.Namespace) -> int:
    if args.mode == "drill" and not args.domain:
        from .bank import DOMAINS

        raise QuizError(f"drill mode needs --domain (one of {', '.join(DOMAINS)})")
    if args.domain:
        from .bank import DOMAINS

        if args.domain not in DOMAINS:
            raise QuizError(f"unknown domain '{args.domain}' (one of {', '.join(DOMAINS)})")
    trainer = build_trainer(args)
    if args.plain:
        from .plain import run

        return run(trainer, mode=args.mode, domain=args.domain, count=args.count)
    from .app import QuizApp

    QuizApp(trainer, mode=args.mode, domain=args.domain, count=args.count).run()
    return 0
