"""How fast the quiz starts: launch to the first question on screen, and loading a big bank.

    python bench/quiz_start.py [--rounds 5] [--questions 1000]

1. Launch: a fresh interpreter runs `aml-quiz --mode practice` headless (Textual's headless
   driver, a real app with the real bank and a fresh progress folder) and reports when the first
   question's screen has rendered. Baseline, measured in the same run: a fresh interpreter that
   renders a one-widget Textual app headless (what any Textual app pays). Target: <= 1 s.
2. Bank load: `quiz.bank.load_file` on a generated bank of N questions of every type (strict
   validation, positions for error messages). Baseline: PyYAML's C loader reading the same file
   without any checking. Target: <= 200 ms for 1,000 questions.
Both print medians and the ratio to the baseline.
"""

from __future__ import annotations

import argparse
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
    lines = ["domain: sweep", "questions:"]
    for i in range(count):
        kind = ("single", "multiple", "wrong_line", "fill_blank", "ordering", "numeric")[i % 6]
        lines += [f"  - id: sweep-generated-{i}", f"    type: {kind}", '    source: "SPEC §4.5 · Hyperparameter tuning"']
        yaml_block = ["      ```yaml", "      search_space:", "        lr: {type: choice, values: [0.1, 0.01]}",
                      "        depth: {type: choice, values: [____]}" if kind == "fill_blank" else
                      "        depth: {type: choice, values: [2, 4]}", "      ```"]
        lines += ["    prompt: |", f"      Question {i}: which of these holds for the search space below?", *yaml_block]
        if kind in ("single", "fill_blank"):
            lines += ["    options: {a: '4, 8', b: '2', c: 'x'}", "    answer: a", "    wrong: {b: No., c: No.}"]
        elif kind == "multiple":
            lines += ["    options: {a: one, b: two, c: three, d: four}", "    answer: [a, c]", "    wrong: {b: No., d: No.}"]
        elif kind == "ordering":
            lines += ["    options: {a: prep, b: train, c: score}", "    answer: [a, b, c]"]
        elif kind == "wrong_line":
            lines += ["    answer: 2"]
        else:
            lines += ["    answer: 4", "    check: {grid_size: {}}"]
        lines += ["    explanation: Because the grid is the product of the choice lists."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--questions", type=int, default=1000)
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
    ok = load <= LOAD_TARGET and launch <= LAUNCH_TARGET
    print("targets met" if ok else "target missed")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
