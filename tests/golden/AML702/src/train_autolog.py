"""scikit-learn trial that relies on autolog for its metrics."""
import argparse

import mlflow
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--c", type=float, default=1.0)
    args = parser.parse_args()
    mlflow.sklearn.autolog()
    x, y = load_iris(return_X_y=True)
    LogisticRegression(C=args.c, max_iter=500).fit(x, y)


if __name__ == "__main__":
    main()
