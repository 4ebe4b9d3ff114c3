"""Copy every CSV row that has all its values from --raw to --clean, as one file."""

import argparse
import csv
import pathlib


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--raw", required=True, type=pathlib.Path)
    parser.add_argument("--clean", required=True, type=pathlib.Path)
    args = parser.parse_args()

    args.clean.mkdir(parents=True, exist_ok=True)
    kept = dropped = 0
    header: list[str] | None = None
    rows: list[dict[str, str]] = []
    for path in sorted(args.raw.rglob("*.csv")):
        with path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            header = header or list(reader.fieldnames or [])
            for row in reader:
                if all((row.get(column) or "").strip() for column in header):
                    rows.append(row)
                    kept += 1
                else:
                    dropped += 1
    with (args.clean / "churn.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header or [])
        writer.writeheader()
        writer.writerows(rows)
    print(f"kept {kept} rows, dropped {dropped} incomplete rows")


if __name__ == "__main__":
    main()
