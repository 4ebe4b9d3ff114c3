"""Train step of the pipeline examples."""
import argparse

import mlflow


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    for epoch in range(args.epochs):
        mlflow.log_metric("train_loss", 1.0 / (epoch + 1), step=epoch)


if __name__ == "__main__":
    main()
