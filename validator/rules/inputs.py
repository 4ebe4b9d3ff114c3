"""AML2xx (second part): the inputs and outputs of jobs — their names, literal values, modes and
paths, whether the command uses them, and environment variables written as YAML non-strings.

Scope: command jobs, sweep jobs (top-level inputs/outputs, used by `trial.command`), pipeline
jobs (pipeline-level inputs/outputs and the ports of inline command steps; for paths and modes
also the data ports given to component-based steps) and, for modes only, command components.
Not here: undeclared references and expression syntax (AML201-AML206), component port
definitions (AML530+), `parent.*` bindings (AML501+), `azureml:` references and whether a local
path exists (AML8xx).
"""

from __future__ import annotations

import re
from typing import Any, Iterator, NamedTuple

from .. import expressions
from ..diagnostic import Finding, Severity
from ..loader import Document, Path_, count_before
from ._base import check
from ..values import mapping as _mapping
from .expressions import command_sites
from .file_level import JOB

JOBS = ("commandJob", "sweepJob", "pipelineJob")

# Levels of a port: who declares it.
JOB_LEVEL = "job"            # a command or sweep job's own inputs/outputs
PIPELINE_LEVEL = "pipeline"  # a pipeline job's own inputs/outputs
INLINE_LEVEL = "inline"      # an inline command step (command + environment, no component)
NODE_LEVEL = "node"          # a step that uses a component (its ports follow the component)
COMPONENT_LEVEL = "component"
DECLARING = (JOB_LEVEL, PIPELINE_LEVEL, INLINE_LEVEL)
DATA_PORTS = (JOB_LEVEL, PIPELINE_LEVEL, INLINE_LEVEL, NODE_LEVEL)

# The service's key rule (SPEC §3.2, `validate_key_contains_allowed_characters`); pipeline
# inputs may also be dotted parameter groups (`validate_pipeline_input_key_contains_allowed_characters`).
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
GROUP_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")

# Variables through which a script can reach a port without the command naming it (SPEC §9.3).
INPUT_VARIABLES = re.compile(r"(?:AZURE_ML_INPUT_|AZUREML_SWEEP_|AZUREML_PARAMETER_)([A-Za-z0-9_]+)")
OUTPUT_VARIABLES = re.compile(r"(?:AZURE_ML_OUTPUT_|AZUREML_SWEEP_)([A-Za-z0-9_]+)")

SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
# Storage the service reads and writes (SPEC §3.2 path forms); wasb/abfs are the non-TLS forms
# of the same Azure storage drivers and are left alone.
KNOWN_SCHEMES = {"azureml", "http", "https", "wasbs", "wasb", "abfss", "abfs", "adl", "file"}
OUTPUT_PATH_EXPRESSIONS = ("name", "output_name", "default_datastore")
INPUT_ONLY_MODES = ("ro_mount", "download", "eval_mount", "eval_download")
OUTPUT_ONLY_MODES = ("rw_mount", "upload")

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
inputs:
  raw_data:
    type: uri_folder
    path: azureml:churn-raw:3
jobs:
  prep:
    type: command
    command: python prep.py --raw ${{inputs.raw}} --out ${{outputs.clean}}
    environment: azureml:sklearn-train:2
    inputs:
      raw: ${{parent.inputs.raw_data}}
    outputs:
      clean:
        type: uri_folder
"""

JOB_WITH_DATA = JOB.replace(
    "--lr ${{inputs.lr}}", "--lr ${{inputs.lr}} --data ${{inputs.data}}").replace(
    "  lr: 0.01\n", "  lr: 0.01\n  data:\n    type: uri_folder\n    path: azureml:churn-raw:3\n")

JOB_WITH_OUTPUT = JOB.replace(
    "--lr ${{inputs.lr}}", "--lr ${{inputs.lr}} --model-dir ${{outputs.model}}") + (
    "outputs:\n  model:\n    type: uri_folder\n    mode: rw_mount\n")

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: train_model
version: "1"
command: python train.py --data ${{inputs.data}} --model-dir ${{outputs.model}}
environment: azureml:sklearn-train:2
inputs:
  data:
    type: uri_folder
    mode: ro_mount
outputs:
  model:
    type: uri_folder
    mode: rw_mount
"""


# ----------------------------------------------------------------------------- the walk


class Port(NamedTuple):
    """One declared input or output: ``path`` points at its entry (``(..., "inputs", name)``)."""

    path: Path_
    direction: str  # "input" or "output"
    name: str
    value: Any
    owner: str      # "the job", "step 'train'"...
    level: str

    @property
    def section(self) -> str:
        return "inputs" if self.direction == "input" else "outputs"

    @property
    def owner_path(self) -> Path_:
        return self.path[:-2]

    @property
    def is_binding(self) -> bool:
        return isinstance(self.value, str) and "${{" in self.value

    @property
    def data_type(self) -> str | None:
        """The data type of a mapping port (``uri_folder`` when absent), None for literals."""
        if not isinstance(self.value, dict) or "value" in self.value:
            if self.direction == "output" and self.value is None:
                return "uri_folder"
            return None
        kind = self.value.get("type", "uri_folder")
        return kind.lower() if isinstance(kind, str) else None

    def field(self, key: str) -> Any:
        return self.value.get(key) if isinstance(self.value, dict) else None


def _is_inline_step(node: dict) -> bool:
    return isinstance(node.get("command"), str) and "component" not in node \
        and node.get("type", "command") == "command"


def _section(holder: dict, base: Path_, owner: str, level: str) -> Iterator[Port]:
    for key, direction in (("inputs", "input"), ("outputs", "output")):
        section = holder.get(key)
        if isinstance(section, dict):
            for name, value in section.items():
                yield Port(base + (key, name), direction, str(name), value, owner, level)


def ports(document: Document) -> Iterator[Port]:
    """Every input and output this family looks at, with who declares it."""
    data = _mapping(document.data)
    kind = document.kind
    if kind == "commandJob":
        yield from _section(data, (), "the job", JOB_LEVEL)
    elif kind == "sweepJob":
        yield from _section(data, (), "the sweep", JOB_LEVEL)
    elif kind == "pipelineJob":
        yield from _section(data, (), "the pipeline", PIPELINE_LEVEL)
        for name, node in _mapping(data.get("jobs")).items():
            if isinstance(node, dict):
                level = INLINE_LEVEL if _is_inline_step(node) else NODE_LEVEL
                yield from _section(node, ("jobs", name), f"step '{name}'", level)
    elif kind == "commandComponent":
        yield from _section(data, (), "the component", COMPONENT_LEVEL)


def _strings(value: Any, path: Path_ = (), skip: tuple[str, ...] = ()) -> Iterator[tuple[Path_, str]]:
    """Every string in ``value`` with its path; top-level keys in ``skip`` are left out."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if not path and key in skip:
                continue
            yield from _strings(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, path + (index,))


def _used_names(holder: dict, context: str) -> set[str] | None:
    """Names of ``context`` ("inputs"/"outputs") that the strings of ``holder`` (outside its own
    section of that name) use, by expression or by an Azure ML environment variable; also
    names a broken or misplaced expression mentions (`${{inputs.lr`, `${{search_space.lr}}`),
    which another rule reports. None when the command is missing or empty, or refers to a port
    of that kind that is not declared (AML106/AML202/AML203 explain those; an unused port then
    is most likely the one meant)."""
    command = holder.get("trial") if "trial" in holder else holder
    command = command.get("command") if isinstance(command, dict) else None
    if not isinstance(command, str) or not command.strip():
        return None
    declared = _mapping(holder.get(context))
    variables = INPUT_VARIABLES if context == "inputs" else OUTPUT_VARIABLES
    used: set[str] = set()
    for _, text in _strings(holder, skip=(context,)):
        if expressions.has_expression(text):
            template = expressions.parse(text)
            for reference in [*template.references, *template.deprecated]:
                if reference.context == context and len(reference.parts) >= 2:
                    name = reference.port(declared)
                    if name not in declared:
                        return None
                    used.add(name)
                used.update(str(part) for part in reference.parts[1:])
            for problem in template.problems:
                used.update(re.findall(r"\.([A-Za-z0-9_-]+)", problem.token))
        if "AZURE" in text:
            used.update(variables.findall(text))
    return used


def _holders(document: Document) -> Iterator[tuple[dict, Path_, str, str]]:
    """(mapping whose strings may use the ports, its path, owner, level) for each job that runs
    a command: a command job, a sweep (its trial command sees the sweep's ports), inline steps."""
    data = _mapping(document.data)
    if document.kind == "commandJob":
        yield data, (), "the job", JOB_LEVEL
    elif document.kind == "sweepJob":
        yield data, (), "the sweep", JOB_LEVEL
    elif document.kind == "pipelineJob":
        for name, node in _mapping(data.get("jobs")).items():
            if isinstance(node, dict) and _is_inline_step(node):
                yield node, ("jobs", name), f"step '{name}'", INLINE_LEVEL


def _source_token(document: Document, where: Path_) -> str | None:
    """The scalar at ``where`` exactly as written (one line, anchor removed), or None."""
    position = document.positions.get(tuple(where))
    if position is None or not position.value_end or position.value_line < 1:
        return None
    lines = document.lines
    if position.value_line > len(lines):
        return None
    token = lines[position.value_line - 1][position.value_column - 1: position.value_end - 1].strip()
    if token.startswith("&"):
        token = token.split(None, 1)[1] if " " in token else ""
    if not token or token.startswith(("!", "*", "'", '"')):
        return None  # explicit tags and quoted text are what the author meant
    return token


def _local_path(reference: Any) -> str | None:
    """The local part of a path that names a local file or folder, else None."""
    if not isinstance(reference, str) or not reference.strip() or "${{" in reference:
        return None
    text = reference.strip()
    if SCHEME_RE.match(text) and len(text.split(":", 1)[0]) > 1:
        return None
    if text.startswith(("azureml:", "git+")):
        return None
    if text.startswith("file:"):
        text = text[len("file:"):]
    return text or None


def _unknown_scheme(path: str) -> str | None:
    """The scheme of a URL-like path when Azure ML cannot use it (``s3``), else None."""
    match = SCHEME_RE.match(path.strip())
    if not match or len(match.group(1)) == 1 or match.group(1).lower() in KNOWN_SCHEMES:
        return None
    return match.group(1)


def _kind_on_disk(document: Document, local: str) -> str | None:
    try:
        target = (document.base_dir / local)
        if target.is_dir():
            return "folder"
        if target.is_file():
            return "file"
    except (OSError, ValueError):
        return None
    return None


def _shown(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."


# ----------------------------------------------------------------------------- names


def _fixed_name(name: str, groups: bool) -> str:
    allowed = r"[^A-Za-z0-9_.]+" if groups else r"[^A-Za-z0-9_]+"
    fixed = re.sub(allowed, "_", name).strip("_.") or "_"
    if fixed[0].isdigit():
        fixed = "_" + fixed
    return fixed


@check("AML207", "invalid-io-name", Severity.ERROR,
       "An input or output name has characters Azure ML refuses (a hyphen, a dot, a space...).",
       bad=JOB.replace("${{inputs.lr}}", "${{inputs.learning-rate}}").replace("  lr: 0.01", "  learning-rate: 0.01"),
       good=JOB, kinds=JOBS)
def invalid_io_name(document: Document) -> Iterator[Finding]:
    """
    Input and output names of a job are letters, digits and underscores and do not start with a
    digit (`^[A-Za-z_][A-Za-z0-9_]*$`). The SDK loads `learning-rate:` without a word and only
    fails at submission ("Key name learning-rate must be composed letters, numbers, and
    underscore"); an inline pipeline step becomes an anonymous component, whose port names follow
    the same rule. Pipeline-level inputs, and the inputs of an inline step, may in addition be
    dotted parameter groups (`training.lr`, the YAML form of the SDK's `@dsl.group`), which
    azure-ai-ml accepts there, not on a standalone job. Rename the port and every `${{inputs.<name>}}` that uses it. The ports of a
    step that uses a component are named by the component (AML5xx).

    See: reference-yaml-job-command

    Provenance: SPEC §3.2.
    """
    for port in ports(document):
        if port.level not in DECLARING:
            continue
        # An inline step is registered as an anonymous component, whose inputs may be groups too.
        groups = port.level in (PIPELINE_LEVEL, INLINE_LEVEL) and port.direction == "input"
        if (GROUP_NAME_RE if groups else NAME_RE).match(port.name):
            continue
        fixed = _fixed_name(port.name, groups)
        context = ("parent." if port.level == PIPELINE_LEVEL else "") + port.section
        rule = "letters, digits and underscores, not starting with a digit"
        if groups:
            rule += " (dots only between such parts, for parameter groups)"
        yield Finding(
            f"{port.direction} name '{port.name}' is refused when the job is submitted: "
            f"names are {rule}", port.path, key=True,
            hint=f"rename it to '{fixed}' (and every `${{{{{context}.{port.name}}}}}` that uses it)")


@check("AML208", "io-name-case-clash", Severity.ERROR,
       "Two input or output names of a job differ only in case (or an input and an output share a name).",
       bad=JOB.replace("  lr: 0.01\n", "  lr: 0.01\n  LR: 0.1\n").replace(
           "--lr ${{inputs.lr}}", "--lr ${{inputs.lr}} --warmup-lr ${{inputs.LR}}"),
       good=JOB.replace("  lr: 0.01\n", "  lr: 0.01\n  warmup_lr: 0.1\n").replace(
           "--lr ${{inputs.lr}}", "--lr ${{inputs.lr}} --warmup-lr ${{inputs.warmup_lr}}"),
       kinds=JOBS)
def io_name_case_clash(document: Document) -> Iterator[Finding]:
    """
    Port names of one job must be unique ignoring case, across its inputs and outputs together (the
    components' rule "Invalid component input names 'a' and 'A', which are equal ignore case").
    `lr` and `LR` are one name to the service, so one of them is lost or the submission fails; an
    input and an output of the same name make `data` ambiguous in logs, the studio and the
    environment of the job. Checked for command and sweep jobs, the pipeline's own ports, and each
    inline step. Likewise an input `train` next to the parameter-group members `train.lr`: the
    SDK refuses the pair ("Conflict parameter key 'train' and 'train.lr'").

    See: reference-yaml-component-command#common-errors-and-recommendation

    Provenance: SPEC §12 rule 13.
    """
    seen: dict[Path_, dict[str, Port]] = {}
    for port in ports(document):
        if port.level not in DECLARING:
            continue
        names = seen.setdefault(port.owner_path, {})
        first = names.get(port.name.lower())
        if first is None:
            names[port.name.lower()] = port
            continue
        how = "has the same name as" if first.name == port.name else "differs only in case from"
        yield Finding(
            f"{port.direction} '{port.name}' {how} {first.direction} '{first.name}' of "
            f"{port.owner}; input and output names must be unique ignoring case",
            port.path, key=True, hint="rename one of them, and the references to it")
    for owner_path, names in seen.items():
        inputs = {port.name: port for port in names.values() if port.direction == "input"}
        for member, group in sorted(expressions.group_conflicts(inputs)):
            port = inputs[member]
            yield Finding(
                f"input '{member}' of {port.owner} is a member of the parameter group '{group}', "
                f"which is also an input of its own; azure-ai-ml refuses the two together "
                f"(\"Conflict parameter key '{group}' and '{member}'\")",
                port.path, key=True, hint=f"rename '{group}' or the group '{group}.*'")


# ----------------------------------------------------------------------------- use


@check("AML209", "unused-input", Severity.WARNING,
       "A job declares an input that its command never uses.",
       bad=JOB.replace("  lr: 0.01\n", "  lr: 0.01\n  epochs: 20\n"),
       good=JOB.replace("  lr: 0.01\n", "  lr: 0.01\n  epochs: 20\n").replace(
           "--lr ${{inputs.lr}}", "--lr ${{inputs.lr}} --epochs ${{inputs.epochs}}"),
       kinds=JOBS)
def unused_input(document: Document) -> Iterator[Finding]:
    """
    A job's inputs reach the script only through `${{inputs.<name>}}` in the command (for a sweep,
    in `trial.command`). An input that nothing refers to is uploaded or recorded, and the script
    runs with its own default instead: usually a flag that was forgotten or renamed. Also checked
    for inline pipeline steps. Not reported: an input that another string of the job uses (an
    environment variable `${{inputs.x}}`), one named in an `AZURE_ML_INPUT_<name>` /
    `AZUREML_SWEEP_<name>` / `AZUREML_PARAMETER_<name>` variable, and a step input bound to
    `${{parent.jobs.<step>.outputs.<name>}}` (it orders the steps even when unused).

    See: concept-expressions, reference-yaml-job-command

    Provenance: SPEC §3.10.
    """
    for holder, base, owner, level in _holders(document):
        used = _used_names(holder, "inputs")
        if used is None:
            continue
        for port in _section(holder, base, owner, level):
            if port.direction != "input" or port.name in used:
                continue
            if level == INLINE_LEVEL and port.is_binding and "parent.jobs." in port.value:
                continue
            where = "trial command" if document.kind == "sweepJob" else "command"
            yield Finding(
                f"input '{port.name}' of {owner} is never used in its {where}: "
                "its value does not reach the script",
                port.path, key=True,
                hint=f"pass it in the command (for example `--{port.name.replace('_', '-')} "
                     f"${{{{inputs.{port.name}}}}}`) or remove it")


@check("AML210", "unused-output", Severity.INFO,
       "A job declares an output that its command never refers to.",
       bad=JOB + "outputs:\n  model:\n    type: uri_folder\n",
       good=JOB_WITH_OUTPUT, kinds=JOBS)
def unused_output(document: Document) -> Iterator[Finding]:
    """
    An output gets a storage location mounted read-write (or uploaded at the end), but only
    `${{outputs.<name>}}` in the command tells the script where that is. An output the command
    never names usually stays empty; files written to `./outputs` are saved with the job anyway,
    without any declared output. This is a fact, not a mistake: a script may find the location
    another way (`AZURE_ML_OUTPUT_<name>`; for a sweep, `AZUREML_SWEEP_<name>`), and such mentions
    count as a use.

    See: reference-yaml-job-command, how-to-read-write-data-v2

    Provenance: SPEC §3.3.
    """
    for holder, base, owner, level in _holders(document):
        used = _used_names(holder, "outputs")
        if used is None:
            continue
        for port in _section(holder, base, owner, level):
            if port.direction != "output" or port.name in used:
                continue
            where = "trial command" if document.kind == "sweepJob" else "command"
            yield Finding(
                f"output '{port.name}' of {owner} is never referred to in its {where}: "
                "the script is not told where to write it, so it stays empty unless the script "
                "finds it another way",
                port.path, key=True,
                hint=f"pass `${{{{outputs.{port.name}}}}}` to the script, or remove the output")


def _pipeline_input_uses(data: dict) -> set[str]:
    """Pipeline inputs that anything outside the `inputs:` section binds: `${{parent.inputs.X}}`
    anywhere (node inputs, node compute, settings), and the legacy `${{inputs.X}}` in a step's
    `inputs:`/`outputs:` (SPEC §5.4), but not inside step commands (there it is the step's own)."""
    used: set[str] = set()
    for path, text in _strings(data, skip=("inputs",)):
        if not expressions.has_expression(text):
            continue
        in_step_ports = len(path) >= 3 and path[0] == "jobs" and path[2] in ("inputs", "outputs")
        for reference in expressions.parse(text).references:
            parts = reference.parts
            if parts[:2] == ("parent", "inputs") and len(parts) >= 3:
                used.add(".".join(parts[2:]))
            elif in_step_ports and parts[0] == "inputs" and len(parts) >= 2:
                used.add(".".join(parts[1:]))
    return used


@check("AML211", "unbound-pipeline-input", Severity.INFO,
       "A pipeline input is bound by no step.",
       bad=PIPELINE.replace("inputs:\n  raw_data:", "inputs:\n  max_rows: 5000\n  raw_data:"),
       good=PIPELINE, kinds=("pipelineJob",))
def unbound_pipeline_input(document: Document) -> Iterator[Finding]:
    """
    A pipeline-level input reaches a step only through a binding `${{parent.inputs.<name>}}` in
    that step's `inputs:`. An input no step binds is recorded with the run and shown in the studio,
    but changes nothing: often a binding that was forgotten. Reported as information, because
    pipelines also use inputs as recorded parameters. A pipeline whose `component:` is a pipeline
    component hands its inputs to that component and is not checked here.

    See: reference-yaml-job-pipeline

    Provenance: SPEC §5.4.
    """
    data = _mapping(document.data)
    if "component" in data or not isinstance(data.get("jobs"), dict):
        return
    used = _pipeline_input_uses(data)
    for port in ports(document):
        if port.level != PIPELINE_LEVEL or port.direction != "input" or port.name in used:
            continue
        yield Finding(
            f"pipeline input '{port.name}' is bound by no step, so its value reaches no job",
            port.path, key=True,
            hint=f"bind it in a step's inputs (`<input>: ${{{{parent.inputs.{port.name}}}}}`) or remove it")


# ----------------------------------------------------------------------------- values


def _has_value(value: Any) -> bool | None:
    """True when an input certainly has a value, False when it certainly has none, None when
    it depends on a binding."""
    if isinstance(value, str) and "${{" in value:
        return None
    if isinstance(value, dict):
        if "value" in value:
            return value["value"] is not None
        return isinstance(value.get("path"), str) and bool(value["path"].strip())
    return value is not None


@check("AML212", "optional-block-in-job", Severity.WARNING,
       "A job command uses an optional block `$[[ ]]`, which a job's inputs always fill.",
       bad=JOB.replace("--lr ${{inputs.lr}}", "$[[--lr ${{inputs.lr}}]]"), good=JOB, kinds=JOBS)
def optional_block_in_job(document: Document) -> Iterator[Finding]:
    """
    `$[[ ... ]]` drops its text when the optional input inside it has no value. Only components
    have optional inputs; in a job every declared input has a value (a literal, `value:` or a
    `path`), so the block is always kept and the brackets only suggest an option that does not
    exist. Removing the input to drop the flag does not work either: the reference is then
    undeclared (AML202). Write the text without the brackets, or make the command a component with
    an `optional: true` input. Not reported: blocks whose input is a pipeline binding or a data
    input without a `path`.

    See: reference-yaml-component-command

    Provenance: SPEC §3.10.
    """
    for site in command_sites(document):
        if site.path not in (("command",), ("trial", "command")) and not (
                len(site.path) == 3 and site.path[0] == "jobs" and site.path[2] == "command"):
            continue
        template = expressions.parse(site.text)
        for index, block in enumerate(template.blocks):
            names = [r.port(site.inputs) for r in template.references
                     if r.block == index and r.context == "inputs" and len(r.parts) >= 2]
            if not names or any(n not in site.inputs or not _has_value(site.inputs[n]) for n in names):
                continue
            text = template.text[block.start:block.end]
            span = document.locate_text(site.path, text, count_before(template.text, text, block.start))
            if span == document.locate(site.path):  # the block spans source lines
                occurrence = count_before(template.text, expressions.BLOCK_OPEN, block.start)
                span = document.locate_text(site.path, expressions.BLOCK_OPEN, occurrence)
            listed = ", ".join(f"'{n}'" for n in dict.fromkeys(names))
            yield Finding(
                f"optional block '{_shown(' '.join(text.split()))}' is always kept: "
                f"{site.owner} gives {listed} a value, and a job has no optional inputs",
                site.path, span=span,
                hint="remove `$[[` and `]]`; optional blocks drop text only for a component "
                     "input declared `optional: true`")


def _coercion(value: Any, token: str, strict: bool) -> str | None:
    """How YAML 1.1 read ``token`` into ``value`` when that changes what the job receives
    (``str(value)``), else None. ``strict`` reports any change of text (environment variables
    are text); otherwise only a change of meaning (a number stays the same number)."""
    if isinstance(value, bool):
        reading = "a boolean"
        if token.lower() in ("yes", "no", "on", "off"):
            return reading
        return reading if strict and token != str(value) else None
    if isinstance(value, (int, float)):
        noun = "number" if isinstance(value, float) else "integer"
        if ":" in token:
            return f"the base-60 {noun} {value}"
        if isinstance(value, int) and re.fullmatch(r"[-+]?0[0-7]+", token):
            if strict and token != str(value) or int(token, 10) != value:
                return f"the octal integer {value}"
        if strict and token != str(value):
            return f"the {noun} {value}"
    return None


def _literal_inputs(document: Document) -> Iterator[tuple[Port, Path_, Any]]:
    for port in ports(document):
        if port.direction != "input" or port.level not in DATA_PORTS:
            continue
        if isinstance(port.value, dict):
            if "value" in port.value:
                yield port, port.path + ("value",), port.value["value"]
        elif not isinstance(port.value, (list, str)):
            yield port, port.path, port.value


def _environment_variables(document: Document) -> Iterator[tuple[Path_, dict]]:
    data = _mapping(document.data)
    if document.kind == "commandJob":
        yield ("environment_variables",), _mapping(data.get("environment_variables"))
    elif document.kind == "sweepJob":
        trial = _mapping(data.get("trial"))
        yield ("trial", "environment_variables"), _mapping(trial.get("environment_variables"))
    elif document.kind == "pipelineJob":
        for name, node in _mapping(data.get("jobs")).items():
            node = _mapping(node)
            yield ("jobs", name, "environment_variables"), _mapping(node.get("environment_variables"))


@check("AML213", "yaml-coerced-value", Severity.WARNING,
       "A literal input or environment variable is read by YAML as another type, so the job receives other text.",
       bad=JOB + "environment_variables:\n  USE_GPU: true\n",
       good=JOB + "environment_variables:\n  USE_GPU: \"true\"\n", kinds=JOBS)
def yaml_coerced_value(document: Document) -> Iterator[Finding]:
    """
    Azure ML reads specs as YAML 1.1 and passes literal inputs and environment variables to the job
    as Python's `str()` of what YAML read: `yes`/`no`/`on`/`off` are booleans and arrive as
    `True`/`False`, `010` is octal 8, `1:30` is the base-60 number 90, and an environment variable
    written `3.10` arrives as `3.1` (`true` as `True`). Quote the value to pass the text as
    written. For inputs only a change of meaning is reported (`true` → `True` and `1.50` → `1.5`
    are the same value to a script that parses them); environment variables are text, so any change
    is. The SDK does not type-check environment variables at all.

    See: reference-yaml-job-command

    Provenance: SPEC §3.2.
    """
    for port, where, value in _literal_inputs(document):
        token = _source_token(document, where)
        reading = _coercion(value, token, strict=False) if token else None
        if reading is None:
            continue
        hint = f"quote it to pass the text as written: `{where[-1]}: \"{token}\"`"
        if isinstance(value, bool):
            hint += f", or write `{str(value).lower()}` if a boolean is meant"
        yield Finding(
            f"input '{port.name}': YAML reads {token} as {reading}, so Azure ML "
            f"passes on '{value}', not '{token}'", where, hint=hint)
    for base, variables in _environment_variables(document):
        for name, value in variables.items():
            token = _source_token(document, base + (name,))
            reading = _coercion(value, token, strict=True) if token else None
            if reading is None:
                continue
            yield Finding(
                f"environment variable '{name}': YAML reads {token} as {reading}, so the "
                f"job sees '{value}', not '{token}'", base + (name,),
                hint=f"quote it: `{name}: \"{token}\"`")


# ----------------------------------------------------------------------------- modes


def _mode(port: Port) -> tuple[str | None, Path_]:
    mode = port.field("mode")
    return (mode.lower() if isinstance(mode, str) else None), port.path + ("mode",)


def _at(data: Any, path: Path_) -> Any:
    for part in path:
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        else:
            return None
    return data


@check("AML214", "undocumented-output-mode", Severity.WARNING,
       "An output uses mode `mount` or `direct`, which the YAML reference does not list for outputs.",
       bad=JOB_WITH_OUTPUT.replace("mode: rw_mount", "mode: mount"), good=JOB_WITH_OUTPUT,
       kinds=JOBS + ("commandComponent",))
def undocumented_output_mode(document: Document) -> Iterator[Finding]:
    """
    The job YAML reference lists two output modes: `rw_mount` (the default: the folder is mounted
    read-write) and `upload` (files are uploaded when the job ends). The SDK also accepts `mount`
    and `direct`. Only the Python `Output` class reference mentions `direct` ("pass in the URI as a
    string"): the script then gets a storage URL and must write there with its own credentials. Use
    `rw_mount` or `upload`; where `direct` is really meant, suppress the warning on that line. A
    Spark step is the exception: its outputs are written by Spark itself to storage, and `direct`
    is the only mode Spark outputs take (Microsoft's Spark pipeline examples say so), so they are
    not reported.

    See: reference-yaml-job-command,
         https://learn.microsoft.com/python/api/azure-ai-ml/azure.ai.ml.output

    Provenance: SPEC §3.3, §11 row 13.
    """
    for port in ports(document):
        if port.direction != "output":
            continue
        owner = _at(document.data, port.owner_path)
        if isinstance(owner, dict) and owner.get("type") == "spark":
            continue
        mode, where = _mode(port)
        if mode not in ("mount", "direct"):
            continue
        detail = ("an older spelling of a read-write mount" if mode == "mount" else
                  "the script gets a storage URL and must write there with its own credentials")
        yield Finding(
            f"output mode '{port.field('mode')}' of output '{port.name}' is not documented "
            f"for outputs ({detail}); the documented modes are rw_mount and upload",
            where, hint="mode: rw_mount  (or upload, to copy the files when the job ends)")


@check("AML215", "port-mode-direction", Severity.WARNING,
       "A component port has a mode of the other direction (`rw_mount` on an input, `ro_mount` on an output...).",
       bad=COMPONENT.replace("    mode: ro_mount\n", "    mode: rw_mount\n"), good=COMPONENT,
       kinds=("commandComponent",))
def port_mode_direction(document: Document) -> Iterator[Finding]:
    """
    A component's port `mode` is not checked against its direction by the SDK (its schema accepts
    every mode on both), but a job refuses `rw_mount` on an input, and an output cannot be a
    read-only mount or a download. `eval_mount` and `eval_download` exist only for `mltable`
    inputs. Input modes: `ro_mount`, `download`, `direct` (+ the eval modes for mltable); output
    modes: `rw_mount`, `upload`.

    See: reference-yaml-job-command, how-to-read-write-data-v2

    Provenance: SPEC §3.2, §3.3.
    """
    for port in ports(document):
        mode, where = _mode(port)
        if mode is None:
            continue
        message = None
        if port.direction == "input" and mode in OUTPUT_ONLY_MODES:
            message = f"input '{port.name}' has the output mode '{mode}'; inputs are read-only"
            hint = "mode: ro_mount  (or download, or direct)"
        elif port.direction == "output" and mode in INPUT_ONLY_MODES:
            message = f"output '{port.name}' has the input mode '{mode}'; an output is written by the job"
            hint = "mode: rw_mount  (or upload)"
        elif port.direction == "input" and mode.startswith("eval_") and port.data_type not in (None, "mltable"):
            message = f"mode '{mode}' of input '{port.name}' applies only to mltable inputs, not {port.data_type}"
            hint = "mode: ro_mount  (or download)"
        if message:
            yield Finding(message, where, hint=hint)


@check("AML216", "output-version-without-name", Severity.WARNING,
       "An output sets `version` without `name`, so there is nothing to register the version under.",
       bad=JOB_WITH_OUTPUT + "    version: \"3\"\n",
       good=JOB_WITH_OUTPUT + "    name: churn-model\n    version: \"3\"\n", kinds=JOBS)
def output_version_without_name(document: Document) -> Iterator[Finding]:
    """
    `name` and `version` on an output register what the job writes as a data or model asset. A name
    alone is fine (the service picks the next version); a version alone names no asset: the SDK
    reference says "a version can be set only when name is set", and the SDK sends it on unchecked.

    See: reference-yaml-job-command,
         https://learn.microsoft.com/python/api/azure-ai-ml/azure.ai.ml.output

    Provenance: SPEC §3.3.
    """
    for port in ports(document):
        if port.direction != "output" or not isinstance(port.value, dict):
            continue
        if "version" in port.value and not port.value.get("name"):
            yield Finding(
                f"output '{port.name}' sets a version but no name: only a named output "
                "is registered as an asset", port.path + ("version",), key=True,
                hint="add `name: <asset-name>` to register the output, or remove `version`")


# ----------------------------------------------------------------------------- paths


@check("AML217", "output-path-expression", Severity.ERROR,
       "An output `path` uses an expression other than `${{name}}`, `${{output_name}}` or `${{default_datastore}}`.",
       bad=JOB_WITH_OUTPUT + "    path: azureml://datastores/workspaceblobstore/paths/models/${{inputs.lr}}/\n",
       good=JOB_WITH_OUTPUT + "    path: azureml://datastores/workspaceblobstore/paths/models/${{name}}/\n",
       kinds=JOBS)
def output_path_expression(document: Document) -> Iterator[Finding]:
    """
    The service resolves three expressions in an output's `path` when the job is submitted:
    `${{name}}` (the job name), `${{output_name}}` and `${{default_datastore}}`. Anything else,
    such as `${{inputs.x}}`, is not resolved there: the output lands under a folder literally named
    after the expression, or the submission fails. In a step's own `outputs:` `${{parent.*}}`
    bindings are left to the pipeline rules.

    See: concept-expressions

    Provenance: SPEC §3.10 ("output path expressions").
    """
    for port in ports(document):
        path = port.field("path")
        if port.direction != "output" or port.level not in DATA_PORTS or not isinstance(path, str):
            continue
        if not expressions.has_expression(path):
            continue
        template = expressions.parse(path)
        for reference in template.references:
            if reference.dotted in OUTPUT_PATH_EXPRESSIONS:
                continue
            if port.level == NODE_LEVEL or port.level == INLINE_LEVEL:
                if reference.context == "parent":
                    continue
            span = document.locate_text(port.path + ("path",), reference.text,
                                        count_before(template.text, reference.text, reference.start))
            yield Finding(
                f"'{reference.text}' is not resolved in an output path: only ${{{{name}}}}, "
                "${{output_name}} and ${{default_datastore}} are", port.path + ("path",), span=span,
                hint="use ${{name}} (the job name) to make the path unique per run, "
                     "or write the value itself")


@check("AML218", "unsupported-path-scheme", Severity.ERROR,
       "An input or output path uses a storage scheme Azure ML cannot read (`s3://`, `gs://`...).",
       bad=JOB_WITH_DATA.replace("path: azureml:churn-raw:3", "path: s3://churn-data/raw/"),
       good=JOB_WITH_DATA.replace("path: azureml:churn-raw:3",
                                  "path: azureml://datastores/workspaceblobstore/paths/churn/raw/"),
       kinds=JOBS)
def unsupported_path_scheme(document: Document) -> Iterator[Finding]:
    """
    A data path is a local path, an `azureml:` asset or datastore URI (`azureml://datastores/
    <datastore>/paths/<path>`), an `https://` (or public `http://`) URL, or Azure storage:
    `wasbs://`, `abfss://`, `adl://`. The SDK accepts any string; the job then fails when the
    service cannot resolve the path. Copy the data into Azure storage (or register a datastore for
    it) and use an `azureml://` path.

    See: how-to-read-write-data-v2, reference-yaml-core-syntax

    Provenance: SPEC §3.2.
    """
    for port in ports(document):
        path = port.field("path")
        if port.level not in DATA_PORTS or not isinstance(path, str):
            continue
        scheme = _unknown_scheme(path)
        if scheme is None:
            continue
        verb = "read from" if port.direction == "input" else "write to"
        yield Finding(
            f"{port.direction} '{port.name}' uses the scheme '{scheme}://', which Azure ML "
            f"cannot {verb}: paths are local, azureml://, https://, wasbs://, abfss:// or adl://",
            port.path + ("path",),
            hint="copy the data to Azure storage (or register it as a data asset) and use "
                 "azureml://datastores/<datastore>/paths/<path>")


@check("AML219", "uri-file-folder-path", Severity.WARNING,
       "A `uri_file` path ends with `/`, which names a folder.",
       bad=JOB_WITH_DATA.replace("type: uri_folder\n    path: azureml:churn-raw:3",
                                 "type: uri_file\n    path: azureml://datastores/workspaceblobstore/paths/churn/train/"),
       good=JOB_WITH_DATA.replace("type: uri_folder\n    path: azureml:churn-raw:3",
                                  "type: uri_file\n    path: azureml://datastores/workspaceblobstore/paths/churn/train.csv"),
       kinds=JOBS)
def uri_file_folder_path(document: Document) -> Iterator[Finding]:
    """
    `uri_file` is one file: mounted or downloaded as a file, its path given to the script is a
    file's. A path ending with `/` names a folder, so the job fails to mount it or the script gets
    a folder where it expects a file. Use `uri_folder` for a folder, or name the file. Local paths
    are checked against the disk instead (AML220): there a trailing slash is harmless.

    See: how-to-read-write-data-v2

    Provenance: SPEC §3.2.
    """
    for port in ports(document):
        path = port.field("path")
        if port.level not in DATA_PORTS or port.data_type != "uri_file" or not isinstance(path, str):
            continue
        text = path.strip()
        if not text.endswith(("/", "\\")) or (text.startswith("azureml:") and "://" not in text):
            continue
        if text.startswith("${{") or _unknown_scheme(text) or _local_path(text) is not None:
            continue
        yield Finding(
            f"{port.direction} '{port.name}' is a uri_file but its path ends with "
            f"'{text[-1]}', which names a folder", port.path + ("path",),
            hint="use `type: uri_folder` for a folder, or point the path at the file")


@check("AML220", "local-path-kind-mismatch", Severity.ERROR,
       "A local `uri_folder` input points at a file, or a `uri_file` input at a folder.",
       bad=JOB_WITH_DATA.replace("type: uri_folder\n    path: azureml:churn-raw:3", "type: uri_file\n    path: ."),
       good=JOB_WITH_DATA.replace("path: azureml:churn-raw:3", "path: ."), kinds=JOBS)
def local_path_kind_mismatch(document: Document) -> Iterator[Finding]:
    """
    A local input is uploaded when the job is submitted and then given to the script as what its
    `type` says: `uri_folder` (also the default when `type` is absent) is a folder, `uri_file` a
    file. A folder uploaded as a `uri_file`, or a file as a `uri_folder`, makes the mount fail or
    hands the script the wrong kind of path. The path is resolved from the folder of the YAML file;
    a path that does not exist is reported by AML8xx.

    See: how-to-read-write-data-v2

    Provenance: SPEC §3.2.
    """
    for port in ports(document):
        if port.direction != "input" or port.level not in DATA_PORTS:
            continue
        expected = {"uri_folder": "folder", "uri_file": "file"}.get(port.data_type or "")
        local = _local_path(port.field("path"))
        if expected is None or local is None:
            continue
        found = _kind_on_disk(document, local)
        if found is None or found == expected:
            continue
        other = "uri_folder" if found == "folder" else "uri_file"
        typed = port.data_type if "type" in port.value else f"{port.data_type} (the default type)"
        yield Finding(
            f"input '{port.name}' is a {typed} but its local path "
            f"'{_shown(str(port.field('path')))}' is a {found}", port.path + ("path",),
            hint=f"use `type: {other}`, or point the path at a {expected}")


@check("AML222", "reserved-output-name", Severity.ERROR,
       "A command or sweep job declares an output named `default`, which the service reserves.",
       bad=JOB_WITH_OUTPUT.replace("model", "default"), good=JOB_WITH_OUTPUT,
       kinds=("commandJob", "sweepJob"))
def reserved_output_name(document: Document) -> Iterator[Finding]:
    """
    Every job has an output of its own named `default`: its artifact store (what the job writes
    to `./outputs` and `./logs`, what `az ml job download` fetches when no `--output-name` is
    given). azure-ai-ml sends a job that declares another output of that name, and the service
    refuses it ("Name of the output "default" is reserved by the system"); the Azure Developer
    CLI's training extension checks the same before it submits. The name is compared ignoring
    case. Rename the output (and its `${{outputs.default}}`). A pipeline step that declares an
    empty `default:` or `artifacts:` output to hand its artifacts to another step is not
    affected: that is the system output itself.

    See: https://learn.microsoft.com/cli/azure/ml/job#az-ml-job-download,
    https://github.com/Azure/azure-dev/blob/main/cli/azd/extensions/azure.ai.training/internal/utils/job_validator.go

    Provenance: azure-ai-ml 1.35.2 loads, validates and serialises such a job (the output is sent
    as `default`); it reads a job's own artifact store as its output `default`
    (DEFAULT_ARTIFACT_STORE_OUTPUT_NAME).
    """
    for port in ports(document):
        if port.direction == "output" and port.level == JOB_LEVEL and port.name.lower() == "default":
            yield Finding(
                f"output '{port.name}' of {port.owner} takes the name the service reserves for the job's "
                "own artifacts (`default`); the job is refused when it is submitted",
                port.path, key=True,
                hint=f"rename it (for example 'model_output') and every `${{{{outputs.{port.name}}}}}` that uses it")
