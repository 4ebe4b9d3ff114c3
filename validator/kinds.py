"""Tell which kind of Azure ML spec a document is.

Order, as the service and the SDK see a file: ``$schema`` names the kind when present (the SDK
ignores it, so a mismatch with ``type`` is reported); then ``type`` (the SDK's dispatch key,
``command`` when absent); then the shape, which is how a component (name, version, typed
inputs) is told from a job. YAML that is not an Azure ML spec at all (a CI workflow, a
docker-compose file) is skipped without a word; other Azure ML kinds (environments, data,
endpoints, computes...) are recognised and skipped with an info line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .diagnostic import Diagnostic, Severity
from .loader import Document
from .suggest import closest

KINDS = ("commandJob", "sweepJob", "pipelineJob", "commandComponent", "pipelineComponent", "schedule")

KIND_TITLES = {
    "commandJob": "command job",
    "sweepJob": "sweep job",
    "pipelineJob": "pipeline job",
    "commandComponent": "command component",
    "pipelineComponent": "pipeline component",
    "schedule": "schedule",
}

# Azure ML kinds amllab recognises but does not check (file name stem of their $schema URL).
OTHER_SCHEMAS = {
    "sparkjob": "Spark job", "sparkcomponent": "Spark component", "automljob": "AutoML job",
    "parallelcomponent": "parallel component", "datatransfercomponent": "data transfer component",
    "importjob": "import job", "dataimport": "data import", "environment": "environment",
    "data": "data asset", "model": "model",
    "amlcompute": "compute cluster", "computeinstance": "compute instance", "vmcompute": "VM compute",
    "kubernetescompute": "Kubernetes compute", "managedonlineendpoint": "online endpoint",
    "kubernetesonlineendpoint": "online endpoint", "batchendpoint": "batch endpoint",
    "managedonlinedeployment": "online deployment", "kubernetesonlinedeployment": "online deployment",
    "batchdeployment": "batch deployment", "modelbatchdeployment": "batch deployment",
    "pipelinecomponentbatchdeployment": "batch deployment", "deploymenttemplate": "deployment template",
    "mltable": "MLTable", "workspace": "workspace", "registry": "registry", "datastore": "datastore",
    "azureblob": "datastore", "azurefile": "datastore", "azuredatalakegen1": "datastore",
    "azuredatalakegen2": "datastore", "featureset": "feature set", "featurestore": "feature store",
    "featurestoreentity": "feature store entity", "connection": "connection",
    "capabilityhost": "capability host", "index": "index", "serverlessendpoint": "serverless endpoint",
    "marketplacesubscription": "marketplace subscription", "aisearch": "connection",
}

_SCHEMA_STEMS = {
    "commandjob": "commandJob", "sweepjob": "sweepJob", "pipelinejob": "pipelineJob",
    "commandcomponent": "commandComponent", "pipelinecomponent": "pipelineComponent",
    "schedule": "schedule",
    # A model-monitoring schedule (`create_monitor`) is a schedule: its trigger is checked alike.
    "monitorschedule": "schedule",
}

JOB_TYPES = {"command": "commandJob", "sweep": "sweepJob", "pipeline": "pipelineJob"}
OTHER_JOB_TYPES = {"spark", "parallel", "automl", "import", "data_transfer", "pipeline_component_batch"}
ASSET_TYPES = {"uri_file", "uri_folder", "mltable", "custom_model", "mlflow_model", "triton_model"}
COMPUTE_TYPES = {"amlcompute", "computeinstance", "kubernetes", "virtualmachine", "synapsespark",
                 "managed", "attached", "aisearch"}

# Kinds whose files must say `type:`; the SDK's default type is command.
_NEEDS_TYPE = {"pipelineJob": "pipeline", "sweepJob": "sweep", "pipelineComponent": "pipeline"}

_PARAMETER_TYPES = {"integer", "number", "string", "boolean"}
_COMPONENT_ONLY_KEYS = {"version", "is_deterministic", "additional_includes"}
_COMPONENT_INPUT_KEYS = {"optional", "default", "min", "max", "enum"}


@dataclass
class Detection:
    """What a document is: one of :data:`KINDS`, or a reason to skip it."""

    kind: str | None = None
    skip_reason: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # JSON pointers whose problem a diagnostic here already explains (the schema check skips them).
    covered: set[str] = field(default_factory=set)


def schema_stem(url: str) -> str:
    stem = url.rstrip("/").rsplit("/", 1)[-1].lower()
    for suffix in (".schema.json", ".json"):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


def _looks_like_component(data: dict) -> bool:
    if _COMPONENT_ONLY_KEYS & data.keys():
        return True
    for section in ("inputs", "outputs"):
        ports = data.get(section)
        if isinstance(ports, dict):
            for port in ports.values():
                if isinstance(port, dict) and (
                    _COMPONENT_INPUT_KEYS & port.keys()
                    or (isinstance(port.get("type"), str) and port["type"] in _PARAMETER_TYPES)
                ):
                    return True
    return False


def _aml_markers(data: dict) -> list[str]:
    """Keys that only an Azure ML training spec would have at its top level."""
    markers = [k for k in ("trial", "search_space", "sampling_algorithm", "early_termination",
                           "create_job", "objective") if k in data]
    for key in ("environment", "compute", "component"):
        value = data.get(key)
        if isinstance(value, str) and value.startswith("azureml:"):
            markers.append(key)
    if "command" in data and "environment" in data:
        markers.append("command")
    return markers


def detect(document: Document) -> Detection:
    data = document.data
    if not isinstance(data, dict):
        return Detection(skip_reason="top level is not a mapping, so not an Azure ML spec")

    schema_url = data.get("$schema")
    schema_kind: str | None = None
    if isinstance(schema_url, str):
        stem = schema_stem(schema_url)
        schema_kind = _SCHEMA_STEMS.get(stem)
        if schema_kind is None:
            title = OTHER_SCHEMAS.get(stem)
            if title is None and "azureml" in schema_url.lower():
                title = f"'{stem}'"
            if title is not None:
                return _other(document, title)

    type_value = data.get("type")
    if type_value is None and schema_kind in _NEEDS_TYPE:
        wanted = _NEEDS_TYPE[schema_kind]
        diagnostic = document.diagnostic(
            "AML011", f"$schema says {schema_kind} but the file has no 'type'; "
            "without it Azure ML loads the file as a command job",
            ("$schema",), hint=f"add `type: {wanted}`")
        return Detection(kind=schema_kind, diagnostics=[diagnostic], covered={"/type"})
    kind, problem = _kind_from_type(document, data, type_value)
    if problem is not None:
        return problem
    if kind is None and schema_kind is None:
        return _unknown_or_skip(document, data)

    if schema_kind is not None:
        mismatch = _schema_mismatch(document, schema_kind, kind, type_value)
        if mismatch is not None:
            kind, diagnostic = mismatch
            return Detection(kind=kind, diagnostics=[diagnostic])
        kind = schema_kind
    return Detection(kind=kind)


def _other(document: Document, title: str) -> Detection:
    diagnostic = document.diagnostic(
        "AML013", f"{title} spec: amllab checks jobs, components and schedules, so this file is skipped",
        severity=Severity.INFO)
    return Detection(skip_reason=f"{title} spec (not checked)", diagnostics=[diagnostic])


def _kind_from_type(document: Document, data: dict, type_value: Any) -> tuple[str | None, Detection | None]:
    if type_value is None:
        if "trigger" in data or "create_job" in data or "create_monitor" in data:
            return "schedule", None
        if "trial" in data:
            return None, _needs_type(document, "sweep", "trial")
        if "jobs" in data and _aml_markers(data) or "jobs" in data and "settings" in data:
            return None, _needs_type(document, "pipeline", "jobs")
        if "command" in data:
            return ("commandComponent" if _looks_like_component(data) else "commandJob"), None
        return None, None
    if not isinstance(type_value, str):
        return None, None
    if type_value in ("command", "pipeline"):
        if _looks_like_component(data):
            return ("commandComponent" if type_value == "command" else "pipelineComponent"), None
        return JOB_TYPES[type_value], None
    if type_value == "sweep":
        return "sweepJob", None
    if type_value in ("cron", "recurrence"):
        return None, None
    lowered = type_value.lower()
    if lowered in OTHER_JOB_TYPES:
        return None, _other(document, f"{type_value} job or component")
    if lowered in ASSET_TYPES and "path" in data and "command" not in data:
        return None, _other(document, "model" if lowered.endswith("model") else "data asset")
    if lowered in COMPUTE_TYPES:
        return None, _other(document, "compute")
    if lowered in JOB_TYPES:
        diagnostic = document.diagnostic(
            "AML010", f"type '{type_value}' is not a job type: types are lower-case, so write '{lowered}'",
            ("type",), hint=f"type: {lowered}")
        return None, Detection(diagnostics=[diagnostic])
    if _aml_markers(data) or "command" in data:
        close = closest(lowered, JOB_TYPES)
        suggestion = f"; did you mean '{close}'?" if close else ""
        diagnostic = document.diagnostic(
            "AML010", f"unknown type '{type_value}'{suggestion} amllab checks command, sweep and pipeline "
            "jobs, their components and schedules", ("type",),
            hint="type: command | sweep | pipeline")
        return None, Detection(diagnostics=[diagnostic])
    return None, None


def _needs_type(document: Document, type_name: str, key: str) -> Detection:
    diagnostic = document.diagnostic(
        "AML010",
        f"cannot tell what kind of spec this is: it has '{key}' but no 'type'; "
        f"without 'type' Azure ML loads it as a command job",
        (key,), key=True, hint=f"add `type: {type_name}` at the top level")
    return Detection(diagnostics=[diagnostic])


def _unknown_or_skip(document: Document, data: dict) -> Detection:
    if ("image" in data or "build" in data or "conda_file" in data) and "command" not in data:
        return _other(document, "environment")
    if "endpoint_name" in data or "auth_mode" in data:
        return _other(document, "endpoint or deployment")
    markers = _aml_markers(data)
    if markers:
        diagnostic = document.diagnostic(
            "AML010",
            f"this looks like an Azure ML spec (it has {', '.join(repr(m) for m in markers)}) "
            "but its kind cannot be told",
            (markers[0],), key=True,
            hint="add a `$schema:` line (for example "
                 "https://azuremlschemas.azureedge.net/latest/commandJob.schema.json) or `type: command`")
        return Detection(diagnostics=[diagnostic])
    return Detection(skip_reason="not an Azure ML spec (no $schema, type, command, trial or jobs)")


def _schema_mismatch(document: Document, schema_kind: str, kind: str | None,
                     type_value: Any) -> tuple[str, Diagnostic] | None:
    """None when ``$schema`` and ``type`` agree; else the kind to check as and the finding."""
    if kind is None or kind == schema_kind:
        return None
    job_of = {"commandComponent": "commandJob", "pipelineComponent": "pipelineJob"}
    if job_of.get(schema_kind) == kind or job_of.get(kind) == schema_kind:
        # Same type, the shape just could not tell job from component: $schema decides.
        return None
    shown_type = f"'type: {type_value}'" if type_value is not None else f"its keys ({KIND_TITLES[kind]})"
    stem = kind[0].lower() + kind[1:]
    return kind, document.diagnostic(
        "AML011", f"$schema names {schema_kind} but {shown_type} makes this a {KIND_TITLES[kind]}; "
        "Azure ML goes by 'type' and ignores $schema, so editors and the service disagree",
        ("$schema",),
        hint=f"$schema: https://azuremlschemas.azureedge.net/latest/{stem}.schema.json")


def kind_title(kind: str) -> str:
    return KIND_TITLES.get(kind, kind)
