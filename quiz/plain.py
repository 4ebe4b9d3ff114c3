"""``aml-quiz --plain``: the same sessions as line-based prompts, for screen readers and
terminals without a TUI. Plain text only: no colour, no cursor movement, no Markdown marks, one
prompt per line; a question is printed when it is reached, not again after each command.

Everything is read from ``input`` and written to ``out``, so the tests drive it through pipes.
End of input quits; every answer given is already saved (an exam's clock stops until it is
resumed).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from .bank import DOMAINS, TYPES, YAML_BLOCK, Question
from .checks import lab_command, lint_targets
from .fitting import describe
from .engine import (CUSTOM_SOURCES, EXAM_QUESTIONS, PRACTICE_QUESTIONS, ExamResult, ExamSession, Feedback,
                     LockedError, Session, Trainer, parse_response, percent)
from .qtypes import type_of
from .store import DamagedProgressError, ExamBusyError
from .text import clock_text, evidence_line, first_line, how_many, minutes_text, plain_markdown, plural

HELP = """Commands at any prompt:
  ?            this help
  q            quit (every answer given is saved; an exam's clock stops until you resume it)
After an answer (practice, drill, missed, review, custom):
  Enter        next question
  l            lint the question's YAML with aml-lint
In an exam:
  n / p        next / previous question
               (a yes/no solution: y answers Yes, n answers No, Enter goes on; its answer is final)
  g N          go to question N of this section
  f            flag or unflag this question for review
  r            the review list (answered, flagged, locked)
  c            show the case study's scenario again
  x            leave this section for the next (you cannot come back)
  s            submit the exam (from the last section)
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
        self.say("aml-quiz: Azure ML training: compute and data, command jobs, MLflow, sweeps, distributed "
                 "training, pipelines, schedules")
        self.say(f"{plural(len(trainer.bank), 'question')}. Readiness (recall expected in a week):")
        for domain, value in trainer.readiness().items():
            self.say(f"  {DOMAINS[domain][0]:<32} {percent(value):>3}%")
        self.say(f"Cards due for review: {len(trainer.due())}")
        resume = ""
        if trainer.progress.unfinished("exam"):
            owner = trainer.progress.exam_owner()
            resume = (" r resume exam," if owner is None else
                      f" r resume exam (open in another aml-quiz{f', pid {owner}' if owner else ''}),")
        self.say(f"Modes: 1 practice, 2 exam, 3 review, 4 drill, 5 missed, 6 custom, 7 stats,{resume} q quit")
        choice = self.ask("mode> ")
        return {"1": "practice", "2": "exam", "3": "review", "4": "drill", "5": "missed", "6": "custom",
                "7": "stats", "r": "resume"}.get(choice, choice)

    def pick(self, label: str, names: list[str], titles: dict[str, str], allow_none: bool = False) -> str | None:
        for index, name in enumerate(names, 1):
            self.say(f"  {index} {titles.get(name, name)} ({name})")
        while True:
            text = self.ask(f"{label}{' (Enter: any)' if allow_none else ''}> ")
            if not text and allow_none:
                return None
            if text in names:
                return text
            if text.isdigit() and 1 <= int(text) <= len(names):
                return names[int(text) - 1]
            self.say(f"type 1-{len(names)} or a name")

    def pick_domain(self) -> str:
        chosen = self.pick("domain", list(DOMAINS), {d: t for d, (t, _) in DOMAINS.items()})
        assert chosen is not None
        return chosen

    # ------------------------------------------------------------------------- questions

    def show(self, question: Question, position: int, total: int, extra: str = "") -> None:
        self.say("")
        self.say(f"Question {position} of {total} · {DOMAINS[question.domain][0]} · {question.label}{extra}")
        group = question.group
        if group is not None and group.kind == "case" and question.index == 0:
            self.show_case(question)
        prompt = question.prompt.strip()
        if question.type == "wrong_line":
            prompt = YAML_BLOCK.sub(lambda m: "```yaml\n" + _numbered(m.group(1)) + "```", prompt)
        self.say(plain_markdown(prompt))
        asks = how_many(question)
        if asks:
            self.say(asks)
        for key, text in question.options.items():
            self.say(f"  {key}) {plain_markdown(text)}")
        for blank in question.blanks:
            self.say(f"  blank {blank.label}: " + "; ".join(f"{k}) {plain_markdown(v)}" for k, v in blank.options.items()))

    def show_case(self, question: Question) -> None:
        group = question.group
        if group is None or group.kind != "case":
            self.say("this question is not part of a case study")
            return
        self.say(f"Case study: {group.title} ({plural(group.size, 'question')} about it)")
        self.say(plain_markdown(group.text))
        self.say("-- end of the scenario --")

    def read_answer(self, question: Question, prompt: str) -> Any:
        while True:
            text = self.ask(f"{prompt} ({type_of(question).plain_hint})> ")
            try:
                return parse_response(question, text)
            except ValueError as error:
                self.say(str(error))

    def explain(self, question: Question) -> None:
        """The explanation, how the answer is known, and where to read on."""
        self.say(plain_markdown(question.explanation))
        self.say(evidence_line(question))
        for source in question.sources:
            self.say(f"Read more: {source}")

    def feedback(self, feedback: Feedback) -> None:
        question = feedback.question
        self.say("Correct." if feedback.correct else f"Not quite. The answer: {plain_markdown(question.answer_text())}")
        if feedback.partly:
            self.say(feedback.partly)
        if feedback.contrast:
            self.say(plain_markdown(feedback.contrast))
        if feedback.previous_contrast:
            self.say(plain_markdown(feedback.previous_contrast))
        self.explain(question)
        for key, _text, why in feedback.chosen_wrong[1:]:
            self.say(f"{key}) {plain_markdown(why)}")
        command = lab_command(question)
        if command:
            self.say(f"See it run: {command}")

    def lint(self, question: Question) -> None:
        from .checks import lint_snippet

        targets = lint_targets(question)
        if not targets:
            self.say("this question has no YAML to lint")
            return
        for label, text in targets:
            diagnostics = lint_snippet(text)
            prefix = f"aml-lint on {label}" if len(targets) > 1 or label != "the question's YAML" else "aml-lint"
            if not diagnostics:
                self.say(f"{prefix}: clean")
            for d in diagnostics:
                self.say(f"{prefix}: line {d.line}:{d.column} {d.code} {d.message}")

    # ------------------------------------------------------------------------- sessions

    def run_session(self, session: Session) -> None:
        if not session.questions:
            self.say({"review": "Nothing is due for review.", "missed": "Nothing missed last time.",
                      "custom": "No question matches that choice."}.get(session.mode, "No questions."))
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
        exam.start_clock()
        try:
            self._exam_loop(exam, total)
        finally:
            exam.pause()  # quitting (q, end of input) stops the clock until the exam is resumed
        if exam.submitted or exam.expired:
            self.results(exam.submit())

    def _exam_loop(self, exam: ExamSession, total: int) -> None:
        sections = exam.sections
        self.say(f"Exam: {plural(total, 'question')}, {minutes_text(exam.remaining)}"
                 + (f", {plural(len(sections), 'section')}" if len(sections) > 1 else "")
                 + ". n/p move, f flags, r lists, s submits, q pauses; ? for every command.")
        shown = None
        while not exam.submitted:
            if exam.expired:
                self.say("Time is up: the exam is submitted.")
                return
            question = exam.current
            section = exam.section
            if shown != exam.position:
                if section.start == exam.position and len(sections) > 1:
                    self.announce(exam)
                flag = " · flagged" if question.id in exam.flags else ""
                self.show(question, exam.position + 1, total, f" · {clock_text(exam.remaining)} left{flag}")
                current = exam.response()
                if current is not None:
                    self.say(f"Your answer: {plain_markdown(question.describe(current))}")
                shown = exam.position
            if question.type == "yes_no":
                # n is the answer No here, never "next": Enter goes on, and the prompt says so.
                text = self.ask("answer y (yes) or n (no), or Enter/f/r/s> ")
            else:
                text = self.ask(f"answer ({type_of(question).plain_hint}) or n/p/f/r/s> ")
            if exam.expired:
                self.say("Time is up: the exam is submitted (that last answer came too late).")
                return
            last_in_section = exam.position == section.end - 1
            if question.type == "yes_no" and text.lower() in ("y", "n", "yes", "no"):
                text = "answer:" + text  # an answer, not a command: a yes/no question takes y and n
            if text in ("n", ""):
                if last_in_section:
                    self.end_of_section(exam)
                else:
                    self.move(exam, exam.position + 1)
            elif text == "p":
                self.move(exam, exam.position - 1)
            elif text == "f":
                self.say("flagged" if exam.toggle_flag() else "unflagged")
            elif text == "r":
                self.review_list(exam)
            elif text == "c":
                self.show_case(question)
            elif text == "x":
                self.end_of_section(exam)
            elif text.startswith("g "):
                try:
                    self.move(exam, int(text[2:]) - 1)
                except ValueError:
                    self.say(f"type g and a number {section.start + 1}-{section.end}")
            elif text == "s":
                if not exam.last_section:
                    self.say("submit from the last section: x leaves this one (you cannot come back)")
                    continue
                if self.confirm_submit(exam):
                    return
            else:
                try:
                    response = parse_response(question, text.removeprefix("answer:"))
                except ValueError as error:
                    self.say(str(error))
                    continue
                if not exam.select(response):
                    self.say("this solution was answered already: a series' answers are final")
                    continue
                saved = f"saved: {plain_markdown(question.describe(response))}."
                if not last_in_section:
                    self.say(saved)
                    self.move(exam, exam.position + 1)
                else:
                    self.say(f"{saved} This is the section's last question: Enter or x "
                             f"{'leaves it' if not exam.last_section else 'to end'}, r lists, s submits.")

    def announce(self, exam: ExamSession) -> None:
        section = exam.section
        number = exam.section_index + 1
        if section.kind == "series":
            self.say(f"\nSection {number}: a series of {section.size} proposed solutions to one problem. Each is "
                     "answered once, y (yes) or n (no), and Enter moves on: you cannot go back to a solution.")
        elif section.kind == "case":
            self.say(f"\nSection {number}: case study '{section.title}', {plural(section.size, 'question')}. "
                     "c shows the scenario again. Once you leave it you cannot come back.")
        else:
            self.say(f"\nSection {number}: {plural(section.size, 'question')}; move and change answers freely "
                     "until you leave the section.")

    def move(self, exam: ExamSession, index: int) -> None:
        try:
            exam.go(index)
        except (IndexError, LockedError) as error:
            self.say(str(error))

    def end_of_section(self, exam: ExamSession) -> None:
        unanswered = exam.unanswered_in_section()
        if exam.last_section:
            self.say(f"That was the last question. {plural(unanswered, 'question')} of this section unanswered. "
                     "s submits, r lists, p goes back.")
            return
        warning = f"{plural(unanswered, 'question')} unanswered in it (scored as wrong). " if unanswered else ""
        if self.ask(f"Leave this section? {warning}You cannot come back. (y/n)> ").lower() == "y":
            exam.leave_section()

    def confirm_submit(self, exam: ExamSession) -> bool:
        if exam.unanswered and self.ask(f"{plural(exam.unanswered, 'question')} unanswered (scored as wrong); "
                                        "submit anyway? (y/n)> ").lower() != "y":
            return False
        exam.submit()
        return True

    def review_list(self, exam: ExamSession) -> None:
        for item in exam.review_items():
            marks = "locked" if item.locked else ("answered" if item.answered else "not answered")
            if item.flagged:
                marks += ", flagged"
            self.say(f"  {item.index + 1:>2}. {first_line(item.question.prompt, 70)} ({marks})")

    def results(self, result: ExamResult) -> None:
        self.say(f"\nScore: {result.score} / 1000 — {'PASS' if result.passed else 'FAIL'} (700 to pass); "
                 f"{result.correct} of {result.total} right{' (time ran out)' if result.timed_out else ''}")
        for domain, score in result.per_domain.items():
            self.say(f"  {DOMAINS[domain][0]:<32} {score.correct}/{score.total} ({score.percent}%)")
        try:
            choice = self.ask("Review every answer with its explanation? (y: all, m: the missed, n: no)> ").lower()
        except _Quit:
            return
        if choice not in ("y", "m"):
            return
        for number, answer in enumerate(result.answers, 1):
            if choice == "m" and answer.correct:
                continue
            question = answer.question
            verdict = "right" if answer.correct else "wrong"
            self.say(f"\n{number}. ({verdict}) {first_line(question.prompt, 100)}")
            self.say(f"Your answer: {plain_markdown(question.describe(answer.response))}")
            if not answer.correct:
                self.say(f"The answer: {plain_markdown(question.answer_text())}")
            self.explain(question)

    def custom(self, count: int | None) -> Session | ExamSession:
        self.say("Custom test. Questions from:")
        source = self.pick("from", list(CUSTOM_SOURCES), {
            "all": "the whole bank", "flagged": "questions you flagged in an exam",
            "missed": "questions whose last answer was wrong", "unseen": "questions you have not met"})
        assert source is not None
        self.say("In domain:")
        domain = self.pick("domain", list(DOMAINS), {d: t for d, (t, _) in DOMAINS.items()}, allow_none=True)
        self.say("Of type:")
        qtype = self.pick("type", list(TYPES), {t: r.label for t, r in TYPES.items()}, allow_none=True)
        timed = self.ask("Timed, scored as an exam? (y/n)> ").lower() == "y"
        wanted = count or PRACTICE_QUESTIONS
        return self.trainer.custom(source, [domain] if domain else [], [qtype] if qtype else [], wanted, timed)

    def stats(self) -> None:
        stats = self.trainer.stats()
        self.say(f"{stats.answered} answers, {stats.accuracy}% right, streak {plural(stats.streak, 'day')}")
        exams = stats.exams
        if exams:
            self.say("Exam scores, oldest first: " + ", ".join(str(e["score"]) for e in exams))
            for domain, values in stats.domain_trend().items():
                self.say(f"  {DOMAINS[domain][0]:<32} " + " → ".join(f"{v}%" for v in values[-8:]))
        self.say(describe(self.trainer.progress))
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
                            exam = trainer.exam(count or EXAM_QUESTIONS)
                    except ExamBusyError as busy:
                        if mode:
                            raise  # the command line's one error line, and its exit status
                        self.say(str(busy))
                        continue
                    self.run_exam(exam)
                elif chosen == "practice":
                    self.run_session(trainer.practice(count or PRACTICE_QUESTIONS))
                elif chosen == "drill":
                    self.run_session(trainer.drill(domain or self.pick_domain(), count or PRACTICE_QUESTIONS))
                elif chosen == "review":
                    self.run_session(trainer.review(count))
                elif chosen == "missed":
                    self.run_session(trainer.missed())
                elif chosen == "custom":
                    test = self.custom(count)
                    if isinstance(test, ExamSession):
                        self.run_exam(test) if test.questions else self.say("No question matches that choice.")
                    else:
                        self.run_session(test)
                elif chosen == "stats":
                    self.stats()
                else:
                    self.say("type 1-7 or q")
                if mode:
                    return 0
        except _Quit:
            self.say("\nBye: every answer given is saved.")
            return 0


def _numbered(block: str) -> str:
    lines = block.rstrip("\n").splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(lines, 1)) + "\n"


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
