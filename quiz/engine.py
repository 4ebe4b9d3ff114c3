"""Every decision the quiz makes, with no Textual import: the app's screens only show a
session's state and forward keys to it, and ``--plain`` drives the same sessions with prompts.

Modes:

    practice  questions you have not met first; feedback and explanation after each answer
    drill     practice in one domain
    missed    the questions whose latest answer was wrong
    review    the cards FSRS says are due, oldest due first
    exam      N questions drawn across domains in the exam's weights, a timer, flags, a review
              list, answers changeable until submit; scored 1–1000, 700 to pass

Every answer is committed to :class:`quiz.store.Progress` as it is given (an exam's live state on
every change), so a crash or a closed terminal loses nothing.

Spaced repetition: each question is an FSRS card (the ``fsrs`` package). An answer's rating comes
from its correctness and its time against the time the question needs to be read: wrong is
Again; right in under half of it is Easy, in up to twice it Good, slower Hard.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any

from .bank import DOMAINS, Bank, Question
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


# ----------------------------------------------------------------------------- ratings


def expected_seconds(question: Question) -> float:
    """How long reading and answering the question reasonably takes."""
    text = len(question.prompt) + sum(len(v) for v in question.options.values())
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


def _scheduler() -> Any:
    from fsrs import Scheduler

    # Fuzz spreads due dates randomly; off, so a schedule can be reasoned about and tested.
    # No (re)learning steps: those bring a card back within minutes, which suits flashcards,
    # not exam questions whose answer is still on the screen; every card is due in days.
    return Scheduler(enable_fuzzing=False, learning_steps=(), relearning_steps=())


def _utc(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc)


# ----------------------------------------------------------------------------- feedback


@dataclass(frozen=True)
class Feedback:
    question: Question
    response: Any
    correct: bool
    seconds: float
    rating: str
    # (key, option text, why it is wrong) for each wrong option the response picked.
    chosen_wrong: tuple[tuple[str, str, str], ...] = ()
    # The distractor memory: what the learner picked wrong the time before this one, if anything.
    previous_wrong: Any = None

    @property
    def contrast(self) -> str | None:
        """'You chose truncation selection; ...' — the wrong choice set against the answer."""
        if self.correct or not self.chosen_wrong:
            return None
        key, text, why = self.chosen_wrong[0]
        # Option texts may end in a full stop themselves; one is enough.
        return (f"You chose {key}) {text.rstrip('.')}. {why} The answer is "
                f"{self.question.answer_text().rstrip('.')}.")

    @property
    def previous_contrast(self) -> str | None:
        if self.previous_wrong is None:
            return None
        return f"Last time you answered {self.question.describe(self.previous_wrong)}."


def _chosen_wrong(question: Question, response: Any) -> tuple[tuple[str, str, str], ...]:
    if question.type in ("single", "fill_blank"):
        keys = [str(response)] if response is not None else []
    elif question.type == "multiple":
        keys = [str(k) for k in response or []]
    else:
        return ()
    return tuple((k, question.options.get(k, "?"), question.wrong.get(k, ""))
                 for k in keys if k not in question.correct_keys)


# ----------------------------------------------------------------------------- sessions


class Session:
    """A sequence of questions answered one at a time, with feedback after each."""

    def __init__(self, mode: str, questions: Sequence[Question], progress: Progress, clock: Clock,
                 domain: str | None = None):
        self.mode = mode
        self.domain = domain
        self.questions = list(questions)
        self.progress = progress
        self.clock = clock
        self.position = 0
        self.results: list[Feedback] = []
        self.session_id = progress.start_session(mode, [q.id for q in self.questions], now=clock())
        self._shown_at = clock()
        self._scheduler = _scheduler()

    @property
    def current(self) -> Question | None:
        return self.questions[self.position] if self.position < len(self.questions) else None

    @property
    def done(self) -> bool:
        return self.position >= len(self.questions)

    @property
    def answered(self) -> bool:
        """The current question has been answered (its feedback is showing)."""
        return len(self.results) > self.position

    def answer(self, response: Any) -> Feedback:
        """Grade the current question, commit the answer and the new card, return the feedback."""
        question = self.current
        if question is None:
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
        self.progress.record(self.session_id, question.id, response, correct, seconds, self.mode, now=now,
                             review=lambda card: review_card(self._scheduler, card, rating, now))
        feedback = Feedback(question, response, correct, seconds, rating, _chosen_wrong(question, response),
                            previous)
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
                "missed": [f.question.id for f in self.results if not f.correct]}


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
class ExamResult:
    score: int
    correct: int
    total: int
    per_domain: dict[str, DomainScore]
    missed: tuple[Question, ...]
    responses: dict[str, Any]
    timed_out: bool = False

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


@dataclass
class ReviewItem:
    index: int
    question: Question
    answered: bool
    flagged: bool


class ExamSession:
    """A timed exam: answers can be changed and flagged until submit (or until time is up)."""

    mode = "exam"

    def __init__(self, questions: Sequence[Question], progress: Progress, clock: Clock, seconds: float,
                 session_id: int | None = None, state: dict[str, Any] | None = None):
        self.questions = list(questions)
        self.progress = progress
        self.clock = clock
        state = state or {}
        self.responses: dict[str, Any] = dict(state.get("responses") or {})
        self.flags: set[str] = set(state.get("flags") or [])
        self.position = int(state.get("position", 0))
        self.seconds_taken: dict[str, float] = dict(state.get("seconds") or {})
        self.deadline = float(state.get("deadline", clock() + seconds))
        self.result: ExamResult | None = None
        if session_id is None:
            session_id = progress.start_session("exam", [q.id for q in self.questions], self._state(), now=clock())
        self.session_id = session_id
        self._shown_at = clock()

    def _state(self) -> dict[str, Any]:
        return {"responses": self.responses, "flags": sorted(self.flags), "position": self.position,
                "deadline": self.deadline, "seconds": self.seconds_taken}

    def _save(self) -> None:
        if self.result is None:  # a submitted exam's record is final
            self.progress.save_state(self.session_id, self._state())

    @property
    def current(self) -> Question:
        return self.questions[self.position]

    @property
    def remaining(self) -> float:
        return max(0.0, self.deadline - self.clock())

    @property
    def expired(self) -> bool:
        return self.clock() >= self.deadline

    @property
    def submitted(self) -> bool:
        return self.result is not None

    def _note_time(self) -> None:
        now = self.clock()
        qid = self.current.id
        self.seconds_taken[qid] = self.seconds_taken.get(qid, 0.0) + max(0.0, now - self._shown_at)
        self._shown_at = now

    def select(self, response: Any) -> bool:
        """Set (or change) the current question's answer; False once time is up or submitted."""
        if self.submitted or self.expired:
            return False
        self._note_time()
        if response is None:
            self.responses.pop(self.current.id, None)
        else:
            self.responses[self.current.id] = response
        self._save()
        return True

    def response(self, question: Question | None = None) -> Any:
        return self.responses.get((question or self.current).id)

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
        self._note_time()
        self.position = index
        self._save()
        return self.current

    def next(self) -> Question:
        return self.go(min(self.position + 1, len(self.questions) - 1))

    def previous(self) -> Question:
        return self.go(max(self.position - 1, 0))

    def review_items(self) -> list[ReviewItem]:
        return [ReviewItem(i, q, q.id in self.responses, q.id in self.flags) for i, q in enumerate(self.questions)]

    @property
    def unanswered(self) -> int:
        return sum(1 for q in self.questions if q.id not in self.responses)

    def submit(self) -> ExamResult:
        """Grade every question, commit the answers and the cards, end the session."""
        if self.result is not None:
            return self.result
        timed_out = self.expired
        if not timed_out:
            self._note_time()
        now = self.clock()
        scheduler = _scheduler()
        answers: list[tuple[str, Any, bool, float]] = []
        ratings: dict[str, str] = {}
        outcomes: list[tuple[Question, bool]] = []
        for question in self.questions:
            response = self.responses.get(question.id)
            correct = question.grade(response)
            seconds = self.seconds_taken.get(question.id, 0.0)
            ratings[question.id] = rating_for(question, correct, seconds)
            answers.append((question.id, response, correct, seconds))
            outcomes.append((question, correct))
        scores = domain_scores(outcomes)
        missed = [question for question, correct in outcomes if not correct]
        right = sum(s.correct for s in scores.values())
        result = ExamResult(scaled_score(scores), right, len(self.questions), scores, tuple(missed),
                            dict(self.responses), timed_out)
        # One transaction, and only if the exam is still open: graded exactly once.
        self.progress.grade_exam(
            self.session_id, answers,
            lambda question_id, card: review_card(scheduler, card, ratings[question_id], now),
            {"score": result.score, "passed": result.passed, "correct": right,
             "total": len(self.questions), "timed_out": timed_out,
             "per_domain": {d: [s.correct, s.total] for d, s in scores.items()},
             "missed": [q.id for q in missed]}, now)
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


class Trainer:
    """The bank, the learner's progress and a clock: where every session starts."""

    def __init__(self, bank: Bank, progress: Progress, clock: Clock = time.time, seed: int | None = None):
        self.bank = bank
        self.progress = progress
        self.clock = clock
        self.random = random.Random(seed)
        self._by_id = bank.by_id()

    def _pick(self, questions: Sequence[Question], count: int | None) -> list[Question]:
        seen = {a["question_id"] for a in self.progress.answers()}
        fresh = [q for q in questions if q.id not in seen]
        known = [q for q in questions if q.id in seen]
        self.random.shuffle(fresh)
        self.random.shuffle(known)
        ordered = fresh + known
        return ordered[:count] if count else ordered

    def practice(self, count: int | None = PRACTICE_QUESTIONS) -> Session:
        return Session("practice", self._pick(self.bank.questions, count), self.progress, self.clock)

    def drill(self, domain: str, count: int | None = PRACTICE_QUESTIONS) -> Session:
        if domain not in DOMAINS:
            raise ValueError(f"unknown domain {domain!r}: one of {', '.join(DOMAINS)}")
        return Session("drill", self._pick(self.bank.in_domain(domain), count), self.progress, self.clock,
                       domain=domain)

    def missed(self) -> Session:
        ids = [qid for qid in self.progress.missed_last_time() if qid in self._by_id]
        return Session("missed", [self._by_id[q] for q in ids], self.progress, self.clock)

    def due(self) -> list[Question]:
        return [self._by_id[q] for q in self.progress.due(_utc(self.clock())) if q in self._by_id]

    def review(self, count: int | None = None) -> Session:
        due = self.due()
        return Session("review", due[:count] if count else due, self.progress, self.clock)

    def exam(self, count: int = EXAM_QUESTIONS, seconds: float | None = None) -> ExamSession:
        """A new exam. An unfinished one is closed as abandoned first (its answers stay on
        record, ungraded), so it cannot come back later to grade its unanswered questions.
        This process owns the exam from now on (:class:`quiz.store.ExamBusyError` when another
        aml-quiz owns the unfinished one: abandoning it would pull it from under that process)."""
        self.progress.claim_exam()
        stale = self.progress.unfinished("exam")
        if stale is not None:
            self.progress.end_session(stale["id"], {"abandoned": True}, now=self.clock())
        available = {d: len(self.bank.in_domain(d)) for d in DOMAINS}
        plan = exam_plan(count, available)
        chosen: list[Question] = []
        for domain, n in plan.items():
            chosen.extend(self.random.sample(self.bank.in_domain(domain), n))
        self.random.shuffle(chosen)
        duration = seconds if seconds is not None else SECONDS_PER_EXAM_QUESTION * len(chosen)
        return ExamSession(chosen, self.progress, self.clock, duration)

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
        return ExamSession(questions, self.progress, self.clock, 0, session_id=record["id"], state=record["state"])

    def readiness(self) -> dict[str, float]:
        """Per domain, the mean FSRS retrievability of its questions a week from now (unmet ones
        count 0): the share of the domain the learner can expect to still answer right."""
        scheduler = _scheduler()
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
                     self.progress.sessions())


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
    """A typed answer ("a", "a c", "c,a,b", "12", "0.5") as the question's response; ValueError
    with what to type when it is not one."""
    text = text.strip()
    if question.type in ("single", "fill_blank"):
        key = text.lower().rstrip(")")
        if key in question.options:
            return key
        raise ValueError(f"type one of {', '.join(question.options)}")
    if question.type in ("multiple", "ordering"):
        keys = [k for k in text.lower().replace(",", " ").split() if k]
        if len(keys) == 1 and len(keys[0]) > 1:
            keys = list(keys[0])  # "ac" means a and c
        unknown = [k for k in keys if k not in question.options]
        if unknown or not keys or len(set(keys)) != len(keys):
            raise ValueError(f"type distinct keys among {', '.join(question.options)}, e.g. 'a c'")
        if question.type == "ordering" and sorted(keys) != sorted(question.options):
            raise ValueError(f"put every key in order: {', '.join(question.options)}")
        if question.type == "multiple" and len(keys) < 2:
            raise ValueError("choose at least two")
        return keys
    try:
        number = float(text)
    except ValueError:
        raise ValueError("type a number") from None
    if question.type == "wrong_line":
        if not number.is_integer() or number < 1:
            raise ValueError("type a line number")
        return int(number)
    return int(number) if number.is_integer() else number
