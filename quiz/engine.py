"""Every decision the quiz makes, with no Textual import: the app's screens only show a
session's state and forward keys to it, and ``--plain`` drives the same sessions with prompts.

Modes:

    practice  questions you have not met first; feedback and explanation after each answer
    drill     practice in one domain
    missed    the questions whose latest answer was wrong
    review    the cards FSRS says are due, oldest due first
    custom    a test you compose: flagged, missed, or by domain and type; practised or timed
    exam      N questions drawn across domains in the exam's weights, a timer, flags, a review
              list, answers changeable until submit; scored 1–1000, 700 to pass. Like the real
              exam it may hold sections the learner cannot come back to once left: a yes/no
              series (each solution answered once, never revisited) and a case study.

Every presentation shuffles the options (:class:`quiz.qtypes.Presentation`): the learner's keys
are the shown ones; grading, the store and the cards use the bank's. A yes/no series' solutions
are shuffled too (:func:`present_series`). An exam keeps its order with its state, so a resumed
exam shows what it showed before.

Every answer is committed to :class:`quiz.store.Progress` as it is given (an exam's live state on
every change), so a crash or a closed terminal loses nothing.

Spaced repetition: each question is an FSRS card (the ``fsrs`` package). An answer's rating comes
from its correctness and its time against the time the question needs to be read: wrong is
Again; right in under half of it is Easy, in up to twice it Good, slower Hard. The scheduler's
parameters are FSRS's defaults until the learner fits their own (:mod:`quiz.fitting`).
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any

from .bank import DOMAINS, Bank, Question
from .qtypes import Presentation, type_of
from .store import Progress

Clock = Callable[[], float]

PASS_SCORE = 700
MAX_SCORE = 1000
EXAM_QUESTIONS = 40
# The exam allows about two minutes a question (100 minutes for ~50 questions).
SECONDS_PER_EXAM_QUESTION = 120
PRACTICE_QUESTIONS = 10
READING_CHARS_PER_SECOND = 20
# Readiness is the recall FSRS expects this far ahead: right after an answer every card's
# retrievability is 1.0, wrong or not, which says nothing about the exam.
READINESS_HORIZON = timedelta(days=7)
# An exam this long holds a case study and yes/no series when the bank has them.
SECTIONS_FROM = 15
MAX_SERIES_PER_EXAM = 2
# A crashed exam's clock is paused at its last save; a running exam saves this often.
CHECKPOINT_SECONDS = 15.0


class LockedError(Exception):
    """The question is in a section the exam has left (or a yes/no answer already given)."""


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# ----------------------------------------------------------------------------- ratings


def expected_seconds(question: Question) -> float:
    """How long reading and answering the question reasonably takes."""
    text = len(question.prompt) + sum(len(v) for v in question.options.values())
    text += sum(len(v) for blank in question.blanks for v in blank.options.values())
    return 8.0 + text / READING_CHARS_PER_SECOND


def rating_for(question: Question, correct: bool, seconds: float) -> str:
    """The FSRS rating an answer earns: Again, Hard, Good or Easy."""
    if not correct:
        return "Again"
    expected = expected_seconds(question)
    if seconds <= expected / 2:
        return "Easy"
    if seconds <= expected * 2:
        return "Good"
    return "Hard"


def scheduler_for(progress: Progress | None = None) -> Any:
    """An FSRS scheduler with the learner's settings (fitted parameters, desired retention)."""
    from fsrs import Scheduler

    settings = progress.scheduler_settings() if progress is not None else {}
    options: dict[str, Any] = {}
    if settings.get("parameters"):
        options["parameters"] = tuple(settings["parameters"])
    if settings.get("desired_retention"):
        options["desired_retention"] = float(settings["desired_retention"])
    # Fuzz spreads due dates randomly; off, so a schedule can be reasoned about and tested.
    # No (re)learning steps: those bring a card back within minutes, which suits flashcards,
    # not exam questions whose answer is still on the screen; every card is due in days.
    return Scheduler(enable_fuzzing=False, learning_steps=(), relearning_steps=(), **options)


def _utc(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc)


# ----------------------------------------------------------------------------- feedback


@dataclass(frozen=True)
class Feedback:
    """An answer, graded. ``question`` and ``response`` are as the learner saw them (shown keys)."""

    question: Question
    response: Any
    correct: bool
    seconds: float
    rating: str
    # (key, option text, why it is wrong) for each wrong option the response picked.
    chosen_wrong: tuple[tuple[str, str, str], ...] = ()
    # The distractor memory: what the learner picked wrong the time before this one, if anything.
    previous_wrong: Any = None
    # Parts right out of parts (a multi-blank question's blanks).
    parts: tuple[int, int] = (1, 1)

    @property
    def contrast(self) -> str | None:
        """'You chose truncation selection; ...' — the wrong choice set against the answer."""
        if self.correct or not self.chosen_wrong:
            return None
        key, text, why = self.chosen_wrong[0]
        # Option texts may end in a full stop themselves; one is enough.
        chose = f"You chose {key}) {text.rstrip('.')}. {why}"
        if self.question.type in ("multiple", "build_list"):
            return chose  # the options above mark every right one: no third copy of their texts
        return f"{chose} The answer is {self.question.answer_text().rstrip('.')}."

    @property
    def previous_contrast(self) -> str | None:
        if self.previous_wrong is None:
            return None
        return f"Last time you answered {self.question.describe(self.previous_wrong)}."

    @property
    def partly(self) -> str | None:
        right, total = self.parts
        return f"{right} of {total} blanks right" if total > 1 and not self.correct else None


def chosen_wrong(question: Question, response: Any) -> tuple[tuple[str, str, str], ...]:
    """The wrong options a response picked, with why each is wrong (keyed types)."""
    if not type_of(question).keyed or question.type == "ordering" or response is None:
        return ()
    keys = [str(k) for k in response] if isinstance(response, list) else [str(response)]
    right = question.correct_keys
    return tuple((k, question.options.get(k, "?"), question.wrong.get(k, "")) for k in keys if k not in right)


# ----------------------------------------------------------------------------- sessions


def presentations_for(questions: Sequence[Question], rng: random.Random | None) -> list[Presentation]:
    return [Presentation.shuffled(q, rng) if rng is not None else Presentation.natural(q) for q in questions]


def _series_runs(questions: Sequence[Question]) -> list[tuple[int, int]]:
    """(start, end) of each run of one yes/no series' solutions, side by side."""
    runs: list[tuple[int, int]] = []
    start = 0
    for index in range(1, len(questions) + 1):
        group = questions[start].group
        if index < len(questions) and group is not None and questions[index].group is not None \
                and questions[index].group.id == group.id:
            continue
        if group is not None and group.kind == "series":
            runs.append((start, index))
        start = index
    return runs


def present_series(presentations: Sequence[Presentation], rng: random.Random | None) -> list[Presentation]:
    """The presentations with each series' solutions in a fresh order (with ``rng``; as given
    without), as a presentation shuffles options, so the bank's order tells nothing; a case study
    keeps its order. A whole series is numbered in the order shown ("solution 1 of 4" is the one
    asked first). ``rng`` is drawn from only when there is a series to shuffle."""
    result = list(presentations)
    for start, end in _series_runs([p.question for p in result]):
        run = result[start:end]
        if rng is not None and len(run) > 1:
            rng.shuffle(run)
        group = run[0].question.group
        if group is not None and len(run) == group.size:
            run = [p if p.question.index == place else
                   Presentation(dataclasses.replace(p.question, index=place), p.orders) for place, p in enumerate(run)]
        result[start:end] = run
    return result


class Session:
    """A sequence of questions answered one at a time, with feedback after each. With ``rng``
    the options are shuffled (the trainer always passes one); without, shown as written."""

    def __init__(self, mode: str, questions: Sequence[Question], progress: Progress, clock: Clock,
                 domain: str | None = None, *, rng: random.Random | None = None, title: str | None = None):
        self.mode = mode
        self.domain = domain
        self.title = title
        # A series' solutions, like the options, in a fresh order at each showing.
        self.presentations = present_series(presentations_for(questions, rng), rng)
        self.questions = [p.shown for p in self.presentations]
        self.progress = progress
        self.clock = clock
        self.position = 0
        self.results: list[Feedback] = []
        self.session_id = progress.start_session(mode, [q.id for q in self.questions], now=clock())
        self._shown_at = clock()
        self._scheduler = scheduler_for(progress)

    @property
    def current(self) -> Question | None:
        return self.questions[self.position] if self.position < len(self.questions) else None

    @property
    def presentation(self) -> Presentation | None:
        return self.presentations[self.position] if self.position < len(self.presentations) else None

    @property
    def done(self) -> bool:
        return self.position >= len(self.questions)

    @property
    def answered(self) -> bool:
        """The current question has been answered (its feedback is showing)."""
        return len(self.results) > self.position

    def answer(self, response: Any) -> Feedback:
        """Grade the current question (``response`` in the keys shown), commit the answer in the
        bank's keys with the new card, return the feedback."""
        question, presentation = self.current, self.presentation
        if question is None or presentation is None:
            raise RuntimeError("the session has no question left")
        if self.answered:
            return self.results[self.position]
        now = self.clock()
        seconds = max(0.0, now - self._shown_at)
        correct = question.grade(response)
        previous = self.progress.last_wrong_response(question.id)
        rating = rating_for(question, correct, seconds)
        # The card is reviewed inside the answer's transaction: another process answering the
        # same question meanwhile is built on, not overwritten.
        self.progress.record(self.session_id, question.id, presentation.to_bank(response), correct, seconds,
                             self.mode, now=now, review=lambda card: review_card(self._scheduler, card, rating, now))
        feedback = Feedback(question, response, correct, seconds, rating, chosen_wrong(question, response),
                            presentation.to_shown(previous), type_of(question).partial(question, response))
        self.results.append(feedback)
        return feedback

    def advance(self) -> Question | None:
        """Go on to the next question (after its feedback); ends the session after the last."""
        if not self.answered:
            raise RuntimeError("answer the question before moving on")
        self.position += 1
        self._shown_at = self.clock()
        if self.done:
            self.progress.end_session(self.session_id, self.summary(), now=self.clock())
        return self.current

    def per_domain(self) -> dict[str, DomainScore]:
        """Right answers per domain among the answers given so far, in the order of DOMAINS."""
        scores = domain_scores((f.question, f.correct) for f in self.results)
        return {d: scores[d] for d in DOMAINS if d in scores}

    def summary(self) -> dict[str, Any]:
        right = sum(f.correct for f in self.results)
        return {"answered": len(self.results), "correct": right,
                "missed": [f.question.id for f in self.results if not f.correct],
                "per_domain": {d: [s.correct, s.total] for d, s in self.per_domain().items()}}


def review_card(scheduler: Any, card: Any, rating: str, now: float) -> Any:
    from fsrs import Card, Rating

    return scheduler.review_card(card or Card(), Rating[rating], review_datetime=_utc(now))[0]


# ----------------------------------------------------------------------------- the exam


@dataclass(frozen=True)
class DomainScore:
    correct: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.correct / self.total) if self.total else 0


@dataclass(frozen=True)
class ReviewedAnswer:
    """One exam question after grading, as the learner saw it."""

    question: Question
    response: Any
    correct: bool
    parts: tuple[int, int]
    flagged: bool


@dataclass(frozen=True)
class ExamResult:
    score: int
    correct: int
    total: int
    per_domain: dict[str, DomainScore]
    missed: tuple[Question, ...]
    responses: dict[str, Any]
    timed_out: bool = False
    answers: tuple[ReviewedAnswer, ...] = ()

    @property
    def passed(self) -> bool:
        return self.score >= PASS_SCORE


def domain_scores(outcomes: Iterable[tuple[Question, bool]]) -> dict[str, DomainScore]:
    """Right answers out of answers, per domain, in the order the domains first appear."""
    tally: dict[str, list[int]] = {}
    for question, correct in outcomes:
        counts = tally.setdefault(question.domain, [0, 0])
        counts[0] += bool(correct)
        counts[1] += 1
    return {domain: DomainScore(right, total) for domain, (right, total) in tally.items()}


def scaled_score(correct_by_domain: dict[str, DomainScore]) -> int:
    """1–1000: the share of the exam's weight earned, each domain weighted as the exam weights it
    among the domains the exam held. 700 passes, as on Microsoft's exams."""
    total_weight = sum(DOMAINS[d][1] for d, s in correct_by_domain.items() if s.total)
    if not total_weight:
        return 1
    earned = sum(DOMAINS[d][1] * s.correct / s.total for d, s in correct_by_domain.items() if s.total)
    return max(1, min(MAX_SCORE, round(MAX_SCORE * earned / total_weight)))


def exam_plan(count: int, available: dict[str, int]) -> dict[str, int]:
    """How many questions each domain gets: ``count`` split by the exam weights (largest
    remainder), never more than a domain has; what a small domain cannot fill goes to the others."""
    plan = {d: 0 for d in DOMAINS if available.get(d)}
    count = min(count, sum(available.get(d, 0) for d in plan))
    while sum(plan.values()) < count:
        open_domains = [d for d in plan if plan[d] < available[d]]
        weight = sum(DOMAINS[d][1] for d in open_domains)
        remaining = count - sum(plan.values())
        shares = {d: remaining * DOMAINS[d][1] / weight for d in open_domains}
        for d in open_domains:
            plan[d] += min(int(shares[d]), available[d] - plan[d])
        # Largest remainders get the seats the whole parts left over.
        left = count - sum(plan.values())
        for d in sorted(open_domains, key=lambda d: (-(shares[d] - int(shares[d])), -DOMAINS[d][1])):
            if left <= 0:
                break
            if plan[d] < available[d]:
                plan[d] += 1
                left -= 1
    return plan


def make_room(plan: dict[str, int], domain: str, size: int) -> None:
    """Moves seats of ``plan`` to ``domain`` until it holds ``size`` questions, one at a time from
    the largest other share (the heavier domain first on a tie), leaving the total as it was.
    Stops short only when the other domains have no seats left."""
    plan.setdefault(domain, 0)
    while plan[domain] < size:
        others = [d for d in plan if d != domain and plan[d] > 0]
        if not others:
            return
        giver = max(others, key=lambda d: (plan[d], DOMAINS[d][1]))
        plan[giver] -= 1
        plan[domain] += 1


@dataclass(frozen=True)
class Section:
    """Questions the exam asks together. ``kind``: ``questions`` (move freely, flag, review),
    ``series`` (each answer given once: no going back) or ``case`` (a case study: move freely
    inside it). Once the learner leaves a section, it cannot be entered again."""

    kind: str
    start: int
    end: int
    title: str = ""

    def __contains__(self, index: int) -> bool:
        return self.start <= index < self.end

    @property
    def size(self) -> int:
        return self.end - self.start


def sections_of(questions: Sequence[Question]) -> list[Section]:
    """The sections a list of exam questions falls into: each run of a series or case study's
    questions is one, each run of other questions another."""
    sections: list[Section] = []
    start = 0
    for index in range(1, len(questions) + 1):
        here = questions[start].group
        there = questions[index].group if index < len(questions) else None
        same = (here is None and there is None) or (here is not None and there is not None and here.id == there.id)
        if index == len(questions) or not same:
            kind = "questions" if here is None else here.kind
            sections.append(Section(kind, start, index, here.title if here is not None else ""))
            start = index
    return sections


@dataclass
class ReviewItem:
    index: int
    question: Question
    answered: bool
    flagged: bool
    locked: bool = False


class ExamSession:
    """A timed exam: answers can be changed and flagged until submit (or until time is up),
    within the section the learner is in. The clock runs only while the exam is on screen
    (:meth:`start_clock`, :meth:`pause`); closed, crashed or paused, it stands still."""

    mode = "exam"

    def __init__(self, questions: Sequence[Question], progress: Progress, clock: Clock, seconds: float,
                 session_id: int | None = None, state: dict[str, Any] | None = None,
                 rng: random.Random | None = None):
        self.progress = progress
        self.clock = clock
        state = state or {}
        saved_orders = state.get("orders") or {}
        # A saved order is kept (a resumed exam shows what it showed); without one, a shuffle.
        # A new exam shuffles each series' solutions too; the store keeps the questions in the
        # order asked, so a resumed exam (``session_id`` given) asks them in the order it did.
        self.presentations = present_series([Presentation.restored(q, saved_orders.get(q.id), rng)
                                             for q in questions], rng if session_id is None else None)
        self.questions = [p.shown for p in self.presentations]
        self._index = {q.id: i for i, q in enumerate(self.questions)}
        self.sections = sections_of(self.questions) if self.questions else []
        # Responses as the bank keys them (what the store keeps, what grading uses).
        self.responses: dict[str, Any] = dict(state.get("responses") or {})
        self.flags: set[str] = set(state.get("flags") or [])
        self.position = int(state.get("position", 0))
        self.section_index = int(state.get("section", 0))
        self.seconds_taken: dict[str, float] = dict(state.get("seconds") or {})
        self._remaining = self._restore_remaining(state, seconds)
        self._running_since: float | None = None
        self.result: ExamResult | None = None
        if session_id is None:
            session_id = progress.start_session("exam", [q.id for q in self.questions], self._state(), now=clock())
        self.session_id = session_id
        self._shown_at = clock()

    def _restore_remaining(self, state: dict[str, Any], seconds: float) -> float:
        if "remaining" in state:
            remaining = float(state["remaining"])
            running_since = state.get("running_since")
            if running_since is not None:  # the process died with the clock running: it ran until the last save
                remaining -= max(0.0, float(state.get("saved_at", running_since)) - float(running_since))
            return max(0.0, remaining)
        if "deadline" in state:  # an exam saved before the clock could pause: its deadline stands
            return max(0.0, float(state["deadline"]) - self.clock())
        return float(seconds)

    def _state(self) -> dict[str, Any]:
        now = self.clock()
        return {"responses": self.responses, "flags": sorted(self.flags), "position": self.position,
                "section": self.section_index, "orders": {p.question.id: p.to_json() for p in self.presentations},
                "remaining": self._remaining, "running_since": self._running_since, "saved_at": now,
                "seconds": self.seconds_taken}

    def _save(self) -> None:
        if self.result is None:  # a submitted exam's record is final
            self.progress.save_state(self.session_id, self._state())

    # ------------------------------------------------------------------ the clock

    @property
    def remaining(self) -> float:
        if self._running_since is None:
            return max(0.0, self._remaining)
        return max(0.0, self._remaining - (self.clock() - self._running_since))

    @property
    def expired(self) -> bool:
        return self.remaining <= 0

    @property
    def running(self) -> bool:
        return self._running_since is not None

    def start_clock(self) -> None:
        """The exam is on screen: time runs."""
        if self._running_since is None and self.result is None:
            self._running_since = self.clock()
            self._shown_at = self._running_since
            self._save()

    def pause(self) -> None:
        """The exam left the screen (paused, closed): time stands still until :meth:`start_clock`."""
        if self._running_since is not None:
            self._note_time()
            self._remaining = self.remaining
            self._running_since = None
            self._save()

    def checkpoint(self) -> None:
        """Save the running clock, so a crash loses at most the time since."""
        if self._running_since is not None:
            self._save()

    # ------------------------------------------------------------------ where the learner is

    @property
    def current(self) -> Question:
        return self.questions[self.position]

    @property
    def presentation(self) -> Presentation:
        return self.presentations[self.position]

    @property
    def section(self) -> Section:
        return self.sections[min(self.section_index, len(self.sections) - 1)]

    @property
    def last_section(self) -> bool:
        return self.section_index >= len(self.sections) - 1

    @property
    def submitted(self) -> bool:
        return self.result is not None

    def can_go(self, index: int) -> bool:
        if not 0 <= index < len(self.questions) or index not in self.section:
            return False
        if self.section.kind == "series":
            # Forward only, and only past an answered solution.
            return index == self.position or (index == self.position + 1 and self.current.id in self.responses)
        return True

    def _note_time(self) -> None:
        now = self.clock()
        qid = self.current.id
        if self._running_since is not None:
            self.seconds_taken[qid] = self.seconds_taken.get(qid, 0.0) + max(0.0, now - self._shown_at)
        self._shown_at = now

    def select(self, response: Any) -> bool:
        """Set (or change) the current question's answer, in the keys shown; False once time is
        up or submitted, or when a series' solution was already answered."""
        if self.submitted or self.expired:
            return False
        question = self.current
        if self.section.kind == "series" and question.id in self.responses and response is not None \
                and self.presentation.to_bank(response) != self.responses[question.id]:
            # A yes/no answer is given once, as in the exam; the same answer again is no change.
            return False
        self._note_time()
        if response is None:
            if self.section.kind == "series":
                return False
            self.responses.pop(question.id, None)
        else:
            self.responses[question.id] = self.presentation.to_bank(response)
        self._save()
        return True

    def response(self, question: Question | None = None) -> Any:
        """A question's answer in the keys shown (the current question's by default)."""
        index = self.position if question is None else self._index[question.id]
        return self.presentations[index].to_shown(self.responses.get(self.questions[index].id))

    def answered(self, question: Question | None = None) -> bool:
        return (question or self.current).id in self.responses

    def toggle_flag(self) -> bool:
        """Flag or unflag the current question for review; returns whether it is flagged now."""
        qid = self.current.id
        if qid in self.flags:
            self.flags.discard(qid)
        else:
            self.flags.add(qid)
        self._save()
        return qid in self.flags

    def go(self, index: int) -> Question:
        if not 0 <= index < len(self.questions):
            raise IndexError(f"question {index + 1} is not in this exam (1..{len(self.questions)})")
        if not self.can_go(index):
            if self.section.kind == "series" and index == self.position + 1:
                raise LockedError("answer this solution first: a series' solutions are answered in turn")
            raise LockedError(f"question {index + 1} is in a section you have left" if index < self.section.start
                              else f"question {index + 1} is in a later section: finish this one first"
                              if index >= self.section.end else
                              f"question {index + 1} was answered: a series' answers cannot be revisited")
        self._note_time()
        self.position = index
        self._save()
        return self.current

    def next(self) -> Question:
        """The next question in this section (the last one stays)."""
        target = min(self.position + 1, self.section.end - 1)
        return self.go(target) if self.can_go(target) else self.current

    def previous(self) -> Question:
        target = max(self.position - 1, self.section.start)
        return self.go(target) if self.can_go(target) else self.current

    def leave_section(self) -> Section | None:
        """Close this section for good and go to the first question of the next; None when this
        is the last section (submit instead)."""
        if self.last_section:
            return None
        self._note_time()
        self.section_index += 1
        self.position = self.section.start
        self._save()
        return self.section

    def review_items(self) -> list[ReviewItem]:
        return [ReviewItem(i, q, q.id in self.responses, q.id in self.flags, not self.can_go(i) and i != self.position)
                for i, q in enumerate(self.questions)]

    @property
    def unanswered(self) -> int:
        return sum(1 for q in self.questions if q.id not in self.responses)

    def unanswered_in_section(self) -> int:
        return sum(1 for q in self.questions[self.section.start:self.section.end] if q.id not in self.responses)

    def submit(self) -> ExamResult:
        """Grade every question, commit the answers and the cards, end the session."""
        if self.result is not None:
            return self.result
        timed_out = self.expired
        if not timed_out:
            self._note_time()
        now = self.clock()
        scheduler = scheduler_for(self.progress)
        answers: list[tuple[str, Any, bool, float]] = []
        ratings: dict[str, str] = {}
        outcomes: list[tuple[Question, bool]] = []
        reviewed: list[ReviewedAnswer] = []
        for presentation, question in zip(self.presentations, self.questions):
            bank_response = self.responses.get(question.id)
            shown = presentation.to_shown(bank_response)
            correct = question.grade(shown)
            seconds = self.seconds_taken.get(question.id, 0.0)
            ratings[question.id] = rating_for(question, correct, seconds)
            answers.append((question.id, bank_response, correct, seconds))
            outcomes.append((question, correct))
            reviewed.append(ReviewedAnswer(question, shown, correct, type_of(question).partial(question, shown),
                                           question.id in self.flags))
        scores = domain_scores(outcomes)
        missed = [question for question, correct in outcomes if not correct]
        right = sum(s.correct for s in scores.values())
        result = ExamResult(scaled_score(scores), right, len(self.questions), scores, tuple(missed),
                            {a.question.id: a.response for a in reviewed}, timed_out, tuple(reviewed))
        self._running_since = None
        # One transaction, and only if the exam is still open: graded exactly once.
        self.progress.grade_exam(
            self.session_id, answers,
            lambda question_id, card: review_card(scheduler, card, ratings[question_id], now),
            {"score": result.score, "passed": result.passed, "correct": right,
             "total": len(self.questions), "timed_out": timed_out,
             "per_domain": {d: [s.correct, s.total] for d, s in scores.items()},
             "missed": [q.id for q in missed], "flagged": sorted(self.flags)}, now)
        self.result = result
        return self.result


# ----------------------------------------------------------------------------- the trainer


@dataclass(frozen=True)
class Stats:
    answered: int
    correct: int
    streak: int
    activity: dict[date, int]
    sessions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def accuracy(self) -> int:
        return round(100 * self.correct / self.answered) if self.answered else 0

    @property
    def exams(self) -> list[dict[str, Any]]:
        """Graded exams, oldest first: when, score, passed, per-domain [right, total]."""
        graded = [s for s in self.sessions if s["mode"] == "exam" and s["ended"]
                  and "score" in (s["summary"] or {})]
        return sorted(({"ended": s["ended"], **s["summary"]} for s in graded), key=lambda e: e["ended"])

    def domain_trend(self) -> dict[str, list[int]]:
        """Per domain, its percentage in each graded exam that held it, oldest first."""
        trend: dict[str, list[int]] = {}
        for exam in self.exams:
            for domain, (right, total) in (exam.get("per_domain") or {}).items():
                if total:
                    trend.setdefault(domain, []).append(round(100 * right / total))
        return {d: trend[d] for d in DOMAINS if d in trend}


def units(questions: Sequence[Question]) -> list[list[Question]]:
    """The questions in units that are asked together: a series or case study whole, in order,
    and every other question alone."""
    grouped: dict[str, list[Question]] = {}
    result: list[list[Question]] = []
    for question in questions:
        if question.group is None:
            result.append([question])
            continue
        members = grouped.get(question.group.id)
        if members is None:
            members = grouped[question.group.id] = []
            result.append(members)
        members.append(question)
    for members in grouped.values():
        members.sort(key=lambda q: q.index)
    return result


def check_count(count: int | None) -> None:
    if count is not None and count < 1:
        raise ValueError(f"the number of questions must be at least 1, not {count}")


CUSTOM_SOURCES = ("all", "flagged", "missed", "unseen")


class Trainer:
    """The bank, the learner's progress and a clock: where every session starts."""

    def __init__(self, bank: Bank, progress: Progress, clock: Clock = time.time, seed: int | None = None,
                 shuffle: bool = True):
        self.bank = bank
        self.progress = progress
        self.clock = clock
        self.random = random.Random(seed)
        # Options shuffled at each presentation; off only where a test needs the bank's order.
        self.shuffle = shuffle
        self._by_id = bank.by_id()

    @property
    def _presenting(self) -> random.Random | None:
        return self.random if self.shuffle else None

    def _session(self, mode: str, questions: Sequence[Question], domain: str | None = None,
                 title: str | None = None) -> Session:
        return Session(mode, questions, self.progress, self.clock, domain=domain, rng=self._presenting,
                       title=title)

    def _pick(self, questions: Sequence[Question], count: int | None) -> list[Question]:
        """Unmet questions first, each part random; a series or case study comes whole, so the
        session may run past ``count`` to finish one."""
        check_count(count)
        seen = self.progress.answered_ids()
        fresh = [u for u in units(questions) if any(q.id not in seen for q in u)]
        known = [u for u in units(questions) if all(q.id in seen for q in u)]
        self.random.shuffle(fresh)
        self.random.shuffle(known)
        chosen: list[Question] = []
        for unit in fresh + known:
            if count and len(chosen) >= count:
                break
            chosen.extend(unit)
        return chosen

    def practice(self, count: int | None = PRACTICE_QUESTIONS) -> Session:
        return self._session("practice", self._pick(self.bank.questions, count))

    def drill(self, domain: str, count: int | None = PRACTICE_QUESTIONS) -> Session:
        if domain not in DOMAINS:
            raise ValueError(f"unknown domain {domain!r}: one of {', '.join(DOMAINS)}")
        return self._session("drill", self._pick(self.bank.in_domain(domain), count), domain=domain)

    def missed(self) -> Session:
        ids = [qid for qid in self.progress.missed_last_time() if qid in self._by_id]
        return self._session("missed", [self._by_id[q] for q in ids])

    def due(self) -> list[Question]:
        return [self._by_id[q] for q in self.progress.due(_utc(self.clock())) if q in self._by_id]

    def review(self, count: int | None = None) -> Session:
        check_count(count)
        due = self.due()
        return self._session("review", due[:count] if count else due)

    def custom_pool(self, source: str = "all", domains: Sequence[str] = (), types: Sequence[str] = ()) -> list[Question]:
        """The questions a custom test draws from: ``source`` is all, flagged (in any exam, not
        answered right since), missed (answered wrong, ever, and not right since) or unseen;
        then only the given domains and types (none given: all)."""
        if source not in CUSTOM_SOURCES:
            raise ValueError(f"unknown source {source!r}: one of {', '.join(CUSTOM_SOURCES)}")
        unknown = [d for d in domains if d not in DOMAINS]
        if unknown:
            raise ValueError(f"unknown domain {unknown[0]!r}: one of {', '.join(DOMAINS)}")
        questions = list(self.bank.questions)
        if source == "flagged":
            flagged = self.progress.flagged_ids()
            questions = [q for q in questions if q.id in flagged]
        elif source == "missed":
            wrong = set(self.progress.missed_last_time())
            questions = [q for q in questions if q.id in wrong]
        elif source == "unseen":
            seen = self.progress.answered_ids()
            questions = [q for q in questions if q.id not in seen]
        if domains:
            questions = [q for q in questions if q.domain in domains]
        if types:
            questions = [q for q in questions if q.type in types]
        return questions

    def custom(self, source: str = "all", domains: Sequence[str] = (), types: Sequence[str] = (),
               count: int | None = PRACTICE_QUESTIONS, timed: bool = False) -> Session | ExamSession:
        """A test the learner composes (:meth:`custom_pool`): practised with feedback after each
        answer, or ``timed`` as an exam of those questions (scored, two minutes a question)."""
        check_count(count)
        pool = self.custom_pool(source, domains, types)
        title = "Custom · " + ", ".join([source] + list(domains) + list(types))
        if not timed:
            return self._session("custom", self._pick(pool, count), title=title)
        self._claim_new_exam()
        chosen = self._pick(pool, count)
        return ExamSession(chosen, self.progress, self.clock, SECONDS_PER_EXAM_QUESTION * len(chosen),
                           rng=self._presenting)

    def _claim_new_exam(self) -> None:
        self.progress.claim_exam()
        stale = self.progress.unfinished("exam")
        if stale is not None:
            self.progress.end_session(stale["id"], {"abandoned": True}, now=self.clock())

    def exam(self, count: int = EXAM_QUESTIONS, seconds: float | None = None) -> ExamSession:
        """A new exam of :meth:`exam_questions` (:meth:`start_exam`)."""
        return self.start_exam(self.exam_questions(count), seconds)

    def start_exam(self, questions: Sequence[Question], seconds: float | None = None) -> ExamSession:
        """A new exam of ``questions`` (``seconds``: two minutes a question unless given). An
        unfinished one is closed as abandoned first (its answers stay on record, ungraded), so it
        cannot come back later to grade its unanswered questions. This process owns the exam from
        now on (:class:`quiz.store.ExamBusyError` when another aml-quiz owns the unfinished one:
        abandoning it would pull it from under that process)."""
        self._claim_new_exam()
        duration = seconds if seconds is not None else SECONDS_PER_EXAM_QUESTION * len(questions)
        return ExamSession(questions, self.progress, self.clock, duration, rng=self._presenting)

    def exam_questions(self, count: int = EXAM_QUESTIONS) -> list[Question]:
        """The questions of a new exam, in the order asked; nothing is saved yet (the app shows
        them on the exam's intro before :meth:`start_exam`).

        Like the real exam, one of ``SECTIONS_FROM`` questions or more holds a case study and one
        or two yes/no series when the bank has them, after the other questions. They count in
        their domains' shares; where a share is too small for any of them, one is taken anyway
        and its domain gets the seats from the largest other shares (:func:`make_room`)."""
        check_count(count)
        available = {d: len(self.bank.in_domain(d)) for d in DOMAINS}
        plan = exam_plan(count, available)
        groups = [g for g in self.bank.groups().values()]
        cases = [g for g in groups if g[0].group is not None and g[0].group.kind == "case"]
        series = [g for g in groups if g[0].group is not None and g[0].group.kind == "series"]
        self.random.shuffle(cases)
        self.random.shuffle(series)
        sections: list[list[Question]] = []
        if count >= SECTIONS_FROM:
            # The case study first, then the series, each drawn where its domain's share holds it.
            # None may fit: a short exam gives a domain two or three questions and a case study
            # has four or five. The real exam always has its sections, so the first one drawn is
            # taken anyway and the seats its domain lacks come from the largest other shares.
            for pool, most in ((cases, 1), (series, MAX_SERIES_PER_EXAM)):
                taken = 0
                for members in pool:
                    domain = members[0].domain
                    if taken < most and len(members) <= plan.get(domain, 0):
                        plan[domain] -= len(members)
                        sections.append(members)
                        taken += 1
                if not taken and pool:
                    # Another domain than the sections taken, when one has any: a short exam
                    # leans less on one domain.
                    members = next((m for m in pool if m[0].domain not in {s[0].domain for s in sections}),
                                   pool[0])
                    domain = members[0].domain
                    make_room(plan, domain, len(members))
                    if len(members) <= plan[domain]:
                        plan[domain] -= len(members)
                        sections.append(members)
        chosen: list[Question] = []
        for domain, n in plan.items():
            alone = [q for q in self.bank.in_domain(domain) if q.group is None]
            chosen.extend(self.random.sample(alone, min(n, len(alone))))
        self.random.shuffle(chosen)
        sections.sort(key=lambda members: members[0].group.kind == "case")  # series, then the case study
        for members in sections:
            chosen.extend(members)
        return chosen

    def resume_exam(self) -> ExamSession | None:
        """:meth:`unfinished_exam`, owned by this process until it is submitted (or the process
        ends); :class:`quiz.store.ExamBusyError` when another aml-quiz owns it."""
        self.progress.claim_exam()
        exam = self.unfinished_exam()
        if exam is None:
            self.progress.release_exam()
        return exam

    def unfinished_exam(self) -> ExamSession | None:
        """The exam a crash or a closed terminal interrupted, as it was (to show it: to answer
        it, :meth:`resume_exam`); None when there is none (or its questions left the bank)."""
        record = self.progress.unfinished("exam")
        if record is None or not all(q in self._by_id for q in record["question_ids"]):
            return None
        questions = [self._by_id[q] for q in record["question_ids"]]
        return ExamSession(questions, self.progress, self.clock, 0, session_id=record["id"],
                           state=record["state"] or {"remaining": 0}, rng=self._presenting)

    def readiness(self) -> dict[str, float]:
        """Per domain, the mean FSRS retrievability of its questions a week from now (unmet ones
        count 0): the share of the domain the learner can expect to still answer right."""
        scheduler = scheduler_for(self.progress)
        cards = self.progress.cards()
        now = _utc(self.clock()) + READINESS_HORIZON
        result: dict[str, float] = {}
        for domain in DOMAINS:
            questions = self.bank.in_domain(domain)
            if not questions:
                continue
            total = sum(scheduler.get_card_retrievability(cards[q.id], now) for q in questions if q.id in cards)
            result[domain] = total / len(questions)
        return result

    def stats(self) -> Stats:
        answered, correct = self.progress.totals()
        activity = self.progress.activity()
        return Stats(answered, correct, streak(activity, datetime.fromtimestamp(self.clock()).date()), activity,
                     self.progress.sessions(limit=1000))


def streak(activity: dict[date, int], today: date) -> int:
    """Consecutive days with answers, ending today (or yesterday, when today has none yet)."""
    day = today if activity.get(today) else today - timedelta(days=1)
    count = 0
    while activity.get(day):
        count += 1
        day -= timedelta(days=1)
    return count


def percent(value: float) -> int:
    return int(math.floor(100 * value + 0.5))


# ----------------------------------------------------------------------------- typed answers


def parse_response(question: Question, text: str) -> Any:
    """A typed answer ("a", "a c", "c,a,b", "12", "0.5", "y") as the question's response;
    ValueError with what to type when it is not one."""
    return type_of(question).parse(question, text)


def incomplete(question: Question, response: Any) -> str | None:
    """What a response still lacks to be an answer (choose three, fill every blank...), or None."""
    return type_of(question).complete(question, response)
