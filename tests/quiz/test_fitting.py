"""FSRS fitted to the learner's own answers (fsrs's Optimizer, in torch) and the desired
retention: kept in the progress store, used by every scheduler the trainer makes from then on."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from quiz.bank import load_bank
from quiz.engine import scheduler_for
from quiz.fitting import MIN_REVIEWS, FitError, fit, set_retention, spaced_reviews
from quiz.store import Progress
from quiz_app_support import BANK_DIR

ROOT = Path(__file__).resolve().parents[2]
DEFAULTS = (0.212, 1.2931, 2.3065, 8.2956)


def history(progress: Progress, days: int, per_day: int, seed: int = 1) -> None:
    """A learner's answers: ``per_day`` questions a day, getting better with time."""
    bank = load_bank()
    rng = random.Random(seed)
    questions = list(bank)[:120]
    now = 1_800_000_000.0
    session = progress.start_session("practice", [], now=now)
    for day in range(days):
        for question in rng.sample(questions, per_day):
            progress.record(session, question.id, "a", rng.random() < 0.5 + day / 150, rng.uniform(5, 60),
                            "practice", now=now)
        now += 86400


def test_too_few_spaced_answers_say_how_many_more(tmp_path: Path) -> None:
    progress = Progress(tmp_path)
    history(progress, 3, 40)
    with pytest.raises(FitError, match=f"at least {MIN_REVIEWS} answers given a day or more after"):
        fit(progress, load_bank())
    assert progress.scheduler_settings() == {}


def test_fitted_parameters_are_kept_and_used(tmp_path: Path) -> None:
    progress = Progress(tmp_path)
    history(progress, 75, 11)
    fitted = fit(progress, load_bank())
    assert fitted.reviews == 75 * 11 and fitted.cards <= 120
    assert len(fitted.parameters) == 21 and fitted.parameters[:4] != DEFAULTS
    set_retention(progress, 0.85)
    scheduler = scheduler_for(Progress(tmp_path))  # what every session and exam schedules with
    assert tuple(scheduler.parameters) == fitted.parameters and scheduler.desired_retention == 0.85


def test_spaced_reviews_count_as_the_optimiser_does() -> None:
    from datetime import datetime, timedelta

    from fsrs import Rating, ReviewLog

    start = datetime(2027, 1, 1)
    logs = [ReviewLog(1, Rating.Good, start + timedelta(hours=h), None) for h in (0, 2, 30, 31, 80)]
    # The first sets the state; 2 h later is the same day; 30 h and 80 h are a day or more after
    # the one before; 31 h is an hour after 30 h.
    assert spaced_reviews(logs) == 2


def test_the_retention_is_a_share_fsrs_can_aim_for(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "quiz", "--retention", "0.99", "--data-dir", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 2 and "between 0.7 and 0.97" in result.stderr
    result = subprocess.run([sys.executable, "-m", "quiz", "--retention", "0.8", "--data-dir", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0 and "desired retention 80%" in result.stdout


def test_imported_cards_join_every_mode_and_keep_their_own_sources(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yml"
    mine.write_text((BANK_DIR / "bank.yml").read_text().replace("id: ", "id: mine-"))
    data = tmp_path / "data"
    result = subprocess.run([sys.executable, "-m", "quiz", "--import", str(mine), "--data-dir", str(data)],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "imported 20 cards" in result.stdout and (data / "cards" / "mine.yml").is_file()
    from quiz.bank import load_with_cards

    bank = load_with_cards(data)
    assert len(bank) == len(load_bank()) + 20
    clash = tmp_path / "clash.yml"
    clash.write_text("domain: sweep\nquestions:\n  - id: mine-sweep-grid-size\n    type: numeric\n"
                     "    source: my notes\n    prompt: How many?\n    answer: 3\n    explanation: Three.\n")
    refused = subprocess.run([sys.executable, "-m", "quiz", "--import", str(clash), "--data-dir", str(data)],
                             capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert refused.returncode == 2 and "the id is already used at" in refused.stderr
    assert not (data / "cards" / "clash.yml").exists()
