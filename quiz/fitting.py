"""FSRS fitted to the learner: the scheduler's parameters optimised on their own review log, and
the retention they want to keep.

FSRS schedules with 21 parameters; its defaults fit an average learner of the FSRS team's data.
The ``fsrs`` package's :class:`fsrs.Optimizer` fits them to one learner's reviews, by gradient
descent in torch, once there is at least one mini-batch of reviews that teach it something (512
answers given a day or more after the same question's previous answer; below that it hands back
the defaults, so amllab says how many more are needed instead). Each answer in the progress store
is one review, rated as it was when given (:func:`quiz.engine.rating_for`); answers to questions
no longer in the bank are left out.

``desired_retention`` (FSRS's default 0.9) is the recall the schedule aims for: higher shows cards
sooner and more often, lower spaces them out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .bank import Bank
from .errors import QuizError
from .store import Progress

MIN_REVIEWS = 512
RETENTION_RANGE = (0.7, 0.97)


class FitError(QuizError):
    """The parameters cannot be fitted (too few reviews, the optimiser's libraries missing)."""


@dataclass(frozen=True)
class Fit:
    parameters: tuple[float, ...]
    reviews: int
    cards: int


def review_logs(progress: Progress, bank: Bank) -> tuple[list[Any], int]:
    """Every answer to a question of ``bank`` as an FSRS review log, oldest first, and how many
    questions (cards) they cover."""
    from fsrs import Rating, ReviewLog

    from .engine import rating_for

    by_id = bank.by_id()
    card_ids: dict[str, int] = {}
    logs = []
    for question_id, correct, seconds, at in progress.review_log():
        question = by_id.get(question_id)
        if question is None:
            continue
        card_id = card_ids.setdefault(question_id, len(card_ids) + 1)
        logs.append(ReviewLog(card_id=card_id, rating=Rating[rating_for(question, correct, seconds)],
                              review_datetime=datetime.fromtimestamp(at, tz=timezone.utc),
                              review_duration=int(seconds * 1000)))
    return logs, len(card_ids)


def spaced_reviews(logs: list[Any]) -> int:
    """The reviews the optimiser learns from: each a day or more after the same card's previous
    one (the first answer to a question, and a second on the same day, only set its state)."""
    last: dict[int, datetime] = {}
    count = 0
    for log in logs:
        previous = last.get(log.card_id)
        if previous is not None and (log.review_datetime - previous).days > 0:
            count += 1
        last[log.card_id] = log.review_datetime
    return count


def fit(progress: Progress, bank: Bank) -> Fit:
    """Fit FSRS's parameters to the learner's reviews and keep them in the progress store (the
    desired retention stays as set)."""
    logs, cards = review_logs(progress, bank)
    spaced = spaced_reviews(logs)
    if spaced < MIN_REVIEWS:
        raise FitError(f"fitting FSRS to your reviews needs at least {MIN_REVIEWS} answers given a day or more "
                       f"after your previous answer to the same question; you have {spaced} "
                       f"({MIN_REVIEWS - spaced} to go); until then the scheduler uses FSRS's default parameters")
    try:
        from fsrs import Optimizer

        optimizer = Optimizer(logs)
        parameters = tuple(float(p) for p in optimizer.compute_optimal_parameters())
    except ImportError as missing:
        raise FitError(f"fitting needs torch and pandas, which aml-quiz alone does not install ({missing}); "
                       "install amllab with the runner: pip install 'amllab[quiz,run]'") from None
    settings = progress.scheduler_settings()
    settings.update({"parameters": list(parameters), "fitted_on": len(logs), "fitted_at": time.time()})
    progress.save_scheduler_settings(settings)
    return Fit(parameters, len(logs), cards)


def set_retention(progress: Progress, retention: float) -> None:
    low, high = RETENTION_RANGE
    if not low <= retention <= high:
        raise FitError(f"the desired retention is a share between {low} and {high} (FSRS's default is 0.9), "
                       f"not {retention}")
    settings = progress.scheduler_settings()
    settings["desired_retention"] = retention
    progress.save_scheduler_settings(settings)


def describe(progress: Progress) -> str:
    """The scheduler's settings in a sentence."""
    settings = progress.scheduler_settings()
    retention = settings.get("desired_retention", 0.9)
    if settings.get("parameters"):
        when = datetime.fromtimestamp(settings.get("fitted_at", 0)).strftime("%Y-%m-%d")
        fitted = f"fitted to your {settings.get('fitted_on', 0)} reviews on {when}"
    else:
        fitted = f"FSRS's defaults (aml-quiz --fit fits them to you from {MIN_REVIEWS} answers on)"
    return f"Scheduler: parameters {fitted}; desired retention {retention:.0%}"
