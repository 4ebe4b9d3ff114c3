"""Promote a sweep's best settings into the train_model component, as a new version.

    python promote.py SWEEP_JOB_NAME

Reads the sweep's best trial with `aml-run job show SWEEP -o json` (`az ml job show` in the
service), and the latest registered train_model with `aml-run component show`; writes
promoted/train_model.yml: the same component, one version up, whose lr and depth defaults are
the best trial's. Register it with `aml-run component create --file promoted/train_model.yml`;
the pipeline names azureml:train_model@latest, so its next run trains with them.
"""

import json
import pathlib
import subprocess
import sys

import yaml


def aml_run(*arguments: str) -> dict:
    result = subprocess.run(["aml-run", *arguments, "-o", "json"], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"aml-run {' '.join(arguments)} failed: {result.stderr.strip()}")
    return json.loads(result.stdout)


def main(sweep: str) -> None:
    shown = aml_run("job", "show", sweep)
    best = shown.get("best_trial")
    if shown["status"] != "Completed" or not best:
        sys.exit(f"{sweep} is {shown['status']} with no best trial: nothing to promote")
    registered = aml_run("component", "show", "--name", "train_model")
    source = pathlib.Path("components/train_model.yml")
    component = yaml.safe_load(source.read_text())
    component["version"] = str(int(registered["version"]) + 1)
    for name in ("lr", "depth"):
        component["inputs"][name]["default"] = best["params"][name]
    component["description"] = (f"Defaults from sweep {sweep}'s best trial {best['name']} "
                                f"({shown['objective']['primary_metric']} {best['metric']:.4f})")
    target = pathlib.Path("promoted/train_model.yml")
    target.parent.mkdir(exist_ok=True)
    # The code folder stays where it is: promoted/ sits beside components/, so ../src holds.
    target.write_text(yaml.safe_dump(component, sort_keys=False))
    print(f"best trial {best['name']}: {shown['objective']['primary_metric']} {best['metric']:.4f} with {best['params']}")
    print(f"train_model {registered['version']} -> {component['version']}: lr {best['params']['lr']:.4g}, "
          f"depth {best['params']['depth']} (written to {target})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
