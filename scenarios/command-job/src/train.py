"""Train a churn classifier (logistic regression, plain Python) and log AUC to MLflow.

Reads every *.csv under --data (columns: feature columns..., churned as 0/1) and writes the
model to ./outputs/model.json, which the service uploads with the job, and one line per epoch
to ./logs/progress.log, which the service uploads while the job runs.
"""

import argparse
import csv
import json
import math
import pathlib


def load_rows(folder: pathlib.Path) -> tuple[list[list[float]], list[int]]:
    features, labels = [], []
    for path in sorted(folder.rglob("*.csv")):
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                labels.append(int(row.pop("churned")))
                features.append([float(v) for v in row.values()])
    return features, labels


def auc(scores: list[float], labels: list[int]) -> float:
    """Probability that a random churner scores above a random stayer (ties count half)."""
    ranked = sorted(zip(scores, labels))
    positives = sum(labels)
    negatives = len(labels) - positives
    if not positives or not negatives:
        return 0.5
    rank_sum, index = 0.0, 0
    while index < len(ranked):
        end = index
        while end < len(ranked) and ranked[end][0] == ranked[index][0]:
            end += 1
        average_rank = (index + end + 1) / 2
        rank_sum += average_rank * sum(label for _, label in ranked[index:end])
        index = end
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True, type=pathlib.Path)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()

    import mlflow  # the service (and aml-run) starts the run; we only log to it

    features, labels = load_rows(args.data)
    logs = pathlib.Path("logs")
    logs.mkdir(exist_ok=True)
    progress = (logs / "progress.log").open("w")
    weights = [0.0] * (len(features[0]) + 1)
    for epoch in range(args.epochs):
        for x, y in zip(features, labels):
            z = weights[0] + sum(w * v for w, v in zip(weights[1:], x))
            error = 1 / (1 + math.exp(-max(min(z, 30), -30))) - y
            weights[0] -= args.lr * error
            weights[1:] = [w - args.lr * error * v for w, v in zip(weights[1:], x)]
        scores = [weights[0] + sum(w * v for w, v in zip(weights[1:], x)) for x in features]
        score = auc(scores, labels)
        mlflow.log_metric("auc", score, step=epoch)
        progress.write(f"epoch {epoch + 1}/{args.epochs}: auc {score:.4f}\n")
        progress.flush()
        if epoch % 5 == 4 or epoch == args.epochs - 1:
            print(f"epoch {epoch + 1}/{args.epochs}: auc {score:.4f}")
    progress.close()
    outputs = pathlib.Path("outputs")
    outputs.mkdir(exist_ok=True)
    (outputs / "model.json").write_text(json.dumps({"weights": weights}))
    print(f"trained on {len(labels)} rows; model written to outputs/model.json")


if __name__ == "__main__":
    main()
