"""Generate validator/schemas/<kind>.schema.json from one description of the spec.

The JSON files are a product (point yaml-language-server at them) and what aml-lint validates
against. They share many parts (inputs, environments, resources...), which JSON Schema can only
share through ``$ref``, and ``additionalProperties: false`` does not compose across ``allOf``.
So the parts are written once here, as Python, and every kind's file is generated
self-contained. ``tests/repo/test_generated.py`` fails when the committed files are stale:

    python tools/build_schemas.py          # rewrite the files
    python tools/build_schemas.py --check  # exit 1 when they differ

Annotations the linter reads (validators and editors ignore unknown ``x-`` keywords):
``x-message`` replaces the message of any failure of that node; ``x-hint`` adds a fix;
``x-unknown-hints`` maps an unknown key to the advice given when it appears.
Facts and section numbers come from shared/SPEC.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from validator import early_termination  # noqa: E402
from validator.search_space import ALGORITHMS, PARAMETERS  # noqa: E402

OUT = ROOT / "validator" / "schemas"
BASE_URL = "https://amllab.dev/schemas"
Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
NONEMPTY: Schema = {"type": "string", "minLength": 1}
INT: Schema = {"type": "integer"}
NUMBER: Schema = {"type": "number"}
BOOL: Schema = {"type": "boolean"}
ANY: Schema = {}
STR_MAP: Schema = {"type": "object", "additionalProperties": {"type": "string"}}
# Tags and properties of jobs, steps, schedules, environments and data imports: a key with no
# value (`tags: {reviewed: }`) loads as None (azure-ai-ml: `fields.Dict(values=fields.Str(
# allow_none=True))` on jobs, steps and schedule properties; untyped values on schedule tags,
# environments and data imports). A component's own `tags` stay strings: its schema says
# `fields.Str()` and refuses None ("Field may not be null.").
TAG_MAP: Schema = {"type": "object", "additionalProperties": {"type": ["string", "null"]}}
ANY_MAP: Schema = {"type": "object"}


def camel(value: str) -> str:
    return "".join(part.capitalize() for part in value.split("_"))


# CamelCase spellings that `camel` cannot derive (one word with inner capitals, or an acronym):
# the service's REST enums write these, and Microsoft's docs and the SDK's own test configs copy
# them (`type: TensorFlow`, `type: PyTorch`). The SDK lower-cases before comparing, so any
# casing loads; these are the ones people write.
SPELLINGS = {"aml_token": "AMLToken", "pytorch": "PyTorch", "tensorflow": "TensorFlow"}


def enum_ci(*values: str | None) -> Schema:
    """An enum the SDK compares case-insensitively (SPEC §1.2): accept the documented lower-case
    spelling plus the upper-case and CamelCase forms the docs themselves use."""
    allowed: list[str | None] = []
    for value in values:
        if value is None:
            allowed.append(None)
            continue
        for variant in (value, value.upper(), value.capitalize(), camel(value)):
            if variant not in allowed:
                allowed.append(variant)
    for value in values:
        if value in SPELLINGS and SPELLINGS[value] not in allowed:
            allowed.append(SPELLINGS[value])
    return {"enum": allowed}


def obj(properties: dict[str, Schema], required: tuple[str, ...] = (), **extra: Any) -> Schema:
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


def by_type(variants: dict[str, Schema], *, default: str | None = None, case_insensitive: bool = True,
            type_hint: str | None = None, **extra: Any) -> Schema:
    """A mapping whose ``type`` picks one of ``variants`` (each an :func:`obj` without ``type``).
    if/then per variant keeps errors precise: a wrong key is reported against the chosen variant,
    never as a wall of alternatives."""
    names = list(variants)
    type_schema = enum_ci(*names) if case_insensitive else {"enum": names}
    if type_hint:
        type_schema = {**type_schema, "x-hint": type_hint}
    branches = []
    for name, variant in variants.items():
        variant = {**variant, "properties": {"type": ANY, **variant["properties"]}}
        match = enum_ci(name) if case_insensitive else {"const": name}
        branches.append({"if": {"properties": {"type": match}, "required": ["type"]}, "then": variant})
    if default is not None:
        variant = variants[default]
        variant = {**variant, "properties": {"type": ANY, **variant["properties"]}}
        branches.append({"if": {"not": {"required": ["type"]}}, "then": variant})
    schema: Schema = {"type": "object", "properties": {"type": type_schema}, "allOf": branches}
    if default is None:
        schema["required"] = ["type"]
    schema.update(extra)
    return schema


def one_or_many(item: Schema) -> Schema:
    return {"anyOf": [item, {"type": "array", "items": item, "minItems": 1}]}


# ----------------------------------------------------------------------------- shared parts
REF = {
    name: {"$ref": f"#/$defs/{name}"}
    for name in ("environment", "jobInputs", "jobOutputs", "nodeInputs", "nodeOutputs", "resources",
                 "distribution", "identity", "services", "queueSettings", "componentInputs",
                 "componentOutputs", "commandLimits", "environmentVariables", "jobs",
                 "sweepCore", "commandComponentBody", "dataImport")
}

# `file:<path>` names an environment YAML file, an older CLI form the SDK still reads (its
# content is checked by AML811, the form itself gets AML810's info).
ASSET_REFERENCE = {
    "type": "string",
    "pattern": r"^(azureml|file):\S+$",
    "x-message": "not an environment reference: a registered environment is written "
                 "'azureml:<name>:<version>', 'azureml:<name>@latest' or "
                 "'azureml://registries/<registry>/environments/<name>/versions/<version>'",
    "x-hint": "prefix the name with 'azureml:' (for example azureml:my-env:1), or define the "
              "environment inline with `image:` or `build:`",
}

INLINE_ENVIRONMENT = obj({
    "image": NONEMPTY,
    "conda_file": {"anyOf": [NONEMPTY, ANY_MAP],
                   "x-message": "conda_file is a path to a conda YAML file or an inline mapping"},
    "build": obj({"path": NONEMPTY, "dockerfile_path": NONEMPTY}, ("path",)),
    "os_type": enum_ci("linux", "windows"),
    "inference_config": ANY_MAP,
    "description": STRING,
    "tags": TAG_MAP,
    "datastore": STRING,
    # Dropped by the SDK with a warning ("will not be used for anonymous registration").
    "name": STRING,
    "version": {"type": ["string", "number"]},
}, **{"x-unknown-hints": {
    "channels": "conda content cannot sit in the environment itself: move it to a conda file "
                "and point `conda_file:` at it (or nest it under `conda_file:`)",
    "dependencies": "conda content cannot sit in the environment itself: move it to a conda file "
                    "and point `conda_file:` at it (or nest it under `conda_file:`)",
}})

ENVIRONMENT: Schema = {
    "if": {"type": "string"},
    "then": ASSET_REFERENCE,
    "else": {**INLINE_ENVIRONMENT,
             "x-messages": {"type": "environment is a reference string ('azureml:<name>:<version>') "
                                    "or an inline mapping with image/build and conda_file"}},
}

LITERAL_TYPES = ["string", "number", "boolean"]
DATA_INPUT_MODES = ("ro_mount", "download", "direct")
INPUT_MODE_HINT = ("inputs are read-only (ro_mount, download or direct); rw_mount and upload are "
                   "output modes")
DATA_INPUT = obj({"path": NONEMPTY, "mode": {**enum_ci(*DATA_INPUT_MODES), "x-hint": INPUT_MODE_HINT},
                  "path_on_compute": STRING,
                  "datastore": STRING, "description": STRING, "optional": BOOL})
MODEL_INPUT = obj({"path": NONEMPTY, "mode": {**enum_ci(*DATA_INPUT_MODES), "x-hint": INPUT_MODE_HINT},
                   "datastore": STRING,
                   "description": STRING, "optional": BOOL})
MLTABLE_INPUT = obj({"path": NONEMPTY,
                     "mode": enum_ci(*DATA_INPUT_MODES, "eval_mount", "eval_download"),
                     "path_on_compute": STRING, "datastore": STRING, "description": STRING,
                     "optional": BOOL})
TYPED_LITERAL_HINT = ("typed inputs such as `{type: integer, default: 5}` exist only in components; "
                      "in a job write the value itself (`lr: 0.01`) or `{value: 0.01}`")

JOB_INPUT_OBJECT: Schema = {
    "if": {"required": ["value"]},
    "then": obj({"value": {"type": LITERAL_TYPES}, "description": STRING}),
    "else": by_type(
        {"uri_file": DATA_INPUT, "uri_folder": DATA_INPUT, "mltable": MLTABLE_INPUT,
         "custom_model": MODEL_INPUT, "mlflow_model": MODEL_INPUT, "triton_model": MODEL_INPUT},
        default="uri_folder", type_hint=TYPED_LITERAL_HINT),
}
JOB_INPUT: Schema = {
    "if": {"type": "object"},
    "then": JOB_INPUT_OBJECT,
    "else": {"type": LITERAL_TYPES,
             "x-message": "an input is a literal (string, number, boolean) or a mapping "
                          "with type and path",
             "x-hint": "for data write `{type: uri_folder, path: azureml:<name>:<version>}`"},
}

OUTPUT_FIELDS = {"path": NONEMPTY, "mode": enum_ci("rw_mount", "upload", "direct", "mount"),
                 "name": NONEMPTY, "version": {"type": ["string", "integer", "number"]},
                 "description": STRING}
JOB_OUTPUT_OBJECT = by_type(
    {t: obj(OUTPUT_FIELDS) for t in ("uri_folder", "uri_file", "mltable", "mlflow_model",
                                     "custom_model", "triton_model")},
    default="uri_folder")
JOB_OUTPUT: Schema = {"anyOf": [{"type": "null"}, JOB_OUTPUT_OBJECT],
                      "x-message": "an output is empty (a default folder) or a mapping with "
                                   "type, mode and path"}
# In a pipeline step, an output may also be a binding such as ${{parent.outputs.model}}.
NODE_OUTPUT: Schema = {"anyOf": [{"type": "null"}, STRING, JOB_OUTPUT_OBJECT],
                       "x-message": "a step output is a binding '${{parent.outputs.<name>}}', "
                                    "empty, or a mapping with type, mode and path"}

RESOURCES = obj({
    "instance_count": INT, "instance_type": NONEMPTY, "shm_size": NONEMPTY,
    "docker_args": {"anyOf": [STRING, {"type": "array", "items": STRING}]},
    "locations": {"type": "array", "items": STRING}, "max_instance_count": INT,
    "properties": ANY_MAP,
})

COMMAND_LIMITS = obj({"timeout": INT})
PROCESS_COUNT = obj({"process_count_per_instance": INT})
DISTRIBUTION = by_type({
    "pytorch": PROCESS_COUNT,
    "mpi": PROCESS_COUNT,
    "tensorflow": obj({"worker_count": INT, "parameter_server_count": INT}),
    "ray": obj({"port": INT, "address": STRING, "include_dashboard": BOOL, "dashboard_port": INT,
                "head_node_additional_args": STRING, "worker_node_additional_args": STRING}),
})

MANAGED_IDENTITY = obj({"client_id": STRING, "object_id": STRING, "msi_resource_id": STRING})
IDENTITY = by_type({"user_identity": obj({}), "managed": MANAGED_IDENTITY,
                    "managed_identity": MANAGED_IDENTITY, "aml_token": obj({})})

SERVICE_COMMON = {"port": INT, "nodes": STRING, "properties": ANY_MAP,
                  "endpoint": ANY, "status": ANY, "error_message": ANY}
SERVICES = {"type": "object", "additionalProperties": by_type({
    "jupyter_lab": obj(SERVICE_COMMON),
    "ssh": obj({**SERVICE_COMMON, "ssh_public_keys": STRING}),
    "tensor_board": obj({**SERVICE_COMMON, "log_dir": STRING}),
    "vs_code": obj(SERVICE_COMMON),
})}

QUEUE_SETTINGS = obj({"job_tier": enum_ci("spot", "basic", "standard", "premium", "null", None),
                      "priority": enum_ci("low", "medium", "high")})

ENVIRONMENT_VARIABLES = {"type": "object",
                         "additionalProperties": {"type": ["string", "number", "boolean"]}}

JOB_ONLY_IN_COMPONENT = (
    "is a job setting, and a component cannot carry it (the SDK keeps it silently and it is never "
    "used): set it on the job or on the pipeline step that uses this component")
COMPONENT_UNKNOWN_HINTS = {k: f"'{k}' {JOB_ONLY_IN_COMPONENT}" for k in (
    "compute", "limits", "environment_variables", "experiment_name", "services", "queue_settings",
    "identity", "settings")}

# Read-only keys that `az ml job show` writes; the SDK drops them on load (SPEC §1.1).
JOB_READ_ONLY = {k: ANY for k in ("creation_context", "status", "id", "log_files", "parameters")}

BASE_JOB = {
    "$schema": STRING, "name": NONEMPTY, "display_name": STRING, "experiment_name": NONEMPTY,
    "description": STRING, "tags": TAG_MAP, "properties": TAG_MAP, "compute": NONEMPTY,
    "identity": REF["identity"], "services": REF["services"], **JOB_READ_ONLY,
}

COMMAND_FIELDS = {
    "command": NONEMPTY, "code": NONEMPTY, "environment": REF["environment"],
    "environment_variables": REF["environmentVariables"], "resources": REF["resources"],
    "distribution": REF["distribution"], "queue_settings": REF["queueSettings"],
}

COMMAND_JOB = obj({
    **BASE_JOB, **COMMAND_FIELDS, "type": {"enum": ["command"]},
    "limits": REF["commandLimits"], "inputs": REF["jobInputs"], "outputs": REF["jobOutputs"],
    "parent_job_name": STRING,
}, ("command", "environment"))

# ----------------------------------------------------------------------------- sweep
NUM = NUMBER
# The distributions and the parameters each one takes are validator.search_space's; this says
# only what type each parameter is, and the advice for a key that is not one.
PARAMETER_TYPES: dict[str, Schema] = {
    "values": {"type": "array", "items": {"type": ["string", "number", "boolean", "object"]},
               "minItems": 1, "x-hint": "values: [0.01, 0.1, 1.0]"},
    "upper": INT, "min_value": NUM, "max_value": NUM, "mu": NUM, "sigma": NUM, "q": NUM,
}
DISTRIBUTION_EXTRAS: dict[str, dict[str, Any]] = {
    "randint": {"x-unknown-hints": {
        "lower": "randint has no lower bound: it samples integers in [0, upper); shift the value "
                 "in the script, or use `choice` or `quniform` for another range"}},
}
DISTRIBUTIONS = {kind: obj({key: PARAMETER_TYPES[key] for key in keys}, keys, **DISTRIBUTION_EXTRAS.get(kind, {}))
                 for kind, keys in PARAMETERS.items()}
SEARCH_SPACE = {
    "type": "object", "minProperties": 1,
    "additionalProperties": by_type(
        DISTRIBUTIONS,
        **{"x-messages": {"type": "a search-space entry is a mapping with a distribution type"},
           "x-hint": "for example `lr: {type: choice, values: [0.01, 0.1]}` or "
                     "`lr: {type: uniform, min_value: 0.01, max_value: 0.1}`"}),
}
# The settings of each algorithm of validator.search_space.ALGORITHMS (grid and bayesian have none).
ALGORITHM_SETTINGS: dict[str, Schema] = {
    "random": obj({"seed": INT, "rule": enum_ci("random", "sobol"),
                   "logbase": {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"const": "e"}],
                               "x-message": "logbase is a positive number or the string 'e'"}}),
}
SAMPLING_ALGORITHM: Schema = {
    "if": {"type": "string"},
    "then": enum_ci(*ALGORITHMS),
    "else": by_type({name: ALGORITHM_SETTINGS.get(name, obj({})) for name in ALGORITHMS}),
}
OBJECTIVE = obj({"goal": enum_ci("maximize", "minimize"), "primary_metric": NONEMPTY},
                ("goal", "primary_metric"))
SWEEP_LIMITS = obj({"max_total_trials": INT, "max_concurrent_trials": INT, "timeout": INT,
                    "trial_timeout": INT}, ("max_total_trials",))
# The policies and their own keys come from validator.early_termination; here, each key's type,
# what a policy requires, and the hints for keys that are not there.
POLICY_KEY_TYPES = {"evaluation_interval": INT, "delay_evaluation": INT, "slack_factor": NUM, "slack_amount": NUM,
                    "truncation_percentage": INT}
POLICY_REQUIRED = {"truncation_selection": ("truncation_percentage",)}
POLICY_EXTRA = {"truncation_selection": {"x-unknown-hints": {
    "exclude_finished_jobs": "azure-ai-ml rejects this key although a how-to page mentions it; remove it "
                             "(aml-run honours it where this finding is suppressed: `# amllab: ignore[AML101]`)"}}}
EARLY_TERMINATION = by_type({
    name: obj({key: POLICY_KEY_TYPES[key] for key in (*own, *early_termination.TIMING)},
              POLICY_REQUIRED.get(name, ()), **POLICY_EXTRA.get(name, {}))
    for name, own in early_termination.POLICIES.items()
}, **{"x-messages": {"type": "early_termination is a mapping with a policy type "
                             f"({', '.join(early_termination.POLICIES)})"}})

SWEEP_CORE = {
    "sampling_algorithm": SAMPLING_ALGORITHM, "search_space": SEARCH_SPACE, "objective": OBJECTIVE,
    "limits": SWEEP_LIMITS, "early_termination": EARLY_TERMINATION,
}
TRIAL = obj(COMMAND_FIELDS, ("command", "environment"), **{
    "x-messages": {"type": "in a standalone sweep job, trial is an inline command "
                           "(command, code, environment); a component reference only works "
                           "in a sweep step of a pipeline"},
    "x-unknown-hints": {
        "inputs": "a sweep's inputs go at the sweep's top level, not under trial",
        "outputs": "a sweep's outputs go at the sweep's top level, not under trial",
        "limits": "the per-trial timeout is `limits.trial_timeout` at the sweep's top level",
    }})
SWEEP_JOB = obj({
    **BASE_JOB, **SWEEP_CORE, "type": {"enum": ["sweep"]}, "trial": TRIAL,
    "inputs": REF["jobInputs"], "outputs": REF["jobOutputs"], "resources": REF["resources"],
    "queue_settings": REF["queueSettings"],
}, ("type", "trial", "objective", "limits", "search_space"))

# ----------------------------------------------------------------------------- components
PARAM_COMMON = {"optional": BOOL, "description": STRING, "display_name": STRING}
NUMERIC_BOUND = {"type": ["number", "string"]}
PORT_MODES = ("mount", "download", "upload", "ro_mount", "rw_mount", "eval_mount", "eval_download",
              "direct", "link")
PORT_INPUT = obj({**PARAM_COMMON, "default": STRING, "mode": {"enum": list(PORT_MODES)}})
# Enum values are strings; YAML's unquoted True/False are accepted here (the service takes them as
# text, and AML547 warns), numbers are not (the SDK: "Not a valid string."). A boolean input may
# list them too: the SDK keeps `enum` on any parameter input.
PARAM_ENUM = {"type": "array", "items": {"type": ["string", "boolean"]}, "minItems": 1}
COMPONENT_INPUT = by_type({
    "integer": obj({**PARAM_COMMON, "default": {"type": ["integer", "number", "string"]},
                    "min": NUMERIC_BOUND, "max": NUMERIC_BOUND}),
    "number": obj({**PARAM_COMMON, "default": {"type": ["number", "string"]},
                   "min": NUMERIC_BOUND, "max": NUMERIC_BOUND}),
    "string": obj({**PARAM_COMMON, "default": {"type": ["string", "number", "boolean"]},
                   "enum": PARAM_ENUM}),
    "boolean": obj({**PARAM_COMMON, "default": {"type": ["boolean", "string"]}, "enum": PARAM_ENUM}),
    **{t: PORT_INPUT for t in ("uri_file", "uri_folder", "mltable", "mlflow_model", "custom_model",
                               "triton_model", "path")},
}, case_insensitive=False, type_hint="component input types are lower-case and case-sensitive: "
                                     "integer, number, string, boolean, uri_file, uri_folder, mltable, "
                                     "mlflow_model, custom_model, triton_model")
# `early_available` on a data output is refused by the SDK; AML546 says why (only primitive
# outputs can be), which helps more than "unknown key". `is_control` is no longer read by
# azure-ai-ml (1.35.2 keeps and drops it), but older specs carry it next to early_available.
PORT_OUTPUT = obj({"description": STRING, "mode": {"enum": list(PORT_MODES)}, "path": STRING,
                   "display_name": STRING, "early_available": BOOL})
PRIMITIVE_OUTPUT = obj({"description": STRING, "early_available": BOOL, "is_control": BOOL,
                        "display_name": STRING})
COMPONENT_OUTPUT = by_type({
    **{t: PORT_OUTPUT for t in ("uri_file", "uri_folder", "mltable", "mlflow_model", "custom_model",
                                "triton_model", "path")},
    **{t: PRIMITIVE_OUTPUT for t in ("number", "integer", "boolean", "string")},
}, case_insensitive=False)

COMPONENT_BASE = {
    "$schema": STRING, "name": NONEMPTY, "version": {"type": ["string", "integer", "number"]},
    "display_name": STRING, "description": STRING, "tags": STR_MAP, "is_deterministic": BOOL,
    "inputs": REF["componentInputs"], "outputs": REF["componentOutputs"], "properties": ANY_MAP,
}
COMMAND_COMPONENT_FIELDS = {
    **COMPONENT_BASE, "type": {"enum": ["command"]}, "command": NONEMPTY, "code": NONEMPTY,
    "environment": REF["environment"], "resources": REF["resources"],
    "distribution": REF["distribution"], "additional_includes": {"type": "array", "items": STRING},
}
COMMAND_COMPONENT = obj(COMMAND_COMPONENT_FIELDS, ("name", "command", "environment"),
                        **{"x-unknown-hints": COMPONENT_UNKNOWN_HINTS})
# An inline (anonymous) component in a pipeline step: no name needed. Its tags may be empty
# (azure-ai-ml 1.35.2 loads `tags: {a: }` here, unlike in a component file, and drops them when it
# registers the anonymous component).
INLINE_COMMAND_COMPONENT = obj({**COMMAND_COMPONENT_FIELDS, "tags": TAG_MAP}, ("command", "environment"),
                               **{"x-unknown-hints": COMPONENT_UNKNOWN_HINTS})

# ----------------------------------------------------------------------------- pipelines
# A step's numeric run settings may take their value from a pipeline input: the whole value is
# one `${{parent.inputs.<name>}}` (azure-ai-ml lets every step field but type, component, trial and
# inputs hold a binding, `support_data_binding_expression_for_fields`, and sends the text on; the
# SDK's recorded end-to-end runs have the service accept it for `process_count_per_instance` and
# a sweep step's `limits.max_total_trials`). A standalone job has no parent: it keeps numbers.
# `compute` (a string anyway) and search-space values are left as they are: the service refuses
# a bound `compute` and a binding inside `choice` values.
PARENT_INPUT_BINDING = (r"^\$\{\{\s*parent\.inputs\.[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
                        r"\s*\}\}$")


def bindable(key: str, base: Schema) -> Schema:
    """``base`` (an integer or a number), or a string that is exactly one pipeline-input binding."""
    what = "an integer" if base == INT else "a number"
    return {
        "if": {"type": "string"},
        "then": {"pattern": PARENT_INPUT_BINDING,
                 "x-message": f"'{key}' in a pipeline step is {what} or a whole binding to a pipeline "
                              "input, '${{parent.inputs.<name>}}'",
                 "x-hint": f"write `{key}: ${{{{parent.inputs.<name>}}}}` with nothing around it, "
                           f"or {what}"},
        "else": base,
    }


def in_step(schema: Any) -> Any:
    """``schema`` with every integer or number property of its mappings made :func:`bindable`."""
    if isinstance(schema, list):
        return [in_step(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: in_step(value) for key, value in schema.items()}
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {key: bindable(key, value) if value in (INT, NUMBER) else in_step(value)
                             for key, value in schema["properties"].items()}
    return out


NODE_REF = {name: {"$ref": f"#/$defs/{name}"}
            for name in ("nodeResources", "nodeDistribution", "nodeCommandLimits")}
NODE_COMMON = {
    "inputs": REF["nodeInputs"], "outputs": REF["nodeOutputs"], "compute": NONEMPTY,
    "display_name": STRING, "description": STRING, "comment": STRING, "tags": TAG_MAP,
    "properties": ANY_MAP, "identity": REF["identity"], "queue_settings": REF["queueSettings"],
    "resources": NODE_REF["nodeResources"],
}
COMMAND_NODE = obj({
    **NODE_COMMON, "component": {"anyOf": [NONEMPTY, REF["commandComponentBody"]],
                                 "x-message": "component is a file path, an 'azureml:' reference "
                                              "or an inline command component"},
    "command": NONEMPTY, "code": NONEMPTY, "environment": REF["environment"],
    "environment_variables": REF["environmentVariables"], "distribution": NODE_REF["nodeDistribution"],
    "limits": NODE_REF["nodeCommandLimits"], "services": REF["services"], "name": NONEMPTY,
    "experiment_name": NONEMPTY,
}, **{
    "anyOf": [{"required": ["component"]}, {"required": ["command"]}],
    "not": {"required": ["component", "command"]},
    "x-messages": {
        "anyOf": "a command step needs `component:` (a component file or reference) or an inline "
                 "`command:` with `environment:`",
        "not": "a command step has either `component:` or an inline `command:`, not both",
    }})
SWEEP_NODE = obj({
    **NODE_COMMON, **SWEEP_CORE, "limits": in_step(SWEEP_LIMITS),
    "trial": {"anyOf": [NONEMPTY, REF["commandComponentBody"]],
              "x-message": "trial is a component file, an 'azureml:' reference or an inline "
                           "command component"},
}, ("trial", "objective", "limits"))
PIPELINE_NODE = obj({
    **NODE_COMMON, "settings": ANY_MAP,
    "component": {"type": "string", "minLength": 1,
                  "x-message": "a pipeline step references a pipeline component (a file or an "
                               "'azureml:' reference); it cannot define one inline"},
}, ("component",))
NODE_TYPES = ["command", "sweep", "pipeline", "parallel", "spark", "import", "automl", "data_transfer"]
NODE: Schema = {
    "type": "object",
    "properties": {"type": {"enum": NODE_TYPES, "x-hint": "step types are exact and lower-case"}},
    "allOf": [
        {"if": {"anyOf": [{"not": {"required": ["type"]}},
                          {"properties": {"type": {"const": "command"}}}]},
         "then": {**COMMAND_NODE, "properties": {"type": ANY, **COMMAND_NODE["properties"]}}},
        {"if": {"properties": {"type": {"const": "sweep"}}, "required": ["type"]},
         "then": {**SWEEP_NODE, "properties": {"type": ANY, **SWEEP_NODE["properties"]}}},
        {"if": {"properties": {"type": {"const": "pipeline"}}, "required": ["type"]},
         "then": {**PIPELINE_NODE, "properties": {"type": ANY, **PIPELINE_NODE["properties"]}}},
    ],
}
NODE_INPUT: Schema = JOB_INPUT
JOBS = {"type": "object", "minProperties": 1, "additionalProperties": NODE}

SETTINGS = obj({
    "default_compute": NONEMPTY, "default_datastore": NONEMPTY,
    "continue_on_step_failure": BOOL, "force_rerun": BOOL, "on_init": STRING, "on_finalize": STRING,
}, **{"x-unknown-hints": {"*": "the SDK passes unknown settings on silently and the service "
                                "ignores them; settings are default_compute, default_datastore, "
                                "continue_on_step_failure and force_rerun"}})

PIPELINE_JOB = obj({
    **BASE_JOB, "type": {"enum": ["pipeline"]}, "jobs": REF["jobs"], "component": NONEMPTY,
    "inputs": REF["jobInputs"], "outputs": REF["jobOutputs"], "settings": SETTINGS,
}, ("type",), **{
    "anyOf": [{"required": ["jobs"]}, {"required": ["component"]}],
    "not": {"required": ["jobs", "component"]},
    "x-messages": {
        "anyOf": "a pipeline job needs `jobs:` (its steps) or `component:` (a pipeline component)",
        "not": "'jobs' and 'component' are mutually exclusive in a pipeline job: keep one",
    }})

PIPELINE_COMPONENT = obj({
    **COMPONENT_BASE, "type": {"enum": ["pipeline"]}, "jobs": REF["jobs"],
}, ("type", "name", "jobs"), **{"x-unknown-hints": COMPONENT_UNKNOWN_HINTS})

# ----------------------------------------------------------------------------- schedules
TRIGGER_TIMES = {"start_time": NONEMPTY, "end_time": NONEMPTY, "time_zone": NONEMPTY}
TRIGGER_HINTS = {"x-unknown-hints": {
    "timezone": "the key is `time_zone` (the reference page says `timezone`, but Azure ML rejects it)",
    "pattern": "the key is `schedule` (the reference page says `pattern`, but Azure ML rejects it)",
}}
WEEK_DAYS = enum_ci("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
TRIGGER = by_type({
    "cron": obj({"expression": NONEMPTY, **TRIGGER_TIMES}, ("expression",), **TRIGGER_HINTS),
    "recurrence": obj({
        "frequency": enum_ci("minute", "hour", "day", "week", "month"),
        "interval": INT,
        "schedule": obj({"hours": one_or_many(INT), "minutes": one_or_many(INT),
                         "week_days": one_or_many(WEEK_DAYS), "month_days": one_or_many(INT)},
                        ("hours", "minutes")),
        **TRIGGER_TIMES,
    }, ("frequency", "interval"), **TRIGGER_HINTS),
})
PIPELINE_OVERRIDES = obj({
    "job": NONEMPTY, "experiment_name": NONEMPTY, "display_name": STRING, "description": STRING,
    "tags": TAG_MAP, "properties": TAG_MAP, "inputs": REF["jobInputs"], "outputs": REF["jobOutputs"],
    "settings": SETTINGS, "compute": NONEMPTY, "identity": REF["identity"],
}, ("job",), **{"x-unknown-hints": {
    "jobs": "create_job cannot hold a whole pipeline: put it in a file and write `job: ./pipeline.yml`",
}})
COMMAND_OVERRIDES = obj({
    "job": NONEMPTY, **{k: v for k, v in BASE_JOB.items() if k not in JOB_READ_ONLY and k != "$schema"},
    "environment": REF["environment"], "environment_variables": REF["environmentVariables"],
    "resources": REF["resources"], "distribution": REF["distribution"],
    "limits": REF["commandLimits"], "inputs": REF["jobInputs"], "outputs": REF["jobOutputs"],
    "queue_settings": REF["queueSettings"],
}, ("job",), **{"x-unknown-hints": {
    "command": "a schedule cannot change a job's command: edit the job file instead",
    "code": "a schedule cannot change a job's code: edit the job file instead",
}})
CREATE_JOB: Schema = {
    "if": {"type": "string"},
    "then": NONEMPTY,
    "else": {
        "type": "object",
        "properties": {"type": {"enum": ["pipeline", "command", "spark"]}},
        "allOf": [
            {"if": {"anyOf": [{"not": {"required": ["type"]}},
                              {"properties": {"type": {"const": "pipeline"}}}]},
             "then": {**PIPELINE_OVERRIDES, "properties": {"type": ANY, **PIPELINE_OVERRIDES["properties"]}}},
            {"if": {"properties": {"type": {"const": "command"}}, "required": ["type"]},
             "then": {**COMMAND_OVERRIDES, "properties": {"type": ANY, **COMMAND_OVERRIDES["properties"]}}},
        ],
        "x-messages": {"type": "create_job is a job file path, an 'azureml:<job>' reference, or a "
                               "mapping with `job:` and overrides"},
    },
}

# A schedule runs one action (the SDK picks the class by key: `create_monitor` -> MonitorSchedule,
# `import_data` -> ImportDataSchedule, else JobSchedule; the other two keys are then "Unknown
# field."). Shapes from azure-ai-ml 1.35.2: _schema/_data_import/, _schema/monitoring/.
DATA_IMPORT_SOURCE = by_type({
    "database": obj({"connection": NONEMPTY, "query": NONEMPTY, "table_name": NONEMPTY,
                     "stored_procedure": NONEMPTY,
                     "stored_procedure_params": {"type": "array", "items": ANY_MAP}}, ("connection",)),
    "file_system": obj({"connection": NONEMPTY, "path": NONEMPTY}, ("connection",)),
}, default="file_system", **{"x-messages": {"type": "source is a mapping with type (database or "
                                                     "file_system) and connection"}})
DATA_IMPORT = obj({
    "$schema": STRING, "name": NONEMPTY, "version": {"type": ["string", "integer", "number"]},
    "description": STRING, "tags": TAG_MAP, "datastore": STRING, "auto_delete_setting": ANY_MAP,
    "type": {"enum": ["uri_file", "uri_folder", "mltable"],
             "x-hint": "the imported data is a uri_file, uri_folder or mltable (lower-case)"},
    "path": NONEMPTY, "source": DATA_IMPORT_SOURCE,
}, ("name", "path", "source"))
IMPORT_DATA: Schema = {
    "if": {"type": "string"},
    "then": NONEMPTY,
    "else": REF["dataImport"],
}
MONITOR_SIGNAL_TYPES = ("data_drift", "data_quality", "prediction_drift", "feature_attribution_drift",
                        "model_performance", "custom", "generation_safety_quality",
                        "generation_token_statistics")
# A signal's own settings (reference_data, features, metric_thresholds...) are not checked:
# only that it is a mapping with a known type (AML649 says so with -v).
MONITOR_SIGNAL = by_type({name: {"type": "object", "properties": {}} for name in MONITOR_SIGNAL_TYPES},
                         **{"x-messages": {"type": "a monitoring signal is a mapping with a signal type"}})
CREATE_MONITOR = obj({
    "compute": obj({"instance_type": NONEMPTY,
                    "runtime_version": {**NONEMPTY, "x-hint": 'quote the version: `runtime_version: "3.4"`'},
                    "compute_type": STRING},
                   ("instance_type", "runtime_version"), **{
                       "x-messages": {"type": "compute of a monitor is a serverless Spark mapping with "
                                              "instance_type and runtime_version"}}),
    "monitoring_target": obj({
        "ml_task": {"enum": [*enum_ci("classification", "regression", "questionanswering")["enum"],
                             "QuestionAnswering"],
                    "x-hint": "ml_task is classification, regression or questionanswering (one word)"},
        "endpoint_deployment_id": NONEMPTY, "model_id": NONEMPTY,
    }),
    "monitoring_signals": {"type": "object", "additionalProperties": MONITOR_SIGNAL},
    "alert_notification": {
        "if": {"type": "string"},
        "then": {**enum_ci("azmonitoring"), "x-hint": "alert by e-mail with `emails: [...]`"},
        "else": obj({"emails": {"type": "array", "items": NONEMPTY}}, **{
            "x-messages": {"type": "alert_notification is `azmonitoring` or a mapping with emails"}}),
    },
}, ("compute",), **{"x-messages": {"type": "create_monitor is a mapping with compute, "
                                           "monitoring_target, monitoring_signals and alert_notification"}})
SCHEDULE_ACTIONS = ("create_job", "import_data", "create_monitor")
SCHEDULE_CLASSES = {"import_data": "data import", "create_monitor": "monitor"}
SCHEDULE = obj({
    "$schema": STRING, "name": NONEMPTY, "display_name": STRING, "description": STRING,
    "tags": TAG_MAP, "properties": TAG_MAP, "trigger": TRIGGER, "create_job": CREATE_JOB,
    "import_data": IMPORT_DATA, "create_monitor": CREATE_MONITOR,
    "is_enabled": ANY, "provisioning_state": ANY, "creation_context": ANY,
}, ("name", "trigger"), **{
    "anyOf": [{"required": [action]} for action in SCHEDULE_ACTIONS],
    "allOf": [{"not": {"required": [first, second]},
               "x-messages": {"not": f"a schedule runs one action: '{first}' and '{second}' cannot both be "
                                     f"set (Azure ML reads the file as a {SCHEDULE_CLASSES[second]} "
                                     f"schedule and refuses '{first}')"}}
              for index, first in enumerate(SCHEDULE_ACTIONS) for second in SCHEDULE_ACTIONS[index + 1:]],
    "x-messages": {"anyOf": "a schedule needs its action: `create_job` (a job to submit), `import_data` "
                            "(a data import) or `create_monitor` (a model monitor)"},
    "x-hint": "for example `create_job: ./pipeline.yml`",
})

# ----------------------------------------------------------------------------- assembly
DEFS: dict[str, Schema] = {
    "environment": ENVIRONMENT,
    "environmentVariables": ENVIRONMENT_VARIABLES,
    "jobInputs": {"type": "object", "additionalProperties": JOB_INPUT},
    "jobOutputs": {"type": "object", "additionalProperties": JOB_OUTPUT},
    "nodeInputs": {"type": "object", "additionalProperties": NODE_INPUT},
    "nodeOutputs": {"type": "object", "additionalProperties": NODE_OUTPUT},
    "resources": RESOURCES,
    "distribution": DISTRIBUTION,
    "identity": IDENTITY,
    "services": SERVICES,
    "queueSettings": QUEUE_SETTINGS,
    "commandLimits": COMMAND_LIMITS,
    "nodeResources": in_step(RESOURCES),
    "nodeDistribution": in_step(DISTRIBUTION),
    "nodeCommandLimits": in_step(COMMAND_LIMITS),
    "componentInputs": {"type": "object", "additionalProperties": COMPONENT_INPUT},
    "componentOutputs": {"type": "object", "additionalProperties": COMPONENT_OUTPUT},
    "jobs": JOBS,
    "commandComponentBody": INLINE_COMMAND_COMPONENT,
    "dataImport": DATA_IMPORT,
}

KINDS: dict[str, tuple[str, Schema]] = {
    "commandJob": ("Azure ML command job", COMMAND_JOB),
    "sweepJob": ("Azure ML sweep job", SWEEP_JOB),
    "pipelineJob": ("Azure ML pipeline job", PIPELINE_JOB),
    "commandComponent": ("Azure ML command component", COMMAND_COMPONENT),
    "pipelineComponent": ("Azure ML pipeline component", PIPELINE_COMPONENT),
    "schedule": ("Azure ML schedule", SCHEDULE),
}


def _used_refs(node: Any, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.rsplit("/", 1)[-1]
            if name not in found:
                found.add(name)
                _used_refs(DEFS[name], found)
        for value in node.values():
            _used_refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _used_refs(value, found)
    return found


def render(kind: str) -> str:
    title, body = KINDS[kind]
    used = sorted(_used_refs(body, set()))
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE_URL}/{kind}.schema.json",
        "title": title,
        "description": "Generated by amllab's tools/build_schemas.py; do not edit.",
        **body,
        "$defs": {name: DEFS[name] for name in used},
    }
    return json.dumps(document, indent=1, sort_keys=False) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for kind in KINDS:
        target = OUT / f"{kind}.schema.json"
        text = render(kind)
        if check:
            if not target.exists() or target.read_text() != text:
                stale.append(target.name)
        else:
            tmp = target.with_suffix(".tmp")
            tmp.write_text(text)
            tmp.replace(target)
    if stale:
        print("stale schemas (run python tools/build_schemas.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
