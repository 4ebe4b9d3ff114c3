"""Score the trained logistic regression on the clean data: accuracy, logged and reported."""

import argparse
import csv
import json
import math
import pathlib


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, type=pathlib.Path)
    parser.add_argument("--data", required=True, type=pathlib.Path)
    parser.add_argument("--report", required=True, type=pathlib.Path)
    args = parser.parse_args()

    import mlflow

    weights = json.loads((args.model / "model.json").read_text())["weights"]
    with (args.data / "churn.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    correct = 0
    for row in rows:
        label = int(row.pop("churned"))
        z = weights[0] + sum(w * float(v) for w, v in zip(weights[1:], row.values()))
        correct += int((1 / (1 + math.exp(-max(min(z, 30), -30))) > 0.5) == bool(label))
    accuracy = correct / len(rows)
    mlflow.log_metric("accuracy", accuracy)
    args.report.mkdir(parents=True, exist_ok=True)
    (args.report / "report.json").write_text(json.dumps({"accuracy": accuracy, "rows": len(rows)}))
    print(f"accuracy {accuracy:.3f} on {len(rows)} rows")


if __name__ == "__main__":
    main()
