"""A small training script for the SDK fixtures: reads its arguments, logs a metric per epoch
to MLflow, writes a model file to its output folder (when given one)."""

import argparse
import os
from pathlib import Path

import mlflow

parser = argparse.ArgumentParser()
parser.add_argument("--data", default=None)
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--flag", default="False")
parser.add_argument("--model", default=None)
args = parser.parse_args()

rows = 0
if args.data and Path(args.data).is_file():
    rows = len(Path(args.data).read_text().splitlines())
elif args.data and Path(args.data).is_dir():
    rows = sum(len(p.read_text().splitlines()) for p in Path(args.data).glob("*.csv"))
for epoch in range(args.epochs):
    mlflow.log_metric("acc", round(1 - args.lr / (epoch + 1), 4), step=epoch)
print(f"rows={rows} lr={args.lr} epochs={args.epochs} flag={args.flag} rank={os.environ.get('RANK', '-')}")
Path("outputs").mkdir(exist_ok=True)
(Path("outputs") / "model.txt").write_text(f"lr={args.lr}\n")
if args.model:
    Path(args.model).mkdir(parents=True, exist_ok=True)
    (Path(args.model) / "model.txt").write_text(f"lr={args.lr}\n")
