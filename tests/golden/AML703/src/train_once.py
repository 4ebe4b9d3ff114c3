"""Trains for many epochs but logs the validation loss once, at the end."""
import argparse

import mlflow


def train(lr, epochs):
    loss = 1.0
    for _ in range(epochs):
        loss *= 1 - lr
    return loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()
    val_loss = train(args.lr, args.epochs)
    mlflow.log_metric("val_loss", val_loss)


if __name__ == "__main__":
    main()
