"""Train a classifier; the options below are all this script accepts."""
import argparse

import mlflow


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=str, required=True)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--learning-rate-decay", type=float, default=0.0)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("-b", "--batch-size", type=int, default=32)
    parser.add_argument("--shuffle", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--model-output", type=str, default="./outputs/model")
    return parser.parse_args()


def main():
    args = parse_args()
    for epoch in range(args.epochs):
        mlflow.log_metric("train_loss", 1.0 / (epoch + 1), step=epoch)


if __name__ == "__main__":
    main()
