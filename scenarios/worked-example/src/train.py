"""Fit the churn model; log the validation AUC after every epoch (step = epoch).

In the sweep each logged `auc` is one interval of the bandit policy, and the weights go to
./outputs/model (uploaded with the trial); in the pipeline --model is the step's output.
"""

import argparse
import json
import pathlib

from churn_model import ResidualNet, auc, split


def whole_number(text: str) -> int:
    """An int from "4" or "4.0" (a sweep's quniform values are floats)."""
    value = float(text)
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True, type=pathlib.Path, help="a folder of churn CSV files")
    parser.add_argument("--lr", type=float, required=True, help="gradient descent step size")
    parser.add_argument("--depth", type=whole_number, required=True, help="number of residual blocks")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--model", type=pathlib.Path, default=pathlib.Path("outputs/model"))
    args = parser.parse_args()

    import mlflow  # the service (and aml-run) starts the run; the script only logs to it

    data = split(args.data)
    (x, y), (x_valid, y_valid) = data["train"], data["valid"]
    net = ResidualNet(args.depth)
    print(f"lr {args.lr:.4g}, depth {args.depth}: {len(y)} training rows, {len(y_valid)} validation rows")
    for epoch in range(args.epochs):
        net.step(x, y, args.lr)
        score = auc(net.forward(x_valid)[1], y_valid)
        mlflow.log_metric("auc", score, step=epoch)
        if epoch % 10 == 9:
            print(f"epoch {epoch + 1}/{args.epochs}: validation auc {score:.4f}", flush=True)
    net.save(args.model)
    (args.model / "params.json").write_text(json.dumps({"lr": args.lr, "depth": args.depth, "epochs": args.epochs}))
    print(f"weights in {args.model}/model.npz")


if __name__ == "__main__":
    main()
