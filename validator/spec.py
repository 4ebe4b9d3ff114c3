"""The typed model the runner consumes: ``load_spec(path) -> Spec``, or a :class:`SpecError`
carrying the diagnostics that made the spec unrunnable.

Only the validator reads YAML. ``load_spec`` lints the file exactly as ``aml-lint`` would (the
project's ``[tool.amllab.lint]`` configuration and inline suppressions apply, and with a
workspace every ``azureml:`` reference must be registered, AML805), applies ``--set``
overrides the way ``az ml job create --set`` does, lints the result again, and hands back plain
typed objects. A spec with errors is refused, except, with ``strict=False`` (what ``aml-run job
create`` does unless given ``--strict``), one whose every error is of a kind azure-ai-ml sends on
to the service (:func:`client_sends`): ``az ml job create`` submits it, so it runs.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from .diagnostic import Diagnostic, Severity
from .errors import AmllabError, UsageError

LITERAL = "literal"
DATA_TYPES = ("uri_file", "uri_folder", "mltable", "mlflow_model", "custom_model", "triton_model")


# Findings about the local workspace's registry, not the spec: ignoring them cannot help, since
# the runner needs the asset itself.
_LOCAL_WORKSPACE = frozenset({"AML805"})


def service_verdict(diagnostic: Diagnostic) -> str | None:
    """What azure-ai-ml does with a spec that has this finding: the finding's own verdict where
    its rule knows it, else the rule's (measured on its golden bad cases by
    tools/sdk_verdicts.py): "rejects", "accepts", "depends" or None (not compared)."""
    from .rules import RULES

    if diagnostic.service is not None:
        return diagnostic.service
    rule = RULES.get(diagnostic.code)
    return rule.service if rule is not None else None


def client_sends(diagnostic: Diagnostic) -> bool:
    """An error azure-ai-ml lets through to the service and the service then runs without the
    offending part (a key it ignores, an undeclared port it drops, a literal passed on as
    given): the client submits the spec, so a non-strict ``job create`` does too. Only a
    finding whose rule vouches for that very pattern counts (its own ``service`` verdict); a
    rule-wide "accepts" also covers specs the service refuses on its side or fails at run
    time. An error only by configuration (a warning the project made an error) is the
    project's own gate and stays a refusal."""
    from .rules import RULES

    rule = RULES.get(diagnostic.code)
    return (diagnostic.code not in _LOCAL_WORKSPACE and rule is not None and rule.severity is Severity.ERROR
            and diagnostic.service == "accepts")


class SpecError(AmllabError):
    """A spec that lint refuses: ``str()`` is the one-line summary, :meth:`render` the full
    report with each finding's file, position, source line and fix."""

    def __init__(self, path: str, diagnostics: list[Diagnostic], text: str | None = None) -> None:
        self.path = path
        self.diagnostics = diagnostics
        self.text = text
        errors = [d for d in diagnostics if d.severity is Severity.ERROR]
        first = errors[0] if errors else diagnostics[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"{first.path}:{first.line}:{first.column}: {first.code} {first.message}{more}")

    def refusal(self, submitted: bool = False) -> str:
        """Why each error stops the spec, per rule: whether azure-ai-ml refuses such a spec too
        (the finding's or its rule's verdict, see :func:`service_verdict`), or sends it to the
        service and only aml-lint flags it, and how to submit it anyway. ``submitted``: the
        spec was submitted all the same (a non-strict load), so the how is left out."""
        from .rules import RULES

        lines = []
        errors = [d for d in self.diagnostics if d.severity is Severity.ERROR]
        for code in dict.fromkeys(d.code for d in errors):
            rule = RULES.get(code)
            verdicts = {service_verdict(d) for d in errors if d.code == code}
            verdict = "rejects" if "rejects" in verdicts else verdicts.pop() if len(verdicts) == 1 else "depends"
            because = rule.summary.rstrip(".") if rule is not None else ""
            if submitted:
                anyway = "submitted"
            elif verdict == "accepts" and all(client_sends(d) for d in errors if d.code == code):
                anyway = "without --strict, aml-run job create submits it, as az ml job create does"
            else:
                anyway = f"to submit it anyway: --ignore {code}, or `# amllab: ignore[{code}]` on its line"
            if code in _LOCAL_WORKSPACE:
                lines.append(f"  {code}: the local workspace lacks what the spec names (the service's workspace "
                             "would need it too); register it with the command shown above")
            elif verdict == "rejects":
                lines.append(f"  {code}: azure-ai-ml refuses such a spec too (az ml job create would stop here); "
                             "fix it")
            elif verdict == "accepts":
                lines.append(f"  {code}: azure-ai-ml accepts this and sends it to the service; aml-lint flags it "
                             f"because: {because}; {anyway}")
            elif verdict == "depends":
                lines.append(f"  {code}: azure-ai-ml refuses some specs with this finding and sends others to the "
                             f"service; aml-lint flags it because: {because}; {anyway}")
            else:
                lines.append(f"  {code}: not compared with azure-ai-ml; {anyway}")
        return "\n".join(lines) + "\n" if lines else ""

    def render(self, color: bool = False) -> str:
        from .engine import FileReport, LintResult
        from .report import write_text

        out = io.StringIO()
        shown = [d for d in self.diagnostics if d.severity is not Severity.INFO]
        result = LintResult([FileReport(self.path, "spec", None, shown, self.text)])
        write_text(result, shown, out, color=color)
        return out.getvalue()


@dataclass(frozen=True)
class JobInput:
    """One entry of a job's ``inputs``: a literal (``type == "literal"``, ``value`` set) or a
    data/model input (``path`` and ``mode``; ``mode`` None means the service default)."""

    name: str
    type: str
    value: Any = None
    path: str | None = None
    mode: str | None = None

    @property
    def is_literal(self) -> bool:
        return self.type == LITERAL

    def literal_text(self) -> str | None:
        """The text the service substitutes: Python's ``str()`` of the YAML value, so ``true``
        becomes ``True`` (SPEC §3.2); None when the input has no value."""
        return None if self.value is None else str(self.value)


@dataclass(frozen=True)
class JobOutput:
    name: str
    type: str = "uri_folder"
    mode: str | None = None
    path: str | None = None
    asset_name: str | None = None
    asset_version: str | None = None


@dataclass(frozen=True)
class CommandJob:
    """A command job (or a sweep's trial, or a pipeline's command step) with its defaults
    applied; ``code`` is an absolute path or None."""

    command: str
    code: Path | None = None
    environment: Any = None
    compute: str | None = None
    name: str | None = None
    display_name: str | None = None
    experiment_name: str | None = None
    description: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, JobInput] = field(default_factory=dict)
    outputs: dict[str, JobOutput] = field(default_factory=dict)
    environment_variables: dict[str, str] = field(default_factory=dict)
    timeout: int | None = None
    resources: dict[str, Any] = field(default_factory=dict)
    distribution: dict[str, Any] | None = None
    queue_settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SweepJob:
    """A sweep job with its defaults applied (SPEC §4). ``trial`` is the command job every
    trial runs, with the sweep's inputs, outputs, compute, names and tags folded in; the search
    space and the policy stay the mappings written in the spec (the runner's sampling and policy
    modules read them); enums are normalised to the lower-case names the service uses."""

    trial: CommandJob
    search_space: dict[str, Any]
    sampling_algorithm: str                  # random | grid | bayesian
    goal: str                                # maximize | minimize
    primary_metric: str
    max_total_trials: int
    seed: int | None = None
    rule: str = "random"                     # random | sobol (random sampling only)
    logbase: float | str = "e"
    max_concurrent_trials: int | None = None  # None: as many as max_total_trials (SPEC §4.6)
    timeout: int | None = None
    trial_timeout: int | None = None
    early_termination: dict[str, Any] | None = None


@dataclass
class Spec:
    """A spec that passed lint: its kind, its data (after ``--set``), where it came from, and
    the warnings and infos lint still had to say."""

    path: Path
    kind: str
    data: dict[str, Any]
    findings: list[Diagnostic] = field(default_factory=list)
    overrides: tuple[str, ...] = ()
    text: str | None = field(default=None, repr=False)
    shown_path: str = ""

    def render_findings(self, color: bool = False) -> str:
        """The warnings lint still has (infos left out), as aml-lint prints them, and the errors
        a non-strict load let through, each with why it was submitted; "" if none."""
        if not any(d.severity is not Severity.INFO for d in self.findings):
            return ""
        error = SpecError(self.shown_path or str(self.path), self.findings, self.text)
        text = error.render(color)
        if any(d.severity is Severity.ERROR for d in self.findings):
            text += ("aml-run: submitted despite these lint errors, as az ml job create would "
                     "(--strict refuses it instead):\n" + error.refusal(submitted=True))
        return text

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def command_job(self) -> CommandJob:
        """The command job as the client submits it (single braces rewritten, see
        :func:`client_rewritten_command`)."""
        if self.kind != "commandJob":
            raise UsageError(f"{self.path}: this is a {self.kind}, not a command job")
        job = command_job_from(self.data, self.base_dir)
        return replace(job, command=client_rewritten_command(job.command))

    def sweep_job(self) -> SweepJob:
        """The sweep job as the client submits it (its trial's single braces rewritten)."""
        if self.kind != "sweepJob":
            raise UsageError(f"{self.path}: this is a {self.kind}, not a sweep job")
        job = sweep_job_from(self.data, self.base_dir)
        return replace(job, trial=replace(job.trial, command=client_rewritten_command(job.trial.command)))


# azure-ai-ml's map_single_brackets_and_warn (azure/ai/ml/_utils/utils.py), which a command job's
# and a sweep's _to_rest_object apply before submitting: `{inputs.x}`, `{outputs.x}` and
# `{search_space.x}` become `${{...}}`. Components and pipeline steps are sent as written.
_SINGLE_BRACES = tuple(
    (re.compile(r"(?<!\{)\{" + prefix + r"\.([^}]*)\}(?!\})"), "${{" + prefix + r".\g<1>}}")
    for prefix in ("inputs", "outputs", "search_space"))


def client_rewritten_command(command: str) -> str:
    """``command`` with the deprecated single-brace references rewritten as azure-ai-ml does
    for a command job or a sweep's trial before it submits them."""
    if not isinstance(command, str):
        return command
    for pattern, replacement in _SINGLE_BRACES:
        command = pattern.sub(replacement, command)
    return command


def command_job_from(data: dict[str, Any], base_dir: Path) -> CommandJob:
    code = data.get("code")
    limits = data.get("limits") or {}
    timeout = limits.get("timeout") if isinstance(limits, dict) else None
    return CommandJob(
        command=str(data.get("command") or ""),
        code=(base_dir / _strip_file_scheme(str(code))).resolve() if isinstance(code, str) and code else None,
        environment=data.get("environment"),
        compute=data.get("compute"),
        name=_text(data.get("name")),
        display_name=_text(data.get("display_name")),
        experiment_name=_text(data.get("experiment_name")),
        description=_text(data.get("description")),
        tags={str(k): str(v) for k, v in (data.get("tags") or {}).items()},
        inputs={str(k): job_input(str(k), v) for k, v in (data.get("inputs") or {}).items()},
        outputs={str(k): _job_output(str(k), v) for k, v in (data.get("outputs") or {}).items()},
        environment_variables={str(k): "" if v is None else str(v)
                               for k, v in (data.get("environment_variables") or {}).items()},
        timeout=_sdk_int(timeout),
        resources=dict(data.get("resources") or {}),
        distribution=dict(data["distribution"]) if isinstance(data.get("distribution"), dict) else None,
        queue_settings=dict(data["queue_settings"]) if isinstance(data.get("queue_settings"), dict) else {},
    )


def sweep_job_from(data: dict[str, Any], base_dir: Path) -> SweepJob:
    from .values import enum_name
    from .search_space import algorithm_of

    trial = dict(data.get("trial") or {})
    # The sweep's own keys describe every trial (SPEC §4.1-4.2): inputs and outputs live at
    # the top level, and so do the compute, the names and the tags.
    for key in ("inputs", "outputs", "compute", "name", "display_name", "experiment_name",
                "description", "tags"):
        if data.get(key) is not None:
            trial[key] = data[key]
    if not trial.get("resources") and data.get("resources"):
        trial["resources"] = data["resources"]
    trial.pop("limits", None)
    sampling = data.get("sampling_algorithm")
    if isinstance(sampling, dict):
        algorithm, settings = sampling.get("type"), sampling
    else:
        algorithm, settings = sampling, {}
    objective = data.get("objective") or {}
    limits = data.get("limits") or {}
    policy = data.get("early_termination")
    logbase = settings.get("logbase")
    return SweepJob(
        trial=command_job_from(trial, base_dir),
        search_space=dict(data.get("search_space") or {}),
        # A missing algorithm is sent as null and the service samples at random (SPEC §4.1).
        sampling_algorithm=algorithm_of(algorithm) or "random",
        seed=_sdk_int(settings.get("seed")),
        rule=enum_name(settings.get("rule"), ("random", "sobol")) or "random",
        logbase="e" if logbase in (None, "e", "E") else _number_or_text(logbase),
        goal=enum_name(objective.get("goal"), ("maximize", "minimize")) or "maximize",
        primary_metric=str(objective.get("primary_metric") or ""),
        max_total_trials=_sdk_int(limits.get("max_total_trials")) or 1000,
        max_concurrent_trials=_sdk_int(limits.get("max_concurrent_trials")),
        timeout=_sdk_int(limits.get("timeout")),
        trial_timeout=_sdk_int(limits.get("trial_timeout")),
        early_termination=dict(policy) if isinstance(policy, dict) and policy else None,
    )


def _number_or_text(value: Any) -> float | str:
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)  # the sampler refuses it with the reason


def _sdk_int(value: Any) -> int | None:
    """An integer field as marshmallow's lenient Int reads it: "60" and 60.0 are 60, 2.5 is 2."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):
        return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _strip_file_scheme(path: str) -> str:
    return path[len("file:"):] if path.startswith("file:") and not path.startswith("file://") else path


def job_input(name: str, value: Any) -> JobInput:
    if isinstance(value, dict):
        kind = value.get("type")
        # `{value: 0.01}` (optionally typed) is a literal, as the SDK's input schema reads it.
        if kind in ("integer", "number", "string", "boolean") or ("value" in value and "path" not in value):
            return JobInput(name, LITERAL, value.get("value", value.get("default")))
        # An object input without `type` is a uri_folder (SPEC §3.2).
        kind = str(kind or "uri_folder")
        path = value.get("path")
        return JobInput(name, kind, path=None if path is None else str(path),
                        mode=None if value.get("mode") is None else str(value["mode"]).lower())
    return JobInput(name, LITERAL, value)


def _job_output(name: str, value: Any) -> JobOutput:
    if not isinstance(value, dict):
        return JobOutput(name)
    version = value.get("version")
    return JobOutput(name, str(value.get("type") or "uri_folder"),
                     None if value.get("mode") is None else str(value["mode"]).lower(),
                     _text(value.get("path")), _text(value.get("name")),
                     None if version is None else str(version))


def parse_overrides(pairs: Iterable[str]) -> list[tuple[tuple[str, ...], Any]]:
    """``--set KEY=VALUE`` as the Azure CLI reads it: a dotted path, and a value parsed as JSON
    when it is JSON, else taken as the string it is (so ``inputs.lr=0.1`` sets a number,
    ``compute=azureml:gpu`` a string, and ``mode=no`` the string "no", not YAML's false)."""
    import json

    parsed = []
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        path = tuple(part for part in key.strip().split("."))
        if not sep or not all(path):
            raise UsageError(f"--set {pair!r}: write KEY=VALUE with a dotted key, e.g. --set inputs.lr=0.1")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        parsed.append((path, value))
    return parsed


def apply_overrides(data: dict[str, Any], pairs: Iterable[str]) -> dict[str, Any]:
    import copy

    result = copy.deepcopy(data)
    for path, value in parse_overrides(pairs):
        target = result
        for index, part in enumerate(path[:-1]):
            child = target.get(part)
            if child is None:
                child = target[part] = {}
            if not isinstance(child, dict):
                raise UsageError(f"--set {'.'.join(path)}: `{'.'.join(path[:index + 1])}` is not a "
                                 "mapping, so it has no fields to set")
            target = child
        existing = target.get(path[-1])
        # `--set inputs.data.path=...` style is the usual form, but `--set inputs.x=...` on a data
        # input given as a mapping replaces only its path, which is what a learner means.
        if isinstance(existing, dict) and "path" in existing and not isinstance(value, dict):
            target[path[-1]] = {**existing, "path": value}
        else:
            target[path[-1]] = value
    return result


def load_spec(path: str | Path, overrides: Iterable[str] = (), workspace: Path | None = None,
              config: Any = None, ignore: Iterable[str] = (), strict: bool = True) -> Spec:
    """Lint ``path`` and return its typed model; raise :class:`SpecError` if lint reports an
    error (before or after ``overrides``), :class:`UsageError` if the file cannot be read.
    The project's ``[tool.amllab.lint]`` applies (found from the spec's folder up, as aml-lint
    finds it from the current one); ``ignore`` adds codes or prefixes to its ``ignore``, as
    ``aml-lint --ignore`` does. ``strict=False``: errors azure-ai-ml sends on to the service
    (:func:`client_sends`) do not refuse the spec; they stay in its findings."""
    import yaml

    from . import config as config_module
    from .engine import lint_file, lint_text
    from .rules import RULES

    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file (give the job's YAML file with --file)")
    if config is None:
        config = config_module.load(path.resolve().parent, RULES)
    if workspace is not None:
        config = config.with_overrides(workspace=workspace)
    ignore = tuple(ignore)
    if ignore:
        # Checked like the configuration file's codes, so a typo gets one clear message.
        codes = config_module._codes(list(ignore), "--ignore", Path("command line"), RULES)
        config = config.with_overrides(ignore=tuple(config.ignore) + codes)
    report = lint_file(path, config)
    _refuse_errors(str(path), report.diagnostics, report.text, strict)
    if report.kind is None:
        raise UsageError(f"{path}: not an Azure ML job spec ({report.skipped or 'unknown kind'})")
    data = yaml.safe_load(report.text or "")
    overrides = tuple(overrides)
    findings = list(report.diagnostics)
    text, shown = report.text, str(path)
    if overrides:
        data = apply_overrides(data, overrides)
        shown = f"{path} (with --set {' '.join(overrides)})"
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        again = lint_text(text, shown, config, base_dir=path.resolve().parent)
        _refuse_errors(shown, again.diagnostics, text, strict)
        findings = list(again.diagnostics)
    return Spec(path.resolve(), report.kind, data, findings, overrides, text, shown)


def _refuse_errors(shown: str, diagnostics: list[Diagnostic], text: str | None, strict: bool = True) -> None:
    if any(d.severity is Severity.ERROR and (strict or not client_sends(d)) for d in diagnostics):
        raise SpecError(shown, diagnostics, text)


def load_asset(path: str | Path) -> dict[str, Any]:
    """Read an asset file (data, environment, component, compute) into a mapping; YAML problems
    (syntax, duplicate keys, unsafe tags) are a :class:`SpecError` with their position."""
    from . import loader

    path = Path(path)
    document, problems = loader.load_path(path)
    errors = [d for d in problems if d.severity is Severity.ERROR]
    if document is None or errors:
        if not problems:
            raise UsageError(f"{path}: cannot be read")
        raise SpecError(str(path), problems, document.text if document else None)
    if not isinstance(document.data, dict):
        raise UsageError(f"{path}: an asset file must be a YAML mapping of fields")
    return document.data
