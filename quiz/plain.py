"""``aml-quiz --plain``: the same sessions as line-based prompts, for screen readers and
terminals without a TUI. Plain text only: no colour, no cursor movement, one prompt per line.

Everything is read from ``input`` and written to ``out``, so the tests drive it through pipes.
End of input quits; every answer given is already saved.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from .bank import DOMAINS, YAML_BLOCK, Question
from .checks import lab_command
from .engine import ExamSession, Feedback, Session, Trainer, parse_response, percent
from .store import DamagedProgressError, ExamBusyError

_TYPE_HINTS = {
    "single": "type the option's letter",
    "fill_blank": "type the letter of the value for ____",
    "multiple": "type every right letter, e.g. 'a c'",
    "ordering": "type every letter in order, e.g. 'c a b'",
    "wrong_line": "type the number of the wrong line",
    "numeric": "type a number",
}
HELP = """Commands at any prompt:
  ?            this help
  q            quit (every answer given is saved)
After an answer (practice, drill, missed, review):
  Enter        next question
  l            lint the question's YAML with aml-lint
In an exam:
  n / p        next / previous question
  g N          go to question N
  f            flag or unflag this question for review
  r            the review list (answered, flagged)
  s            submit the exam
  (Enter)      keep the current answer and go on"""


class _Quit(Exception):
    pass


class Plain:
    def __init__(self, trainer: Trainer, input: TextIO, out: TextIO):
        self.trainer = trainer
        self.input = input
        self.out = out

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.input.readline()
        if not line:
            raise _Quit
        text = line.strip()
        if text == "q":
            raise _Quit
        if text == "?":
            self.say(HELP)
            return self.ask(prompt)
        return text

    # ------------------------------------------------------------------------- home

    def home(self) -> str:
        trainer = self.trainer
        self.say("aml-quiz: Azure ML training jobs, sweeps, distributed training, pipelines, schedules")
        self.say(f"{len(trainer.bank)} questions. Readiness (recall expected in a week):")
        for domain, value in trainer.readiness().items():
            self.say(f"  {DOMAINS[domain][0]:<26} {percent(value):>3}%")
        self.say(f"Cards due for review: {len(trainer.due())}")
        resume = ""
        if trainer.progress.unfinished("exam"):
            owner = trainer.progress.exam_owner()
            resume = (" r resume exam," if owner is None else
                      f" r resume exam (open in another aml-quiz{f', pid {owner}' if owner else ''}),")
        self.say(f"Modes: 1 practice, 2 exam, 3 review, 4 drill, 5 missed, 6 stats,{resume} q quit")
        choice = self.ask("mode> ")
        return {"1": "practice", "2": "exam", "3": "review", "4": "drill", "5": "missed", "6": "stats",
                "r": "resume"}.get(choice, choice)

    def pick_domain(self) -> str:
        names = list(DOMAINS)
        for index, domain in enumerate(names, 1):
            self.say(f"  {index} {DOMAINS[domain][0]} ({domain})")
        while True:
            text = self.ask("domain> ")
            if text in DOMAINS:
                return text
            if text.isdigit() and 1 <= int(text) <= len(names):
                return names[int(text) - 1]
            self.say(f"type 1-{len(names)} or a domain name")

    # ------------------------------------------------------------------------- questions

    def show(self, question: Question, position: int, total: int, extra: str = "") -> None:
        self.say("")
        self.say(f"Question {position} of {total} · {DOMAINS[question.domain][0]} · "
                 f"{question.type.replace('_', ' ')}{extra}")
        prompt = question.prompt.strip()
        if question.type == "wrong_line":
            prompt = YAML_BLOCK.sub(lambda m: _numbered(m.group(1)), prompt)
        self.say(prompt)
        for key, text in question.options.items():
            self.say(f"  {key}) {text}")

    def read_answer(self, question: Question, prompt: str) -> Any:
        while True:
            text = self.ask(f"{prompt} ({_TYPE_HINTS[question.type]})> ")
            try:
                return parse_response(question, text)
            except ValueError as error:
                self.say(str(error))

    def feedback(self, feedback: Feedback) -> None:
        question = feedback.question
        self.say("Correct." if feedback.correct else f"Not quite. The answer: {question.answer_text()}")
        if feedback.contrast:
            self.say(feedback.contrast)
        if feedback.previous_contrast:
            self.say(feedback.previous_contrast)
        self.say(question.explanation)
        for key, _text, why in feedback.chosen_wrong[1:]:
            self.say(f"{key}) {why}")
        self.say(f"Read more (Microsoft Learn): {question.reference}")
        command = lab_command(question)
        if command:
            self.say(f"See it run: {command}")

    def lint(self, question: Question) -> None:
        from .checks import lint_snippet, lintable_yaml

        text = lintable_yaml(question)
        if text is None:
            self.say("this question has no YAML to lint")
            return
        diagnostics = lint_snippet(text)
        if not diagnostics:
            self.say("aml-lint: clean")
        for d in diagnostics:
            self.say(f"aml-lint: line {d.line}:{d.column} {d.code} {d.message}")

    # ------------------------------------------------------------------------- sessions

    def run_session(self, session: Session) -> None:
        if not session.questions:
            self.say({"review": "Nothing is due for review.",
                      "missed": "Nothing missed last time."}.get(session.mode, "No questions."))
            return
        total = len(session.questions)
        while not session.done:
            question = session.current
            assert question is not None
            self.show(question, session.position + 1, total)
            feedback = session.answer(self.read_answer(question, "answer"))
            self.feedback(feedback)
            while True:
                text = self.ask("Enter for the next question, l to lint> ")
                if text == "l":
                    self.lint(question)
                    continue
                break
            session.advance()
        summary = session.summary()
        self.say(f"\nSession over: {summary['correct']} of {summary['answered']} right.")

    def run_exam(self, exam: ExamSession) -> None:
        total = len(exam.questions)
        self.say(f"Exam: {total} questions, {int(exam.remaining // 60)} minutes. "
                 "n/p move, f flags, r lists, s submits.")
        while not exam.submitted:
            if exam.expired:
                self.say("Time is up: the exam is submitted.")
                break
            question = exam.current
            flag = " · flagged" if question.id in exam.flags else ""
            self.show(question, exam.position + 1, total, f" · {_clock(exam.remaining)} left{flag}")
            current = exam.response()
            if current is not None:
                self.say(f"Your answer: {question.describe(current)}")
            text = self.ask(f"answer ({_TYPE_HINTS[question.type]}) or n/p/f/r/s> ")
            if exam.expired:
                self.say("Time is up: the exam is submitted (that last answer came too late).")
                break
            if text in ("n", ""):
                exam.next()
            elif text == "p":
                exam.previous()
            elif text == "f":
                self.say("flagged" if exam.toggle_flag() else "unflagged")
            elif text == "r":
                for item in exam.review_items():
                    marks = ("answered" if item.answered else "not answered") + (", flagged" if item.flagged else "")
                    self.say(f"  {item.index + 1:>2}. {item.question.id} ({marks})")
            elif text.startswith("g "):
                try:
                    exam.go(int(text[2:]) - 1)
                except (ValueError, IndexError):
                    self.say(f"type g and a number 1-{total}")
            elif text == "s":
                if exam.unanswered and self.ask(f"{exam.unanswered} unanswered; submit anyway? (y/n)> ") != "y":
                    continue
                break
            else:
                try:
                    exam.select(parse_response(question, text))
                    if exam.position < total - 1:
                        exam.next()
                except ValueError as error:
                    self.say(str(error))
        result = exam.submit()
        self.say(f"\nScore: {result.score} / 1000 — {'PASS' if result.passed else 'FAIL'} (700 to pass); "
                 f"{result.correct} of {result.total} right{' (time ran out)' if result.timed_out else ''}")
        for domain, score in result.per_domain.items():
            self.say(f"  {DOMAINS[domain][0]:<26} {score.correct}/{score.total} ({score.percent}%)")
        for question in result.missed:
            self.say(f"  missed {question.id}: {question.answer_text()}")

    def stats(self) -> None:
        stats = self.trainer.stats()
        self.say(f"{stats.answered} answers, {stats.accuracy}% right, streak {stats.streak} day(s)")
        for session in stats.sessions[:10]:
            summary = session["summary"] or {}
            shown = ("abandoned for a new exam" if summary.get("abandoned")
                     else f"score {summary['score']}" if "score" in summary
                     else f"{summary.get('correct', 0)}/{summary.get('answered', 0)} right")
            self.say(f"  #{session['id']} {session['mode']}: {shown if session['ended'] else 'unfinished'}")

    def main(self, mode: str | None, domain: str | None, count: int | None) -> int:
        try:
            while True:
                chosen = mode or self.home()
                trainer = self.trainer
                if chosen in ("exam", "resume"):
                    try:
                        exam = trainer.resume_exam()
                        if exam is not None:
                            self.say("Resuming your unfinished exam.")
                        else:
                            exam = trainer.exam(count or 40)
                    except ExamBusyError as busy:
                        if mode:
                            raise  # the command line's one error line, and its exit status
                        self.say(str(busy))
                        continue
                    self.run_exam(exam)
                elif chosen == "practice":
                    self.run_session(trainer.practice(count or 10))
                elif chosen == "drill":
                    self.run_session(trainer.drill(domain or self.pick_domain(), count or 10))
                elif chosen == "review":
                    self.run_session(trainer.review(count))
                elif chosen == "missed":
                    self.run_session(trainer.missed())
                elif chosen == "stats":
                    self.stats()
                else:
                    self.say("type 1-6 or q")
                if mode:
                    return 0
        except _Quit:
            self.say("\nBye: every answer given is saved.")
            return 0


def _numbered(block: str) -> str:
    lines = block.rstrip("\n").splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(lines, 1)) + "\n"


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


def ask_to_reset(error: DamagedProgressError, input: TextIO | None = None, out: TextIO | None = None) -> bool:
    """Asks whether to set the damaged progress file aside; only a typed "y" agrees (end of input,
    or anything else, keeps it as it is)."""
    input, out = input or sys.stdin, out or sys.stdout
    out.write(f"The progress database {error.path} is damaged: {error.problem}.\n"
              f"Move it aside (as {error.path.name}.damaged-<time>, with its -wal and -shm) and start with "
              "fresh progress? Its history stays in the moved file. (y/n)> ")
    out.flush()
    agreed = input.readline().strip().lower() in ("y", "yes")
    if not agreed:
        out.write("\n")
        out.flush()
    return agreed


def run(trainer: Trainer, mode: str | None = None, domain: str | None = None, count: int | None = None,
        input: TextIO | None = None, out: TextIO | None = None) -> int:
    return Plain(trainer, input or sys.stdin, out or sys.stdout).main(mode, domain, count)
