"""A small job for serverless compute: fit a one-feature churn model, log it, write files.

Everything under ./outputs is uploaded with the job when it ends; ./logs is uploaded while it
runs, so progress.log can be read in the studio before the job finishes. The data is generated
here (a fixed seed), so the job needs no data asset.
"""

import argparse
import json
import math
import pathlib
import random


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()

    import mlflow  # the service (and aml-run) starts the run; the script only logs to it

    rng = random.Random(7)
    rows = [(x, 1 if rng.random() < 1 / (1 + math.exp(-(8 * x - 4))) else 0)
            for x in (rng.random() for _ in range(400))]
    logs, outputs = pathlib.Path("logs"), pathlib.Path("outputs")
    logs.mkdir(exist_ok=True)
    outputs.mkdir(exist_ok=True)
    w = b = 0.0
    with open(logs / "progress.log", "w") as progress:
        for epoch in range(args.epochs):
            loss = 0.0
            for x, y in rows:
                p = 1 / (1 + math.exp(-(w * x + b)))
                loss -= y * math.log(p + 1e-12) + (1 - y) * math.log(1 - p + 1e-12)
                w -= args.lr * (p - y) * x
                b -= args.lr * (p - y)
            loss /= len(rows)
            mlflow.log_metric("loss", loss, step=epoch)
            progress.write(f"epoch {epoch + 1}/{args.epochs}: loss {loss:.4f}\n")
            progress.flush()
    (outputs / "model.json").write_text(json.dumps({"w": w, "b": b}))
    print(f"loss {loss:.4f}; model written to outputs/model.json, progress to logs/progress.log")


if __name__ == "__main__":
    main()
