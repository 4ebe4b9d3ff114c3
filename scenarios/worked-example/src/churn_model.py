"""The worked example's model and data split, shared by train.py and evaluate.py.

The churn table (scenarios/command-job/make_data.py: 600 customers, four features) is split by
row order: the first 60 % train, the next 20 % validate (what a sweep compares trials on) and
the last 20 % test (what the pipeline's evaluate step scores, never seen while choosing). The
model is a small residual network of tanh blocks fitted by full-batch gradient descent on the
log loss; every block starts at zero, so before training each depth computes the same function.
"""

from __future__ import annotations

import csv
import os
import pathlib

# Several trials share the machine: one BLAS thread each is faster than all of them fighting.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

FEATURES = ["tenure_years", "monthly_charges_100", "support_calls", "month_to_month"]


def read_table(folder: pathlib.Path) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of every complete row of the CSV files in ``folder``."""
    features, labels = [], []
    for path in sorted(folder.rglob("*.csv")):
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                if all((row.get(column) or "").strip() for column in [*FEATURES, "churned"]):
                    features.append([float(row[column]) for column in FEATURES])
                    labels.append(float(row["churned"]))
    return np.array(features), np.array(labels)


def split(folder: pathlib.Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"train", "valid", "test"}: (x, y), standardised with the training rows' statistics."""
    x, y = read_table(folder)
    first, second = int(len(y) * 0.6), int(len(y) * 0.8)
    mean, std = x[:first].mean(axis=0), x[:first].std(axis=0) + 1e-9
    x = (x - mean) / std
    return {"train": (x[:first], y[:first]), "valid": (x[first:second], y[first:second]),
            "test": (x[second:], y[second:])}


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(z / 2))  # no overflow for large |z|


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve: the chance a churner scores above a stayer (ties count half)."""
    positive, negative = scores[labels == 1], scores[labels == 0]
    if not len(positive) or not len(negative):
        return 0.5
    above = (positive[:, None] > negative[None, :]).sum() + 0.5 * (positive[:, None] == negative[None, :]).sum()
    return float(above / (len(positive) * len(negative)))


class ResidualNet:
    def __init__(self, depth: int, width: int = 16, seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        self.w_in = rng.normal(0, 0.5, (len(FEATURES), width))
        self.w_out = rng.normal(0, 1 / np.sqrt(width), (width, 1))
        # Each block: h = h + tanh(h @ w1) @ w2, with w2 = 0 at the start.
        self.blocks = [[rng.normal(0, 1 / np.sqrt(width), (width, width)), np.zeros((width, width))]
                       for _ in range(depth)]

    def forward(self, x: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        h = np.tanh(x @ self.w_in)
        trace = [h]
        for w1, w2 in self.blocks:
            a = np.tanh(h @ w1)
            h = h + a @ w2
            trace += [a, h]
        return trace, (h @ self.w_out)[:, 0]

    def step(self, x: np.ndarray, y: np.ndarray, lr: float) -> None:
        trace, z = self.forward(x)
        grad_z = ((sigmoid(z) - y) / len(y))[:, None]
        grad_h = grad_z @ self.w_out.T
        self.w_out -= lr * trace[-1].T @ grad_z
        for index in range(len(self.blocks) - 1, -1, -1):
            w1, w2 = self.blocks[index]
            a, h_before = trace[2 * index + 1], trace[2 * index]
            grad_a = (grad_h @ w2.T) * (1 - a * a)
            w2 -= lr * a.T @ grad_h
            grad_h = grad_h + grad_a @ w1.T
            w1 -= lr * h_before.T @ grad_a
        self.w_in -= lr * x.T @ (grad_h * (1 - trace[0] ** 2))

    def save(self, folder: pathlib.Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        arrays = {"w_in": self.w_in, "w_out": self.w_out}
        for index, (w1, w2) in enumerate(self.blocks):
            arrays.update({f"block{index}_w1": w1, f"block{index}_w2": w2})
        np.savez(folder / "model.npz", **arrays)

    @classmethod
    def load(cls, folder: pathlib.Path) -> "ResidualNet":
        arrays = np.load(folder / "model.npz")
        net = cls(depth=0, width=arrays["w_out"].shape[0])
        net.w_in, net.w_out = arrays["w_in"], arrays["w_out"]
        net.blocks = [[arrays[f"block{i}_w1"], arrays[f"block{i}_w2"]]
                      for i in range(sum(1 for key in arrays.files if key.endswith("_w1")))]
        return net
