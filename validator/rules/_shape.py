"""The shape of a value read from another file, checked against one definition of a bundled
schema: an environment file (`environment: file:./env.yml`) against the inline environment, a
data import file (`import_data: ./import.yml`) against the inline data import. The schema check
(AML1xx) positions its findings in the spec being linted; these problems belong to a referenced
file, so they are returned as sentences for the rule that reports them at the reference."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

from ..schema_check import dotted, load_schema
from ..suggest import closest


@lru_cache(maxsize=None)
def _definition(kind: str, name: str) -> tuple[dict, Callable[[Any], bool]]:
    from ..fastcheck import compile_schema

    root = {"$ref": f"#/$defs/{name}", "$defs": load_schema(kind)["$defs"]}
    return root, compile_schema(root)


@lru_cache(maxsize=None)
def _known_keys(kind: str, name: str) -> frozenset[str]:
    """The keys a mapping may hold at the top of ``$defs/<name>``, in any of its branches."""
    known: set[str] = set()
    pending = [load_schema(kind)["$defs"][name]]
    while pending:
        schema = pending.pop()
        if not isinstance(schema, dict):
            continue
        known.update(schema.get("properties") or {})
        pending += [schema.get(key) for key in ("then", "else")]
        pending += [sub for key in ("allOf", "anyOf", "oneOf") for sub in schema.get(key) or ()]
    return frozenset(known)


def problems(data: Any, kind: str, name: str, what: str) -> list[str]:
    """What is wrong with ``data`` as the ``$defs/<name>`` of ``kind``'s schema, one sentence
    each ("unknown key 'conda_fil'; did you mean 'conda_file'?"); empty when it fits. ``what``
    names the thing in the sentence about a value that is not a mapping."""
    root, fits = _definition(kind, name)
    if fits(data):
        return []
    # A key such as `$schema` that the definition does not know is never reported (_sentences
    # skips it): when the rest fits there is nothing to explain, and no need to load jsonschema.
    unknown = [key for key in data if str(key).startswith("$") and key not in _known_keys(kind, name)] \
        if isinstance(data, dict) else []
    if unknown and fits({key: value for key, value in data.items() if key not in unknown}):
        return []
    if not isinstance(data, dict):
        return [f"it is not a mapping, so not {what}"]
    from jsonschema import Draft202012Validator  # heavy: only when there is something to explain

    found: list[str] = []
    for error in sorted(Draft202012Validator(root).iter_errors(data), key=lambda e: [str(p) for p in e.path]):
        found += _sentences(error)
    return list(dict.fromkeys(found))


def _sentences(error: Any) -> list[str]:
    where = tuple(error.path)
    at = f" in '{dotted(where)}'" if where else ""
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    keyword = error.validator
    if keyword in ("anyOf", "oneOf"):
        if schema.get("x-message"):
            return [f"{schema['x-message']}{at}"]
        return [s for sub in error.context or () for s in _sentences(sub)]
    if keyword == "required" and isinstance(instance, dict):
        return [f"missing required key '{key}'{at}" for key in error.validator_value if key not in instance]
    if keyword == "additionalProperties" and isinstance(instance, dict):
        known = [k for k in (schema.get("properties") or {}) if not k.startswith("$")]
        advice = schema.get("x-unknown-hints") or {}
        out = []
        for key in instance:
            if key in known or str(key).startswith("$"):
                continue
            sentence = f"unknown key '{key}'{at}"
            close = closest(str(key), known)
            if key in advice:
                sentence += f": {advice[key]}"
            elif close:
                sentence += f"; did you mean '{close}'?"
            out.append(sentence)
        return out
    name = str(where[-1]) if where else "value"
    if keyword == "enum":
        allowed = [str(v) for v in error.validator_value if v is not None and str(v) == str(v).lower()]
        close = closest(str(instance), allowed)
        suggestion = f"; did you mean '{close}'?" if close else ""
        return [f"'{instance}' is not a valid {name}{suggestion} (expected one of: {', '.join(allowed)})"]
    if keyword == "type":
        names = [error.validator_value] if isinstance(error.validator_value, str) else list(error.validator_value)
        shown = " or ".join({"object": "a mapping", "array": "a list"}.get(n, f"a {n}") for n in names)
        return [f"'{name}' must be {shown}"]
    if keyword == "minLength":
        return [f"'{name}' must not be empty"]
    return [f"{error.message}{at}"]
