"""Fit a logistic regression on the clean CSV and save its weights under --model.

With --warm-start FOLDER (a model.json written by an earlier run) training starts from those
weights instead of zeros.
"""

import argparse
import csv
import json
import math
import pathlib


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True, type=pathlib.Path)
    parser.add_argument("--model", required=True, type=pathlib.Path)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--warm-start", type=pathlib.Path)
    args = parser.parse_args()

    import mlflow

    with (args.data / "churn.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    labels = [int(row.pop("churned")) for row in rows]
    features = [[float(v) for v in row.values()] for row in rows]
    weights = [0.0] * (len(features[0]) + 1)
    if args.warm_start:
        weights = json.loads((args.warm_start / "model.json").read_text())["weights"]
    for epoch in range(10):
        loss = 0.0
        for x, y in zip(features, labels):
            z = max(min(weights[0] + sum(w * v for w, v in zip(weights[1:], x)), 30), -30)
            p = 1 / (1 + math.exp(-z))
            loss -= y * math.log(p + 1e-12) + (1 - y) * math.log(1 - p + 1e-12)
            weights[0] -= args.lr * (p - y)
            weights[1:] = [w - args.lr * (p - y) * v for w, v in zip(weights[1:], x)]
        mlflow.log_metric("loss", loss / len(labels), step=epoch)
    args.model.mkdir(parents=True, exist_ok=True)
    (args.model / "model.json").write_text(json.dumps({"weights": weights}))


if __name__ == "__main__":
    main()
