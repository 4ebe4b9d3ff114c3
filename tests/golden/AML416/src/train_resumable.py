"""Trains for a number of epochs, saving a checkpoint to ./outputs after each one and resuming
from the latest checkpoint when the job is restarted after a preemption."""

import argparse
import json
import os

import mlflow

CHECKPOINT = os.path.join("outputs", "checkpoint.json")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    state = {"epoch": 0, "loss": 1.0}
    if os.path.exists(CHECKPOINT):
        with open(CHECKPOINT) as handle:
            state = json.load(handle)
    os.makedirs("outputs", exist_ok=True)
    for epoch in range(state["epoch"], args.epochs):
        state = {"epoch": epoch + 1, "loss": state["loss"] * (1.0 - args.lr)}
        mlflow.log_metric("val_loss", state["loss"], step=epoch)
        with open(CHECKPOINT, "w") as handle:
            json.dump(state, handle)


if __name__ == "__main__":
    main()
