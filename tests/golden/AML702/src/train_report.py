"""A trial that logs whatever its evaluation returns, under computed names."""
import argparse

import mlflow


def evaluate(depth):
    return {"val_accuracy": 0.8 + depth / 100, "val_loss": 0.3 - depth / 100}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--depth", type=int, default=3)
    args = parser.parse_args()
    for epoch in range(10):
        for name, value in evaluate(args.depth).items():
            mlflow.log_metric(name, value, step=epoch)


if __name__ == "__main__":
    main()
