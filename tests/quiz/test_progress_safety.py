"""The progress store under the chaos a learner's machine brings: two aml-quiz processes on one
data folder, a damaged page, a truncated file, a junk write-ahead log, damage that appears while
the quiz runs. Real SQLite files, damaged for real; real second processes (``aml-quiz --plain``
or the store from another interpreter); the app driven by Textual's Pilot.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from quiz_app_support import BANK_DIR, FakeClock, make_trainer

import quiz.app
from quiz.app import DamagedProgressApp, QuizApp
from quiz.bank import load_bank
from quiz.cli import build_parser
from quiz.engine import Trainer
from quiz.errors import ProgressError
from quiz.screens.home import HomeScreen
from quiz.screens.question import ExamScreen
from quiz.screens.review import ConfirmScreen
from quiz.session_runner import build_trainer
from quiz.store import FILE_NAME, DamagedProgressError, ExamBusyError, ExamClosedError, Progress, wal_damage

ROOT = Path(__file__).resolve().parents[2]
SIZE = (100, 32)


# ----------------------------------------------------------------------------- helpers


def _bank_file(tmp_path: Path) -> Path:
    lines = ["domain: sweep", "questions:"]
    for i in range(6):
        lines += [f"  - id: sweep-safety-{i}", "    type: single",
                  "    source: my notes",
                  f"    prompt: Question {i}?", "    options: {a: right, b: wrong}", "    answer: a",
                  "    explanation: Because.", "    wrong: {b: Not this.}"]
    path = tmp_path / "bank.yml"
    if not path.exists():
        path.write_text("\n".join(lines) + "\n")
    return path


def _command(tmp_path: Path, data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "quiz", "--plain", "--bank", str(_bank_file(tmp_path)), "--data-dir", str(data),
            *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _start(tmp_path: Path, data: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(_command(tmp_path, data, *args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1, env=_env(), cwd=ROOT)


def _run(tmp_path: Path, data: Path, *args: str, input: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(_command(tmp_path, data, *args), input=input, capture_output=True, text=True,
                          timeout=120, env=_env(), cwd=ROOT)


def _read_until(process: subprocess.Popen, marker: str, timeout: float = 60) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        assert time.monotonic() < deadline, seen
        char = process.stdout.read(1)
        assert char, seen + process.stderr.read()
        seen += char
    return seen


def _key_of(shown: str, text: str) -> str:
    """The letter the options just shown give the option ``text`` (they are shuffled)."""
    return next(line.split(")")[0].strip() for line in shown.splitlines() if line.strip().endswith(f") {text}"))


def _answer(process: subprocess.Popen, option: str, prompt: str = "n/p/f/r/s>") -> None:
    """Wait for the prompt, then choose the option whose text is ``option`` ("right", "wrong")."""
    process.stdin.write(_key_of(_read_until(process, prompt), option) + "\n")


def _stop(process: subprocess.Popen) -> None:
    process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        stream.close()


def _history(folder: Path, answers: int = 4) -> Trainer:
    """A progress folder with some practice answered (right, wrong, right ...); open."""
    trainer = make_trainer(folder, FakeClock())
    session = trainer.practice(answers)
    index = 0
    while not session.done:
        question = session.current
        session.answer(question.answer if index % 2 == 0 else "zz")
        session.advance()
        index += 1
    return trainer


def _closed_history(folder: Path) -> Path:
    _history(folder).progress.close()
    assert not Path(f"{folder / FILE_NAME}-wal").exists()  # a clean close leaves the main file only
    return folder / FILE_NAME


def _crash_copy(trainer: Trainer, target: Path) -> Path:
    """The folder as a killed process leaves it: the main file and the log that holds the answers
    not yet checkpointed (copied while the connection is open, between two transactions)."""
    target.mkdir(parents=True, exist_ok=True)
    source = trainer.progress.path
    for suffix in ("", "-wal"):
        shutil.copyfile(f"{source}{suffix}", f"{target / FILE_NAME}{suffix}")
    return target / FILE_NAME


def _root_page(path: Path, table: str) -> tuple[int, int]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()
    return page, size


def _damage_page(path: Path, table: str = "answers") -> None:
    """Junk over the header of the table's page, as a bad sector or a stray write would leave it."""
    page, size = _root_page(path, table)
    with open(path, "r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(b"\xff" * 12)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name.startswith(FILE_NAME)}


def _unchanged(folder: Path, before: dict[str, bytes]) -> bool:
    """Every progress file is as it was; at most SQLite's read-only look added an empty log and its
    index (-shm, derived data)."""
    after = _files(folder)
    added = {name: data for name, data in after.items() if name not in before}
    return (all(after.get(name) == data for name, data in before.items())
            and all(name.endswith("-shm") or not data for name, data in added.items()))


# ----------------------------------------------------------------------------- Q1: one live exam


def test_a_second_aml_quiz_is_refused_the_exam_another_one_has_open(tmp_path: Path) -> None:
    data = tmp_path / "data"
    owner = _start(tmp_path, data, "--mode", "exam", "--count", "3")
    try:
        _answer(owner, "right")  # answers question 1, moves on
        shown = _read_until(owner, "n/p/f/r/s>")
        assert "Question 2 of 3" in shown
        second = _run(tmp_path, data, "--mode", "exam", input="a\na\na\ns\ny\n")
        assert second.returncode == 2
        assert second.stderr == (f"aml-quiz: error: an exam is open in another aml-quiz (pid {owner.pid}); "
                                 "finish it there or close it\n")
        assert "Question" not in second.stdout
        # The home menu's exam (2) says the same and goes back to the menu.
        menu = _run(tmp_path, data, input="2\nq\n")
        assert menu.returncode == 0 and "Traceback" not in menu.stderr
        assert f"r resume exam (open in another aml-quiz, pid {owner.pid})," in menu.stdout
        assert f"an exam is open in another aml-quiz (pid {owner.pid}); finish it there or close it" in menu.stdout
        owner.stdin.write(_key_of(shown, "right") + "\n")
        _answer(owner, "wrong")
        _read_until(owner, "n/p/f/r/s>")
        owner.stdin.write("s\n")
        out = _read_until(owner, "missed")
        assert "2 of 3 right" in out
    finally:
        _stop(owner)
    progress = Progress(data)
    exams = [s for s in progress.sessions() if s["mode"] == "exam"]
    assert len(exams) == 1 and exams[0]["summary"]["correct"] == 2
    assert len(progress.answers()) == 3  # graded once: one row per question
    # Submitted, the exam is nobody's: the next aml-quiz starts a new one.
    after = _run(tmp_path, data, "--mode", "exam", "--count", "2", input="s\ny\n")
    assert after.returncode == 0, after.stderr
    assert "Score:" in after.stdout


def test_a_killed_exam_owner_frees_the_exam_for_the_next_aml_quiz(tmp_path: Path) -> None:
    data = tmp_path / "data"
    owner = _start(tmp_path, data, "--mode", "exam", "--count", "3")
    try:
        _answer(owner, "right")
        _read_until(owner, "n/p/f/r/s>")
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
    finally:
        _stop(owner)
    resumed = _run(tmp_path, data, "--mode", "exam", input="s\ny\n")
    assert resumed.returncode == 0, resumed.stderr
    assert "Resuming your unfinished exam." in resumed.stdout and "1 of 3 right" in resumed.stdout


_SUBMIT_LATER = """
import sys
sys.path[:0] = [{root!r}, {tests!r}]
from pathlib import Path
from quiz_app_support import FakeClock, make_trainer
exam = make_trainer(Path({data!r}), FakeClock()).unfinished_exam()
print("loaded", exam.session_id, flush=True)
sys.stdin.readline()
from quiz.store import ExamClosedError
try:
    exam.submit()
    print("graded")
except ExamClosedError as error:
    print("refused:", error)
"""


def test_an_exam_is_graded_exactly_once_when_two_processes_submit_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = make_trainer(data, FakeClock())
    exam = first.exam(3)
    exam.select(exam.current.answer)
    first.progress.release_exam()  # as if the lock were bypassed: the grading itself must hold
    script = _SUBMIT_LATER.format(root=str(ROOT), tests=str(ROOT / "tests"), data=str(data))
    other = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=_env())
    try:
        assert other.stdout.readline().split() == ["loaded", str(exam.session_id)]
        mine = make_trainer(data, FakeClock()).unfinished_exam()
        assert mine.submit().correct == 1
        out, _ = other.communicate("\n", timeout=60)
    finally:
        other.kill()
        other.wait()
    assert out.startswith(f"refused: exam #{exam.session_id} was already submitted or closed by another aml-quiz")
    answers = Progress(data).answers(session_id=exam.session_id)
    assert len(answers) == 3


def test_a_stale_copy_of_a_graded_exam_cannot_write_over_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    trainer = make_trainer(data, FakeClock())
    exam = trainer.exam(3)
    stale = make_trainer(data, FakeClock()).unfinished_exam()
    exam.submit()
    with pytest.raises(ExamClosedError):
        stale.select(stale.current.answer)
    with pytest.raises(ExamClosedError):
        stale.submit()
    assert len(Progress(data).answers()) == 3


def test_two_processes_practising_at_once_keep_every_answer(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _run(tmp_path, data, "--mode", "stats")  # the database exists before the race
    left = _start(tmp_path, data, "--mode", "practice", "--count", "6")
    right = _start(tmp_path, data, "--mode", "practice", "--count", "6")
    try:
        for _ in range(6):
            for process, option in ((left, "right"), (right, "wrong")):
                _answer(process, option, "answer (")
                _read_until(process, "Enter for the next question")
                process.stdin.write("\n")
        for process in (left, right):
            _read_until(process, "Session over")
    finally:
        _stop(left)
        _stop(right)
    answers = Progress(data).answers()
    assert sorted(a["response"] for a in answers) == ["a"] * 6 + ["b"] * 6
    assert len({a["session_id"] for a in answers}) == 2


def test_the_app_refuses_an_exam_another_aml_quiz_has_open(tmp_path: Path) -> None:
    data = tmp_path / "data"
    owner = _start(tmp_path, data, "--mode", "exam", "--count", "3")
    try:
        _read_until(owner, "n/p/f/r/s>")
        owner.stdin.write("f\n")
        _read_until(owner, "flagged")
        trainer = Trainer(load_bank([_bank_file(tmp_path)]), Progress(data))
        notes: list[str] = []

        class Recording(QuizApp):
            CSS_PATH = str(Path(quiz.app.__file__).parent / QuizApp.CSS_PATH)  # relative to its class's file

            def notify(self, message, **options):  # what the learner is told, kept for the test
                notes.append(str(message))
                super().notify(message, **options)

        app = Recording(trainer, cursor_blink=False)

        async def main() -> None:
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()
                resume = app.screen.query_one("#modes").get_option_at_index(0)
                assert resume.id == "resume"
                assert f"open in another aml-quiz (pid {owner.pid})" in str(resume.prompt)
                for key in ("c", "e"):  # resume it, or start a new one (which would abandon it)
                    await pilot.press(key)
                    await pilot.pause(0.1)
                    assert isinstance(app.screen, HomeScreen)
                await pilot.pause(0.05)

        asyncio.run(main())
        message = f"an exam is open in another aml-quiz (pid {owner.pid}); finish it there or close it"
        assert notes == [message, message]
        owned = trainer.unfinished_exam()
        assert owned is not None and owned.flags  # the owner's exam, untouched
    finally:
        _stop(owner)


def test_the_app_owns_the_exam_it_shows(tmp_path: Path) -> None:
    data = tmp_path / "data"
    trainer = make_trainer(data, FakeClock())
    app = QuizApp(trainer, count=3, cursor_blink=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("e", "enter")  # Enter starts the exam from its intro
            for _ in range(100):
                if isinstance(app.screen, ExamScreen):
                    break
                await pilot.pause(0.02)
            # Paused at home, the exam is still this app's.
            await pilot.press("escape")
            await pilot.pause()
            with pytest.raises(ExamBusyError):
                make_trainer(data, FakeClock()).resume_exam()
            await pilot.pause(0.05)

    asyncio.run(main())


# ----------------------------------------------------------------------------- Q2, Q3: damage on open


def _damaged_page(folder: Path) -> Path:
    path = _closed_history(folder)
    _damage_page(path)
    return path


def _truncated(folder: Path) -> Path:
    path = _closed_history(folder)
    os.truncate(path, path.stat().st_size // 2)
    return path


def _emptied(folder: Path) -> Path:
    path = _closed_history(folder)
    os.truncate(path, 0)
    return path


def _junk_log_header(folder: Path) -> Path:
    path = _crash_copy(_history(folder.parent / "live"), folder)
    wal = Path(f"{path}-wal")
    with open(wal, "r+b") as handle:
        handle.write(os.urandom(32))
    return path


def _half_junk_log(folder: Path) -> Path:
    path = _crash_copy(_history(folder.parent / "live"), folder)
    wal = Path(f"{path}-wal")
    size = wal.stat().st_size
    with open(wal, "r+b") as handle:
        handle.seek(size // 2)
        handle.write(os.urandom(size - size // 2))
    return path


def _junk_in_a_frame(folder: Path) -> Path:
    path = _crash_copy(_history(folder.parent / "live"), folder)
    with open(f"{path}-wal", "r+b") as handle:
        handle.seek(32 + 24 + 100)  # inside the first frame's page
        handle.write(os.urandom(64))
    return path


DAMAGE = {"a page of the answers": _damaged_page, "truncated to half": _truncated, "emptied": _emptied,
          "junk over the log's header": _junk_log_header, "the log's second half junk": _half_junk_log,
          "junk inside the log's first frame": _junk_in_a_frame}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_damage_is_reported_on_open_and_nothing_is_changed(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "data"
    path = DAMAGE[kind](folder)
    before = _files(folder)
    with pytest.raises(DamagedProgressError) as raised:
        Progress(folder)
    error = raised.value
    assert error.path == path and not error.in_use
    assert str(error).startswith(f"the progress database {path} is damaged (")
    assert "--reset-damaged-progress" in str(error)
    assert _unchanged(folder, before)  # not repaired, not replaced, not moved


def test_a_log_left_by_a_killed_process_is_not_damage(tmp_path: Path) -> None:
    live = _history(tmp_path / "live", answers=5)
    path = _crash_copy(live, tmp_path / "crashed")
    wal = Path(f"{path}-wal").read_bytes()
    assert len(wal) > 32 and wal_damage(wal) is None
    # A kill between a frame's header and its page: the torn tail SQLite rightly drops.
    page_size = int.from_bytes(wal[8:12], "big")
    torn = wal + wal[32:32 + 24] + b"\0" * 100
    assert wal_damage(torn) is None
    assert wal_damage(wal + bytes(24 + page_size)) is None  # a frame's worth of zeros
    reopened = Progress(path.parent)
    assert len(reopened.answers()) == 5


def test_reset_damaged_moves_the_files_aside_with_a_timestamp_and_starts_fresh(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    _half_junk_log(folder)
    before = _files(folder)
    progress = Progress(folder, reset_damaged=True)
    aside = progress.set_aside
    assert aside is not None and aside.parent == folder
    assert aside.name.startswith(f"{FILE_NAME}.damaged-20") and len(aside.name) == len(FILE_NAME) + 24
    moved = {name.replace(aside.name, FILE_NAME): data for name, data in _files(folder).items()
             if name.startswith(aside.name)}
    assert moved.keys() >= {FILE_NAME, f"{FILE_NAME}-wal"}
    assert {k: v for k, v in moved.items() if not k.endswith("-shm")} == \
        {k: v for k, v in before.items() if not k.endswith("-shm")}
    assert progress.answers() == [] and progress.sessions() == []
    progress.close()
    assert Progress(folder).set_aside is None  # the fresh file is sound


def test_a_damaged_file_another_aml_quiz_has_open_is_not_moved(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    trainer = _history(folder)  # stays open: another aml-quiz
    _damage_under_a_running_quiz(trainer.progress.path)
    with pytest.raises(DamagedProgressError) as raised:
        Progress(folder, reset_damaged=True)
    assert raised.value.in_use and "another aml-quiz has it open" in str(raised.value)
    assert trainer.progress.path.exists()


# ----------------------------------------------------------------------------- --plain and the flag


def test_plain_asks_before_setting_a_damaged_file_aside_and_refuses_without_a_yes(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    path = _damaged_page(folder)
    before = _files(folder)
    for answer in ("", "n\n"):  # end of input, or no
        refused = _run(tmp_path, folder, "--mode", "practice", input=answer)
        assert refused.returncode == 2
        assert f"The progress database {path} is damaged:" in refused.stdout
        assert "start with fresh progress? Its history stays in the moved file. (y/n)> " in refused.stdout
        assert refused.stderr.startswith(f"aml-quiz: error: the progress database {path} is damaged (")
        assert "--reset-damaged-progress" in refused.stderr and "Traceback" not in refused.stderr
        assert _unchanged(folder, before)
    agreed = _run(tmp_path, folder, "--mode", "practice", "--count", "1", input="y\na\n\n")
    assert agreed.returncode == 0, agreed.stderr
    assert f"The damaged progress file is now {path}.damaged-" in agreed.stdout
    assert "Session over: " in agreed.stdout
    assert len(Progress(folder).answers()) == 1
    assert len(list(folder.glob(f"{FILE_NAME}.damaged-*"))) >= 1


def test_the_reset_flag_sets_a_damaged_file_aside_without_asking(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    path = _truncated(folder)
    result = _run(tmp_path, folder, "--mode", "practice", "--count", "1", "--reset-damaged-progress", input="a\n\n")
    assert result.returncode == 0, result.stderr
    assert "(y/n)" not in result.stdout
    assert f"The damaged progress file is now {path}.damaged-" in result.stdout


def _foreign_write(path: Path) -> None:
    """Another process writes: the running quiz's page cache is stale from then on, and its next
    read goes to the file (where the damage now is)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("INSERT INTO sessions (mode, started, question_ids) VALUES ('practice', 0, '[]')")
    finally:
        db.close()


def _damage_under_a_running_quiz(path: Path) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    finally:
        db.close()
    _damage_page(path)
    _foreign_write(path)


def test_damage_that_appears_during_plain_use_is_one_message(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    process = _start(tmp_path, folder, "--mode", "practice", "--count", "4")
    try:
        _read_until(process, "answer (")
        process.stdin.write("a\n")
        _read_until(process, "Enter for the next question")
        _damage_under_a_running_quiz(folder / FILE_NAME)
        process.stdin.write("\n")
        _read_until(process, "answer (")
        process.stdin.write("a\n")
        out, err = process.communicate(timeout=60)
    finally:
        _stop(process)
    assert process.returncode == 2
    assert "Traceback" not in err
    assert err.splitlines() == [
        f"aml-quiz: error: the progress database {folder / FILE_NAME} is damaged (database disk image is "
        "malformed); every answer saved before this is in that file; start aml-quiz again to check it"]


# ----------------------------------------------------------------------------- the app


def _ask(error: DamagedProgressError, *keys: str) -> tuple[bool | None, str]:
    app = DamagedProgressApp(error)
    shown: list[str] = []

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, ConfirmScreen)
            shown.append(str(app.screen.query_one("#confirm-question").render()))
            assert app.screen.focused.id == "no"
            await pilot.press(*keys)
            await pilot.pause()

    asyncio.run(main())
    return app.return_value, shown[0]


def test_the_app_asks_in_a_modal_and_sets_aside_only_on_yes(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    path = _damaged_page(folder)
    before = _files(folder)
    with pytest.raises(DamagedProgressError) as raised:
        Progress(folder)
    for keys in (("n",), ("escape",), ("enter",)):  # No has the focus: Enter keeps the file too
        answer, shown = _ask(raised.value, *keys)
        assert answer is False
    assert str(path) in shown and raised.value.problem in shown and "Move it aside" in shown
    assert _unchanged(folder, before)
    answer, _ = _ask(raised.value, "y")
    assert answer is True
    # What aml-quiz does with that yes.
    args = build_parser().parse_args(["--data-dir", str(folder), "--bank", str(BANK_DIR)])
    with pytest.raises(DamagedProgressError):
        build_trainer(args, lambda error: False)
    assert _unchanged(folder, before)
    trainer = build_trainer(args, lambda error: True)
    assert trainer.progress.set_aside is not None and trainer.progress.answers() == []


def test_damage_that_appears_in_the_app_ends_it_with_one_message(tmp_path: Path) -> None:
    trainer = _history(tmp_path / "data")
    app = QuizApp(trainer, cursor_blink=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            _damage_under_a_running_quiz(trainer.progress.path)
            await pilot.press("p")
            await pilot.pause(0.2)

    with pytest.raises(ProgressError) as raised:
        asyncio.run(main())
    assert app.return_code == 1
    assert "is damaged (database disk image is malformed)" in str(raised.value)
    # Textual shows an exception that renders itself as that rendering, without a traceback.
    assert str(raised.value.__rich__()) == f"aml-quiz: error: {raised.value}"


_TUI = textwrap.dedent("""
    import os, pty, select, sys, time, fcntl, struct, termios
    argv, damage_after = sys.argv[1:-1], sys.argv[-1]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(argv[0], argv, {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "32"})
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 32, 100, 0, 0))
    seen = b""
    def read(until, timeout=60):
        global seen
        deadline = time.monotonic() + timeout
        while until not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                seen += chunk
    read(b"Practice")
    time.sleep(0.5)
    print("ready", flush=True)
    sys.stdin.readline()  # the test damages the file now
    os.write(fd, b"p")
    read(b"\\x00never\\x00", timeout=20)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(repr(seen.decode("utf-8", "replace")) + "\\n" + str(os.waitstatus_to_exitcode(status)) + "\\n")
""")


def test_the_real_app_in_a_terminal_ends_with_one_line_not_a_traceback(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    _closed_history(folder)
    command = [str(Path(sys.executable).parent / "aml-quiz"), "--data-dir", str(folder), "--bank", str(BANK_DIR)]
    driver = subprocess.Popen([sys.executable, "-c", _TUI, *command, "-"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=_env(), cwd=ROOT)
    try:
        assert driver.stdout.readline().strip() == "ready"
        _damage_under_a_running_quiz(folder / FILE_NAME)
        out, _ = driver.communicate("\n", timeout=90)
    finally:
        driver.kill()
        driver.wait()
    screen, code = out.rsplit("\n", 2)[:2]
    assert code == "1", screen[-3000:]
    assert "Traceback" not in screen
    # The message is wrapped to the terminal's width, so where its lines break depends on the
    # length of the path it names: read it as one line.
    message = re.sub(r"\s*(\\r)?\\n\s*", " ", screen)
    assert "aml-quiz: error: the progress database" in message and "is damaged" in message
