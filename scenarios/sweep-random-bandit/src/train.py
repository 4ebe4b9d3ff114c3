"""Train a small residual network on the synthetic churn table; log validation metrics per epoch.

--depth is the number of residual blocks between the input layer and the output: each block is
a hidden layer of --width tanh units whose output is added to what flows through (h + f(h)).
--lr is the step size of gradient descent on the log loss; an epoch is one step computed on all
3000 training rows, and after each one the script logs the validation AUC (`auc`) and log loss
(`val_loss`) with step = epoch. In a sweep each logged value of the primary metric is one
interval of the early-termination policy.

Every trial starts from the same random weights (--seed): the input and output layers are drawn
first and each block starts at zero, so before training every depth computes the same function,
one that ranks customers no better than chance (validation AUC 0.50 with the default width and
seed). How far a trial gets in a given number of epochs then depends on its hyperparameters only:
a small lr barely moves the weights, and a deeper net moves more of them at each step. The run is
deterministic given its arguments. The weights go to ./outputs/model.npz.
"""

import argparse
import os
import pathlib
import time

# Several trials share the machine: one BLAS thread each is faster than all of them fighting.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

from churn_data import auc, train_valid_split  # noqa: E402


class ResidualNet:
    def __init__(self, depth: int, width: int, rng: np.random.Generator) -> None:
        self.w_in = rng.normal(0, 1 / np.sqrt(4), (4, width))
        self.b_in = np.zeros(width)
        self.w_out = rng.normal(0, 1 / np.sqrt(width), (width, 1))
        self.b_out = np.zeros(1)
        # Each block: a = tanh(h @ w1 + b1); h = h + a @ w2 + b2, with w2 = 0 at the start.
        self.blocks = [[rng.normal(0, 1 / np.sqrt(width), (width, width)), np.zeros(width),
                        np.zeros((width, width)), np.zeros(width)] for _ in range(depth)]

    def forward(self, x: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        """The activations (for the gradient) and the logits z: P(churn) = 1 / (1 + exp(-z))."""
        h = np.tanh(x @ self.w_in + self.b_in)
        trace = [h]
        for w1, b1, w2, b2 in self.blocks:
            a = np.tanh(h @ w1 + b1)
            h = h + a @ w2 + b2
            trace += [a, h]
        return trace, (h @ self.w_out + self.b_out)[:, 0]

    def gradient_step(self, x: np.ndarray, y: np.ndarray, lr: float) -> None:
        trace, z = self.forward(x)
        g = ((sigmoid(z) - y) / len(y))[:, None]  # d(mean log loss)/dz
        grad_h = g @ self.w_out.T
        self.w_out -= lr * trace[-1].T @ g
        self.b_out -= lr * g.sum(axis=0)
        for index in range(len(self.blocks) - 1, -1, -1):
            w1, b1, w2, b2 = self.blocks[index]
            a, h_before = trace[2 * index + 1], trace[2 * index]
            grad_a = (grad_h @ w2.T) * (1 - a * a)
            w2 -= lr * a.T @ grad_h
            b2 -= lr * grad_h.sum(axis=0)
            grad_h = grad_h + grad_a @ w1.T
            w1 -= lr * h_before.T @ grad_a
            b1 -= lr * grad_a.sum(axis=0)
        grad_in = grad_h * (1 - trace[0] ** 2)
        self.w_in -= lr * x.T @ grad_in
        self.b_in -= lr * grad_in.sum(axis=0)

    def save(self, path: pathlib.Path) -> None:
        arrays = {"w_in": self.w_in, "b_in": self.b_in, "w_out": self.w_out, "b_out": self.b_out}
        for index, (w1, b1, w2, b2) in enumerate(self.blocks):
            arrays.update({f"block{index}_w1": w1, f"block{index}_b1": b1,
                           f"block{index}_w2": w2, f"block{index}_b2": b2})
        np.savez(path, **arrays)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(z / 2))  # no overflow for large |z|


def log_loss(z: np.ndarray, y: np.ndarray) -> float:
    """Mean cross-entropy of the labels y under P(churn) = sigmoid(z)."""
    return float(np.mean(np.logaddexp(0, z) - y * z))


def whole_number(text: str) -> int:
    """An int from "4" or "4.0": a sweep's quniform values are floats (round(x / q) * q)."""
    value = float(text)
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, required=True, help="gradient descent step size")
    parser.add_argument("--depth", type=whole_number, required=True, help="number of residual blocks")
    parser.add_argument("--width", type=whole_number, default=64, help="units per hidden layer")
    parser.add_argument("--epochs", type=int, default=18)
    parser.add_argument("--seed", type=int, default=7, help="the initial weights")
    args = parser.parse_args()

    import mlflow  # the service (and aml-run) starts the run; the script only logs to it

    x_train, y_train, x_valid, y_valid = train_valid_split()
    net = ResidualNet(args.depth, args.width, np.random.default_rng(args.seed))
    print(f"lr {args.lr}, depth {args.depth}, width {args.width}: {len(y_train)} training rows, "
          f"{len(y_valid)} validation rows, {args.epochs} epochs", flush=True)
    started = time.process_time()
    for epoch in range(args.epochs):
        net.gradient_step(x_train, y_train, args.lr)
        z = net.forward(x_valid)[1]
        score, loss = auc(z, y_valid), log_loss(z, y_valid)
        mlflow.log_metrics({"auc": score, "val_loss": loss}, step=epoch)
        if epoch % 3 == 2 or epoch == args.epochs - 1:
            print(f"epoch {epoch + 1}/{args.epochs}: validation auc {score:.4f}, log loss {loss:.4f}", flush=True)
    outputs = pathlib.Path("outputs")
    outputs.mkdir(exist_ok=True)
    net.save(outputs / "model.npz")
    print(f"trained in {time.process_time() - started:.1f} s of CPU; weights in outputs/model.npz")


if __name__ == "__main__":
    main()
