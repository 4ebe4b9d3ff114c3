"""How fast the quiz starts: launch to the first question on screen, and loading a big bank.

    python bench/quiz_start.py [--rounds 5] [--questions 1000]

1. Launch: a fresh interpreter runs `aml-quiz --mode practice` headless (Textual's headless
   driver, a real app with the real bank and a fresh progress folder) and reports when the first
   question's screen has rendered. Baseline, measured in the same run: a fresh interpreter that
   renders a one-widget Textual app headless (what any Textual app pays). Target: <= 1 s.
2. Bank load: `quiz.bank.load_file` on a generated bank of N questions of every type (strict
   validation, positions for error messages). Baseline: PyYAML's C loader reading the same file
   without any checking. Target: <= 200 ms for 1,000 questions.
3. Progress open: `quiz.store.Progress` on a folder holding N answers (default 10,000), with the
   check on open (quick_check, every row read back, the write-ahead log a killed process left).
   Baseline: sqlite3 connecting to the same file and counting its answers. Target: <= 150 ms.
All print medians and the ratio to the baseline.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LAUNCH_TARGET = 1.0
LOAD_TARGET = 0.200
OPEN_TARGET = 0.150

_APP = """
import asyncio, sys, time
start = float(sys.argv[1])
from quiz.cli import build_parser
from quiz.session_runner import build_trainer
from quiz.app import QuizApp
from quiz.screens.question import QuestionScreen

args = build_parser().parse_args(["--mode", "practice", "--data-dir", sys.argv[2]])
app = QuizApp(build_trainer(args), mode="practice")

async def main():
    async with app.run_test(headless=True, size=(100, 32)) as pilot:
        while not isinstance(app.screen, QuestionScreen):
            await asyncio.sleep(0.002)
        await pilot.pause()  # the screen's first frame is drawn
        print(time.time() - start)
asyncio.run(main())
"""

_BASELINE = """
import sys, time
start = float(sys.argv[1])
from textual.app import App
from textual.widgets import Static

class One(App):
    def compose(self):
        yield Static("hello")

async def main():
    app = One()
    async with app.run_test(headless=True, size=(100, 32)) as pilot:
        await pilot.pause()
        print(time.time() - start)
import asyncio
asyncio.run(main())
"""


def _timed(script: str, *extra: str) -> float:
    result = subprocess.run([sys.executable, "-c", script, str(time.time()), *extra], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise SystemExit(f"bench script failed:\n{result.stderr[-2000:]}")
    return float(result.stdout.strip().splitlines()[-1])


def generated_bank(count: int) -> str:
    """``count`` questions of every type (a yes/no question as one solution of a series of two),
    held to the built-in bank's rules: sources by URL, an evidence level."""
    kinds = ("single", "multiple", "wrong_line", "fill_blank", "ordering", "numeric", "build_list", "multi_blank",
             "yes_no")
    source = "    sources: [https://learn.microsoft.com/azure/machine-learning/how-to-tune-hyperparameters]"
    lines = ["domain: sweep", "questions:"]
    i = 0
    while i < count:
        kind = kinds[i % len(kinds)]
        if kind == "yes_no" and i + 1 < count:
            lines += [f"  - series: sweep-generated-series-{i}", source, "    evidence: documented",
                      f"    problem: Problem {i}, a sweep that must stop trials early.", "    solutions:"]
            for n in range(2):
                lines += [f"      - solution: Solution {n}.", f"        answer: {'yes' if n else 'no'}",
                          "        explanation: Because of the policy."]
            i += 2
            continue
        if kind == "yes_no":
            kind = "single"
        lines += [f"  - id: sweep-generated-{i}", f"    type: {kind}", source, "    evidence: documented"]
        yaml_block = ["      ```yaml", "      search_space:", "        lr: {type: choice, values: [0.1, 0.01]}",
                      "        depth: {type: choice, values: [____]}" if kind == "fill_blank" else
                      "        depth: {type: choice, values: [___1___]}" if kind == "multi_blank" else
                      "        depth: {type: choice, values: [2, 4]}",
                      "        seed: ___2___" if kind == "multi_blank" else "        seed: 7", "      ```"]
        lines += ["    prompt: |", f"      Question {i}: which of these holds for the search space below?"
                  + (" Choose two." if kind == "multiple" else ""), *yaml_block]
        if kind in ("single", "fill_blank"):
            lines += ["    options: {a: '4, 8', b: '2', c: 'x'}", f"    answer: {'abc'[i % 3]}",
                      "    wrong: {" + ", ".join(f"{k}: No." for k in "abc" if k != "abc"[i % 3]) + "}"]
        elif kind == "multiple":
            lines += ["    options: {a: one, b: two, c: three, d: four}", "    answer: [a, c]", "    wrong: {b: No., d: No.}"]
        elif kind == "ordering":
            lines += ["    options: {a: prep, b: train, c: score}", "    answer: [a, b, c]"]
        elif kind == "build_list":
            lines += ["    options: {a: prep, b: train, c: score, d: deploy}", "    answer: [a, b, c]",
                      "    wrong: {d: Not part of training.}"]
        elif kind == "multi_blank":
            lines += ["    blanks:", "      1: {options: {a: '2, 4', b: '8'}, answer: a}",
                      "      2: {options: {a: '7', b: 'x', c: 'y'}, answer: a}", "    answer: blanks"]
        elif kind == "wrong_line":
            lines += ["    answer: 2"]
        else:
            lines += ["    answer: 4", "    arithmetic: true", "    check: {grid_size: {}}"]
        lines += ["    explanation: Because the grid is the product of the choice lists."]
        i += 1
    return "\n".join(lines) + "\n"


def progress_folder(folder: Path, answers: int) -> None:
    """A folder with ``answers`` answers and their cards, written through the store, and the
    last hundred left in the write-ahead log as a killed process leaves them."""
    import json
    import os
    import sqlite3

    from fsrs import Card

    from quiz.store import Progress

    progress = Progress(folder)
    card = Card()
    session = progress.start_session("practice", [f"q-{i}" for i in range(200)])
    progress.close()
    db = sqlite3.connect(folder / "progress.sqlite3")
    with db:  # in bulk, straight into the store's tables
        db.executemany(
            "INSERT INTO answers (session_id, question_id, response, correct, seconds, mode, answered_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(session, f"q-{i % 200}", json.dumps(["a", "c"]), i % 3 != 0, 12.5, "practice", 1.8e9 + i)
             for i in range(answers - 100)])
        db.executemany("INSERT OR REPLACE INTO cards (question_id, card, due) VALUES (?, ?, ?)",
                       [(f"q-{i}", card.to_json(), card.due.timestamp()) for i in range(200)])
    db.close()
    # A process that answers a hundred more and is killed: its log is left for the next open.
    script = (f"import os, sys; sys.path.insert(0, {str(ROOT)!r}); from quiz.store import Progress; "
              f"p = Progress({str(folder)!r})\n"
              f"for i in range(100): p.record({session}, 'q-1', 'a', True, 3.0, 'practice')\n"
              "os._exit(0)")
    subprocess.run([sys.executable, "-c", script], check=True)
    assert os.path.getsize(f"{folder}/progress.sqlite3-wal") > 0


def _open_progress(folder: Path) -> float:
    from quiz.store import Progress

    started = time.perf_counter()
    progress = Progress(folder)
    elapsed = time.perf_counter() - started
    progress.close()
    return elapsed


def _open_sqlite(folder: Path) -> float:
    import sqlite3

    started = time.perf_counter()
    db = sqlite3.connect(folder / "progress.sqlite3")
    db.execute("SELECT COUNT(*) FROM answers").fetchone()
    elapsed = time.perf_counter() - started
    db.close()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--answers", type=int, default=10000)
    args = parser.parse_args()

    import yaml

    from quiz.bank import load_file

    with tempfile.TemporaryDirectory() as scratch:
        bank = Path(scratch) / "generated.yml"
        bank.write_text(generated_bank(args.questions))
        loads, parses = [], []
        for _ in range(args.rounds):
            started = time.perf_counter()
            assert len(load_file(bank)) == args.questions
            loads.append(time.perf_counter() - started)
            started = time.perf_counter()
            yaml.load(bank.read_text(), Loader=yaml.CSafeLoader)
            parses.append(time.perf_counter() - started)
        load, parse = statistics.median(loads), statistics.median(parses)
        print(f"bank load, {args.questions} questions: {load * 1000:.0f} ms (target <= {LOAD_TARGET * 1000:.0f} ms); "
              f"PyYAML C loader alone {parse * 1000:.0f} ms; ratio {load / parse:.2f}x")

        launches, baselines = [], []
        for round_ in range(args.rounds):
            launches.append(_timed(_APP, str(Path(scratch) / f"data{round_}")))
            baselines.append(_timed(_BASELINE))
        launch, baseline = statistics.median(launches), statistics.median(baselines)
        print(f"launch to first question: {launch * 1000:.0f} ms (target <= {LAUNCH_TARGET * 1000:.0f} ms); "
              f"a one-widget Textual app {baseline * 1000:.0f} ms; ratio {launch / baseline:.2f}x")
        opens, connects = [], []
        for round_ in range(args.rounds):
            # A fresh crashed folder each round: a clean close checkpoints the log away.
            folder = Path(scratch) / f"progress{round_}"
            progress_folder(folder, args.answers)
            # The baseline first: plain sqlite3 replays the log and checkpoints it on close, so
            # the timed Progress open gets its own crashed copy.
            copy = Path(scratch) / f"progress{round_}-copy"
            shutil.copytree(folder, copy)
            connects.append(_open_sqlite(copy))
            opens.append(_open_progress(folder))
        opened, connected = statistics.median(opens), statistics.median(connects)
        print(f"progress open with {args.answers} answers and a left-over log: {opened * 1000:.0f} ms "
              f"(target <= {OPEN_TARGET * 1000:.0f} ms); sqlite3 connect and count {connected * 1000:.0f} ms; "
              f"ratio {opened / connected:.2f}x")
    ok = load <= LOAD_TARGET and launch <= LAUNCH_TARGET and opened <= OPEN_TARGET
    print("targets met" if ok else "target missed")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
