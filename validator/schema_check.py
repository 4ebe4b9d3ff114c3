"""Validate a document against its kind's bundled JSON Schema and turn the errors into
diagnostics a person can act on.

jsonschema reports what failed in schema terms ("'2' is not of type 'integer'", and for a
union, every alternative). This module speaks spec terms instead: one message per problem,
at the offending key or value, naming the expected form and, for a misspelt key, the key that
was meant. Union failures are collapsed to the alternative the value was evidently aiming at.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from .diagnostic import Diagnostic, Fix
from .edits import replace_scalar
from .kinds import kind_title
from .loader import Document, Path_, to_pointer
from .suggest import closest

_JSON_TYPE_NAMES = {
    "string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
    "object": "a mapping", "array": "a list", "null": "empty",
}


_SCHEMAS = Path(__file__).parent / "schemas"


@lru_cache(maxsize=None)
def load_schema(kind: str) -> dict:
    # Read beside this module (the schemas are package data next to it): importlib.resources
    # costs a few milliseconds of start-up for the same bytes.
    return json.loads((_SCHEMAS / f"{kind}.schema.json").read_bytes())


@lru_cache(maxsize=None)
def _validator(kind: str) -> Any:
    from jsonschema import Draft202012Validator  # heavy: only when a file needs checking

    return Draft202012Validator(load_schema(kind))


@lru_cache(maxsize=None)
def fast_validator(kind: str) -> Any:
    from .fastcheck import compile_schema

    return compile_schema(load_schema(kind))


def check_schema(document: Document) -> list[Diagnostic]:
    assert document.kind is not None
    if fast_validator(document.kind)(document.data):
        return []  # the common case: no need to load jsonschema to explain anything
    validator = _validator(document.kind)
    findings: dict[tuple, Diagnostic] = {}
    for error in validator.iter_errors(document.data):
        for diagnostic in _translate(error, document):
            findings.setdefault((diagnostic.line, diagnostic.column, diagnostic.message), diagnostic)
    return sorted(findings.values())


# ----------------------------------------------------------------------------- descriptions
def _describe_value(value: Any) -> str:
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string '{shown}'"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _expected(types: Any) -> str:
    if isinstance(types, str):
        types = [types]
    names = [_JSON_TYPE_NAMES.get(t, t) for t in types]
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


def where_text(path: Path_, kind: str | None) -> str:
    """'in the command job' for the top level, else 'in jobs.train.inputs'."""
    if not path:
        return f"in the {kind_title(kind)}" if kind else "at the top level"
    return "in '" + dotted(path) + "'"


def dotted(path: Path_) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _name_of(path: Path_) -> str:
    for part in reversed(path):
        if isinstance(part, str):
            return part
    return "value"


def _canonical(values: Iterable[Any]) -> list[str]:
    """The documented spellings of an enum: drop the upper-case and CamelCase variants."""
    shown = []
    for value in values:
        if value is None:
            continue
        text = str(value)
        if text == text.lower() and text not in shown:
            shown.append(text)
    return shown


# ----------------------------------------------------------------------------- translation
def _translate(error: Any, document: Document) -> list[Diagnostic]:
    schema = error.schema if isinstance(error.schema, dict) else {}
    keyword = error.validator
    path: Path_ = tuple(error.absolute_path)

    if keyword in ("anyOf", "oneOf"):
        chosen = _aimed_alternative(error)
        if chosen is not None:
            out: list[Diagnostic] = []
            for sub in chosen:
                out.extend(_translate(sub, document))
            if out:
                return out

    override = (schema.get("x-messages") or {}).get(keyword) or schema.get("x-message")
    hint = schema.get("x-hint")

    if keyword == "additionalProperties":
        return _unknown_keys(error, document, path, schema)
    if keyword == "required":
        return _missing_keys(error, document, path)
    if override:
        code = "AML105" if keyword == "pattern" else "AML107" if keyword in ("anyOf", "oneOf", "not") else (
            "AML103" if keyword == "type" else "AML104")
        where, at_key = path, False
        if keyword in ("anyOf", "oneOf", "not") and isinstance(error.instance, dict):
            # A mapping with conflicting or missing keys: point at the second of two conflicting
            # keys, else at the mapping's own key (the step name), not at its first line.
            at_key = True
            conflicting = (error.validator_value or {}).get("required", []) if keyword == "not" else []
            present = [k for k in conflicting if k in error.instance]
            if present:
                where = path + (present[-1],)
        fix = _prefix_fix(document, path, error) if keyword == "pattern" else None
        return [document.diagnostic(code, override, where, key=at_key, hint=hint, fix=fix)]
    name = _name_of(path)
    value = error.instance
    if keyword == "type":
        return [document.diagnostic(
            "AML103", f"'{name}' must be {_expected(error.validator_value)}, not {_describe_value(value)}",
            path, hint=hint)]
    if keyword in ("enum", "const"):
        allowed = error.validator_value if keyword == "enum" else [error.validator_value]
        canonical = _canonical(allowed)
        message = f"'{value}' is not a valid {name}" if not isinstance(value, (dict, list)) else (
            f"{_describe_value(value)} is not a valid {name}")
        close = closest(str(value), canonical)
        fix = None
        if close:
            message += f"; did you mean '{close}'?"
            fix = _enum_fix(document, path, value, close)
        if len(canonical) == 1:
            message += f" (expected '{canonical[0]}')"
        else:
            message += " (expected one of: " + ", ".join(canonical) + ")"
        return [document.diagnostic("AML104", message, path, hint=hint, fix=fix)]
    if keyword in ("minLength", "minItems", "minProperties"):
        what = {"minLength": "must not be empty", "minItems": "must list at least one item",
                "minProperties": "must define at least one entry"}[keyword]
        return [document.diagnostic("AML106", f"'{name}' {what}", path, hint=hint)]
    if keyword == "pattern":
        return [document.diagnostic("AML105", f"'{value}' is not a valid form for '{name}'", path, hint=hint,
                                    fix=_prefix_fix(document, path, error))]
    if keyword in ("anyOf", "oneOf"):
        return [document.diagnostic(
            "AML107", f"'{name}' has a form that fits none of the accepted shapes ({_describe_value(value)})",
            path, hint=hint)]
    return [document.diagnostic("AML107", f"'{name}': {error.message}", path, hint=hint)]


def _aimed_alternative(error: Any) -> list | None:
    """The errors of the one union alternative whose JSON type fits the value, if exactly one does."""
    groups: dict[int, list] = {}
    for sub in error.context or ():
        groups.setdefault(sub.relative_schema_path[0], []).append(sub)
    base = len(error.absolute_path)
    fitting = []
    for index, subs in groups.items():
        type_miss = any(s.validator == "type" and len(s.absolute_path) == base for s in subs)
        if not type_miss:
            fitting.append(index)
    if len(fitting) == 1:
        return groups[fitting[0]]
    return None


def ignored_here(document: Document, path: Path_) -> bool:
    """Whether an unknown key in the mapping at ``path`` is kept and ignored rather than refused.

    azure-ai-ml loads these mappings with marshmallow's ``unknown=INCLUDE``: a command or
    pipeline component's top level and a command component's `distribution` and `resources`,
    a pipeline step that uses a component (`component:`, or a sweep step's `trial:`), and
    a pipeline job's `settings`. The key is sent on and the service ignores it, so the job runs
    without the setting (a `compute:` in a component, `default_datestore:`). Everywhere else,
    in a job, an input, an inline environment or an inline command step, the SDK refuses the
    file ("Unknown field."). Measured with azure-ai-ml 1.35.2 (`load_job` / `load_component`
    and `_validate()`); Microsoft's own examples carry such keys in pipelines that run. A key
    there that is a near miss of a real one (`default_datestore`, `comptue`) is still AML101:
    the setting it was meant to be silently never applies."""
    kind = document.kind
    if kind in ("commandComponent", "pipelineComponent") and path == ():
        return True
    if kind == "commandComponent" and path in (("distribution",), ("resources",)):
        return True
    if kind == "pipelineJob" and path == ("settings",):
        return True
    if kind in ("pipelineJob", "pipelineComponent") and len(path) == 2 and path[0] == "jobs":
        jobs = document.data.get("jobs") if isinstance(document.data, dict) else None
        step = jobs.get(path[1]) if isinstance(jobs, dict) else None
        if not isinstance(step, dict):
            return False
        # A sweep step names its component under `trial`; a `component:` there is a mistake of
        # its own (AML101 helps more than "ignored" on a step that fails for lack of `trial`).
        return ("trial" if step.get("type") == "sweep" else "component") in step
    return False


def _unknown_keys(error: Any, document: Document, path: Path_, schema: dict) -> list[Diagnostic]:
    instance = error.instance if isinstance(error.instance, dict) else {}
    known = list((schema.get("properties") or {}).keys())
    advice = schema.get("x-unknown-hints") or {}
    ignored = ignored_here(document, path)
    out = []
    for key in instance:
        if key in known:
            continue
        message = f"unknown key '{key}' {where_text(path, document.kind)}"
        candidates = [k for k in known if not k.startswith("$")]
        close = closest(str(key), candidates, cutoff=0.7)
        misspelt = bool(close) and key not in advice
        # A stray key the service ignores is a warning (AML108); a misspelt one stays an error
        # even there: the setting it was meant to be silently never applies.
        if ignored and not misspelt:
            message += ", which Azure ML accepts and ignores"
        hint = advice.get(key) or advice.get("*")
        fix = None
        if misspelt:
            message += f"; did you mean '{close}'?"
            fix = _key_fix(document, path, instance, str(key), close, candidates)
            if ignored:
                message += f" (Azure ML ignores '{key}' here, so '{close}' is never set)"
        elif hint is None:
            hint = "allowed keys here: " + ", ".join(sorted(candidates))
        # Where the key is ignored, azure-ai-ml sends the spec on (measured as above); elsewhere
        # it refuses the file.
        out.append(document.diagnostic("AML108" if ignored and not misspelt else "AML101", message,
                                       path + (key,), key=True, hint=hint,
                                       service="accepts" if ignored else "rejects", fix=fix))
    return out


# ----------------------------------------------------------------------------- fixes
def _key_fix(document: Document, path: Path_, instance: dict, key: str, close: str,
             candidates: list[str]) -> Fix | None:
    """Rename a misspelt key, when the mapping does not set the meant key already and the
    spelling is near that one key only."""
    if close in instance:
        return None
    near = [c for c in candidates if c.lower() == key.lower()] or difflib.get_close_matches(
        key, candidates, n=2, cutoff=0.7)
    if near != [close]:
        return None
    edit = replace_scalar(document, path + (key,), close, key=True)
    return Fix((edit,), title=f"rename '{key}' to '{close}'") if edit else None


def _enum_fix(document: Document, path: Path_, value: Any, close: str) -> Fix | None:
    """Replace an invalid enum value by the closest allowed one: unsafe, it changes the value."""
    if not isinstance(value, str):
        return None
    edit = replace_scalar(document, path, close)
    return Fix((edit,), safe=False, title=f"replace '{value}' with '{close}'") if edit else None


# An asset written as a bare name, name:version or name@label: the `azureml:` form without its
# prefix. A path (`./env.yml`), a URL or anything with spaces is not one.
_BARE_ASSET = re.compile(r"(?:/subscriptions/\S+|[A-Za-z0-9][A-Za-z0-9_.-]*(?::[A-Za-z0-9_.-]+|@[A-Za-z0-9_.-]+)?)")


def _prefix_fix(document: Document, path: Path_, error: Any) -> Fix | None:
    """Add the missing `azureml:` prefix to a reference whose pattern then matches."""
    value = error.instance
    pattern = error.validator_value if error.validator == "pattern" else None
    if (not isinstance(value, str) or not isinstance(pattern, str) or "azureml" not in pattern
            or not _BARE_ASSET.fullmatch(value) or value.lower().endswith((".yml", ".yaml"))
            or re.search(pattern, "azureml:" + value) is None):
        return None
    edit = replace_scalar(document, path, "azureml:" + value)
    return Fix((edit,), title=f"write 'azureml:{value}'") if edit else None


def _missing_keys(error: Any, document: Document, path: Path_) -> list[Diagnostic]:
    instance = error.instance if isinstance(error.instance, dict) else {}
    missing = [k for k in error.validator_value if k not in instance]
    out = []
    for key in missing:
        message = f"missing required key '{key}' {where_text(path, document.kind)}"
        example = MISSING_KEY_EXAMPLES.get(key)
        diagnostic = document.diagnostic("AML102", message, path, key=True,
                                         hint=f"for example `{example}`" if example else None)
        # Positioned at the mapping, but it is the absent key the finding is about.
        out.append(replace(diagnostic, pointer=to_pointer(path + (key,))))
    return out


MISSING_KEY_EXAMPLES = {
    "command": "command: python train.py --data ${{inputs.data}}",
    "environment": "environment: azureml:<name>:<version>",
    "type": "type: command",
    "trial": "trial: {command: python train.py, environment: azureml:<name>:<version>}",
    "objective": "objective: {goal: maximize, primary_metric: auc}",
    "limits": "limits: {max_total_trials: 20}",
    "max_total_trials": "max_total_trials: 20",
    "search_space": "search_space: {lr: {type: uniform, min_value: 0.001, max_value: 0.1}}",
    "goal": "goal: maximize",
    "primary_metric": "primary_metric: auc",
    "name": "name: train_model",
    "jobs": "jobs: {train: {type: command, component: ./train.yml}}",
    "trigger": "trigger: {type: cron, expression: \"0 6 * * 1\"}",
    "create_job": "create_job: ./pipeline.yml",
    "expression": "expression: \"15 10 * * *\"",
    "frequency": "frequency: day",
    "interval": "interval: 1",
    "hours": "hours: [9]",
    "minutes": "minutes: [0]",
    "component": "component: ./components/train.yml",
    "job": "job: ./pipeline.yml",
    "values": "values: [0.01, 0.1]",
    "upper": "upper: 10",
    "min_value": "min_value: 0.001",
    "max_value": "max_value: 0.1",
    "q": "q: 1",
    "mu": "mu: 0",
    "sigma": "sigma: 1",
    "truncation_percentage": "truncation_percentage: 20",
    "path": "path: ./docker-context",
}

