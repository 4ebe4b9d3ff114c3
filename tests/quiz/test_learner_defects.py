"""What a learner ran into, each a test that drives aml-quiz as a learner does (Pilot for the app,
pipes and a terminal for --plain): fewer choices than asked, a line number outside the snippet, a
session of no questions, a damaged progress file, a new exam over an unfinished one, a clock
that ran while paused, Ctrl-C, YAML cut at 80 columns, --plain's ids, repeats, Markdown and
broken pipe, plurals, feedback without the question, lint when the YAML is in the options, labs
from an installed amllab, --check's account of what it proves; and in an exam, a number edited
when revisited, the position line of the question moved to, complete-the-code's blank cursor, the
review list's keys at any size, and --plain's yes/no keys and saved answers; then a new user's
audit: results that open on the score with one line a row, a case study and a series in every
exam of 15 questions or more, help in words, the review list's mark for answered, the exam's
intro, the custom test's marks without colour, URLs kept whole, and lint that does not reprint.

The banks here are written inline, as a learner's own file would be.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from quiz_app_support import BANK_DIR, FakeClock, make_trainer
from textual.pilot import Pilot

from quiz.app import QuizApp
from quiz.bank import load_bank
from quiz.engine import ExamSession, Session, Trainer
from quiz.screens.feedback import FeedbackScreen
from quiz.screens.home import HomeScreen
from quiz.screens.question import ExamScreen, QuestionScreen
from quiz.screens.help import HelpScreen
from quiz.screens.review import ConfirmScreen, ExamReviewScreen
from quiz.store import Progress

ROOT = Path(__file__).resolve().parents[2]
SOURCE = 'source: "SPEC §4.8 · Hyperparameter tuning a model (v2)"'
BANK = f"""\
domain: sweep
questions:
  - id: sweep-three
    type: multiple
    {SOURCE}
    prompt: Which distributions can a Bayesian sweep use? Choose three.
    options: {{a: choice, b: normal, c: uniform, d: randint, e: quniform}}
    answer: [a, c, e]
    explanation: Bayesian sampling takes choice, uniform and quniform.
    wrong: {{b: Random sampling only., d: Random sampling only.}}
  - id: sweep-line
    type: wrong_line
    {SOURCE}
    prompt: |
      Which line is wrong?

      ```yaml
      type: sweep
      sampling_algorithm: grid
      search_space:
        lr: {{type: uniform, min_value: 0.01, max_value: 0.1}}
      objective: {{goal: maximize, primary_metric: auc}}
      ```
    answer: 4
    explanation: Grid sampling takes **choice** only.
  - id: sweep-long
    type: wrong_line
    {SOURCE}
    prompt: |
      Which line is wrong?

      ```yaml
      type: sweep
      trial:
        command: python train.py --data ${{{{inputs.data}}}} --learning-rate ${{{{search_space.lr}}}} --depth ${{{{search_space.depth}}}} --epochs 30 --the-end-is-here
      sampling_algorithm: grid
      ```
    answer: 3
    explanation: The end of the long line.
  - id: sweep-yaml-options
    type: single
    {SOURCE}
    prompt: Which `early_termination` is valid?
    options:
      a: "`type: bandit`, `slack_factor: 0.1`"
      b: "`type: bandit`, no slack"
    answer: a
    explanation: A bandit policy needs a slack.
    wrong: {{b: A bandit policy needs slack_factor or slack_amount.}}
    options_yaml:
      a: |
        early_termination: {{type: bandit, slack_factor: 0.1}}
      b: |
        early_termination: {{type: bandit}}
  - id: sweep-one
    type: single
    {SOURCE}
    prompt: Which **policy** cancels trials behind the leader?
    options: {{a: bandit, b: none}}
    answer: a
    explanation: The `bandit` policy does.
    wrong: {{b: No policy cancels nothing.}}
  - id: sweep-two
    type: single
    {SOURCE}
    prompt: Which sampling takes only choice?
    options: {{a: grid, b: random}}
    answer: a
    explanation: Grid sampling does.
    wrong: {{b: Random takes every distribution.}}
"""


@pytest.fixture
def bank_file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.yml"
    path.write_text(BANK)
    return path


@pytest.fixture
def trainer(bank_file: Path, tmp_path: Path) -> Trainer:
    return Trainer(load_bank([bank_file]), Progress(tmp_path / "data"), clock=FakeClock(), seed=3)


def run(app: QuizApp, script: Callable[[Pilot], Awaitable[None]], size: tuple[int, int] = (100, 32)) -> None:
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await script(pilot)
            await pilot.pause(0.05)

    asyncio.run(main())


async def until(pilot: Pilot, condition: Callable[[], bool], seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            await pilot.pause()
            return
        await pilot.pause(0.02)
    raise AssertionError("the app never got there")


def asking(trainer: Trainer, qid: str) -> Callable[[], QuestionScreen]:
    """A practice session of one question, in the bank's order (the test picks by the bank's keys)."""
    return lambda: QuestionScreen(Session("practice", [trainer.bank.by_id()[qid]], trainer.progress, trainer.clock))


def plain(bank: Path, data: Path, *args: str, input: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "quiz", "--plain", "--bank", str(bank), "--data-dir", str(data),
                           *args], input=input, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)


# ----------------------------------------------------------------------------- 1, 2: answers


def test_01_a_choose_three_question_takes_three_not_fewer(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(asking(trainer, "sweep-three")())
        await pilot.press("a", "enter")
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen) and trainer.progress.answers() == []
        await pilot.press("c", "e", "enter")
        await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))

    run(app, script)
    assert [a["response"] for a in trainer.progress.answers()] == [["a", "c", "e"]]


def test_02_a_line_number_outside_the_snippet_is_refused_not_graded(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(asking(trainer, "sweep-line")())
        await pilot.press("9", "9", "enter")
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen) and trainer.progress.answers() == []

    run(app, script)
    assert trainer.progress.cards() == {}


# ----------------------------------------------------------------------------- 3: --count


@pytest.mark.parametrize("count", ["0", "-3"])
def test_03_a_session_of_no_questions_is_a_usage_error(bank_file: Path, tmp_path: Path, count: str) -> None:
    result = plain(bank_file, tmp_path / "data", "--mode", "exam", "--count", count)
    assert result.returncode == 2 and "at least 1 question" in result.stderr
    assert "Exam:" not in result.stdout


# ----------------------------------------------------------------------------- 4: a damaged file


def test_04_a_garbage_progress_file_is_offered_to_be_set_aside(bank_file: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "progress.sqlite3").write_bytes(b"not a database at all, " * 200)
    refused = plain(bank_file, data, "--mode", "practice", input="n\n")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "Move it aside" in refused.stdout and "(y/n)" in refused.stdout
    agreed = plain(bank_file, data, "--mode", "practice", "--count", "1", input="y\nq\n")
    assert agreed.returncode == 0 and "The damaged progress file is now" in agreed.stdout
    assert list(data.glob("progress.sqlite3.damaged-*"))


# ----------------------------------------------------------------------------- 5, 6, 7: the exam


def test_05_a_new_exam_over_an_unfinished_one_asks_first(trainer: Trainer) -> None:
    unfinished = trainer.exam(3)
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))

    run(app, script)
    assert trainer.unfinished_exam().session_id == unfinished.session_id


def test_06_the_exam_clock_stops_while_paused(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False, exam_seconds=600)
    clock = trainer.clock

    async def script(pilot: Pilot) -> None:
        await pilot.press("e", "enter")  # Enter starts the exam from its intro
        await until(pilot, lambda: isinstance(app.screen, ExamScreen))
        clock.advance(100)
        assert app.screen.exam.remaining == 500
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        clock.advance(3600)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ExamScreen))
        assert app.screen.exam.remaining == 500 and app.screen.sub_title == "Exam · 8:20 left"

    run(app, script)


def test_07_ctrl_c_quits_and_the_exam_footer_shows_how(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await pilot.press("e", "enter")  # Enter starts the exam from its intro
        await until(pilot, lambda: isinstance(app.screen, ExamScreen))
        shown = {binding.binding.key for binding in app.screen.active_bindings.values() if binding.binding.show}
        assert "ctrl+c" in shown
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.return_code == 0

    run(app, script)


# ----------------------------------------------------------------------------- 8: 80 columns


def test_08_yaml_wraps_at_80_columns_and_the_question_scrolls_by_keys(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(asking(trainer, "sweep-long")())
        await pilot.pause()
        block = app.screen.query_one(".prompt-code")
        # Nothing of the long line lies beyond the right edge: it wraps instead.
        assert block.virtual_size.width <= block.size.width
        shown = "\n".join(str(line.render()) for line in block.query(".hanging-text"))
        assert "--the-end-is-here" in shown.replace("\n", "")
        body = app.screen.query_one("#body")
        await pilot.press("shift+down")
        await pilot.pause()
        assert body.scroll_y > 0 or body.max_scroll_y == 0

    run(app, script, size=(80, 24))


# ----------------------------------------------------------------------------- 9, 10: --plain


def test_09_plain_reads_like_text_and_tells_nothing_twice(bank_file: Path, tmp_path: Path) -> None:
    result = plain(bank_file, tmp_path / "data", "--mode", "exam", "--count", "2",
                   input="f\nr\nf\nx\ns\ny\ny\n")
    out = result.stdout
    assert result.returncode == 0, result.stderr
    review = out[out.index("flagged\n"):]
    assert "sweep-" not in out  # ids name answers: never shown
    assert "**" not in out and "`" not in out  # Markdown read out as text
    first = next(line for line in out.splitlines() if line.startswith("Question 1 of 2"))
    assert out.count(first) == 1  # f and r did not print the question again
    assert "Your answer:" in review and "How this is known:" in review  # the post-exam review explains


def test_09_plain_piped_into_head_ends_quietly(bank_file: Path, tmp_path: Path) -> None:
    command = (f"{sys.executable} -m quiz --plain --bank {bank_file} --data-dir {tmp_path / 'data'} "
               "--mode practice < /dev/null | head -1")
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("count", "said"), [("1", "Exam: 1 question, 2 minutes."),
                                             ("6", "Exam: 6 questions, 12 minutes.")])
def test_10_counts_and_minutes_read_right(bank_file: Path, tmp_path: Path, count: str, said: str) -> None:
    result = plain(bank_file, tmp_path / "data", "--mode", "exam", "--count", count, input="q\n")
    assert said in result.stdout


# ----------------------------------------------------------------------------- 11, 12: feedback


def test_11_feedback_shows_the_question_and_each_answer_once(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(asking(trainer, "sweep-three")())
        await pilot.press("a", "b", "c", "enter")
        await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))
        screen = app.screen
        assert "Choose three." in str(screen.query_one("#stem").query_one("Markdown").source)
        answer_part = [*screen.query_one("#summary").query("Static"), *screen.query("#contrast")]
        said = " ".join(str(widget.render()) for widget in answer_part)
        assert said.count("quniform") == 1  # marked once in the options, not again in two answer lines

    run(app, script)


def test_12_lint_covers_yaml_in_the_options(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(asking(trainer, "sweep-yaml-options")())
        await pilot.press("a", "enter")
        await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))
        await pilot.press("l")
        await until(pilot, lambda: bool(app.screen.query(".lint-title")))
        titles = [str(t.render()) for t in app.screen.query(".lint-title")]
        assert titles == ["aml-lint on option a:", "aml-lint on option b:"]

    run(app, script)


# ----------------------------------------------------------------------------- 13: labs from a wheel


def test_13_an_installed_amllab_ships_its_labs_and_says_how_to_run_one(tmp_path: Path) -> None:
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(tmp_path / "wheel"), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    installed = tmp_path / "site"
    with zipfile.ZipFile(next((tmp_path / "wheel").glob("amllab-*.whl"))) as wheel:
        wheel.extractall(installed)
    script = """
import sys
from quiz.bank import load_bank
from quiz.checks import lab_command
from runner.cli import main
question = next(q for q in load_bank() if (q.check or {}).get("scenario", {}).get("name") == "sweep-random-bandit")
print(lab_command(question))
sys.stdout.flush()
main(["scenario", "run", "sweep-random-bandit"])
"""
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(installed)}
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=work, env=env,
                           timeout=120)
    assert shown.stdout.startswith("aml-run scenario copy sweep-random-bandit && cd amllab-labs/sweep-random-bandit"
                                   " && "), shown.stdout + shown.stderr
    assert "is the copy installed with amllab" in shown.stderr and "aml-run scenario copy" in shown.stderr
    copied = subprocess.run([sys.executable, "-c", "import sys; from runner.cli import main; "
                             "sys.exit(main(['scenario', 'copy', 'sweep-random-bandit']))"],
                            capture_output=True, text=True, cwd=work, env=env, timeout=120)
    assert copied.returncode == 0, copied.stderr
    assert (work / "amllab-labs" / "sweep-random-bandit" / "sweep.yml").is_file()


# ----------------------------------------------------------------------------- 14: --check


def test_14_check_says_what_each_kind_of_check_proves(tmp_path: Path) -> None:
    path = tmp_path / "mine.yml"
    path.write_text(BANK.replace("    wrong: {b: No policy cancels nothing.}\n", """\
    wrong: {b: No policy cancels nothing.}
    check: {scenario: {name: sweep-random-bandit, expect: {canceled_by_policy: {min: 1}}}}
"""))
    result = subprocess.run([sys.executable, "-m", "quiz", "--check", "--bank", str(path)], capture_output=True,
                            text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "scenario 1: the claim is among a lab's expectations" in result.stdout
    assert "--check does not run labs" in result.stdout
    assert "they prove amllab agrees with the answer, not that the service does" in result.stdout


# ----------------------------------------------------------------------------- 15-19: the exam's keys
# On the fixed test bank (tests/data/quiz_bank), which holds every type, a series and a case study.


@pytest.fixture
def fixed(tmp_path: Path) -> Trainer:
    return make_trainer(tmp_path / "fixed", FakeClock())


def exam_of(trainer: Trainer, *ids: str, seconds: float = 600) -> ExamSession:
    by_id = trainer.bank.by_id()
    return ExamSession([by_id[i] for i in ids], trainer.progress, trainer.clock, seconds=seconds)


def test_15_a_number_revisited_is_edited_not_replaced(fixed: Trainer) -> None:
    exam = exam_of(fixed, "sweep-grid-size", "command-outputs-folder")
    app = QuizApp(fixed, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(ExamScreen(exam))
        await pilot.press("1", "3", "right")
        await until(pilot, lambda: exam.position == 1)
        await pilot.press("left")
        await until(pilot, lambda: exam.position == 0)
        await pilot.press("backspace")
        await pilot.pause()
        assert app.screen.answer_widget.value == "1" and exam.response() == 1
        await pilot.press("2")
        await pilot.pause()
        assert app.screen.answer_widget.value == "12"

    run(app, script)
    assert exam.response() == 12


def test_16_the_position_line_shows_the_next_question_before_its_body_is_built(
        fixed: Trainer, monkeypatch: pytest.MonkeyPatch) -> None:
    import quiz.screens.question as question_screens

    exam = exam_of(fixed, "sweep-grid-size", "command-outputs-folder")
    app = QuizApp(fixed, cursor_blink=False)
    seen: list[str] = []

    class Watching(question_screens.PromptView):
        """A prompt whose building notes the position line meanwhile (a long prompt takes a
        while to build: the line must not tell of the question left until then)."""

        def __init__(self, question, *args, **kwargs) -> None:
            shown = app.screen.query("#position")  # none yet while the screen is first composed
            if isinstance(app.screen, ExamScreen) and shown:
                seen.append(str(shown.first().render()))
            super().__init__(question, *args, **kwargs)

    monkeypatch.setattr(question_screens, "PromptView", Watching)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(ExamScreen(exam))
        await pilot.pause()
        seen.clear()
        await pilot.press("1", "2", "enter")
        await until(pilot, lambda: exam.position == 1 and bool(seen))

    run(app, script)
    assert seen[0].startswith("Question 2 of 2") and "single choice" in seen[0], seen
    assert "number" not in seen[0] and "answered" not in seen[0], seen


def test_17_complete_the_code_marks_its_blank_and_does_what_its_hint_says(fixed: Trainer) -> None:
    from quiz.widgets.options import BlankAnswer, BlankRow

    exam = exam_of(fixed, "tracking-register", "command-outputs-folder")
    app = QuizApp(fixed, cursor_blink=False)

    def marked() -> list[int]:
        return [row.index for row in app.screen.query(BlankRow)
                if str(row.query_one(".hanging-label").render()).startswith("▸")]

    async def script(pilot: Pilot) -> None:
        await app.push_screen(ExamScreen(exam))
        await pilot.pause()
        hint = str(app.screen.query_one("#hint").render())
        assert "moves to the next" in hint and "▸" in hint
        assert marked() == [0]
        await pilot.press("a")  # fills blank 1; the mark moves on to blank 2
        await pilot.pause()
        assert marked() == [1]
        await pilot.press("b", "down")  # fills blank 2, the last: the mark stays, down does not wrap round
        await pilot.pause()
        assert marked() == [1] and exam.response() == ["a", "b"]
        await pilot.press("up", "c")  # back to blank 1, changed
        await pilot.pause()
        assert marked() == [1]
        widget = app.screen.answer_widget
        assert isinstance(widget, BlankAnswer) and widget.chosen == ["c", "b"]

    run(app, script)
    assert exam.response() == ["c", "b"]


def screen_text(app: QuizApp) -> str:
    """What the terminal shows, line by line (read from the app's own screenshot)."""
    import html
    import re

    rows: dict[float, list[tuple[float, str]]] = {}
    for match in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>',
                             app.export_screenshot()):
        rows.setdefault(float(match[2]), []).append((float(match[1]), html.unescape(match[3])))
    return "\n".join("".join(text for _, text in sorted(row)).replace("\xa0", " ") for _, row in sorted(rows.items()))


MANY = "".join(f"""\
  - id: many-{number}
    type: single
    {SOURCE}
    prompt: Question {number} on which policy cancels trials behind the leader?
    options: {{a: bandit, b: none}}
    answer: a
    explanation: The `bandit` policy does.
    wrong: {{b: No policy cancels nothing.}}
""" for number in range(50))
SERIES = f"""\
  - series: many-stop
    {SOURCE}
    problem: A sweep must stop trials that fall well behind the best one.
    solutions:
      - solution: "You add a bandit policy."
        answer: yes
        explanation: A bandit policy cancels trials outside the slack of the best trial.
      - solution: "You set max_concurrent_trials to 1."
        answer: no
        explanation: Concurrency stops no trial.
"""


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (100, 50)])
def test_18_the_review_list_of_a_long_exam_keeps_its_keys_in_sight(tmp_path: Path, size: tuple[int, int]) -> None:
    path = tmp_path / "many.yml"
    path.write_text("domain: sweep\nquestions:\n" + MANY + SERIES)
    trainer = Trainer(load_bank([path]), Progress(tmp_path / "data"), clock=FakeClock(), seed=3)
    by_id = trainer.bank.by_id()
    exam = ExamSession([by_id[f"many-{n}"] for n in range(50)] + [by_id["many-stop-1"], by_id["many-stop-2"]],
                       trainer.progress, trainer.clock, seconds=6000)
    assert len(exam.sections) == 2
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(ExamScreen(exam))
        await pilot.pause()
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ExamReviewScreen))
        shown = screen_text(app)
        # The hint under the list, and the keys in the footer, however many questions.
        assert "Enter goes there" in shown and "Esc back" in shown, shown
        assert "x Leave section" in shown and "? Help" in shown, shown
        await pilot.press("end")  # the list scrolls to its last question, the hint stays
        await pilot.pause()
        shown = screen_text(app)
        assert "Esc back" in shown and "Question 49 on" in shown, shown
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ExamReviewScreen))
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))

    run(app, script, size=size)


def test_19_plain_yes_no_takes_n_as_no_says_so_and_confirms_each_answer(tmp_path: Path) -> None:
    # The fixed bank's 20 questions: 16 free ones, then a series of two solutions, then a case study.
    result = plain(BANK_DIR, tmp_path / "data", "--mode", "exam", "--count", "20",
                   input="x\ny\nn\ny\n\nq\n")
    assert result.returncode == 0, result.stderr
    series = result.stdout[result.stdout.index("Section 2:"):]
    prompts = [line for line in series.splitlines() if line.startswith("answer y (yes) or n (no)")]
    assert prompts and all("n/p" not in line and "Enter" in line for line in prompts), series
    first, second = series.split("Question 18 of 20")
    assert "saved: No." in first  # n answered the first solution No, and said so
    assert "saved: Yes. This is the section's last question" in second
    assert second.count("Leave this section?") == 1  # Enter, not n, went on


# ----------------------------------------------------------------------------- 20-: a new user's audit


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
def test_20_results_open_on_the_score_and_each_answer_is_one_row(fixed: Trainer, size: tuple[int, int]) -> None:
    from quiz.screens.results import ResultsScreen

    exam = ExamSession([q for q in fixed.bank.questions if q.group is None][:12], fixed.progress, fixed.clock,
                       seconds=1440)
    exam.select("a")
    result = exam.submit()
    app = QuizApp(fixed, cursor_blink=False)

    def rows() -> list[str]:
        listed = [line.strip("▊▎▁▔▆▃▅▂▄▇█ ") for line in screen_text(app).splitlines() if line.startswith("▊")]
        return [row for row in listed if row]

    async def script(pilot: Pilot) -> None:
        await app.push_screen(ResultsScreen.for_exam(result))
        await pilot.pause(0.1)
        shown = screen_text(app)
        assert app.screen.query_one("#results").scroll_y == 0 and "/ 1000" in shown, shown
        # A row of the list is its number, its mark and the first words of its prompt: a line on
        # its own that does not begin so is a fragment of the row above.
        assert rows() and all(row[:2].strip().isdigit() for row in rows()), shown
        await pilot.press(*["down"] * 11)  # the page follows the highlight to the last row
        await pilot.pause(0.1)
        assert any(row.startswith("12 ") for row in rows()), screen_text(app)

    run(app, script, size=size)


@pytest.mark.parametrize("count", [15, 16, 17, 20, 25, 40])
def test_21_every_exam_of_15_questions_or_more_has_a_case_study_and_a_series(tmp_path: Path, count: int) -> None:
    # The built-in bank, whose case studies (four or five questions) are longer than the share a
    # short exam gives any one domain; the app and --plain both take their exam from Trainer.exam.
    bank = load_bank()
    for seed in range(8):
        trainer = Trainer(bank, Progress(tmp_path / f"data-{count}-{seed}"), clock=FakeClock(), seed=seed)
        exam = trainer.exam(count)
        kinds = [section.kind for section in exam.sections]
        assert len(exam.questions) == count, (seed, kinds)
        assert kinds[0] == "questions" and kinds[-1] == "case" and "series" in kinds, (seed, kinds)
        trainer.progress.release_exam()


def test_22_help_says_in_words_what_each_key_does_and_keeps_the_ids_for_remapping(fixed: Trainer) -> None:
    import re

    app = QuizApp(fixed, cursor_blink=False)
    ids = {b.id for screen in [QuizApp, HomeScreen, ExamScreen, QuestionScreen, FeedbackScreen, ExamReviewScreen]
           for b in screen.BINDINGS if getattr(b, "id", None)}

    async def script(pilot: Pilot) -> None:
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = app.screen.keys_text().plain
        keys, remapping = text.split("Remapping keys")
        assert not [word for word in re.findall(r"[a-z_]+\.[a-z_]+", keys) if word in ids], keys
        assert "this list of keys" in keys and "next question (on a section's last: the review list)" in keys
        assert "exam.next_or_review" in remapping and "app.help" in remapping, remapping

    run(app, script)


def test_23_the_review_list_marks_an_answer_given_not_with_the_mark_for_right(fixed: Trainer) -> None:
    exam = exam_of(fixed, "sweep-grid-size", "command-outputs-folder", "pipeline-step-order")
    exam.select(13)  # answered (and wrong): the list must not say ✓, which means right on every other screen
    app = QuizApp(fixed, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(ExamScreen(exam))
        await pilot.pause()
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ExamReviewScreen))
        shown = screen_text(app)
        assert "✓" not in shown, shown
        first = next(line for line in shown.splitlines() if " 1 " in line and "configurations" in line)
        assert "●" in first and "● answered" in shown, shown

    run(app, script)


def test_24_e_shows_the_exam_before_its_clock_starts_and_esc_goes_back(tmp_path: Path) -> None:
    # The built-in bank: a full exam of 40 questions, with its series and case study.
    trainer = Trainer(load_bank(), Progress(tmp_path / "data"), clock=FakeClock(), seed=1)
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await pilot.press("e")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, ExamScreen)  # no clock running unannounced
        shown = screen_text(app)
        assert "40 questions" in shown and "80 minutes" in shown, shown
        assert "Yes/no series" in shown and "Case study" in shown and "f flag" in shown, shown
        assert trainer.progress.unfinished("exam") is None  # nothing saved while the learner reads
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        assert trainer.progress.unfinished("exam") is None  # back: no exam to resume
        await pilot.press("e")
        await pilot.pause(0.1)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ExamScreen))
        assert len(app.screen.exam.questions) == 40 and app.screen.sub_title == "Exam · 1:20:00 left"

    run(app, script, size=(100, 30))


def test_25_the_custom_tests_choices_show_without_colour(fixed: Trainer) -> None:
    app = QuizApp(fixed, cursor_blink=False)

    def line(words: str) -> str:
        return next(row for row in screen_text(app).splitlines() if words in row)

    async def script(pilot: Pilot) -> None:
        await pilot.press("t")
        await until(pilot, lambda: app.screen.query("#custom-source"))
        # The second source, the first and third domains, and the timed checkbox.
        await pilot.press("down", "space", "tab", "space", "down", "down", "space")
        await pilot.pause()
        app.screen.query_one("#custom-timed").value = True
        await pilot.pause()
        # Chosen: a filled mark; not chosen: none, whatever the colours.
        assert "●" in line("flagged: flagged in an exam") and "●" not in line("all: the whole bank")
        assert "X" in line("Compute, data, environments") and "X" in line("MLflow tracking")
        assert "X" not in line("Command jobs") and "X" not in line("single choice")
        assert "X" in line("Timed and scored as an exam")
        app.screen.query_one("#custom-timed").value = False
        await pilot.pause()
        assert "X" not in line("Timed and scored as an exam")

    run(app, script, size=(100, 40))


def test_26_a_source_url_stays_on_one_line_at_80_columns(fixed: Trainer) -> None:
    question = fixed.bank.by_id()["command-outputs-folder"]
    assert max(len(url) for url in question.sources) > 80  # wider than the screen
    app = QuizApp(fixed, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(asking(fixed, question.id)())
        await pilot.press(question.answer, "enter")
        await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))
        sources = app.screen.query_one(".source")
        sources.scroll_visible(animate=False)
        await pilot.pause(0.1)
        # "Read more:" and one line a URL, the longest whole on its line (the block scrolls sideways).
        assert sources.size.height == 1 + len(question.sources), sources.size
        shown = screen_text(app).splitlines()
        at = next(i for i, line in enumerate(shown) if "Read more:" in line)
        assert shown[at + 1].strip().startswith("https://learn.microsoft.com/")
        assert "Enter next question" in shown[at + 1 + len(question.sources)], shown

    run(app, script, size=(80, 24))


def test_27_l_lints_the_yaml_on_screen_without_printing_it_again(fixed: Trainer) -> None:
    from quiz.widgets.text import NumberedCode

    app = QuizApp(fixed, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await app.push_screen(asking(fixed, "sweep-grid-needs-choice")())
        await pilot.press("1", "0", "enter")
        await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))
        await pilot.press("l")
        await until(pilot, lambda: bool(app.screen.query("#lint .diagnostic")))
        panel = app.screen.query_one("#lint")
        assert not panel.query(NumberedCode)  # the YAML is in the question above, once is enough
        said = "\n".join(str(widget.render()) for widget in panel.query(".lint-title, .diagnostic"))
        assert "shown above" in said and "AML302" in said and "line 9: type: uniform" in said, said

    run(app, script)


def test_28_every_dialog_opens_help_with_the_question_mark_and_comes_back(tmp_path: Path) -> None:
    # A modal screen takes no keys from the app, so `?` must be bound on each dialog itself.
    from quiz.screens.home import CustomTestPicker, DomainPicker
    from quiz.screens.intro import ExamIntroScreen
    from quiz.screens.question import ScenarioScreen

    trainer = make_trainer(tmp_path, FakeClock())
    case = next(q for q in trainer.bank.questions if q.group is not None and q.group.kind == "case")
    dialogs = [DomainPicker(), CustomTestPicker(10), ExamIntroScreen(list(trainer.bank.questions[:5]), 600),
               ScenarioScreen(case), ConfirmScreen("Submit now?")]
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        for dialog in dialogs:
            app.push_screen(dialog)
            await until(pilot, lambda: app.screen is dialog)
            await pilot.press("question_mark")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is dialog)
            app.pop_screen()
            await pilot.pause()

    run(app, script)
