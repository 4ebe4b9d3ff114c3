"""What a learner watches: the live table of a running sweep, and the picture of its trials.

:func:`render` is what ``job create --stream`` and ``job stream`` show for a sweep on a terminal
(``runner.jobs.follow`` redraws it as the controller writes its summary): one table of the
trials (running, completed, canceled by the policy and why, failed), the best trial so far and a
progress bar against ``max_total_trials``. :func:`summary_table` prints the same table once (the
end of a streamed sweep when the output is not a terminal). :func:`plot` is ``job plot``: every trial's primary-metric curve,
a cross where the policy stopped a trial, the best trial drawn thick.
rich and matplotlib are imported here only, when they are used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from .. import status
from ..errors import RunnerError
from ..workspace import Workspace

# Rows of the live table: every active trial, then the most recent ended ones up to this.
MAX_ROWS = 24
STATE_STYLE = {"Completed": "green", "Failed": "red", "Canceled": "yellow", "Running": "cyan",
               "Preparing": "blue", "Queued": "dim", "NotStarted": "dim", "Finalizing": "cyan"}


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        import json

        return json.dumps(value, separators=(",", ":"))
    return str(value)


def render(shown: dict[str, Any], rows_cap: int = MAX_ROWS) -> Any:
    """The live view of one ``job show`` record of a sweep, as a rich renderable."""
    from rich.console import Group
    from rich.progress_bar import ProgressBar
    from rich.table import Table
    from rich.text import Text

    objective = shown["objective"]
    metric, goal = objective["primary_metric"], objective["goal"]
    trials = shown.get("trials") or []
    limits = shown["limits"]
    total = limits["max_total_trials"]
    space = (shown.get("properties") or {}).get("space_size")
    planned = min(total, space) if isinstance(space, int) else total
    counts: dict[str, int] = {}
    for row in trials:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    ended = sum(counts.get(state, 0) for state in status.TERMINAL)
    by_policy = sum(1 for row in trials if row.get("stopped_by"))
    active = sum(1 for row in trials if row["status"] not in status.TERMINAL)

    sampling = shown["sampling_algorithm"]
    policy = shown.get("early_termination")
    header = Text.assemble(
        (f"{shown['name']}", "bold"), f"  {shown['status']}  ",
        f"{sampling['algorithm']}{' (sobol)' if sampling.get('rule') == 'sobol' else ''} sampling, "
        f"{goal} {metric}, ",
        f"policy {policy['type']}" if policy else "no early termination")
    progress = Table.grid(padding=(0, 1))
    progress.add_row(ProgressBar(total=planned, completed=ended, width=40),
                     Text(f"{ended}/{planned} trials ended"
                          + (f" (search space of {space})" if isinstance(space, int) and space < total else "")))
    tally = Text.assemble(
        ("running ", "cyan"), str(active), "   ",
        ("completed ", "green"), str(counts.get("Completed", 0)), "   ",
        ("canceled ", "yellow"), str(counts.get("Canceled", 0)),
        f" ({by_policy} by the policy)", "   ",
        ("failed ", "red"), str(counts.get("Failed", 0)))
    best = shown.get("best_trial")
    ended_sweep = shown["status"] in status.TERMINAL
    best_line = (Text.assemble(("best trial: " if ended_sweep else "best so far: ", "bold"), f"{best['name']}  {metric} {_short(best['metric'])}  ",
                               _params(best["params"]))
                 if best else Text(f"best so far: none yet (no trial has logged {metric})", style="dim"))

    table = Table(expand=False, show_lines=False, pad_edge=False)
    table.add_column("trial")
    table.add_column("status")
    table.add_column("params")
    table.add_column("intervals", justify="right")
    table.add_column(f"best {metric}", justify="right")
    table.add_column("note", overflow="fold", max_width=70)
    for row in _rows_to_show(trials, rows_cap):
        stopped = row.get("stopped_by")
        would_have = row.get("would_have_stopped")
        note = ""
        intervals = str(row.get("intervals", 0))
        if stopped:
            # Its intervals end where the policy decided; what it logged while the cancel was on
            # its way is counted apart.
            after = row.get("logged_after_stop") or 0
            intervals = f"{stopped['interval']} +{after}" if after else str(stopped["interval"])
            note = f"{stopped['policy']} at interval {stopped['interval']}"
            numbers = stopped.get("numbers") or {}
            if "threshold" in numbers:
                note += f": {_short(numbers.get('best'))} vs threshold {_short(numbers['threshold'])}"
            elif "median" in numbers:
                note += f": {_short(numbers.get('best'))} vs median {_short(numbers['median'])}"
            elif "cutoff" in numbers:
                note += f": {_short(numbers.get('score'))} vs cut-off {_short(numbers['cutoff'])}"
            if after:
                note += f" ({after} more logged before the cancel landed)"
        elif would_have:
            note = (f"ended before the {would_have['policy']} policy's cancel (decided at interval "
                    f"{would_have['interval']}) reached it")
        elif row.get("error") and row["status"] in ("Failed", "Canceled"):
            note = row["error"].get("message", "")
        style = "bold" if best and row["name"] == best["name"] else ""
        table.add_row(row["name"], Text(row["status"] or "", style=STATE_STYLE.get(row["status"], "")),
                      _params(row["params"]),
                      intervals,
                      "" if row.get("metric") is None else _short(row["metric"]), note, style=style)
    hidden = len(trials) - min(len(trials), rows_cap)
    parts = [header, progress, tally, best_line, table]
    if hidden > 0:
        parts.append(Text(f"... {hidden} earlier trial(s) not shown (aml-run job show {shown['name']})", style="dim"))
    return Group(*parts)


def _params(params: dict[str, Any]) -> str:
    from .sampling import format_value

    def text(value: Any) -> str:
        written = format_value(value)
        # Long floats shortened for the table; job show -o json keeps every digit.
        return f"{value:.4g}" if isinstance(value, float) and len(written) > 8 else written

    return ", ".join(f"{key}={text(value)}" for key, value in params.items())


def _rows_to_show(trials: list[dict[str, Any]], cap: int) -> list[dict[str, Any]]:
    if len(trials) <= cap:
        return trials
    active = [row for row in trials if row["status"] not in status.TERMINAL]
    ended = [row for row in trials if row["status"] in status.TERMINAL]
    keep = {row["name"] for row in active[:cap]}
    for row in reversed(ended):
        if len(keep) >= cap:
            break
        keep.add(row["name"])
    return [row for row in trials if row["name"] in keep]


def summary_table(shown: dict[str, Any], out: TextIO) -> None:
    """The trials table once, without colours or redrawing (for logs and pipes)."""
    from rich.console import Console

    console = Console(file=out, force_terminal=False, no_color=True, width=160)
    console.print(render(shown, rows_cap=10_000))


def summary_lines(out: TextIO, shown: dict[str, Any]) -> None:
    """The end of a followed sweep: its state, its best trial, what went wrong."""
    best = shown.get("best_trial")
    out.write(f"\nExecution Summary\n=================\nRunId: {shown['name']}\nStatus: {shown['status']}\n")
    if best:
        out.write(f"Best trial: {best['name']} ({shown['objective']['primary_metric']} {best['metric']:.6g})\n")
    if shown.get("error"):
        out.write(f"Error: {shown['error'].get('message')}\n")
    out.flush()


# -- job plot -------------------------------------------------------------------------------------

def plot(workspace: Workspace, shown: dict[str, Any], output: Path) -> Path:
    """Write a PNG of every trial's primary-metric curve (one point per interval) of the sweep
    ``job show`` gave as ``shown``: canceled trials end in a cross at the interval the policy
    stopped them (what a trial logged after it, while the cancel was on its way, is drawn
    dotted and faint beyond the cross), failed ones are dashed, the best trial is drawn thick
    and named. Returns the file written."""
    name = shown["name"]
    if "trials" not in shown:
        raise RunnerError(f"job {name} is a {shown['type']} job; job plot draws a sweep's trials "
                          "(aml-run job show shows this job's metrics)")
    metric, goal = shown["objective"]["primary_metric"], shown["objective"]["goal"]
    histories = trial_histories(workspace, shown)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    best = (shown.get("best_trial") or {}).get("name")
    figure, axes = plt.subplots(figsize=(10, 6), dpi=110)
    colours = plt.get_cmap("tab20")
    drawn = 0
    after = False
    for index, row in enumerate(shown["trials"]):
        values = histories.get(row["name"]) or []
        if not values:
            continue
        drawn += 1
        is_best = row["name"] == best
        style = "--" if row["status"] == "Failed" else "-"
        label = None
        if is_best:
            label = f"best: {row['name']} ({metric} {row['metric']:.4g})"
        stopped = row.get("stopped_by")
        (x, y), (x_after, y_after) = curve_parts(values, stopped)
        colour = "black" if is_best else colours(index % 20)
        axes.plot(x, y, style, color=colour, linewidth=3.0 if is_best else 1.2, alpha=1.0 if is_best else 0.75,
                  label=label, zorder=3 if is_best else 2)
        if x_after:
            axes.plot(x_after, y_after, ":", color=colour, linewidth=1.0, alpha=0.45, zorder=1)
            after = True
        if stopped:
            axes.plot([x[-1]], [y[-1]], marker="x", markersize=9, markeredgewidth=2, color="red", zorder=4)
    if drawn == 0:
        plt.close(figure)
        raise RunnerError(f"sweep {name} has no logged {metric} to draw yet")
    # One legend entry for the crosses and one for failed trials, rather than one per trial.
    from matplotlib.lines import Line2D

    handles, labels = axes.get_legend_handles_labels()
    if any(row.get("stopped_by") for row in shown["trials"]):
        handles.append(Line2D([], [], marker="x", color="red", linestyle="none", markeredgewidth=2))
        labels.append("canceled by the early-termination policy")
    if after:
        handles.append(Line2D([], [], linestyle=":", color="grey"))
        labels.append("logged after the policy's decision, before the cancel landed")
    if any(row["status"] == "Failed" for row in shown["trials"]):
        handles.append(Line2D([], [], linestyle="--", color="grey"))
        labels.append("failed trial")
    policy = shown.get("early_termination")
    axes.set_title(f"sweep {name}: {metric} per interval ({goal}); "
                   + (f"{policy['type']} policy" if policy else "no early termination"))
    from matplotlib.ticker import MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # intervals are counts
    axes.set_xlabel("interval (the n-th logged value of the primary metric)")
    axes.set_ylabel(metric)
    axes.grid(True, alpha=0.3)
    if handles:
        axes.legend(handles, labels, loc="best", fontsize="small")
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    temporary = output.with_name(f".{output.name}.tmp")
    figure.savefig(temporary, format="png")
    plt.close(figure)
    temporary.replace(output)
    return output


def curve_parts(values: list[float], stopped: dict[str, Any] | None) -> tuple[tuple[list[int], list[float]],
                                                                          tuple[list[int], list[float]]]:
    """A trial's curve as (intervals, values) pairs: the part the policy judged, up to the
    interval it stopped the trial at (all of it when it was not stopped), and what the trial
    logged after that while the cancel was on its way, from the stopping interval on so that
    the two parts join (empty when it logged nothing more)."""
    x = list(range(1, len(values) + 1))
    at = min(stopped["interval"], len(values)) if stopped else len(values)
    after = (x[at - 1:], values[at - 1:]) if at < len(values) else ([], [])
    return (x[:at], values[:at]), after


def trial_histories(workspace: Workspace, shown: dict[str, Any]) -> dict[str, list[float]]:
    """Every trial's primary-metric values, read back from MLflow in one request."""
    metric = shown["objective"]["primary_metric"]
    run_ids = {}
    for row in shown["trials"]:
        record = status.read(workspace.run_dir(row["name"]))
        run_id = (record.get("mlflow") or {}).get("run_id")
        if run_id:
            run_ids[run_id] = row["name"]
    if not run_ids:
        return {}
    tracking = workspace.tracking(shown["mlflow"]["tracking_uri"])
    values = tracking.metric_values(list(run_ids), metric)
    return {run_ids[run_id]: [float(v) for v in series] for run_id, series in values.items()}
