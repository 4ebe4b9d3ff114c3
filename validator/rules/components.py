"""AML530-AML599: component definitions — a command or pipeline component file, and an inline
(anonymous) component written as a mapping under a pipeline step's `component:` or `trial:`.
Names and versions, typed inputs (defaults, ranges, enums), port names, and how the command
uses optional inputs (SPEC §6, §12 rules 52-59). Bindings between pipeline steps belong to the
pipeline family; the inputs of jobs to the inputs family."""

from __future__ import annotations

import math
import re
from typing import Any, Iterator

from .. import expressions, names
from ..diagnostic import Finding, Severity
from ..loader import Document, Path_, count_before
from ..suggest import closest
from ._base import check
from ..values import mapping as _mapping
from ..values import sdk_number as _number
from .expressions import _occurrence, command_sites

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: train_model
display_name: Train model
version: "1"
inputs:
  training_data:
    type: uri_folder
  learning_rate:
    type: number
    default: 0.01
    min: 0.0001
    max: 1.0
  max_epochs:
    type: integer
    optional: true
    min: 1
outputs:
  model_output:
    type: uri_folder
environment: azureml://registries/azureml/environments/sklearn-1.5/labels/latest
command: >-
  python train.py
  --training-data ${{inputs.training_data}}
  --learning-rate ${{inputs.learning_rate}}
  $[[--max-epochs ${{inputs.max_epochs}}]]
  --model-output ${{outputs.model_output}}
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  greet:
    type: command
    component:
      command: echo ${{inputs.greeting}}
      environment: azureml:sklearn-train:2
      inputs:
        greeting:
          type: string
          default: hello
"""

# Component definitions live at the top of these kinds, and inline in pipeline steps.
DEFINITION_KINDS = ("commandComponent", "pipelineComponent", "pipelineJob")
NAMED_KINDS = ("commandComponent", "pipelineComponent")
PORT_TYPES = ("uri_file", "uri_folder", "mltable", "mlflow_model", "custom_model", "triton_model", "path")
RESERVED_IO_NAMES = ("path", "ld_library_path", "user", "logname", "home", "pwd", "shell")
COMPONENT_NAME_RE = names.COMPONENT_NAME  # the same rule as aml-run applies (validator.names)
IO_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# An input may also be a member of a parameter group, written with dots (`optimizer.lr`).
GROUP_IO_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")
MAX_NAME_LENGTH = names.MAX_COMPONENT_NAME
# Environment variables through which a script can read an input without `${{inputs.x}}` (SPEC §9.3).
INPUT_VARIABLES = re.compile(r"(?:AZURE_ML_INPUT_|AZUREML_PARAMETER_|AZUREML_SWEEP_)([A-Za-z0-9_]+)")


# ----------------------------------------------------------------------------- walking
def component_definitions(document: Document) -> Iterator[tuple[Path_, dict]]:
    """(path, mapping) of every component the document defines: the document itself for a
    component file, and each inline mapping under `jobs.<step>.component` / `jobs.<step>.trial`
    of a pipeline job or pipeline component. ``()`` is the path of the document itself."""
    data = document.data
    if not isinstance(data, dict):
        return
    if document.kind in NAMED_KINDS:
        yield (), data
    if document.kind in ("pipelineJob", "pipelineComponent"):
        for step, node in _mapping(data.get("jobs")).items():
            node = _mapping(node)
            for key in ("component", "trial"):
                if isinstance(node.get(key), dict):
                    yield ("jobs", step, key), node[key]


def _is_command_component(document: Document, path: Path_) -> bool:
    """The document's own pipeline component has no command; everything else here is a command
    component (an inline mapping under a step can only be one)."""
    return not (path == () and document.kind == "pipelineComponent")


def _ports(component: dict, side: str) -> Iterator[tuple[Any, dict]]:
    for name, port in _mapping(component.get(side)).items():
        yield name, _mapping(port)


def _typed_inputs(document: Document) -> Iterator[tuple[Path_, Any, dict, str]]:
    """(path of the input, name, mapping, type) of every component input with a string type."""
    for path, component in component_definitions(document):
        for name, port in _ports(component, "inputs"):
            kind = port.get("type")
            if isinstance(kind, str):
                yield path + ("inputs", name), name, port, kind


def _owner(path: Path_) -> str:
    return "the component" if not path else f"the inline component of step '{path[1]}'"


def _component_commands(document: Document) -> Iterator[tuple[Path_, dict, Any]]:
    """(component path, component mapping, command site) for each component with a command."""
    components = {path: component for path, component in component_definitions(document)
                  if _is_command_component(document, path)}
    for site in command_sites(document):
        path = site.path[:-1]
        if path in components:
            yield path, components[path], site


def _span(document: Document, path: Path_, text: str, start: int, token: str) -> tuple[int, int, int]:
    return document.locate_text(path, token, _occurrence(expressions.parse(text), start, token))


# ----------------------------------------------------------------------------- values
def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    return str(value)


def _optional(port: dict) -> bool:
    return port.get("optional") is True


# ----------------------------------------------------------------------------- names
def _fixed_name(name: str) -> str:
    fixed = re.sub(r"[^a-z0-9_]+", "_", name.strip().lower())
    fixed = re.sub(r"_+", "_", fixed).strip("_")
    if not fixed:
        return "component"
    if not fixed[0].isalpha():
        fixed = "c_" + fixed
    return fixed[:MAX_NAME_LENGTH]


@check("AML530", "invalid-component-name", Severity.ERROR,
       "A component's `name` is not lower-case letters, digits and underscores, or is too long.",
       bad=COMPONENT.replace("name: train_model", "name: Train-Model"), good=COMPONENT, kinds=NAMED_KINDS)
def invalid_component_name(document: Document) -> Iterator[Finding]:
    """
    A component name must start with a lower-case letter and hold only lower-case letters, digits
    and underscores (`^[a-z][a-z0-9_]*$`), at most 255 characters. The SDK refuses anything else
    when the component is loaded or registered: "Component name should only contain lower letter,
    number, underscore and start with a lower letter". Put a human-friendly title in
    `display_name`. An inline component inside a pipeline step has no name of its own (the SDK
    drops it), so only component files are checked; and a component file that a pipeline near it
    uses as a step's component is registered anonymously, so there the finding is AML549's warning.

    See: reference-yaml-component-command

    Provenance: SPEC §6.1, §11 #15.
    """
    data = document.data
    if not isinstance(data, dict):
        return
    name = data.get("name")
    if not isinstance(name, str) or not name:
        return  # missing or not a string: the schema reports it
    if not COMPONENT_NAME_RE.fullmatch(name):
        fixed = _fixed_name(name)
        yield Finding(
            f"component name '{name}' must start with a lower-case letter and contain only "
            "lower-case letters, digits and underscores; Azure ML rejects it (\"Component name should "
            "only contain lower letter, number, underscore and start with a lower letter\")",
            ("name",), hint=f"rename it to '{fixed}' and put the readable title in `display_name`")
    elif len(name) > MAX_NAME_LENGTH:
        yield Finding(
            f"component name is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}",
            ("name",), hint=f"shorten it to at most {MAX_NAME_LENGTH} characters")


# ----------------------------------------------------------------------------- version
# The value as written, after any anchor (`&v`) or tag (`!!float`).
_SCALAR_TOKEN = re.compile(r"(?:[&!][^\s]*\s+)*([^\s#,}\]]+)")


@check("AML531", "unquoted-float-version", Severity.WARNING,
       "A component `version` is written as an unquoted decimal number, which YAML reads as a float.",
       bad=COMPONENT.replace('version: "1"', "version: 1.10"),
       good=COMPONENT.replace('version: "1"', 'version: "1.10"'), kinds=NAMED_KINDS)
def unquoted_float_version(document: Document) -> Iterator[Finding]:
    """
    A version is a string. Written without quotes, `version: 1.10` is the YAML float 1.1, and the
    SDK registers the component as version "1.1": 1.10 and 1.1 collide, and `2.0` becomes "2.0"
    only by luck. Quote versions. Unquoted whole numbers (`version: 2`) keep their text and are
    fine; Microsoft's own examples use them.

    See: reference-yaml-component-command

    Provenance: SPEC §6.1; EXP:comp_version_float2.
    """
    data = document.data
    if not isinstance(data, dict) or not isinstance(data.get("version"), float):
        return
    value = data["version"]
    line, column, _ = document.locate(("version",))
    source = document.lines[line - 1] if 0 < line <= len(document.lines) else ""
    match = _SCALAR_TOKEN.match(source, column - 1)
    written = match.group(1) if match else _shown(value)
    becomes = str(value)
    if written == becomes:
        message = (f"version {written} is an unquoted number, which YAML reads as a float; a version "
                   "such as 1.10 would silently become \"1.1\"")
    else:
        message = f"version {written} is an unquoted number, which YAML reads as a float: it becomes \"{becomes}\""
    yield Finding(message, ("version",),
                  hint=f"quote it: version: \"{written}\"")


# ----------------------------------------------------------------------------- input values
def _default_problem(kind: str, default: Any) -> str | None:
    """Why ``default`` does not parse to ``kind`` (None when it does or is not checked here)."""
    if kind == "boolean":
        if isinstance(default, bool):
            return None
        if isinstance(default, str) and default.strip().lower() in ("true", "false"):
            return None
        if isinstance(default, str):
            return "a boolean input accepts only true or false"
        return None  # other types: the schema reports them
    if kind in ("integer", "number"):
        if isinstance(default, bool) or not isinstance(default, (str, int, float)):
            return None  # the schema reports other types
        if isinstance(default, int):
            return None
        number = _number(default)
        if number is None or (kind == "integer" and not math.isfinite(number)):
            return f"it is not a{'n integer' if kind == 'integer' else ' number'}"
        if kind == "integer" and not number.is_integer():
            return f"it is not a whole number; Azure ML truncates it to {int(number)}"
    return None


@check("AML532", "invalid-input-default", Severity.ERROR,
       "A component input's `default` is not a value of the input's type.",
       bad=COMPONENT.replace("default: 0.01", "default: fast"), good=COMPONENT, kinds=DEFINITION_KINDS)
def invalid_input_default(document: Document) -> Iterator[Finding]:
    """
    The default is converted to the input's type when the component loads: a `boolean` takes only
    true/false (in any case, also as a string: "Boolean parameter ... only accept True/False, got
    maybe"), an `integer` or `number` takes a number or a string that reads as one (`"1e-3"` is
    fine: PyYAML keeps `1e-3` as a string and the SDK converts it). An integer default such as 2.5
    is silently truncated to 2, so the step runs with a value the file does not show.

    See: reference-yaml-component-command

    Provenance: SPEC §6.2.
    """
    for path, name, port, kind in _typed_inputs(document):
        if "default" not in port:
            continue
        problem = _default_problem(kind, port["default"])
        if problem:
            shown = _shown(port["default"])
            hint = {"boolean": "write default: true or default: false",
                    "integer": "write a whole number, for example default: 10"}.get(
                kind, "write a number, for example default: 0.01")
            yield Finding(
                f"default '{shown}' of {kind} input '{name}' is invalid: {problem}",
                path + ("default",), hint=hint)


def _bounds(port: dict) -> tuple[float | None, float | None]:
    return _number(port.get("min")), _number(port.get("max"))


@check("AML533", "invalid-input-range", Severity.ERROR,
       "A component input's `min`/`max` is not a number, or `min` is greater than `max`.",
       bad=COMPONENT.replace("min: 0.0001\n    max: 1.0", "min: 1.0\n    max: 0.0001"),
       good=COMPONENT, kinds=DEFINITION_KINDS)
def invalid_input_range(document: Document) -> Iterator[Finding]:
    """
    `min` and `max` bound an `integer` or `number` input. They must be numbers (a string that reads
    as a number is accepted, as the SDK converts it), and `min` must not exceed `max`: no value
    could satisfy both, so every run of the step fails the range check ("Parameter 'x' should not
    be less than ..."). The SDK does not check this when the component is created.

    See: reference-yaml-component-command

    Provenance: SPEC §6.2, §12 rule 53.
    """
    for path, name, port, kind in _typed_inputs(document):
        if kind not in ("integer", "number"):
            continue  # min/max on other types: the schema reports the key
        for key in ("min", "max"):
            value = port.get(key)
            if key in port and isinstance(value, str) and _number(value) is None:
                yield Finding(
                    f"{key} '{value}' of {kind} input '{name}' is not a number",
                    path + (key,), hint=f"write a number, for example {key}: {0 if key == 'min' else 100}")
        low, high = _bounds(port)
        if low is not None and high is not None and low > high:
            yield Finding(
                f"min {_shown(port['min'])} of input '{name}' is greater than its max "
                f"{_shown(port['max'])}: no value is allowed",
                path + ("min",), hint="swap min and max")


@check("AML534", "default-out-of-range", Severity.ERROR,
       "A component input's `default` lies outside its `min`/`max`.",
       bad=COMPONENT.replace("default: 0.01", "default: 5"), good=COMPONENT, kinds=DEFINITION_KINDS)
def default_out_of_range(document: Document) -> Iterator[Finding]:
    """
    A default outside [min, max] fails the range check on every run that does not set the input
    ("Parameter 'x' should not be greater than ..."), so the component only works when each caller
    overrides it. Nothing checks this when the component is created.

    See: reference-yaml-component-command

    Provenance: SPEC §6.2.
    """
    for path, name, port, kind in _typed_inputs(document):
        if kind not in ("integer", "number") or "default" not in port:
            continue
        if _default_problem(kind, port["default"]):
            continue  # AML532
        value = _number(port["default"])
        low, high = _bounds(port)
        if value is None or (low is not None and high is not None and low > high):
            continue  # AML533
        if low is not None and value < low:
            side, bound = "below its min", port["min"]
        elif high is not None and value > high:
            side, bound = "above its max", port["max"]
        else:
            continue
        yield Finding(
            f"default {_shown(port['default'])} of input '{name}' is {side} {_shown(bound)}",
            path + ("default",), hint="change the default or widen the range")


def enum_text(value: Any) -> str:
    """An enum value (or a value compared with one) as the service compares it: as text, with a
    boolean in any spelling (YAML `True`, `'true'`, `'FALSE'`) reduced to `true`/`false`.
    azure-ai-ml reads booleans case-insensitively (`Input._parse`: `str(val).lower()`), and
    the enum parameter schema it keeps for internal components turns every enum value and the
    default into text with `str()` (SDK `_internal/_schema/input_output.py`), so `True` and
    `'true'` name one value. Other text is compared exactly, case included."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value if isinstance(value, str) else _shown(value)
    folded = text.strip().lower()
    return folded if folded in ("true", "false") else text


def enum_contains(options: list, value: Any) -> bool:
    """Whether ``value`` is one of ``options`` (see :func:`enum_text`)."""
    return enum_text(value) in {enum_text(option) for option in options}


_ENUM_INPUT = COMPONENT.replace("  max_epochs:\n", "  solver:\n    type: string\n    default: sgd\n"
                                "    enum: [sgd, lbfgs]\n  max_epochs:\n").replace(
    "  $[[", "  --solver ${{inputs.solver}}\n  $[[")


@check("AML535", "default-not-in-enum", Severity.ERROR,
       "A string (or boolean) input's `default` is not one of its `enum` values.",
       bad=_ENUM_INPUT.replace("default: sgd", "default: adam"), good=_ENUM_INPUT,
       kinds=DEFINITION_KINDS)
def default_not_in_enum(document: Document) -> Iterator[Finding]:
    """
    `enum` lists the only values a string input accepts; a default outside the list is refused by
    the value check on every run that does not set the input, so the component only works when each
    caller overrides it. Matching is exact, including case, with one exception: booleans and their
    spellings are one value, compared case-insensitively as azure-ai-ml reads them. `enum: [True,
    False]` (YAML booleans) with `default: 'true'` (a string) is accepted and runs, so `'true'`,
    `True` and `'TRUE'` all match `True`; the unquoted booleans themselves are AML547. A `boolean`
    input may carry an `enum` too (the SDK keeps it), and is compared the same way.

    See: reference-yaml-component-command

    Provenance: SPEC §6.2, §12 rule 53.
    """
    for path, name, port, kind in _typed_inputs(document):
        enum = port.get("enum")
        if kind not in ("string", "boolean") or "default" not in port or not isinstance(enum, list) or not enum:
            continue
        default = port["default"]
        if isinstance(default, (dict, list)) or default is None:
            continue
        if enum_contains(enum, default):
            continue
        if kind == "boolean" and _default_problem(kind, default):
            continue  # not a boolean at all: AML532
        allowed = ", ".join(_shown(v) for v in enum)
        message = f"default '{_shown(default)}' of input '{name}' is not one of its enum values ({allowed})"
        close = closest(_shown(default), [_shown(v) for v in enum])
        hint = f"use '{close}'" if close else "use one of the enum values, or add the default to `enum`"
        yield Finding(message, path + ("default",), hint=hint)


@check("AML536", "data-input-default", Severity.ERROR,
       "A data or model input of a component declares a `default`.",
       bad=COMPONENT.replace("    type: uri_folder\n  learning_rate:",
                             "    type: uri_folder\n    default: azureml:iris:1\n  learning_rate:"),
       good=COMPONENT, kinds=DEFINITION_KINDS)
def data_input_default(document: Document) -> Iterator[Finding]:
    """
    Only parameter inputs (`integer`, `number`, `string`, `boolean`) have defaults. The SDK refuses
    a default on a `uri_folder`, `uri_file`, `mltable` or model input ("Non-primitive type Input
    has no default value"). Bind the data where the component is used: in the job or pipeline
    step's `inputs:`, or as a pipeline input.

    See: reference-yaml-component-command

    Provenance: SPEC §6.2, §12 rule 54.
    """
    for path, name, port, kind in _typed_inputs(document):
        if kind in PORT_TYPES and "default" in port:
            yield Finding(
                f"{kind} input '{name}' cannot have a default: only integer, number, string "
                "and boolean inputs do (\"Non-primitive type Input has no default value\")",
                path + ("default",), key=True,
                hint="remove `default` and bind the data in the step that uses the component "
                     f"(`inputs: {{{name}: {{type: {kind}, path: ...}}}}`), or make the input `optional: true`")


# ----------------------------------------------------------------------------- optional inputs
def _wrapped(text: str, reference: expressions.Reference) -> str:
    """The optional block that should hold ``reference``: with the flag written before it."""
    before = text[:reference.start].split()
    flag = before[-1].lstrip("[") if before else ""
    flag = flag if flag.startswith("-") and "${{" not in flag else ""
    return f"$[[{flag} {reference.text}]]" if flag else f"$[[{reference.text}]]"


def _legacy_note(text: str, reference: expressions.Reference) -> str:
    """A note when the reference sits in the old single-bracket form `[--x ${{inputs.x}}]`."""
    line_start = text.rfind("\n", 0, reference.start) + 1
    before = text[line_start:reference.start]
    opened = before.rfind("[")
    if opened != -1 and not before[:opened + 1].endswith("$[[") and "]" not in before[opened:] \
            and "]" in text[reference.end:]:
        return " ('[ ]' is the old optional syntax; Azure ML drops only '$[[ ]]' blocks)"
    return ""


def _input_references(template: expressions.Template, declared: dict) -> list[expressions.Reference]:
    return [r for r in template.references if r.context == "inputs" and r.names_port(declared)]


@check("AML537", "optional-input-outside-block", Severity.ERROR,
       "An optional input without a default is used in the command outside `$[[ ]]`.",
       bad=COMPONENT.replace("$[[--max-epochs ${{inputs.max_epochs}}]]", "--max-epochs ${{inputs.max_epochs}}"),
       good=COMPONENT, kinds=DEFINITION_KINDS)
def optional_input_outside_block(document: Document) -> Iterator[Finding]:
    """
    An optional input may have no value. Only inside an optional block `$[[ ... ]]` is the text
    around it dropped in that case; outside one, the command keeps the flag with nothing (or the
    literal placeholder) after it, and the script fails or parses the next flag as its value (the
    component reference: "If set to true, you need use the command includes optional inputs with
    $[[]]"). Wrap the flag and its value: `$[[--max-epochs ${{inputs.max_epochs}}]]`. An optional
    input with a default always has a value; AML538 covers that case.

    See: reference-yaml-component-command

    Provenance: SPEC §3.10, §6.2.
    """
    for _, _, site in _component_commands(document):
        template = expressions.parse(site.text)
        for reference in _input_references(template, site.inputs):
            port = site.inputs.get(reference.port(site.inputs))
            if reference.block is not None or not isinstance(port, dict) or not _optional(port):
                continue
            if "default" in port:
                continue  # AML538
            name = reference.port(site.inputs)
            message = (f"optional input '{name}' is used outside an optional block: when it has no value, "
                       f"the command still passes the text around '{reference.text}'")
            message += _legacy_note(site.text, reference)
            yield Finding(
                message, site.path,
                hint=f"wrap the flag and the reference: {_wrapped(site.text, reference)}, "
                     "or make the input required",
                span=_span(document, site.path, site.text, reference.start, reference.text))


@check("AML538", "optional-default-outside-block", Severity.WARNING,
       "An optional input with a default is used in the command outside `$[[ ]]`.",
       bad=COMPONENT.replace("    optional: true\n    min: 1\n", "    optional: true\n    default: 10\n    min: 1\n")
                    .replace("$[[--max-epochs ${{inputs.max_epochs}}]]", "--max-epochs ${{inputs.max_epochs}}"),
       good=COMPONENT.replace("    optional: true\n    min: 1\n", "    optional: true\n    default: 10\n    min: 1\n"),
       kinds=DEFINITION_KINDS)
def optional_default_outside_block(document: Document) -> Iterator[Finding]:
    """
    The documentation asks for every optional input to sit inside `$[[ ]]`. With a default, the
    input normally has a value, so the command works; but a caller that passes an empty value (an
    unset optional pipeline input bound to it) leaves a dangling flag. Either wrap the flag in `$[[
    ]]` or drop `optional: true` (the default already makes the input unnecessary to set).

    See: reference-yaml-component-command

    Provenance: SPEC §6.2.
    """
    for _, _, site in _component_commands(document):
        template = expressions.parse(site.text)
        for reference in _input_references(template, site.inputs):
            port = site.inputs.get(reference.port(site.inputs))
            if reference.block is not None or not isinstance(port, dict) or not _optional(port):
                continue
            if "default" not in port:
                continue  # AML537
            name = reference.port(site.inputs)
            yield Finding(
                f"optional input '{name}' is used outside an optional block; it has a default, "
                "but an empty value would leave the text around it in the command"
                + _legacy_note(site.text, reference),
                site.path,
                hint=f"wrap it: {_wrapped(site.text, reference)}, or remove `optional: true`",
                span=_span(document, site.path, site.text, reference.start, reference.text))


def _blocks(site: Any) -> Iterator[tuple[expressions.Block, list[expressions.Reference]]]:
    """Each optional block of a command with the references inside it."""
    template = expressions.parse(site.text)
    for index, block in enumerate(template.blocks):
        yield block, [r for r in template.references if r.block == index]


def _input_kinds(site: Any, references: list[expressions.Reference]) -> tuple[list, list, list]:
    """The input references of a block split into (optional, required, undeclared)."""
    optional, required, undeclared = [], [], []
    for reference in references:
        if reference.context != "inputs" or not reference.names_port(site.inputs):
            continue
        port = site.inputs.get(reference.port(site.inputs))
        if not isinstance(port, dict):
            undeclared.append(reference)
        elif _optional(port):
            optional.append(reference)
        else:
            required.append(reference)
    return optional, required, undeclared


@check("AML539", "required-input-in-block", Severity.ERROR,
       "A required input is used inside an optional block `$[[ ]]` next to an optional one.",
       bad=COMPONENT.replace("$[[--max-epochs ${{inputs.max_epochs}}]]",
                             "$[[--max-epochs ${{inputs.max_epochs}} --lr ${{inputs.learning_rate}}]]")
                    .replace("  --learning-rate ${{inputs.learning_rate}}\n", ""),
       good=COMPONENT, kinds=DEFINITION_KINDS)
def required_input_in_block(document: Document) -> Iterator[Finding]:
    """
    "Only optional inputs can be in `$[[]]`" (the component reference's common errors). A block is
    dropped when its optional input has no value, and a required input inside it is dropped with
    it: the script silently runs without an argument the component declares as required. Move the
    required part out of the block. (A block holding no optional input at all is AML540.)

    See: reference-yaml-component-command#common-errors-and-recommendation

    Provenance: SPEC §6.2.
    """
    for _, _, site in _component_commands(document):
        for block, references in _blocks(site):
            optional, required, _ = _input_kinds(site, references)
            if not optional:
                continue  # AML540 (or AML201/AML202)
            for reference in required:
                name = reference.port(site.inputs)
                first = optional[0].port(site.inputs)
                yield Finding(
                    f"required input '{name}' is inside the optional block of "
                    f"'{first}': it is dropped whenever '{first}' has no value",
                    site.path, hint=f"move '{reference.text}' (and its flag) out of the `$[[ ]]` block",
                    span=_span(document, site.path, site.text, reference.start, reference.text))


def _block_span(document: Document, site: Any, block: expressions.Block) -> tuple[int, int, int]:
    text = site.text[block.start:block.end]
    line, column, end = _span(document, site.path, site.text, block.start, text)
    lines = document.lines
    if 0 < line <= len(lines) and lines[line - 1][column - 1: column - 1 + len(text)] == text:
        return line, column, end
    # The block spans several source lines (a folded command): point at its opening.
    count = count_before(site.text, expressions.BLOCK_OPEN, block.start)
    return document.locate_text(site.path, expressions.BLOCK_OPEN, count)


@check("AML540", "block-without-optional-input", Severity.ERROR,
       "An optional block `$[[ ]]` holds no optional input, so it is never dropped.",
       bad=COMPONENT.replace("  --learning-rate ${{inputs.learning_rate}}\n",
                             "  $[[--learning-rate ${{inputs.learning_rate}}]]\n"),
       good=COMPONENT, kinds=DEFINITION_KINDS)
def block_without_optional_input(document: Document) -> Iterator[Finding]:
    """
    `$[[ ... ]]` exists for optional inputs: the block is dropped when its optional input has no
    value. A block whose references are all required inputs (or outputs) is never dropped, and
    Azure ML rejects it: "Only optional inputs can be in `$[[]]`". Remove the brackets, or mark the
    input `optional: true` if the script can run without it. (A block with no reference at all is
    AML201; one with an undeclared input is AML202.)

    See: reference-yaml-component-command#common-errors-and-recommendation

    Provenance: SPEC §6.2.
    """
    for _, _, site in _component_commands(document):
        for block, references in _blocks(site):
            if not references:
                continue  # AML201
            optional, required, undeclared = _input_kinds(site, references)
            if optional or undeclared:
                continue
            text = " ".join(site.text[block.start:block.end].split())
            if len(text) > 80:
                text = text[:77] + "..."
            if required:
                names = ", ".join(f"'{r.port(site.inputs)}'" for r in required)
                what = f"only required input{'s' if len(required) > 1 else ''} {names}"
                hint = (f"remove the `$[[ ]]` around it, or mark {names} `optional: true` "
                        "if the script can run without it")
            else:
                what = "no input, only " + ", ".join(f"'{r.text}'" for r in references)
                hint = "remove the `$[[ ]]`: only optional inputs belong in an optional block"
            yield Finding(
                f"optional block '{text}' holds {what}, so it is never dropped; "
                "only optional inputs can be in $[[ ]]",
                site.path, hint=hint, span=_block_span(document, site, block))


# ----------------------------------------------------------------------------- port names
def _port_names(component: dict) -> Iterator[tuple[str, Any]]:
    for side in ("inputs", "outputs"):
        for name in _mapping(component.get(side)):
            yield side, name


@check("AML541", "invalid-io-name", Severity.ERROR,
       "A component input or output name is not letters, digits and underscores.",
       bad=COMPONENT.replace("max_epochs", "max-epochs"), good=COMPONENT, kinds=DEFINITION_KINDS)
def invalid_io_name(document: Document) -> Iterator[Finding]:
    """
    Port names are used as `${{inputs.<name>}}` and as keys of the service's request; they must
    match `^[A-Za-z_][A-Za-z0-9_]*$`. The SDK refuses others: "'my-flag' is not a valid parameter
    name, must be composed letters, numbers, and underscores".

    An input may also be a member of a parameter group, the YAML form of the SDK's `@dsl.group`:
    dotted names such as `optimizer.lr`, each part such a name, used as `${{inputs.optimizer.lr}}`.
    Outputs cannot: the SDK refuses `${{outputs.a.b}}` ("Invalid data binding expression").

    See: reference-yaml-component-command,
    https://learn.microsoft.com/python/api/azure-ai-ml/azure.ai.ml.dsl#azure-ai-ml-dsl-group

    Provenance: SPEC §6.2, §12 rule 13.
    """
    for path, component in component_definitions(document):
        for side, name in _port_names(component):
            text = str(name)
            if (GROUP_IO_NAME_RE if side == "inputs" else IO_NAME_RE).match(text):
                continue
            fixed = re.sub(r"\W", "_", text) if text else "x"
            if fixed[0].isdigit():
                fixed = "_" + fixed
            rule = "contain only letters, digits and underscores"
            if side == "inputs":
                rule += " (dots only between such parts, for parameter groups)"
            yield Finding(
                f"'{text}' is not a valid {side[:-1]} name: names must start with a letter or "
                f"an underscore and {rule}",
                path + (side, name), key=True, hint=f"rename it to '{fixed}' (and its references)")


@check("AML542", "duplicate-io-name", Severity.ERROR,
       "Two component inputs or outputs have the same name, ignoring case.",
       bad=COMPONENT.replace("  model_output:\n    type: uri_folder\n",
                             "  model_output:\n    type: uri_folder\n  Training_Data:\n    type: uri_folder\n"),
       good=COMPONENT, kinds=DEFINITION_KINDS)
def duplicate_io_name(document: Document) -> Iterator[Finding]:
    """
    Input and output names share one namespace and are compared ignoring case: the SDK refuses `a`
    next to `A` ("Invalid component input names 'a' and 'A', which are equal ignore case"), and the
    documentation forbids an input and an output with the same name. Rename one of them. An input
    `opt` next to parameter-group members `opt.lr` is refused too ("Conflict parameter key 'opt'
    and 'opt.lr'").

    See: reference-yaml-component-command#common-errors-and-recommendation

    Provenance: SPEC §6.2, §12 rule 57.
    """
    for path, component in component_definitions(document):
        seen: dict[str, tuple[str, Any]] = {}
        for side, name in _port_names(component):
            folded = str(name).lower()
            first = seen.get(folded)
            if first is None:
                seen[folded] = (side, name)
                continue
            first_side, first_name = first
            if first_side == side:
                message = (f"{side[:-1]} names '{first_name}' and '{name}' are equal ignoring case; "
                           "Azure ML rejects the component")
            else:
                message = (f"output '{name}' has the same name as input '{first_name}'"
                           f"{' (ignoring case)' if str(first_name) != str(name) else ''}; "
                           "inputs and outputs must not share names")
            yield Finding(message, path + (side, name), key=True,
                          hint=f"rename '{name}'")
        for member, group in sorted(expressions.group_conflicts(_mapping(component.get("inputs")))):
            yield Finding(
                f"input '{member}' is a member of the parameter group '{group}', which is also an input "
                f"of its own; azure-ai-ml refuses the two together (\"Conflict parameter key '{group}' "
                f"and '{member}'\")", path + ("inputs", member), key=True,
                hint=f"rename '{group}' or the group '{group}.*'")


@check("AML543", "reserved-io-name", Severity.ERROR,
       "A component input or output uses a reserved name (`path`, `home`, `user`...).",
       bad=COMPONENT.replace("training_data", "path"), good=COMPONENT, kinds=DEFINITION_KINDS)
def reserved_io_name(document: Document) -> Iterator[Finding]:
    """
    `path`, `ld_library_path`, `user`, `logname`, `home`, `pwd` and `shell` are reserved by the
    system (they clash with environment variables of the process that runs the command) and cannot
    name a command component's inputs or outputs (the component reference's common errors table).
    Names are compared ignoring case.

    See: reference-yaml-component-command#common-errors-and-recommendation

    Provenance: SPEC §6.2.
    """
    for path, component in component_definitions(document):
        if not _is_command_component(document, path):
            continue
        for side, name in _port_names(component):
            if str(name).lower() in RESERVED_IO_NAMES:
                yield Finding(
                    f"'{name}' is a reserved name and cannot name a component {side[:-1]} "
                    f"(reserved: {', '.join(RESERVED_IO_NAMES)})",
                    path + (side, name), key=True,
                    hint=f"rename it, for example to '{str(name).lower()}_{side[:-1]}'")


# ----------------------------------------------------------------------------- command text
def _source_region(document: Document, path: Path_) -> range:
    """Source line numbers (1-based) a scalar value spans: from its first line to the last line
    indented deeper than its key."""
    key_line, key_column, _ = document.locate(path, key=True)
    line, _, _ = document.locate(path)
    lines = document.lines
    last = line
    for number in range(line + 1, len(lines) + 1):
        text = lines[number - 1]
        if not text.strip():
            continue
        if len(text) - len(text.lstrip(" ")) < key_column:
            break
        last = number
    return range(line, last + 1)


@check("AML544", "command-line-continuation", Severity.ERROR,
       "A component command uses `\\` at the end of a line to continue it.",
       bad=COMPONENT.replace("command: >-\n  python train.py\n", "command: |\n  python train.py \\\n")
                    .replace("${{inputs.training_data}}\n", "${{inputs.training_data}} \\\n")
                    .replace("${{inputs.learning_rate}}\n", "${{inputs.learning_rate}} \\\n")
                    .replace("${{inputs.max_epochs}}]]\n", "${{inputs.max_epochs}}]] \\\n"),
       good=COMPONENT, kinds=DEFINITION_KINDS)
def command_line_continuation(document: Document) -> Iterator[Finding]:
    """
    "Using `\\` to make a new line isn't supported in command" (the component reference's common
    errors table). In a folded block (`>-`) YAML joins the lines with spaces, so the `\\` reaches
    the shell as an escaped space and the script receives a stray argument. Write the command as a
    folded block without backslashes: its lines are joined with spaces.

    See: reference-yaml-component-command#common-errors-and-recommendation

    Provenance: SPEC §6.2.
    """
    for _, _, site in _component_commands(document):
        text = site.text
        joined = "\\\n" in text
        folded = "\\ " in text
        if not joined and not folded:
            continue
        lines = document.lines
        ends = [number for number in _source_region(document, site.path)
                if lines[number - 1].rstrip().endswith("\\")
                and not lines[number - 1].rstrip().endswith("\\\\")]
        message = "'\\' at the end of a line: Azure ML does not support line continuation in a command"
        if len(ends) > 1:
            message = (f"{len(ends)} lines end with '\\': Azure ML does not support line continuation "
                       "in a command")
        if ends and not joined:
            message += " (this folded block turns each into an escaped space, a stray argument)"
        span = None
        if ends:
            source = lines[ends[0] - 1].rstrip()
            span = (ends[0], len(source), len(source) + 1)
        elif not joined:
            continue  # an escaped space written on purpose ('My\\ Folder')
        yield Finding(
            message, site.path, span=span,
            hint="remove the backslashes and write the command as a folded block (`command: >-`), "
                 "whose lines are joined with spaces")


@check("AML545", "unused-component-input", Severity.WARNING,
       "A component input is declared but its command never uses it.",
       bad=COMPONENT.replace("  --learning-rate ${{inputs.learning_rate}}\n", ""),
       good=COMPONENT, kinds=DEFINITION_KINDS)
def unused_component_input(document: Document) -> Iterator[Finding]:
    """
    A component passes inputs to its script only through `${{inputs.<name>}}` in the command.
    An input the command never mentions is still shown to every caller, who sets it and sees
    no effect: the script never receives the value. Usually a flag was dropped from the command
    or misspelt. (A command that reads `$AZURE_ML_INPUT_<name>` or `$AZUREML_PARAMETER_<name>`
    counts as using it.)
    """
    for path, _, site in _component_commands(document):
        template = expressions.parse(site.text)
        used = {r.port(site.inputs) for r in [*template.references, *template.deprecated]
                if r.context == "inputs" and len(r.parts) >= 2}
        # A misspelt reference is AML202, which already names the input it was aiming at.
        aimed = {closest(str(u), site.inputs) for u in used if u not in site.inputs}
        used.update(INPUT_VARIABLES.findall(site.text))
        for name in site.inputs:
            if name in used or name in aimed:
                continue
            yield Finding(
                f"input '{name}' is declared but never used in the command of {_owner(path)}: "
                "the script never receives its value",
                path + ("inputs", name), key=True,
                hint=f"pass it in the command (for example `--{str(name).replace('_', '-')} "
                     f"${{{{inputs.{name}}}}}`), or remove the input")


# ----------------------------------------------------------------------------- outputs
PRIMITIVE_TYPES = ("string", "integer", "number", "boolean")

@check("AML546", "early-available-data-output", Severity.ERROR,
       "A component output that is not a primitive value sets `early_available: true`.",
       bad=COMPONENT.replace("outputs:\n", "outputs:\n  best_epoch:\n    type: uri_file\n"
                                          "    early_available: true\n"),
       good=COMPONENT.replace("outputs:\n", "outputs:\n  best_epoch:\n    type: integer\n"
                                           "    early_available: true\n"),
       kinds=DEFINITION_KINDS)
def early_available_data_output(document: Document) -> Iterator[Finding]:
    """
    An early-available output is a primitive value (string, integer, number, boolean) that the
    pipeline reads before the step ends, to decide what runs next. azure-ai-ml refuses
    `early_available` on a data output (uri_file, uri_folder, a model...): "Early available output
    'x' requires output is primitive type" (1.35.2, `_validate_early_available_output`). Older SDKs
    also required `is_control: true` next to it; the current one no longer reads `is_control` (it
    was dropped in 2023), so a primitive early-available output without it is fine.

    See: reference-yaml-component-command, https://github.com/Azure/azure-sdk-for-python/pull/31248
    """
    for path, component in component_definitions(document):
        for name, port in _ports(component, "outputs"):
            kind = port.get("type")
            if port.get("early_available") is True and isinstance(kind, str) and kind not in PRIMITIVE_TYPES:
                yield Finding(
                    f"output '{name}' is a {kind}, and only a primitive output (string, integer, "
                    f"number, boolean) can be early_available; Azure ML rejects it (\"Early available "
                    f"output '{name}' requires output is primitive type\")",
                    path + ("outputs", name, "early_available"), key=True,
                    hint="remove `early_available`, or write the value the pipeline needs early to a "
                         "primitive output of its own")


# ----------------------------------------------------------------------------- enum values
@check("AML547", "boolean-enum-value", Severity.WARNING,
       "An input's `enum` lists unquoted `True`/`False`, which YAML reads as booleans, not strings.",
       bad=_ENUM_INPUT.replace("    default: sgd\n    enum: [sgd, lbfgs]\n",
                               "    default: 'true'\n    enum: [True, False]\n"),
       good=_ENUM_INPUT.replace("    default: sgd\n    enum: [sgd, lbfgs]\n",
                                "    default: 'true'\n    enum: ['True', 'False']\n"),
       kinds=DEFINITION_KINDS)
def boolean_enum_value(document: Document) -> Iterator[Finding]:
    """
    An `enum` is a list of strings, but YAML reads an unquoted `True`, `False`, `yes` or `no` as a
    boolean. Specs with `enum: [True, False]` and `default: 'true'` are accepted and run (the
    values are used as the text `True`/`False`, and the default matches them case-insensitively,
    AML535), so this is never an error. It is a warning because the documented form is a list of
    strings and azure-ai-ml 1.35.2's component schema, used by `az ml component create` and when a
    pipeline loads the file, refuses a boolean there ("Not a valid string."). Quote the values:
    `enum: ['True', 'False']`, or make the input `type: boolean`, which takes only true and false
    anyway.

    See: reference-yaml-component-command

    Provenance: SPEC §6.2.
    """
    for path, name, port, kind in _typed_inputs(document):
        enum = port.get("enum")
        if not isinstance(enum, list):
            continue
        flags = [index for index, value in enumerate(enum) if isinstance(value, bool)]
        if not flags:
            continue
        shown = ", ".join("True" if enum[i] else "False" for i in flags)
        plural = len(flags) > 1
        quoted = ", ".join(f"'{'True' if enum[i] else 'False'}'" for i in flags)
        yield Finding(
            f"enum value{'s' if plural else ''} {shown} of input '{name}' "
            f"{'are YAML booleans' if plural else 'is a YAML boolean'}, not {'strings' if plural else 'a string'}: "
            f"the service takes {'them' if plural else 'it'} as text, but azure-ai-ml's component schema "
            f"refuses {'them' if plural else 'it'} (\"Not a valid string.\")",
            path + ("enum", flags[0]),
            hint=f"quote {'them' if plural else 'it'}: {quoted}"
                 + (", or drop `enum`: a boolean input takes only true and false" if kind == "boolean"
                    else ", or declare the input `type: boolean`"))
