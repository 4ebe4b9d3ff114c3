"""Write the scenario's synthetic churn table: the same 600 rows on every machine, no download.

Each customer has a tenure, a monthly charge, a number of support calls and a contract type;
whether they churned is drawn from a logistic model of those, so a model can learn it (AUC
around 0.8) without being perfect. Usage: python make_data.py OUTPUT_FOLDER
"""

import csv
import math
import pathlib
import random
import sys

ROWS = 600
SEED = 20240611


def main(folder: str) -> None:
    rng = random.Random(SEED)
    target = pathlib.Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    with open(target / "churn.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["tenure_years", "monthly_charges_100", "support_calls", "month_to_month", "churned"])
        for _ in range(ROWS):
            tenure = round(rng.uniform(0, 6), 2)
            charges = round(rng.uniform(0.2, 1.2), 3)
            calls = rng.choice([0, 0, 0, 1, 1, 2, 3, 5])
            monthly = 1 if rng.random() < 0.55 else 0
            z = -1.0 - 0.6 * tenure + 1.5 * charges + 0.45 * calls + 1.2 * monthly
            churned = 1 if rng.random() < 1 / (1 + math.exp(-z)) else 0
            writer.writerow([tenure, charges, calls, monthly, churned])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/churn-raw")
