"""Score step."""
import argparse

import mlflow


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threshold", type=float, default=0.5)
    args = parser.parse_args()
    mlflow.log_metric("threshold", args.threshold)


if __name__ == "__main__":
    main()
