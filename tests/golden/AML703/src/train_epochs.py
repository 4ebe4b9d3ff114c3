"""Logs the validation loss after every epoch, from an evaluation helper."""
import argparse

import mlflow


def evaluate(loss, epoch):
    mlflow.log_metric("val_loss", loss, step=epoch)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()
    loss = 1.0
    for epoch in range(args.epochs):
        loss *= 1 - args.lr
        evaluate(loss, epoch)


if __name__ == "__main__":
    main()
