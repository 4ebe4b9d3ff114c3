"""Gradient-boosted regression trees on a synthetic churn set, in plain Python.

--lr shrinks each tree's contribution, --depth limits each tree; every boosting round logs the
validation AUC, which is the sweep's primary metric (one log = one policy interval).
"""

import argparse
import random


def make_data(rows: int, seed: int) -> tuple[list[list[float]], list[int]]:
    rng = random.Random(seed)
    features, labels = [], []
    for _ in range(rows):
        tenure, charges, calls, contract = rng.random(), rng.random(), rng.random(), rng.random()
        risk = 1.5 * charges + 1.2 * calls - 2.0 * tenure * contract + rng.gauss(0, 0.3)
        features.append([tenure, charges, calls, contract])
        labels.append(1 if risk > 0.4 else 0)
    return features, labels


def fit_tree(x: list[list[float]], residual: list[float], depth: int) -> object:
    """A regression tree as nested tuples: (feature, threshold, left, right) or a leaf value."""
    mean = sum(residual) / len(residual)
    if depth == 0 or len(residual) < 8:
        return mean
    best = None
    for feature in range(len(x[0])):
        for threshold in (0.2, 0.4, 0.6, 0.8):
            left = [r for row, r in zip(x, residual) if row[feature] < threshold]
            right = [r for row, r in zip(x, residual) if row[feature] >= threshold]
            if not left or not right:
                continue
            loss = -(sum(left) ** 2 / len(left) + sum(right) ** 2 / len(right))
            if best is None or loss < best[0]:
                best = (loss, feature, threshold)
    if best is None:
        return mean
    _, feature, threshold = best
    go_left = [row[feature] < threshold for row in x]
    left = fit_tree([r for r, g in zip(x, go_left) if g], [e for e, g in zip(residual, go_left) if g], depth - 1)
    right = fit_tree([r for r, g in zip(x, go_left) if not g],
                     [e for e, g in zip(residual, go_left) if not g], depth - 1)
    return (feature, threshold, left, right)


def predict(tree: object, row: list[float]) -> float:
    while isinstance(tree, tuple):
        feature, threshold, left, right = tree
        tree = left if row[feature] < threshold else right
    return tree


def auc(scores: list[float], labels: list[int]) -> float:
    pairs = [(s, l) for s, l in zip(scores, labels)]
    positives = [s for s, l in pairs if l]
    negatives = [s for s, l in pairs if not l]
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / max(1, len(positives) * len(negatives))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--depth", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    import mlflow

    x_train, y_train = make_data(400, seed=1)
    x_valid, y_valid = make_data(200, seed=2)
    train_scores = [0.0] * len(x_train)
    valid_scores = [0.0] * len(x_valid)
    for round_index in range(args.rounds):
        residual = [y - s for y, s in zip(y_train, train_scores)]
        tree = fit_tree(x_train, residual, args.depth)
        train_scores = [s + args.lr * predict(tree, row) for s, row in zip(train_scores, x_train)]
        valid_scores = [s + args.lr * predict(tree, row) for s, row in zip(valid_scores, x_valid)]
        mlflow.log_metric("auc", auc(valid_scores, y_valid), step=round_index)


if __name__ == "__main__":
    main()
