"""AML501-AML529: pipelines — step names, the bindings between steps and to the pipeline's own
inputs and outputs, the step graph, the components that steps run, and compute (SPEC §5,
§12 rules 40-51). Component *definitions* are checked by the components family (AML530+);
this family checks how a pipeline job or a pipeline component *uses* them."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator

from .. import expressions, graph, names
from ..diagnostic import Diagnostic, Finding, Fix, Severity
from ..edits import replace_span
from ..loader import Document, Path_, count_before
from ..references import Referenced, is_arm_id, is_local_path, resolve, step_users
from ..suggest import closest
from ._base import check, declare
from ..values import mapping as _mapping
from ..values import sdk_number
from .components import enum_contains

PIPELINES = ("pipelineJob", "pipelineComponent")

STEP_NAME = names.STEP_NAME  # the rule aml-run applies to the folders it makes (validator.names)
COMPONENT_KINDS = ("commandComponent", "pipelineComponent")
JOB_KINDS = {"commandJob": "command job", "pipelineJob": "pipeline job", "sweepJob": "sweep job",
             "schedule": "schedule"}
# Top-level keys a job has and a component never does: a file with one of them is a job spec.
JOB_ONLY_KEYS = ("compute", "experiment_name", "settings", "services", "identity", "queue_settings",
                 "limits", "trial", "search_space", "sampling_algorithm", "objective",
                 "early_termination", "trigger", "create_job")
BINDING_SECTIONS = ("inputs", "outputs", "jobs")

# ----------------------------------------------------------------------------- examples

ENV = "azureml:sklearn-train:2"
# The two-step body shared by the pipeline job and pipeline component examples.
_STEPS = f"""\
jobs:
  prep:
    type: command
    command: python prep.py --raw ${{{{inputs.raw}}}} --clean ${{{{outputs.clean}}}}
    environment: {ENV}
    inputs:
      raw: ${{{{parent.inputs.raw_data}}}}
    outputs:
      clean:
        type: uri_folder
  train:
    type: command
    command: python train.py --data ${{{{inputs.data}}}} --model ${{{{outputs.model}}}}
    environment: {ENV}
    inputs:
      data: ${{{{parent.jobs.prep.outputs.clean}}}}
    outputs:
      model: ${{{{parent.outputs.trained_model}}}}
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
inputs:
  raw_data:
    type: uri_folder
    path: azureml:churn-raw:3
outputs:
  trained_model:
    type: uri_folder
""" + _STEPS

# A step running an inline (anonymous) component, so that examples need no component file.
COMPONENT_STEP = f"""\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
inputs:
  raw_data:
    type: uri_folder
    path: azureml:churn-raw:3
jobs:
  train:
    type: command
    inputs:
      training_data: ${{{{parent.inputs.raw_data}}}}
      learning_rate: 0.05
    component:
      inputs:
        training_data:
          type: uri_folder
        learning_rate:
          type: number
          default: 0.01
      environment: {ENV}
      command: >-
        python train.py --data ${{{{inputs.training_data}}}} --lr ${{{{inputs.learning_rate}}}}
"""

PIPELINE_COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json
type: pipeline
name: prep_and_train
version: "1"
inputs:
  raw_data:
    type: uri_folder
outputs:
  trained_model:
    type: uri_folder
""" + _STEPS

# Examples about referenced files point at files of the golden tests (paths from the
# repository root, where the documentation examples are checked).
EXAMPLE_FILES = "./tests/golden/{code}/components/{name}"


def _file_step(code: str, name: str, step_type: str = "command") -> str:
    return f"""\
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
    type: {step_type}
    component: {EXAMPLE_FILES.format(code=code, name=name)}
    inputs:
      raw_data: ${{{{parent.inputs.raw_data}}}}
"""


# ----------------------------------------------------------------------------- the model


def _ports(value: Any) -> dict | None:
    """A section of port declarations: absent means none, anything but a mapping is unknown."""
    if value is None:
        return {}
    return value if isinstance(value, dict) else None


@dataclass
class Definition:
    """What a step runs, as far as can be told offline.

    ``inputs``/``outputs`` are the declared ports (``None`` when unknown: a registered
    component, an unreadable file). ``component`` is true when they come from a component
    definition (inline or a local file), so that the step's own ports can be checked against
    them; an inline command step declares its ports itself."""

    key: str | None = None               # "component", "trial", or None for an inline step
    reference: str | None = None         # the string as written (file or azureml: reference)
    referenced: Referenced | None = None
    data: dict | None = None
    kind: str | None = None              # commandComponent / pipelineComponent / a job kind
    job_markers: tuple[str, ...] = ()    # why a referenced file is a job, not a component
    inputs: dict | None = None
    outputs: dict | None = None
    component: bool = False

    @property
    def is_job(self) -> bool:
        return self.kind in JOB_KINDS and (bool(self.job_markers) or self.kind in ("sweepJob", "schedule"))

    @property
    def local(self) -> bool:
        return self.referenced is not None

    def describe(self) -> str:
        if self.reference is not None:
            return f"'{self.reference}'"
        return "its inline component" if self.key else "the step itself"


@dataclass
class Step:
    name: str
    node: dict
    type: str
    definition: Definition

    @property
    def inputs(self) -> dict:
        return _mapping(self.node.get("inputs"))

    @property
    def outputs(self) -> dict:
        return _mapping(self.node.get("outputs"))


@dataclass(frozen=True)
class Binding:
    """One `${{...}}` in a step's inputs, outputs or compute, with ``parts`` normalised to the
    `parent.` form (a legacy `${{inputs.x}}` reads as `parent.inputs.x`)."""

    step: str
    section: str            # "inputs", "outputs" or "compute"
    port: str | None
    path: Path_
    reference: expressions.Reference
    template: expressions.Template
    parts: tuple[str, ...]
    legacy: bool
    in_path: bool           # inside an input's or output's `path:` (or `value:`)

    @property
    def whole(self) -> bool:
        return self.template.text.strip() == self.reference.text

    def span(self, document: Document) -> tuple[int, int, int]:
        occurrence = count_before(self.template.text, self.reference.text, self.reference.start)
        return document.locate_text(self.path, self.reference.text, occurrence)


@dataclass
class Pipeline:
    data: dict
    steps: dict[str, Step] = field(default_factory=dict)
    bindings: list[Binding] = field(default_factory=list)
    inputs: dict | None = None   # the pipeline's declared inputs (None: not a mapping)
    outputs: dict | None = None


def _job_markers(data: dict, kind: str | None) -> tuple[str, ...]:
    if kind not in JOB_KINDS:
        return ()
    markers = [f"'{key}'" for key in JOB_ONLY_KEYS if key in data]
    schema = data.get("$schema")
    if isinstance(schema, str) and "job.schema" in schema.lower():
        markers.append("a job $schema")
    inputs = _mapping(data.get("inputs")).values()
    if any(not isinstance(v, dict) for v in inputs):
        markers.append("literal input values")
    elif any("path" in v or "value" in v for v in inputs):
        markers.append("input values with a 'path'")  # a component declares ports, a job fills them
    return tuple(markers)


def _and(items: list[str] | tuple[str, ...]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _from_data(definition: Definition, data: Any, kind: str | None) -> Definition:
    definition.data = data if isinstance(data, dict) else None
    if definition.data is None:
        return definition
    definition.job_markers = _job_markers(definition.data, kind)
    if kind in ("commandJob", "pipelineJob") and not definition.job_markers:
        # Kind detection could not tell job from component (no version, no typed inputs);
        # used as a component, it is one.
        kind = "commandComponent" if kind == "commandJob" else "pipelineComponent"
    definition.kind = kind
    if kind in COMPONENT_KINDS:
        definition.inputs = _ports(definition.data.get("inputs"))
        definition.outputs = _ports(definition.data.get("outputs"))
        definition.component = True
    return definition


def _tagged(document: Document, where: Path_) -> bool:
    """The value at ``where`` carries a YAML tag (`!include ./x.yml`): the loader reports it,
    and the text after the tag is not a path anyone meant."""
    line, column, _ = document.locate(where)
    lines = document.lines
    return 0 < line <= len(lines) and lines[line - 1][column - 1:].startswith("!")


def definition_of(document: Document, node: dict, step_type: str, where: Path_ | None = None) -> Definition:
    key = "trial" if step_type == "sweep" else "component"
    value = node.get(key)
    if isinstance(value, str) and where is not None and _tagged(document, where + (key,)):
        return Definition(key=key, reference=value)
    if isinstance(value, dict):
        kind = "pipelineComponent" if value.get("type") == "pipeline" else "commandComponent"
        return _from_data(Definition(key=key), value, kind)
    if isinstance(value, str):
        definition = Definition(key=key, reference=value)
        if is_local_path(value):
            definition.referenced = resolve(document, value.strip())
            if definition.referenced.document is not None:
                _from_data(definition, definition.referenced.data, definition.referenced.kind)
        return definition
    if value is None and (step_type == "command" or step_type not in ("sweep", "pipeline")):
        # An inline step (a command job, or an inline parallel/spark step): its own ports.
        return Definition(inputs=_ports(node.get("inputs")), outputs=_ports(node.get("outputs")))
    return Definition(key=key)


# A step's settings whose numbers may come from a pipeline input (the schema allows one whole
# `${{parent.inputs.NAME}}` there).
RUN_SETTINGS = ("resources", "distribution", "limits")


def _step_type(node: dict) -> str:
    value = node.get("type")
    return value if isinstance(value, str) else "command"


def _collect(step: str, section: str, port: str | None, path: Path_, text: str,
             in_path: bool, into: list[Binding]) -> None:
    if "${{" not in text:
        return
    template = expressions.parse(text)
    for reference in template.references:
        context = reference.context
        legacy = False
        if context == "parent":
            parts = reference.parts
        elif in_path:
            continue
        elif context in ("inputs", "jobs") or (context == "outputs" and section == "outputs"):
            parts = ("parent",) + reference.parts
            legacy = True
        else:
            continue  # ${{name}}, ${{default_datastore}}...: not a binding
        into.append(Binding(step, section, port, path, reference, template, parts, legacy, in_path))


def analyse(document: Document) -> Pipeline:
    """The pipeline's steps and bindings (computed once per document)."""
    cached = document.__dict__.get("_pipeline_analysis")
    if cached is not None:
        return cached
    data = _mapping(document.data)
    pipeline = Pipeline(data, inputs=_ports(data.get("inputs")), outputs=_ports(data.get("outputs")))
    for name, node in _mapping(data.get("jobs")).items():
        if not isinstance(node, dict):
            continue
        step_type = _step_type(node)
        base: Path_ = ("jobs", name)
        pipeline.steps[name] = Step(name, node, step_type, definition_of(document, node, step_type, base))
        for section in ("inputs", "outputs"):
            for port, value in _mapping(node.get(section)).items():
                where = base + (section, port)
                if isinstance(value, str):
                    _collect(name, section, port, where, value, False, pipeline.bindings)
                elif isinstance(value, dict):
                    for sub in ("path", "value"):
                        if isinstance(value.get(sub), str):
                            _collect(name, section, port, where + (sub,), value[sub], True,
                                     pipeline.bindings)
        if isinstance(node.get("compute"), str):
            _collect(name, "compute", None, base + ("compute",), node["compute"], False, pipeline.bindings)
        # Run settings bound to a pipeline input (`instance_count: ${{parent.inputs.nodes}}`).
        for section in RUN_SETTINGS:
            for key, value in _mapping(node.get(section)).items():
                if isinstance(value, str):
                    _collect(name, section, key, base + (section, key), value, False, pipeline.bindings)
    document.__dict__["_pipeline_analysis"] = pipeline
    return pipeline


def binding_shape(parts: tuple[str, ...], declared_inputs: dict | None = None) -> str | None:
    """None for a well-formed `parent.*` binding, else what is wrong with it."""
    if len(parts) < 2:
        return "names nothing under `parent`"
    section = parts[1]
    if section not in BINDING_SECTIONS:
        close = closest(section, BINDING_SECTIONS)
        guess = f"; did you mean 'parent.{close}'?" if close else ""
        return f"has '{section}' where `parent.inputs`, `parent.outputs` or `parent.jobs` belongs{guess}"
    if section in ("inputs", "outputs"):
        if len(parts) == 3:
            return None
        if len(parts) > 3 and section == "inputs" and declared_inputs and (
                ".".join(parts[2:]) in declared_inputs
                or any(str(name).startswith(parts[2] + ".") for name in declared_inputs)):
            return None  # a group input `a.b` (an undeclared member is AML504's)
        return f"should be `parent.{section}.<name>`"
    if len(parts) == 5 and parts[3] in ("inputs", "outputs"):
        return None
    if len(parts) >= 4 and parts[3] not in ("inputs", "outputs"):
        close = closest(parts[3], ("inputs", "outputs"))
        guess = f"; did you mean '{close}'?" if close else ""
        return f"has '{parts[3]}' where `outputs` or `inputs` belongs{guess}"
    return "should be `parent.jobs.<step>.outputs.<name>` (or `.inputs.<name>`)"


def _modern(binding: Binding) -> str:
    return "${{" + ".".join(binding.parts) + "}}"


def _pipeline_noun(document: Document) -> str:
    return "pipeline component" if document.kind == "pipelineComponent" else "pipeline"


def _names(ports: dict | None) -> str:
    return ", ".join(str(k) for k in ports) if ports else "none"


def _shown_path(document: Document, target: Path) -> str:
    """``target`` as the user would type it: relative to where the linted file was named from,
    unless they share no folder but the root (`/subscriptions/...`): then as it is, so that the
    message does not depend on where the repository is checked out."""
    shown_dir = Path(document.path).parent
    try:
        if os.path.commonpath([str(target), str(shown_dir.resolve())]) == os.path.sep:
            return str(target)
        if shown_dir.resolve() == Path(document.base_dir).resolve():
            relative = os.path.relpath(target, shown_dir.resolve())
            return os.path.normpath(os.path.join(str(shown_dir), relative))
    except (OSError, ValueError):
        pass
    return str(target)


# ----------------------------------------------------------------------------- step names


def fixed_step_name(name: str, taken: set[str] | None = None) -> str:
    """A valid step name close to ``name``: lower-case, other characters as `_`."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(name))
    fixed = re.sub(r"[^a-z0-9_]", "_", snake.lower()) or "step"
    if fixed[0].isdigit():
        fixed = "step_" + fixed
    taken = taken or set()
    candidate, counter = fixed, 2
    while candidate in taken:
        candidate, counter = f"{fixed}_{counter}", counter + 1
    return candidate


@check("AML501", "invalid-step-name", Severity.ERROR,
       "A step name is not lower-case letters, digits and underscores starting with a letter or `_`.",
       bad=PIPELINE.replace("  train:\n", "  Train-Model:\n"), good=PIPELINE, kinds=PIPELINES)
def invalid_step_name(document: Document) -> Iterator[Finding]:
    """
    Step names become Python identifiers in the SDK and must match `^[a-z_][a-z0-9_]*$`. The SDK
    refuses other names with a message that forgets to say which one ("Pipeline node name should be
    a valid python identifier... Currently got {name}."); amllab names the step and suggests a
    valid spelling. Remember to rename the `${{parent.jobs.<step>...}}` bindings that use it.

    See: reference-yaml-job-pipeline

    Provenance: SPEC §5.3, §12 rule 41.
    """
    steps = _mapping(_mapping(document.data).get("jobs"))
    taken = {str(name) for name in steps}
    bindings = analyse(document).bindings
    for name in steps:
        if isinstance(name, str) and STEP_NAME.fullmatch(name):
            continue
        fixed = fixed_step_name(name, taken - {name})
        hint = f"rename it to '{fixed}'"
        uses = sum(1 for b in bindings if b.parts[1:3] == ("jobs", name))
        if uses:
            hint += (f", and the {uses} binding{'s' if uses > 1 else ''} "
                     f"`${{{{parent.jobs.{name}...}}}}` that use{'' if uses > 1 else 's'} it")
        yield Finding(
            f"step name '{name}' is not valid: a step name has only lower-case letters, "
            f"digits and '_', and starts with a letter or '_'; did you mean '{fixed}'?",
            ("jobs", name), key=True, hint=hint)


# ----------------------------------------------------------------------------- bindings


@check("AML502", "unknown-step", Severity.ERROR,
       "A binding `${{parent.jobs.S...}}` names a step S that the pipeline does not have.",
       bad=PIPELINE.replace("parent.jobs.prep.", "parent.jobs.prepare."), good=PIPELINE, kinds=PIPELINES)
def unknown_step(document: Document) -> Iterator[Finding]:
    """
    A step's input can read another step's output (`${{parent.jobs.prep.outputs.clean}}`), which
    also makes it wait for that step. When the step does not exist, azure-ai-ml stops with "Failed
    to find referenced source for input binding".

    See: reference-yaml-job-pipeline, concept-expressions

    Provenance: SPEC §5.5, §12 rule 42.
    """
    pipeline = analyse(document)
    for binding in pipeline.bindings:
        parts = binding.parts
        if binding_shape(parts, pipeline.inputs) is not None or parts[1] != "jobs":
            continue
        step = parts[2]
        if step in pipeline.steps:
            continue
        message = (f"'{binding.reference.text}' refers to step '{step}', which this "
                   f"{_pipeline_noun(document)} does not have")
        close = closest(step, pipeline.steps)
        if close:
            message += f"; did you mean '{close}'?"
        yield Finding(message, binding.path, span=binding.span(document),
                      hint=f"steps: {_names(pipeline.steps)}")


@check("AML503", "unknown-step-port", Severity.ERROR,
       "A binding `${{parent.jobs.S.outputs.O}}` names an output (or input) that step S does not have.",
       bad=PIPELINE.replace("parent.jobs.prep.outputs.clean", "parent.jobs.prep.outputs.cleaned"),
       good=PIPELINE, kinds=PIPELINES)
def unknown_step_port(document: Document) -> Iterator[Finding]:
    """
    The port must be declared by the step's component (or, for an inline command step, by the step
    itself). The SDK fails on a missing output ("Failed to find referenced source for input
    binding") and lets a missing input through, which then has no value. A component that is only
    registered (`azureml:`) cannot be read offline: then only the step name is checked.

    See: reference-yaml-job-pipeline

    Provenance: SPEC §5.5, §12 rule 42.
    """
    pipeline = analyse(document)
    for binding in pipeline.bindings:
        parts = binding.parts
        if binding_shape(parts, pipeline.inputs) is not None or parts[1] != "jobs":
            continue
        step = pipeline.steps.get(parts[2])
        if step is None:
            continue
        section, port = parts[3], parts[4]
        declared = getattr(step.definition, section)
        if declared is None or port in declared:
            continue
        noun = "output" if section == "outputs" else "input"
        message = f"'{binding.reference.text}': step '{step.name}' has no {noun} '{port}'"
        close = closest(port, declared)
        if close:
            message += f"; did you mean '{close}'?"
        yield Finding(
            message, binding.path, span=binding.span(document),
            hint=f"{section} of step '{step.name}' (declared by {step.definition.describe()}): {_names(declared)}")


@check("AML504", "undeclared-pipeline-input", Severity.ERROR,
       "A binding `${{parent.inputs.X}}` names an input the pipeline does not declare.",
       bad=PIPELINE.replace("parent.inputs.raw_data", "parent.inputs.raw"), good=PIPELINE, kinds=PIPELINES)
def undeclared_pipeline_input(document: Document) -> Iterator[Finding]:
    """
    `${{parent.inputs.X}}` reads the pipeline job's (or pipeline component's) own input X. Nothing
    in the SDK or at submission checks that X exists: the step simply gets no value, and a required
    input then fails the step at run time.

    See: reference-yaml-job-pipeline, concept-expressions

    Provenance: SPEC §5.5, §12 rule 43.
    """
    pipeline = analyse(document)
    if pipeline.inputs is None:
        return
    for binding in pipeline.bindings:
        parts = binding.parts
        if parts[1:2] != ("inputs",) or binding_shape(parts, pipeline.inputs) is not None:
            continue
        name = ".".join(parts[2:])
        if name in pipeline.inputs:
            continue
        noun = _pipeline_noun(document)
        message = f"'{binding.reference.text}' refers to input '{name}', which the {noun} does not declare"
        close = closest(name, pipeline.inputs)
        if close:
            message += f"; did you mean '{close}'?"
        yield Finding(message, binding.path, span=binding.span(document),
                      hint=f"{noun} inputs: {_names(pipeline.inputs)}; declare '{name}' "
                           "under the top-level `inputs:` or fix the name")


@check("AML505", "undeclared-pipeline-output", Severity.ERROR,
       "A binding `${{parent.outputs.Y}}` names an output the pipeline does not declare.",
       bad=PIPELINE.replace("parent.outputs.trained_model", "parent.outputs.model"), good=PIPELINE,
       kinds=PIPELINES)
def undeclared_pipeline_output(document: Document) -> Iterator[Finding]:
    """
    A step output bound to `${{parent.outputs.Y}}` is promoted to the pipeline's output Y. The SDK
    does not check that Y is declared: the step's output is then not promoted anywhere, and a
    pipeline component's caller cannot read it.

    See: reference-yaml-job-pipeline

    Provenance: SPEC §5.5, §12 rule 43.
    """
    pipeline = analyse(document)
    if pipeline.outputs is None:
        return
    for binding in pipeline.bindings:
        parts = binding.parts
        if parts[1:2] != ("outputs",) or binding_shape(parts) is not None or parts[2] in pipeline.outputs:
            continue
        noun = _pipeline_noun(document)
        message = f"'{binding.reference.text}' refers to output '{parts[2]}', which the {noun} does not declare"
        close = closest(parts[2], pipeline.outputs)
        if close:
            message += f"; did you mean '{close}'?"
        yield Finding(message, binding.path, span=binding.span(document),
                      hint=f"{noun} outputs: {_names(pipeline.outputs)}; declare "
                           f"'{parts[2]}' under the top-level `outputs:` or fix the name")


@check("AML506", "step-output-binding", Severity.ERROR,
       "A step output is bound to something other than a pipeline output `${{parent.outputs.Y}}`.",
       bad=PIPELINE.replace("model: ${{parent.outputs.trained_model}}", "model: ${{parent.inputs.raw_data}}"),
       good=PIPELINE, kinds=PIPELINES)
def step_output_binding(document: Document) -> Iterator[Finding]:
    """
    A step's output is produced by the step; the only binding it can take is a promotion to a
    pipeline output, `${{parent.outputs.Y}}`. Binding it to a pipeline input or to another step's
    port makes no sense, and the SDK does not notice. To feed another step, bind that step's
    *input* to `${{parent.jobs.<step>.outputs.<name>}}`.

    See: reference-yaml-job-pipeline

    Provenance: SPEC §5.4, §12 rule 43.
    """
    pipeline = analyse(document)
    for binding in pipeline.bindings:
        parts = binding.parts
        if binding.section != "outputs" or binding.in_path or parts[1] not in ("inputs", "jobs"):
            continue
        if binding_shape(parts, pipeline.inputs) is not None:
            continue
        hint = ("promote it with `${{parent.outputs.<name>}}` (a declared pipeline output); to choose "
                "where it is written, give the output a `path:` instead")
        if parts[1] == "jobs":
            port = parts[4] if parts[3] == "inputs" else "<input>"
            hint = (f"to feed step '{parts[2]}', bind its input instead: "
                    f"`{port}: ${{{{parent.jobs.{binding.step}.outputs.{binding.port}}}}}`")
        yield Finding(
            f"output '{binding.port}' of step '{binding.step}' is bound to '{binding.reference.text}': "
            "a step output can only be bound to a pipeline output, `${{parent.outputs.<name>}}`",
            binding.path, span=binding.span(document), hint=hint)


@check("AML507", "legacy-binding", Severity.WARNING,
       "A step binding uses the legacy form `${{inputs.X}}` instead of `${{parent.inputs.X}}`.",
       bad=PIPELINE.replace("raw: ${{parent.inputs.raw_data}}", "raw: ${{inputs.raw_data}}"), good=PIPELINE,
       kinds=PIPELINES, fix="safe")
def legacy_binding(document: Document) -> Iterator[Finding]:
    """
    The SDK still accepts the old forms `${{inputs.x}}`, `${{jobs.<step>.outputs.y}}` (in a step's
    inputs) and `${{outputs.y}}` (in a step's outputs) and reads them as their `parent.` forms.
    They are easily confused with a command's own `${{inputs.x}}`; the documentation only uses the
    `parent.` forms.

    See: reference-yaml-job-pipeline, concept-expressions

    Provenance: SPEC §5.4.
    """
    for binding in analyse(document).bindings:
        if not binding.legacy:
            continue
        context = binding.parts[1]
        if (binding.section == "outputs") != (context == "outputs"):
            continue  # a binding that is wrong there anyway (AML506)
        modern = _modern(binding)
        span = binding.span(document)
        # The SDK reads the legacy form as this very `parent.` form: the fix keeps the meaning.
        edit = replace_span(document, span, binding.reference.text, modern)
        yield Finding(
            f"'{binding.reference.text}' is the legacy binding form; it means '{modern}'",
            binding.path, span=span, hint=f"write '{modern}'",
            fix=Fix((edit,), title=f"write '{modern}'") if edit else None)


@check("AML508", "shared-pipeline-output", Severity.WARNING,
       "Two step outputs are bound to the same pipeline output.",
       bad=PIPELINE.replace("      clean:\n        type: uri_folder\n",
                            "      clean: ${{parent.outputs.trained_model}}\n"),
       good=PIPELINE, kinds=PIPELINES)
def shared_pipeline_output(document: Document) -> Iterator[Finding]:
    """
    A pipeline output has one producer. When two step outputs are promoted to the same
    `${{parent.outputs.Y}}`, only one of them ends up there and the other is silently lost.

    See: reference-yaml-job-pipeline

    Provenance: SPEC §12 rule 51.
    """
    first: dict[str, Binding] = {}
    for binding in analyse(document).bindings:
        parts = binding.parts
        if (binding.section != "outputs" or binding.in_path or parts[1:2] != ("outputs",)
                or binding_shape(parts) is not None):
            continue
        name = parts[2]
        earlier = first.setdefault(name, binding)
        if earlier is binding:
            continue
        yield Finding(
            f"pipeline output '{name}' is already bound to output '{earlier.port}' of step "
            f"'{earlier.step}'; a pipeline output has one producer, so one of the two is lost",
            binding.path, span=binding.span(document),
            hint="declare a second pipeline output for this step, or keep one binding")


# ----------------------------------------------------------------------------- the graph


def step_dependencies(pipeline: Pipeline) -> dict[str, list[Binding]]:
    """For each step, the `parent.jobs.*` bindings (to existing steps) that it waits on."""
    result: dict[str, list[Binding]] = {name: [] for name in pipeline.steps}
    for binding in pipeline.bindings:
        parts = binding.parts
        if binding.section == "outputs" and not binding.in_path:
            continue  # an output cannot wait for anything (AML506)
        if parts[1:2] == ("jobs",) and binding_shape(parts) is None and parts[2] in pipeline.steps:
            result[binding.step].append(binding)
    return result


def step_edges(pipeline: Pipeline) -> list[tuple[str, str]]:
    """(producer, consumer) for every step that waits on another, as ``validator.graph`` takes them."""
    dependencies = {step: [b.parts[2] for b in bindings] for step, bindings in step_dependencies(pipeline).items()}
    return graph.build_edges(dependencies, pipeline.steps)


@check("AML509", "step-cycle", Severity.ERROR,
       "Steps wait on each other in a cycle (including a step that binds its own output).",
       bad=PIPELINE.replace("raw: ${{parent.inputs.raw_data}}", "raw: ${{parent.jobs.train.outputs.model}}"),
       good=PIPELINE, kinds=PIPELINES)
def step_cycle(document: Document) -> Iterator[Finding]:
    """
    A step that binds `${{parent.jobs.prep...}}` runs after `prep` ("job B will get executed after
    job A"). When bindings form a cycle, none of its steps can ever start. The SDK loads, validates
    and submits such a pipeline without a word. Each cycle is reported once, with its path (`a -> b
    -> a`: `a` feeds `b`, which feeds `a`), at the binding that closes it.

    See: reference-yaml-job-pipeline, how-to-create-component-pipelines-cli

    Provenance: SPEC §5.5, §12 rule 44.
    """
    pipeline = analyse(document)
    waits = step_dependencies(pipeline)
    for cycle in graph.find_cycles(list(pipeline.steps), step_edges(pipeline)):
        producer, consumer = cycle[-2], cycle[-1]
        site = next(b for b in waits[consumer] if b.parts[2] == producer)
        path = graph.format_path(cycle)
        if len(cycle) == 2:
            message = (f"step '{consumer}' binds its own {site.parts[3][:-1]} '{site.parts[4]}' ({path}), "
                       "so it waits for itself and never starts")
            hint = "bind the input to a pipeline input or to an earlier step's output"
        else:
            message = (f"steps wait on each other in a cycle: {path} (each waits for the one before it), "
                       "so none of them can start")
            hint = ("break the cycle: one of these bindings must read from a step outside it or from a "
                    "pipeline input")
        yield Finding(message, site.path, span=site.span(document), hint=hint)


# ----------------------------------------------------------------------------- steps vs components


def _component_steps(pipeline: Pipeline) -> Iterator[Step]:
    """Steps whose ports are declared by a component that can be read here."""
    for step in pipeline.steps.values():
        definition = step.definition
        if definition.component and not definition.is_job and definition.inputs is not None:
            yield step


def _top_level(document: Document) -> Definition | None:
    """A pipeline job's top-level `component:` (a pipeline component run as the whole job)."""
    data = _mapping(document.data)
    if document.kind != "pipelineJob" or "jobs" in data:
        return None
    value = data.get("component")
    if not isinstance(value, str) or _tagged(document, ("component",)):
        return None
    definition = Definition(key="component", reference=value)
    if is_local_path(value):
        definition.referenced = resolve(document, value.strip())
        if definition.referenced.document is not None:
            _from_data(definition, definition.referenced.data, definition.referenced.kind)
    return definition


def _required(spec: Any) -> bool:
    return isinstance(spec, dict) and spec.get("optional") is not True and spec.get("default") is None


@check("AML510", "missing-required-input", Severity.ERROR,
       "A step does not bind a component input that has no default and is not optional.",
       bad=COMPONENT_STEP.replace("      training_data: ${{parent.inputs.raw_data}}\n", ""),
       good=COMPONENT_STEP, kinds=PIPELINES)
def missing_required_input(document: Document) -> Iterator[Finding]:
    """
    Every input of the step's component that has no `default` and is not `optional: true` must get
    a value from the step's `inputs:` (for a sweep step, a search-space entry counts). Otherwise
    the SDK's validation fails with "Required input 'x' for component 'node' not provided". A
    pipeline job that runs a pipeline component (`component:` at the top) must give that
    component's required inputs in its own `inputs:`. Registered components (`azureml:`) cannot be
    read offline and are not checked.

    See: reference-yaml-job-pipeline

    Provenance: SPEC §5.5, §12 rule 45.
    """
    pipeline = analyse(document)
    for step in _component_steps(pipeline):
        bound = {k for k, v in step.inputs.items() if v is not None}
        if step.type == "sweep":
            bound |= set(_mapping(step.node.get("search_space")))
        for name, spec in step.definition.inputs.items():
            if name in bound or not _required(spec):
                continue
            where: Path_ = ("jobs", step.name, "inputs") if "inputs" in step.node else ("jobs", step.name)
            yield Finding(
                f"required input '{name}' for step '{step.name}' is not provided: "
                f"{step.definition.describe()} gives it no default and does not mark it optional",
                where, key=True,
                hint=f"bind it under the step's `inputs:`, for example `{name}: ${{{{parent.inputs.{name}}}}}`"
                     + (", or search over it in `search_space:`" if step.type == "sweep" else ""))
    top = _top_level(document)
    if top is not None and top.component and top.kind == "pipelineComponent" and top.inputs is not None:
        given = {k for k, v in _mapping(pipeline.data.get("inputs")).items() if v is not None}
        for name, spec in top.inputs.items():
            if name in given or not _required(spec):
                continue
            where = ("inputs",) if "inputs" in pipeline.data else ("component",)
            yield Finding(
                f"required input '{name}' for pipeline component {top.describe()} is not "
                "provided: it has no default and is not optional", where, key="inputs" in pipeline.data,
                hint=f"give it under the job's `inputs:`, for example `{name}: ...`")


@check("AML511", "undeclared-component-port", Severity.ERROR,
       "A step sets an input or output that its component does not declare.",
       bad=COMPONENT_STEP.replace("      learning_rate: 0.05\n", "      learning-rate: 0.05\n"),
       good=COMPONENT_STEP, kinds=PIPELINES)
def undeclared_component_port(document: Document) -> Iterator[Finding]:
    """
    A step's `inputs:` and `outputs:` fill in the ports its component declares. A key the component
    does not have is silently dropped by the SDK: the value never reaches the job, and the
    component input that was meant keeps its default. The same holds for a pipeline job that runs a
    pipeline component (`component:` at the top).

    See: reference-yaml-job-pipeline

    Provenance: SPEC §5.5, §12 rule 45.
    """
    pipeline = analyse(document)
    targets: list[tuple[Path_, dict, Definition, str]] = []
    for step in _component_steps(pipeline):
        base: Path_ = ("jobs", step.name)
        targets.append((base + ("inputs",), step.inputs, step.definition, f"step '{step.name}'"))
        if step.definition.outputs is not None:
            targets.append((base + ("outputs",), step.outputs, step.definition, f"step '{step.name}'"))
    top = _top_level(document)
    if top is not None and top.component and top.kind == "pipelineComponent":
        if top.inputs is not None:
            targets.append((("inputs",), _mapping(pipeline.data.get("inputs")), top, "this pipeline job"))
        if top.outputs is not None:
            targets.append((("outputs",), _mapping(pipeline.data.get("outputs")), top, "this pipeline job"))
    for where, given, definition, owner in targets:
        section = where[-1]
        declared = getattr(definition, section)
        noun = "input" if section == "inputs" else "output"
        for name in given:
            if name in declared:
                continue
            message = f"{owner} sets {noun} '{name}', which {definition.describe()} does not declare"
            close = closest(str(name), declared)
            if close:
                message += f"; did you mean '{close}'?"
            # azure-ai-ml drops the key and submits the spec.
            yield Finding(message, where + (name,), key=True,
                          hint=f"{section} of {definition.describe()}: {_names(declared)}", service="accepts")


@check("AML512", "optional-input-to-required", Severity.ERROR,
       "An optional pipeline input is bound to a step input that is not optional.",
       bad=COMPONENT_STEP.replace("    path: azureml:churn-raw:3\n",
                                  "    path: azureml:churn-raw:3\n    optional: true\n"),
       good=COMPONENT_STEP, kinds=PIPELINES)
def optional_input_to_required(document: Document) -> Iterator[Finding]:
    """
    A pipeline input marked `optional: true` may be left out when the pipeline runs; bound directly
    to a component input that is not optional, the step would then have no value. azure-ai-ml
    refuses this ("Pipeline optional Input binding to required inputs"), even when the component
    input has a default.

    See: reference-yaml-job-pipeline

    Provenance: SPEC §5.5.
    """
    pipeline = analyse(document)
    declared = pipeline.inputs or {}
    for binding in pipeline.bindings:
        parts = binding.parts
        if binding.section != "inputs" or not binding.whole or parts[1:2] != ("inputs",) or len(parts) != 3:
            continue
        pipeline_input = declared.get(parts[2])
        if not (isinstance(pipeline_input, dict) and pipeline_input.get("optional") is True):
            continue
        step = pipeline.steps[binding.step]
        definition = step.definition
        if not definition.component or definition.is_job or not definition.inputs:
            continue
        spec = definition.inputs.get(binding.port)
        if not isinstance(spec, dict) or spec.get("optional") is True:
            continue
        yield Finding(
            f"optional pipeline input '{parts[2]}' is bound to input '{binding.port}' of step "
            f"'{step.name}', which is not optional; azure-ai-ml refuses this (\"Pipeline optional Input "
            "binding to required inputs\")",
            binding.path, span=binding.span(document),
            hint=f"mark '{binding.port}' `optional: true` in {definition.describe()}, or drop "
                 f"`optional: true` from pipeline input '{parts[2]}'")


def _definition_site(step: Step) -> Path_:
    return ("jobs", step.name, step.definition.key or "component")


@check("AML513", "step-type-mismatch", Severity.ERROR,
       "A step's `type` does not match its component (a command step running a pipeline component...).",
       bad=_file_step("AML513", "prep_pipeline.yml"), good=_file_step("AML513", "prep_pipeline.yml", "pipeline"),
       kinds=PIPELINES)
def step_type_mismatch(document: Document) -> Iterator[Finding]:
    """
    A `type: command` (or untyped) step runs a command component, a `type: pipeline` step a
    pipeline component, and a sweep step's `trial` is a command component. With the wrong pairing
    the SDK matches the step against the wrong schema and fails with confusing messages, or the
    service rejects the job. A pipeline job's top-level `component:` must be a pipeline component.
    The example's component file is one of amllab's test files (the path is relative to the
    repository root).

    See: reference-yaml-job-pipeline, reference-yaml-component-pipeline

    Provenance: SPEC §5.3.
    """
    pipeline = analyse(document)
    for step in pipeline.steps.values():
        definition = step.definition
        if not definition.local or definition.kind not in COMPONENT_KINDS:
            continue
        typed = "type" in step.node and step.type != "sweep"
        where = ("jobs", step.name, "type") if typed else _definition_site(step)
        ref = definition.describe()
        if step.type == "pipeline" and definition.kind == "commandComponent":
            message = f"step '{step.name}' has `type: pipeline` but {ref} is a command component"
            hint = "write `type: command`, or point the step at a pipeline component"
        elif step.type == "sweep" and definition.kind == "pipelineComponent":
            message = (f"the trial of sweep step '{step.name}' is a pipeline component ({ref}); a sweep's "
                       "trial must be a command component")
            hint = "point `trial:` at a command component"
        elif step.type == "command" and definition.kind == "pipelineComponent":
            typed = "`type: command`" if "type" in step.node else "no `type` (so it is a command step)"
            message = f"step '{step.name}' has {typed} but {ref} is a pipeline component"
            hint = "write `type: pipeline` on the step"
        else:
            continue
        yield Finding(message, where, hint=hint)
    top = _top_level(document)
    if top is not None and top.local and top.kind == "commandComponent":
        yield Finding(
            f"a pipeline job's `component:` must be a pipeline component, but {top.describe()} "
            "is a command component", ("component",),
            hint="write `jobs:` with a step that runs this component, or point at a pipeline component")


def _local_definitions(document: Document) -> Iterator[tuple[Path_, Definition]]:
    for step in analyse(document).steps.values():
        if step.definition.local:
            yield _definition_site(step), step.definition
    top = _top_level(document)
    if top is not None and top.local:
        yield ("component",), top


@check("AML514", "not-a-component", Severity.ERROR,
       "A step's component file is a job (or schedule) spec, not a component.",
       bad=_file_step("AML514", "prep_job.yml"), good=_file_step("AML514", "prep.yml"), kinds=PIPELINES)
def not_a_component(document: Document) -> Iterator[Finding]:
    """
    `component:` (and a sweep step's `trial:`) points at a component: `name`, `version`, typed
    inputs with defaults, `command`, `environment`. A job spec has literal input values and
    job-only keys (`compute`, `experiment_name`, `settings`...), which the SDK's component
    loader silently keeps or fails on in confusing ways. Turn the job into a component, or
    make the step an inline command step. The example's file is one of amllab's test files
    (the path is relative to the repository root).
    """
    for where, definition in _local_definitions(document):
        if not definition.is_job:
            continue
        title = JOB_KINDS[definition.kind or ""]
        why = f" (it has {_and(definition.job_markers)})" if definition.job_markers else ""
        yield Finding(
            f"{definition.describe()} is a {title}, not a component{why}", where,
            hint="point at a component file (name, version, typed inputs, command, environment), "
                 "or write the step inline with `command:` and `environment:`")


@check("AML515", "component-file-not-found", Severity.ERROR,
       "A step's component file does not exist.",
       bad=_file_step("AML515", "prep_dta.yml"), good=_file_step("AML515", "prep.yml"), kinds=PIPELINES)
def component_file_not_found(document: Document) -> Iterator[Finding]:
    """
    A local `component:` or `trial:` path is resolved against the folder of the YAML file that
    contains it. A missing file stops `az ml job create` with "No such file or directory"; the
    message shows where amllab looked and the closest file name there.

    See: reference-yaml-job-pipeline

    Provenance: SPEC §1.2.
    """
    for where, definition in _local_definitions(document):
        referenced = definition.referenced
        if referenced is None:
            continue
        if referenced.exists and referenced.document is not None:
            continue
        shown = _shown_path(document, referenced.path)
        if referenced.exists and referenced.path.is_dir():
            yield Finding(
                f"{definition.describe()} is a folder ({shown}), not a component file", where,
                hint="point at the component's YAML file inside it")
            continue
        if referenced.exists:
            continue
        message = f"component file {definition.describe()} does not exist (looked for {shown})"
        try:
            siblings = [p.name for p in referenced.path.parent.iterdir() if p.suffix in (".yml", ".yaml")]
        except OSError:
            siblings = []
        close = closest(referenced.path.name, siblings)
        if close:
            message += f"; did you mean '{close}'?"
        hint = "paths are relative to the folder of this file"
        if is_arm_id(definition.reference or ""):
            hint = (f"a registered component's ARM id needs the prefix: 'azureml:{definition.reference.strip()}' "
                    "(without it the SDK reads it as a local path)")
        yield Finding(message, where, hint=hint)


# Keys of a referenced component file that the SDK drops: a component file named by a step is
# loaded with the anonymous schema (SDK `_schema/component/command_component.py`
# ComponentFileRefField, `_schema/pipeline/pipeline_component.py` PipelineComponentFileRefField),
# whose `AnonymousAssetSchema` (`_schema/assets/asset.py`) pops `name` and `version` before
# validation and registers the component under a generated name.
ANONYMOUS_KEYS = ("name", "version")


def breaks_the_pipeline(diagnostic: Diagnostic) -> bool:
    """Whether an error of a referenced component file matters where a pipeline step uses it:
    everything except findings about its own top-level `name` and `version`."""
    pointer = diagnostic.pointer
    return not any(pointer == f"/{key}" or pointer.startswith(f"/{key}/") for key in ANONYMOUS_KEYS)


ANONYMOUS_IDENTITY = declare(
    "AML549", "anonymous-component-identity", Severity.WARNING,
    "A component file's name or version would be refused on its own, but the pipeline that uses "
    "it registers it anonymously.",
    doc="""
    A component file that a pipeline step uses (`component: ./train.yml`, a sweep step's
    `trial:`) is registered anonymously when the pipeline is submitted: azure-ai-ml drops its
    `name` and `version` and generates both. A missing or invalid name or version (AML102,
    AML530, AML103...) is then no error: the pipeline runs, as Microsoft's own examples do with
    names such as `Hello_Python_World`. The same file given to `az ml component create` would be
    refused, so the finding stays, as this warning, with the original code in its message.

    amllab looks for the pipelines that use a component file in the file's folder and up to two
    folders above it (where a repository keeps a pipeline and its components). A component file
    no pipeline there uses keeps the error: it is registered on its own.
    """,
    bad="""
    # components/hello.yml, used by pipeline.yml's step `component: ./components/hello.yml`
    $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
    type: command
    name: Hello-World
    command: echo hello
    environment: azureml:sklearn-train:2
    """,
    good="""
    # components/hello.yml
    $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
    type: command
    name: hello_world
    command: echo hello
    environment: azureml:sklearn-train:2
    """,
    stage="engine", kinds=COMPONENT_KINDS, examples_are_runnable=False)


def for_anonymous_use(document: Document, findings: list[Diagnostic]) -> list[Diagnostic]:
    """``findings`` of a component file, its name and version errors turned into AML549 warnings
    when a pipeline near it uses the file as a step's component (see AML549). The file is the
    one the document was read from: ``document.path`` in ``document.base_dir``."""
    identity = [d for d in findings if d.severity is Severity.ERROR and not breaks_the_pipeline(d)]
    if not identity:
        return findings
    users = step_users(Path(document.base_dir) / Path(document.path).name)
    if not users:
        return findings
    user = os.path.relpath(users[0], Path(document.base_dir).resolve())
    more = f" (and {len(users) - 1} more)" if len(users) > 1 else ""
    changed = []
    for diagnostic in findings:
        if diagnostic in identity:
            diagnostic = replace(
                diagnostic, code=ANONYMOUS_IDENTITY.code, severity=ANONYMOUS_IDENTITY.severity,
                message=f"{diagnostic.message} ({diagnostic.code} for `az ml component create`); "
                        f"'{user}'{more} uses this file as a step's component, which Azure ML registers "
                        "anonymously under a generated name and version, so the pipeline runs",
                hint=diagnostic.hint or "fix it before this component is registered on its own "
                                        "(`az ml component create`)")
        changed.append(diagnostic)
    return changed


@check("AML516", "component-file-has-errors", Severity.ERROR,
       "A step's component file has errors of its own that break the pipeline.",
       bad=_file_step("AML516", "prep_broken.yml"), good=_file_step("AML516", "prep.yml"), kinds=PIPELINES)
def component_file_has_errors(document: Document) -> Iterator[Finding]:
    """
    The component file is linted on its own (once, however many steps use it), and its errors
    are summed up at the reference, so that a pipeline is not reported clean while a component
    it runs would be refused. Run amllab on the component file to see every error.

    Only errors that break the pipeline count here. A component file used by a step is
    registered anonymously: azure-ai-ml loads it with its anonymous component schema, which
    drops the file's `name` and `version` (logging "the provided asset name ... will not be used
    for anonymous registration") and generates both. So a missing or invalid `name` (AML102,
    AML530) or a `version` problem is not an error of the pipeline. The component file itself
    gets it as the AML549 warning (`az ml component create` would refuse it), or as the error
    when no pipeline near it uses the file. The example's file is one of amllab's test files
    (the path is relative to the repository root).
    """
    for where, definition in _local_definitions(document):
        referenced = definition.referenced
        if referenced is None or not referenced.exists or referenced.path.is_dir() or definition.is_job:
            continue
        problems = sorted((d for d in referenced.problems() if breaks_the_pipeline(d)),
                          key=lambda d: (d.line, d.column))
        if not problems:
            continue
        first = problems[0]
        count = f"{len(problems)} error{'s' if len(problems) != 1 else ''}"
        yield Finding(
            f"component {definition.describe()} has {count} (first: {first.line}:{first.column} "
            f"{first.message})", where,
            hint=f"run `aml-lint {_shown_path(document, referenced.path)}` to see them all")


# ----------------------------------------------------------------------------- compute


def _has_value(value: Any) -> bool:
    return value is not None and value != ""


def _serverless_spark(node: dict) -> bool:
    """A spark step that chooses its own serverless Spark pool (`resources.instance_type`, with
    `runtime_version`) instead of a compute. azure-ai-ml skips its compute check for a spark
    node as soon as it has `resources` (SDK `entities/_builders/spark.py`,
    `_skip_required_compute_missing_validation`)."""
    return isinstance(node.get("resources"), dict)


@dataclass
class _NoCompute:
    """Steps (``outer.inner`` inside sub-pipelines) that name no compute: ``steps`` run on
    serverless compute, ``spark`` are spark steps that have no `resources` either."""

    steps: list[str] = field(default_factory=list)
    spark: list[str] = field(default_factory=list)


def _steps_without_compute(document: Document, jobs: Any, seen: frozenset,
                           found: _NoCompute | None = None, prefix: str = "") -> _NoCompute:
    found = found if found is not None else _NoCompute()
    for name, node in _mapping(jobs).items():
        if not isinstance(node, dict) or _has_value(node.get("compute")):
            continue
        step_type = _step_type(node)
        if step_type == "pipeline":
            definition = definition_of(document, node, step_type)
            referenced = definition.referenced
            if (definition.kind != "pipelineComponent" or referenced is None
                    or referenced.document is None or referenced.path in seen):
                continue  # unknown here (registered, unreadable, or circular): not our call
            _steps_without_compute(referenced.document, definition.data.get("jobs"),
                                   seen | {referenced.path}, found, f"{prefix}{name}.")
        elif step_type == "spark":
            if not _serverless_spark(node):
                found.spark.append(f"{prefix}{name}")
        elif step_type in ("command", "sweep", "parallel", "automl"):
            found.steps.append(f"{prefix}{name}")
    return found


def _pipeline_compute(document: Document) -> bool:
    data = _mapping(document.data)
    return _has_value(data.get("compute")) or _has_value(_mapping(data.get("settings")).get("default_compute"))


_SERVERLESS_HINT = ("to say so, write `settings.default_compute: azureml:serverless` (azure-ai-ml's own "
                    "check, run by `az ml job create`, still reports \"Compute not set\" without it); "
                    "or name a cluster with `compute: azureml:<cluster>`")


@check("AML517", "no-compute", Severity.INFO,
       "A pipeline step names no compute, nor does the pipeline, so it runs on serverless compute.",
       bad=PIPELINE.replace("settings:\n  default_compute: azureml:cpu-cluster\n", ""), good=PIPELINE,
       kinds=("pipelineJob",))
def no_compute(document: Document) -> Iterator[Finding]:
    """
    Each step runs on its own `compute`, else on the pipeline job's `compute`, else on
    `settings.default_compute`. With none of them, today's service runs the step on serverless
    compute, as it runs a command job that names no compute (a single node on a CPU VM that Azure
    ML picks by quota, cost and disk size, dedicated tier;
    `resources.instance_type`/`instance_count` on the step choose otherwise). Microsoft's example
    pipelines that name no compute run this way, so this is a fact, not a finding. Steps of
    sub-pipelines count too, and so do the steps of a pipeline component that a job runs as a whole
    (`component:` at the top). A spark step does not take a compute at all when it has `resources`
    (serverless Spark: `instance_type` and `runtime_version`); one with neither is AML520. Steps of
    other types (import, data_transfer) are not judged here. Pipeline *components* are exempt:
    their compute comes from the job that runs them. The form of `default_compute` is checked by
    the compute family (AML4xx).

    A missing compute is not an error: "Compute not set" is azure-ai-ml's client-side check
    (`_validate()` reports `jobs.<step>.compute: Compute not set` for command, sweep and parallel
    steps, and `az ml job create` runs it unless given `--skip-validation`), not the service's. The
    documented way to ask for serverless compute in a pipeline is `settings.default_compute:
    azureml:serverless`, which satisfies both, and the message suggests it.

    See: how-to-use-serverless-compute, reference-yaml-job-pipeline

    Provenance: Issue 10 (Microsoft's example pipelines run on serverless compute). This rule
    corrects SPEC §5.2 and §12 rule 47, which call a missing compute an error.
    """
    if _pipeline_compute(document):
        return
    data = _mapping(document.data)
    for name, node in _mapping(data.get("jobs")).items():
        if not isinstance(node, dict):
            continue
        missing = _steps_without_compute(document, {name: node}, frozenset()).steps
        if not missing:
            continue
        if missing == [str(name)]:
            message = (f"step '{name}' runs on serverless compute: it names no `compute`, and the pipeline "
                       "has neither `compute` nor `settings.default_compute`")
        else:
            inner = ", ".join(m.split(".", 1)[1] for m in missing)
            message = (f"the steps of sub-pipeline '{name}' ({inner}) run on serverless compute: they name no "
                       "`compute`, and the pipeline has neither `compute` nor `settings.default_compute`")
        yield Finding(message, ("jobs", name), key=True, hint=_SERVERLESS_HINT)
    top = _top_level(document)
    if top is not None and top.kind == "pipelineComponent" and top.referenced is not None \
            and top.referenced.document is not None and top.data is not None:
        missing = _steps_without_compute(top.referenced.document, top.data.get("jobs"),
                                         frozenset({top.referenced.path})).steps
        if missing:
            yield Finding(
                f"the steps of {top.describe()} ({', '.join(missing)}) run on serverless compute: "
                "they name no `compute`, and this job has neither `compute` nor `settings.default_compute`",
                ("component",), hint=_SERVERLESS_HINT)


SPARK_STEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
jobs:
  wrangle:
    type: spark
    code: azureml:wrangle-src:1
    entry:
      file: wrangle.py
    args: --rows 1000
    conf:
      spark.driver.cores: 1
      spark.driver.memory: 2g
      spark.executor.cores: 2
      spark.executor.memory: 2g
      spark.executor.instances: 2
    resources:
      instance_type: standard_e4s_v3
      runtime_version: "3.4"
"""


@check("AML520", "spark-step-without-compute", Severity.ERROR,
       "A spark step has neither a compute nor `resources`, and the pipeline gives it no compute.",
       bad=SPARK_STEP.replace("    resources:\n      instance_type: standard_e4s_v3\n"
                              "      runtime_version: \"3.4\"\n", ""),
       good=SPARK_STEP, kinds=("pipelineJob",))
def spark_step_without_compute(document: Document) -> Iterator[Finding]:
    """
    A spark step runs on an attached Synapse Spark pool (`compute: azureml:<pool>`) or on
    serverless Spark, which it sizes itself with `resources` (`instance_type`, such as
    `standard_e4s_v3`, and `runtime_version`). Unlike a command step, it has no serverless
    default to fall back on: with neither, azure-ai-ml stops with "Compute not set" (it skips
    that check for a spark node only when the node has `resources`, SDK
    `entities/_builders/spark.py`), and there is no Spark pool to run it on. Steps of
    sub-pipelines count too.
    """
    if _pipeline_compute(document):
        return
    for name, node in _mapping(_mapping(document.data).get("jobs")).items():
        if not isinstance(node, dict):
            continue
        missing = _steps_without_compute(document, {name: node}, frozenset()).spark
        if not missing:
            continue
        where = f"step '{name}'" if missing == [str(name)] else \
            f"spark step{'s' if len(missing) > 1 else ''} {', '.join(repr(m.split('.', 1)[1]) for m in missing)} " \
            f"of sub-pipeline '{name}'"
        yield Finding(
            f"{where}: a spark step needs `compute:` (an attached Spark pool) or `resources` "
            "(serverless Spark), and the pipeline gives it no compute", ("jobs", name), key=True,
            hint="add `resources: {instance_type: standard_e4s_v3, runtime_version: \"3.4\"}` for serverless "
                 "Spark, or `compute: azureml:<spark-pool>`")


# ----------------------------------------------------------------------------- malformed bindings


@check("AML518", "malformed-binding", Severity.ERROR,
       "A `${{parent...}}` binding does not have one of the shapes Azure ML understands.",
       bad=PIPELINE.replace("parent.jobs.prep.outputs.clean", "parent.jobs.prep.output.clean"),
       good=PIPELINE, kinds=PIPELINES)
def malformed_binding(document: Document) -> Iterator[Finding]:
    """
    A step binding is `${{parent.inputs.<name>}}`, `${{parent.outputs.<name>}}`,
    `${{parent.jobs.<step>.outputs.<name>}}` or `${{parent.jobs.<step>.inputs.<name>}}`. Anything
    else (`parent.input.x`, `parent.jobs.prep.output.x`, a missing port name) resolves to nothing,
    and the step receives no value or the literal text.

    A member of a parameter group (`${{parent.inputs.training.lr}}`, for a pipeline input
    `training.lr`) can be bound to a step that uses a component, not to an inline step (a
    `command:` without `component:`): azure-ai-ml refuses that pipeline when it loads it ("Failed
    to find top level definition for input binding"). Use an undotted pipeline input there.

    See: reference-yaml-job-pipeline, concept-expressions

    Provenance: SPEC §5.4; azure-ai-ml 1.35.2 load_job on such a pipeline.
    """
    pipeline = analyse(document)
    for binding in pipeline.bindings:
        problem = binding_shape(binding.parts, pipeline.inputs)
        step = pipeline.steps.get(binding.step)
        if problem is None and binding.section == "inputs" and binding.parts[:2] == ("parent", "inputs") \
                and len(binding.parts) > 3 and step is not None and step.type == "command" \
                and step.definition.key is None:
            yield Finding(
                f"'{binding.reference.text}' binds a member of the parameter group "
                f"'{binding.parts[2]}' to inline step '{binding.step}', which azure-ai-ml refuses "
                "(\"Failed to find top level definition for input binding\")",
                binding.path, span=binding.span(document),
                hint="bind it to a step that uses a component, or give the pipeline an undotted input for this step")
            continue
        if problem is None:
            continue
        yield Finding(
            f"'{binding.reference.text}' is not a binding Azure ML understands: it {problem}",
            binding.path, span=binding.span(document),
            hint="write `${{parent.inputs.<name>}}`, `${{parent.outputs.<name>}}` or "
                 "`${{parent.jobs.<step>.outputs.<name>}}`")


# ----------------------------------------------------------------------------- AML519
_DATA_PORTS = {"uri_file", "uri_folder", "mltable", "mlflow_model", "custom_model", "triton_model", "path"}


def _literal_of(value: Any) -> tuple[bool, Any]:
    """(is a literal, its value) for a step input: a bare scalar or `{value: x}`; bindings,
    data mappings and strings holding `${{ }}` are not literals."""
    if isinstance(value, dict):
        if set(value) <= {"value", "description"} and "value" in value:
            value = value["value"]
        else:
            return False, None
    if isinstance(value, str) and "${{" in value:
        return False, None
    if value is None or isinstance(value, (dict, list)):
        return False, None
    return True, value


def literal_problem(port_type: str, spec: dict, value: Any) -> str | None:
    """Why ``value`` cannot be given to a component input declared as ``spec``, or None."""
    shown = repr(value) if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    if port_type in _DATA_PORTS:
        return f"is a {port_type} input (data), but the step gives it the literal {shown}"
    if port_type == "boolean":
        if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in ("true", "false")):
            return None
        return f"is a boolean input, but the step gives it {shown}"
    if port_type in ("integer", "number"):
        number = sdk_number(value)
        if number is None:
            return f"is a{'n' if port_type == 'integer' else ''} {port_type} input, but the step gives it {shown}"
        if port_type == "integer" and not isinstance(value, int) and not number.is_integer():
            return f"is an integer input, but the step gives it {shown} (the SDK would truncate it)"
        low, high = sdk_number(spec.get("min")), sdk_number(spec.get("max"))
        if low is not None and number < low:
            return f"has min {spec.get('min')}, but the step gives it {shown}"
        if high is not None and number > high:
            return f"has max {spec.get('max')}, but the step gives it {shown}"
        return None
    if port_type == "string":
        options = spec.get("enum")
        if isinstance(options, list) and options and not enum_contains(options, value):
            return f"allows only {', '.join(repr(str(o)) for o in options)}, but the step gives it {shown}"
    return None


@check("AML519", "literal-input-mismatch", Severity.ERROR,
       "A literal a step gives a component input does not fit its declared type, range or enum.",
       bad=COMPONENT_STEP.replace("learning_rate: 0.05", "learning_rate: fast"),
       good=COMPONENT_STEP, kinds=PIPELINES)
def literal_input_mismatch(document: Document) -> Iterator[Finding]:
    """
    A component declares each parameter's type (`integer`, `number`, `boolean`, `string`) and may
    bound it (`min`, `max`) or list its values (`enum`). A step that passes a literal of another
    type or outside those bounds is accepted when the pipeline is loaded and fails at run time
    ("Parameter 'x' should not be less than ..."), or the script receives text it cannot parse; a
    literal given to a data input (`uri_folder`...) is not data at all. Strings that hold numbers
    (`"0.1"`) count as numbers, as the SDK parses them. Registered components (`azureml:`) cannot
    be read offline.

    See: reference-yaml-component-command, reference-yaml-job-pipeline

    Provenance: SPEC §5.5; EXP:p_literal_type_mismatch.
    """
    pipeline = analyse(document)
    for step in _component_steps(pipeline):
        for name, value in step.inputs.items():
            spec = (step.definition.inputs or {}).get(name)
            if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
                continue
            literal, content = _literal_of(value)
            if not literal:
                continue
            problem = literal_problem(spec["type"], spec, content)
            if problem is None:
                continue
            where: Path_ = ("jobs", step.name, "inputs", name)
            if isinstance(value, dict):
                where += ("value",)
            # azure-ai-ml refuses a literal for a data input ("only path input is supported")
            # and sends a literal of the wrong type, range or enum on to the service.
            yield Finding(
                f"input '{name}' of step '{step.name}' {problem}", where,
                hint=f"give a value that fits {step.definition.describe()}'s declaration, or bind it "
                     f"to a pipeline input (`{name}: ${{{{parent.inputs.{name}}}}}`)",
                service="rejects" if spec["type"] in _DATA_PORTS else "accepts")
