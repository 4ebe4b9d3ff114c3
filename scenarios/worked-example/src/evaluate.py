"""Score a trained model on the test rows (never used to train or to choose it); log `test_auc`
and write report.json to --report."""

import argparse
import json
import pathlib

from churn_model import ResidualNet, auc, split


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, type=pathlib.Path)
    parser.add_argument("--data", required=True, type=pathlib.Path)
    parser.add_argument("--report", required=True, type=pathlib.Path)
    args = parser.parse_args()

    import mlflow

    x_test, y_test = split(args.data)["test"]
    score = auc(ResidualNet.load(args.model).forward(x_test)[1], y_test)
    mlflow.log_metric("test_auc", score)
    params = json.loads((args.model / "params.json").read_text())
    args.report.mkdir(parents=True, exist_ok=True)
    (args.report / "report.json").write_text(json.dumps({"test_auc": score, "test_rows": len(y_test),
                                                         "trained_with": params}, indent=2))
    print(f"test auc {score:.4f} on {len(y_test)} rows (model trained with {params})")


if __name__ == "__main__":
    main()
