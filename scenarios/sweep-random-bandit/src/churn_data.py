"""The synthetic churn table of scenarios/command-job/make_data.py, built in memory.

Same generator, same seed, same columns: the first 600 rows are exactly that lab's churn.csv.
A sweep's trials take no inputs here, so every trial builds the same table itself.
"""

import math
import random

SEED = 20240611
COLUMNS = ["tenure_years", "monthly_charges_100", "support_calls", "month_to_month"]


def make_table(rows: int, seed: int = SEED) -> tuple[list[list[float]], list[int]]:
    """Features (the four COLUMNS) and the churned label (0/1) of ``rows`` customers."""
    rng = random.Random(seed)
    features, labels = [], []
    for _ in range(rows):
        tenure = round(rng.uniform(0, 6), 2)
        charges = round(rng.uniform(0.2, 1.2), 3)
        calls = rng.choice([0, 0, 0, 1, 1, 2, 3, 5])
        monthly = 1 if rng.random() < 0.55 else 0
        z = -1.0 - 0.6 * tenure + 1.5 * charges + 0.45 * calls + 1.2 * monthly
        churned = 1 if rng.random() < 1 / (1 + math.exp(-z)) else 0
        features.append([tenure, charges, calls, monthly])
        labels.append(churned)
    return features, labels


def train_valid_split(rows: int = 4000, valid: int = 1000):
    """numpy arrays (x_train, y_train, x_valid, y_valid): the last ``valid`` rows validate, and
    every column is standardised with the training rows' mean and standard deviation."""
    import numpy as np

    features, labels = make_table(rows)
    x = np.array(features, dtype=float)
    y = np.array(labels, dtype=float)
    x_train, x_valid = x[:-valid], x[-valid:]
    mean, std = x_train.mean(axis=0), x_train.std(axis=0)
    return (x_train - mean) / std, y[:-valid], (x_valid - mean) / std, y[-valid:]


def auc(scores, labels) -> float:
    """Probability that a random churner scores above a random stayer (ties count half)."""
    import numpy as np

    order = np.argsort(scores, kind="mergesort")
    ranked = np.asarray(scores)[order]
    ranks = np.empty(len(ranked))
    start = 0
    while start < len(ranked):  # tied scores share their average rank
        end = start
        while end < len(ranked) and ranked[end] == ranked[start]:
            end += 1
        ranks[start:end] = (start + end + 1) / 2
        start = end
    positive = np.asarray(labels)[order] == 1
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if not n_pos or not n_neg:
        return 0.5
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
