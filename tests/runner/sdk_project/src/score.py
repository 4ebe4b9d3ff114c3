"""Reads the model folder train.py wrote and writes a report."""

import argparse
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--model", required=True)
parser.add_argument("--report", required=True)
args = parser.parse_args()
model = (Path(args.model) / "model.txt").read_text()
Path(args.report).mkdir(parents=True, exist_ok=True)
(Path(args.report) / "report.txt").write_text(f"scored {model}")
print(f"scored {model.strip()}")
