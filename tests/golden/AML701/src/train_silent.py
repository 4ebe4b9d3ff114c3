"""A trial that prints its score instead of logging it."""
import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--alpha", type=float, default=1.0)
    args = parser.parse_args()
    print(f"accuracy={1 / (1 + args.alpha):.3f}")


if __name__ == "__main__":
    main()
