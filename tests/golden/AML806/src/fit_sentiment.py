"""Fit a bag-of-words sentiment baseline on a folder of review files and log its accuracy."""

import argparse
import pathlib

import mlflow


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reviews", type=pathlib.Path, required=True)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    files = sorted(args.reviews.glob("*.txt"))
    positive = sum(1 for f in files if "great" in f.read_text().lower())
    mlflow.log_metric("accuracy", positive / max(len(files), 1))


if __name__ == "__main__":
    main()
