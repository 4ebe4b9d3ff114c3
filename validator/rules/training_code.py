"""AML7xx: the training script a spec runs. The script named in a command (`python train.py`,
`python -m pkg.train`, `torchrun ... train.py`, `python -c "..."`) is looked up in the local
`code` folder and parsed with `ast`, never run: does it log the sweep's primary metric, and
often enough for an early-termination policy; does its argparse parser define every flag the
command passes. A script that cannot be found or read is not judged here (the asset family
reports missing paths)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, NamedTuple

from .. import pycode
from ..diagnostic import Finding, Severity
from ..loader import Document, Path_
from ..references import resolve
from ..suggest import closest
from ._base import check
from ._commands import Holder, holders, word_span
from ..values import mapping as _mapping
from .file_level import JOB

SWEEP_KINDS = ("sweepJob", "pipelineJob", "pipelineComponent")
COMMAND_KINDS = ("commandJob", "sweepJob", "commandComponent", "pipelineJob", "pipelineComponent")

_SWEEP_HEAD = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  command: >-
    python -c "{code}"
    --lr ${{{{search_space.lr}}}}
  environment: azureml:sklearn-train:2
compute: azureml:cpu-cluster
sampling_algorithm: random
search_space:
  lr:
    type: uniform
    min_value: 0.001
    max_value: 0.1
objective:
  goal: maximize
  primary_metric: auc
limits:
  max_total_trials: 20
"""
_POLICY = """\
early_termination:
  type: bandit
  slack_factor: 0.1
  evaluation_interval: 1
  delay_evaluation: 5
"""
_LOGS_PER_EPOCH = ("import mlflow; [mlflow.log_metric('auc', 0.5 + epoch / 40, step=epoch) "
                   "for epoch in range(20)]")


def _sweep(code: str, policy: bool = False) -> str:
    return _SWEEP_HEAD.format(code=code) + (_POLICY if policy else "")


_PARSER = ("import argparse; parser = argparse.ArgumentParser(); "
           "parser.add_argument('--learning-rate', type=float); parser.parse_args()")


# ----------------------------------------------------------------------------- where code runs
class SweepSite(NamedTuple):
    holder: Holder
    objective: dict
    objective_path: Path_
    policy: Any
    policy_path: Path_
    owner: str


def sweep_sites(document: Document) -> Iterator[SweepSite]:
    """Sweeps with a primary metric and the trial code that must log it: a sweep job, or a
    pipeline's sweep step (inline trial, or a local trial component file)."""
    data = _mapping(document.data)
    if document.kind == "sweepJob":
        trial = data.get("trial")
        if isinstance(trial, dict):
            yield SweepSite(Holder(document, trial, ("trial", "command"), "the trial"),
                            _mapping(data.get("objective")), ("objective",),
                            data.get("early_termination"), ("early_termination",), "the sweep")
        return
    if document.kind not in ("pipelineJob", "pipelineComponent"):
        return
    for name, node in _mapping(data.get("jobs")).items():
        if not isinstance(node, dict) or node.get("type") != "sweep":
            continue
        base: Path_ = ("jobs", name)
        trial = node.get("trial")
        holder = None
        if isinstance(trial, dict):
            holder = Holder(document, trial, base + ("trial", "command"), f"the trial of step '{name}'")
        elif isinstance(trial, str) and trial.strip() and not trial.strip().startswith(("azureml:", "http")) \
                and "${{" not in trial:
            referenced = resolve(document, trial.strip())
            if referenced.document is not None and isinstance(referenced.data, dict):
                holder = Holder(referenced.document, referenced.data, None, f"trial component '{trial.strip()}'")
        if holder is not None:
            yield SweepSite(holder, _mapping(node.get("objective")), base + ("objective",),
                            node.get("early_termination"), base + ("early_termination",), f"step '{name}'")


# ----------------------------------------------------------------------------- programs
@dataclass
class Program:
    """A Python program a command runs, found and parsed: its own facts first, then those of
    the local modules it imports."""

    invocation: pycode.Invocation
    label: str
    files: list[tuple[str, pycode.ScriptFacts]] = field(default_factory=list)

    @property
    def facts(self) -> list[pycode.ScriptFacts]:
        return [facts for _, facts in self.files]


class Programs(NamedTuple):
    found: list[Program]
    unseen: list[str]          # programs the command runs that could not be read
    opaque: tuple[str, ...]    # other commands (a shell script, a binary)


def programs(holder: Holder) -> Programs:
    """The programs a holder's command runs, read once per document (several rules ask)."""
    cache = holder.document.__dict__.setdefault("_programs", {})
    key = id(holder.data)
    if key not in cache:
        cache[key] = (holder.data, _programs(holder))  # keeps data alive, so the id stays unique
    return cache[key][1]


def _programs(holder: Holder) -> Programs:
    command = holder.data.get("command")
    if not isinstance(command, str):
        return Programs([], [], ())
    line = pycode.command_line(command)
    snap = pycode.snapshot(holder.document, holder.data)
    roots = snap.search_roots() if snap is not None else []
    found: list[Program] = []
    unseen: list[str] = []
    for invocation in line.invocations:
        if invocation.kind == "inline":
            facts = pycode.source_facts(invocation.name)
            if facts is None:
                unseen.append("python -c")
                continue
            program = Program(invocation, "the `python -c` code", [("the `python -c` code", facts)])
            base = Path(roots[0]) / "__inline__.py" if roots else None
            if base is not None:
                for module in pycode.local_modules(base, facts, roots):
                    module_facts = pycode.script_facts(module)
                    if module_facts is not None:
                        program.files.append((module.name, module_facts))
            found.append(program)
            continue
        label = invocation.name if invocation.kind == "script" else f"-m {invocation.name}"
        path = None
        if snap is not None and invocation.directory is not None:
            path = (snap.find(invocation.name, invocation.directory) if invocation.kind == "script"
                    else snap.find_module(invocation.name, invocation.directory))
        facts = pycode.script_facts(path) if path is not None else None
        if path is None or facts is None:
            unseen.append(label)
            continue
        program = Program(invocation, label, [(label, facts)])
        for module in pycode.local_modules(path, facts, roots):
            module_facts = pycode.script_facts(module)
            if module_facts is not None:
                program.files.append((module.name, module_facts))
        found.append(program)
    return Programs(found, unseen, line.opaque)


def _quoted(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


# ----------------------------------------------------------------------------- AML701/702/703
class MetricVerdict(NamedTuple):
    logged: list[tuple[str, pycode.MetricLog]]        # calls that log the metric (file label, call)
    names: list[str]                                  # literal names the code logs
    doubts: list[str]                                 # why "not logged" cannot be proven
    programs: Programs


def _metric_verdict(site: SweepSite, metric: str) -> MetricVerdict | None:
    found = programs(site.holder)
    if not found.found:
        return None
    logged: list[tuple[str, pycode.MetricLog]] = []
    names: list[str] = []
    computed: list[tuple[str, int]] = []
    doubts: list[str] = []
    mentioned = False
    for program in found.found:
        for label, facts in program.files:
            for log in facts.logs:
                if log.matches(metric):
                    logged.append((label, log))
                elif log.name is not None:
                    if log.name not in names:
                        names.append(log.name)
                elif log.pattern is None:
                    computed.append((label, log.line))
            mentioned = mentioned or metric in facts.strings
            if facts.autolog:
                doubts.append(f"{label} calls autolog() (line {facts.autolog}), whose metric names "
                              "depend on the library")
            if facts.framework:
                doubts.append(f"{label} uses {facts.framework}, which logs metrics by itself")
            if facts.runs_other_code:
                doubts.append(f"{label} starts other code (line {facts.runs_other_code})")
    if computed:
        label, line = computed[0]
        doubts.insert(0, f"{label} logs metrics under computed names (line {line})")
    for label in found.unseen:
        doubts.append(f"the command also runs {label}, which amllab cannot read")
    for program in found.opaque[:2]:
        doubts.append(f"the command also runs '{program}'")
    autologged = [label for program in found.found for label, facts in program.files if facts.autolog]
    if not logged and autologged and _autolog_names(metric, [f for p in found.found for f in p.facts]):
        logged.append((autologged[0], pycode.MetricLog(0, metric, None, None)))
    if not logged and computed and mentioned:
        # The name appears in the code and some call logs a computed name: most likely logged.
        logged.append((computed[0][0], pycode.MetricLog(computed[0][1], None, None, None)))
    return MetricVerdict(logged, names, doubts, found)


# Metrics mlflow's autolog writes for scikit-learn estimators (training set, after fit).
_SKLEARN_AUTOLOG = {"training_score", "training_accuracy_score", "training_precision_score",
                    "training_recall_score", "training_f1_score", "training_log_loss", "training_roc_auc",
                    "training_mean_squared_error", "training_root_mean_squared_error",
                    "training_mean_absolute_error", "training_r2_score"}


def _autolog_names(metric: str, facts: list[pycode.ScriptFacts]) -> bool:
    """Whether ``metric`` is a name autolog writes for a library the code uses: scikit-learn's
    `training_*` scores, LightGBM/XGBoost `<validation set>-<metric>` (`test-multi_logloss`,
    `validation_0-logloss`), Keras epoch metrics (`val_loss`, `val_<compiled metric>`)."""
    modules = {module.split(".")[0] for f in facts for module, level, _ in f.imports if not level}
    strings = set().union(*(f.strings for f in facts)) if facts else set()
    if "sklearn" in modules and metric in _SKLEARN_AUTOLOG:
        return True
    if modules & {"lightgbm", "xgboost"} and "-" in metric:
        data_set = metric.split("-", 1)[0]
        if data_set in strings or re.fullmatch(r"(valid|validation|training|train)(_\d+)?", data_set):
            return True
    if modules & {"tensorflow", "keras"}:
        base = metric[4:] if metric.startswith("val_") else metric
        if base == "loss" or base in strings:
            return True
    return False


def _sweep_metric(site: SweepSite) -> str | None:
    metric = site.objective.get("primary_metric")
    return metric if isinstance(metric, str) and metric.strip() else None


def _labels(verdict: MetricVerdict) -> str:
    labels = []
    for program in verdict.programs.found:
        if program.label not in labels:
            labels.append(program.label)
    return " and ".join(labels)


@check("AML701", "primary-metric-not-logged", Severity.ERROR,
       "The sweep's primary metric is never logged by the trial's script.",
       bad=_sweep("import mlflow; mlflow.log_metric('val_auc', 0.91)"),
       good=_sweep("import mlflow; mlflow.log_metric('auc', 0.91)"), kinds=SWEEP_KINDS)
def primary_metric_not_logged(document: Document) -> Iterator[Finding]:
    """
    A sweep ranks trials, and its early-termination policy stops them, by the values the training
    script logs under `objective.primary_metric`, matched by exact name: "the training script must
    log the primary metric with the exact name" (the hyperparameter tuning guide). A script that
    logs `val_auc` while the sweep asks for `auc` runs every trial to completion and reports no
    best trial.

    amllab reads the script named in the trial command (under the local `code` folder, and the
    local modules it imports) without running it, and looks for `mlflow.log_metric("auc", v)`,
    `log_metric(key="auc", value=v)`, `mlflow.log_metrics({"auc": v})`, their aliases
    (`import mlflow as mf`, `from mlflow import log_metric`), `MlflowClient().log_metric(run_id,
    "auc", v)` and `run.log("auc", v)`; inline code (`python -c "..."`) is read the same way.
    Names built at run time, `autolog()` and frameworks that log by themselves cannot be proven
    either way: those get AML702, a warning, instead. For a pipeline's sweep step, the trial
    component's command and code are read.

    See: how-to-tune-hyperparameters, how-to-log-view-metrics

    Provenance: SPEC §4.8, §12 rule 39.
    """
    for site in sweep_sites(document):
        metric = _sweep_metric(site)
        if metric is None:
            continue
        verdict = _metric_verdict(site, metric)
        if verdict is None or verdict.logged or verdict.doubts:
            continue
        scripts = _labels(verdict)
        if verdict.names:
            message = (f"primary metric '{metric}' is never logged by {scripts}, which logs "
                       f"{_quoted(verdict.names)}")
            close = closest(metric, verdict.names)
            if close:
                message += f"; did you mean '{close}'?"
        else:
            message = f"primary metric '{metric}' is never logged: {scripts} logs no metrics at all"
        hint = (f"log it under this exact name (mlflow.log_metric(\"{metric}\", value)), or set "
                "`primary_metric` to a name the script logs")
        yield Finding(message, site.objective_path + ("primary_metric",), hint=hint)


@check("AML702", "primary-metric-unverified", Severity.WARNING,
       "Whether the trial's script logs the primary metric cannot be told from its code.",
       bad=_sweep("import mlflow; mlflow.autolog()"),
       good=_sweep("import mlflow; mlflow.log_metric('auc', 0.91)"), kinds=SWEEP_KINDS)
def primary_metric_unverified(document: Document) -> Iterator[Finding]:
    """
    The primary metric is not logged under its literal name anywhere in the trial's code, but the
    code logs metrics in a way amllab cannot follow without running it: names built at run time
    (`mlflow.log_metric(name, v)`, `log_metrics(results)`), `mlflow.autolog()` or a flavour's
    `autolog()` (whose metric names depend on the library and its version), a framework that logs
    by itself (Hugging Face `Trainer`, Lightning), or other programs the command or the script
    starts. If the name does not match exactly, the sweep cannot rank its trials. Log the metric
    explicitly, or check the name in a trial's metrics before a long sweep.

    Names autolog is known to write are accepted without a warning: scikit-learn's
    `training_accuracy_score`, `training_f1_score`... (after `fit`), LightGBM and XGBoost
    `<validation set>-<metric>` (`test-multi_logloss`, `validation_0-logloss`) and Keras epoch
    metrics (`val_loss`, `val_<compiled metric>`).

    See: how-to-tune-hyperparameters, how-to-log-view-metrics

    Provenance: SPEC §4.8, §12 rule 39.
    """
    for site in sweep_sites(document):
        metric = _sweep_metric(site)
        if metric is None:
            continue
        verdict = _metric_verdict(site, metric)
        if verdict is None or verdict.logged or not verdict.doubts:
            continue
        message = (f"cannot tell whether primary metric '{metric}' is logged: {verdict.doubts[0]}")
        if verdict.names:
            message += f"; the names it visibly logs are {_quoted(verdict.names)}"
            close = closest(metric, verdict.names)
            if close:
                message += f" (did you mean '{close}'?)"
        hint = f"log it explicitly, for example mlflow.log_metric(\"{metric}\", value)"
        yield Finding(message, site.objective_path + ("primary_metric",), hint=hint)


@check("AML703", "primary-metric-logged-once", Severity.WARNING,
       "An early-termination policy is set, but the script logs the primary metric only once.",
       bad=_sweep("import mlflow; mlflow.log_metric('auc', 0.91)", policy=True),
       good=_sweep(_LOGS_PER_EPOCH, policy=True), kinds=SWEEP_KINDS)
def primary_metric_logged_once(document: Document) -> Iterator[Finding]:
    """
    Early-termination policies decide at intervals, and "each time the training script logs the
    primary metric counts as one interval" (the hyperparameter tuning guide). A script that logs
    the metric once, after training, reports a single interval: the policy (bandit, median
    stopping, truncation selection) never acts, and every trial runs to the end while the spec says
    it would be stopped early. Log the metric inside the training loop, once per epoch or
    evaluation, or drop the policy.

    The call is judged "once" when it is outside any `for`/`while` loop or comprehension of its
    function, and that function is only called from outside loops (methods and callbacks handed
    to a library are assumed to repeat).

    See: how-to-tune-hyperparameters

    Provenance: SPEC §4.8.
    """
    for site in sweep_sites(document):
        metric = _sweep_metric(site)
        if metric is None or not isinstance(site.policy, dict) or not site.policy:
            continue
        verdict = _metric_verdict(site, metric)
        if verdict is None or not verdict.logged or verdict.doubts:
            continue
        if any(log.repeats is not False for _, log in verdict.logged):
            continue
        label, first = verdict.logged[0]
        policy = site.policy.get("type")
        policy_name = f"the {policy} policy" if isinstance(policy, str) else "the policy"
        message = (f"{label} logs primary metric '{metric}' only once per trial (line {first.line}, "
                   f"outside any loop), so {policy_name} never acts: it needs the metric at several "
                   "intervals")
        hint = "log the metric inside the training loop (once per epoch), or remove `early_termination`"
        yield Finding(message, site.policy_path, key=True, hint=hint)


# ----------------------------------------------------------------------------- AML704
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def _parser_of(program: Program) -> tuple[frozenset[str], bool] | None:
    """The options every parser of the program defines, and whether abbreviations are allowed;
    ``None`` when they cannot be known for sure."""
    facts = program.facts
    parsings = [f.parsing for f in facts if f.parsing is not None]
    if not parsings or not any(p.builds_parser for p in parsings) or not any(p.parses for p in parsings):
        return None
    if any(p.blocker for p in parsings) or any(f.other_cli for f in facts):
        return None
    defined = set().union(*(f.functions for f in facts))
    if any(name not in defined for p in parsings for name in p.handed_to):
        return None
    options = frozenset().union(*(p.options for p in parsings))
    return options, all(p.abbreviations for p in parsings)


def _flag_problem(token: str, options: frozenset[str], abbreviations: bool) -> tuple[str, str, list[str]] | None:
    """(kind, option as written, candidates) for an argument argparse refuses, else None."""
    if token.startswith("--"):
        name = token.split("=", 1)[0]
        if name == "--" or name in options:
            return None
        matches = sorted(o for o in options if o.startswith(name)) if abbreviations else []
        if len(matches) == 1:
            return None
        if len(matches) > 1:
            return "ambiguous", name, matches
        return "unknown", name, []
    if token in options or _NEGATIVE_NUMBER.match(token):
        return None
    shorts = {o for o in options if len(o) == 2 and not o.startswith("--")}
    if token[:2] in shorts or any(o.startswith(token.split("=", 1)[0]) for o in options):
        return None
    return "unknown", token.split("=", 1)[0], []


def _closest_option(name: str, options: list[str]) -> str | None:
    """`--learning_rate` for `--learning-rate`, `--lr` for `--learning-rate` (initials)."""
    def plain(option: str) -> str:
        return option.lstrip("-").replace("-", "_")
    by_plain = {plain(o): o for o in options}
    close = closest(plain(name), list(by_plain))
    return by_plain.get(close) if close else None


@check("AML704", "unknown-script-flag", Severity.ERROR,
       "The command passes a flag that the script's argparse parser does not define.",
       bad=JOB.replace("python train.py --lr ${{inputs.lr}}",
                       f'python -c "{_PARSER}" --lr ${{{{inputs.lr}}}}'),
       good=JOB.replace("python train.py --lr ${{inputs.lr}}",
                        f'python -c "{_PARSER}" --learning-rate ${{{{inputs.lr}}}}'),
       kinds=COMMAND_KINDS)
def unknown_script_flag(document: Document) -> Iterator[Finding]:
    """
    argparse refuses a command line with an option it does not know: the job starts, prints
    "error: unrecognized arguments: --learning_rate 0.01" and fails with exit code 2, after the
    compute was provisioned and the environment pulled (for a sweep, every trial fails). The
    usual causes are `--learning_rate` against `--learning-rate`, or a flag renamed in the
    script but not in the spec.

    amllab reads the script named in the command from the local `code` folder (and the local
    modules it imports) and checks each `--flag` / `--flag=value` against the parser's
    `add_argument` option strings, allowing the unique prefixes argparse accepts
    (`allow_abbrev`); an ambiguous prefix fails too. The check is skipped when the options
    cannot be known for sure: names computed at run time, `parse_known_args`, subcommands,
    `sys.argv` read directly, another command-line library (click, typer, fire, hydra...), or
    a parent parser built elsewhere. Values from `${{...}}` are never taken for flags; inline
    code (`python -c "..."`) is read like a script.
    """
    for holder in holders(document):
        if holder.command_path is None:
            continue
        text = holder.data.get("command")
        found = programs(holder)
        reported: dict[str, int] = {}
        for program in found.found:
            parser = _parser_of(program)
            if parser is None:
                continue
            options, abbreviations = parser
            for token in program.invocation.args:
                if token == "--":
                    break
                # argparse reads a word with a space ("--foo bar" in quotes) as a value.
                if not token.startswith("-") or token == "-" or pycode.PLACEHOLDER in token or " " in token:
                    continue
                problem = _flag_problem(token, options, abbreviations)
                if problem is None:
                    continue
                kind, name, candidates = problem
                nth = reported.get(name, 0)
                reported[name] = nth + 1
                defined = sorted(o for o in options if o.startswith("--")) or sorted(options)
                if kind == "ambiguous":
                    message = (f"'{name}' is ambiguous for {program.label}: it abbreviates "
                               f"{_quoted(candidates)}, and argparse stops the job ('ambiguous option')")
                    hint = "write the option in full"
                else:
                    message = (f"'{name}' is not an option of {program.label}: argparse stops the job "
                               "with 'unrecognized arguments'")
                    close = _closest_option(name, defined)
                    if close:
                        message += f"; did you mean '{close}'?"
                    shown = ", ".join(defined[:12]) + (", ..." if len(defined) > 12 else "")
                    hint = (f"{program.label} defines {shown or 'no options'}; add the option to its "
                            "parser or fix the flag")
                span = word_span(document, holder.command_path, text, name, nth) if isinstance(text, str) else None
                yield Finding(message, holder.command_path, hint=hint, span=span)
