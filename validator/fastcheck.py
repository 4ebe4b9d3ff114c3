"""A yes/no JSON Schema check, compiled to closures, for the valid path.

Nearly every file a pre-commit hook or CI sees is valid. For those, jsonschema's error-collecting
walk is most of the lint time. This module compiles a schema, once, into nested closures that
only answer "valid?" for the keywords amllab's generated schemas use; when the answer is no,
schema_check runs jsonschema to explain why. A subschema is compiled the first time a value
reaches it (a property that is present, a union that is tried, a `$ref` that is followed): one
file uses a small part of its kind's schema, and compiling every alternative of every schema took
a tenth of a short lint run. `tests/validator/test_fastcheck.py` checks the verdicts
agree with jsonschema's on arbitrary documents. (fastjsonschema was measured as an
alternative: it generates about 2 MB of Python for these schemas and needs 1.6 s to compile.)
"""

from __future__ import annotations

import re
from typing import Any, Callable

Check = Callable[[Any], bool]

# Keywords that carry no validation: annotations, our x- hints, and the containers of refs.
_IGNORED = {"$schema", "$id", "$defs", "title", "description", "default", "examples"}


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _equal(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema defines it: true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b


class Compiler:
    def __init__(self, root: dict):
        self.root = root
        self.refs: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return lambda value: True
        if schema is False:
            return lambda value: False
        checks: list[Check] = []
        for keyword, argument in schema.items():
            if keyword in _IGNORED or keyword.startswith("x-"):
                continue
            builder = getattr(self, "_" + keyword.replace("$", "dollar_"), None)
            if builder is None:
                raise NotImplementedError(f"fastcheck does not implement the '{keyword}' keyword")
            built = builder(argument, schema)
            if built is not None:
                checks.append(built)
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:  # the common pair (a type and one constraint): no generator
            first, second = checks
            return lambda value: first(value) and second(value)
        return _all_of(checks)

    # ------------------------------------------------------------------ keywords
    def _dollar_ref(self, ref: str, schema: dict) -> Check:
        if not ref.startswith("#/"):
            raise NotImplementedError(f"fastcheck resolves only local refs, not {ref}")
        refs = self.refs

        def check(value: Any) -> bool:
            compiled = refs.get(ref)
            if compiled is None:
                target: Any = self.root
                for part in ref[2:].split("/"):
                    target = target[part]
                compiled = refs[ref] = self.compile(target)
            return compiled(value)
        return check

    def _type(self, argument: Any, schema: dict) -> Check:
        names = [argument] if isinstance(argument, str) else list(argument)
        tests = [_TYPES[name] for name in names]
        if len(tests) == 1:
            return tests[0]
        return lambda value: any(test(value) for test in tests)

    def _enum(self, argument: list, schema: dict) -> Check:
        if all(isinstance(v, str) or v is None for v in argument):
            allowed = set(argument)
            return lambda value: (value is None or isinstance(value, str)) and value in allowed
        return lambda value: any(_equal(value, option) for option in argument)

    def _const(self, argument: Any, schema: dict) -> Check:
        return lambda value: _equal(value, argument)

    def _properties(self, argument: dict, schema: dict) -> Check:
        compiled: dict[str, Check] = {}

        def check(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            for key, item in value.items():
                sub = compiled.get(key)
                if sub is None:
                    if key not in argument:
                        continue
                    sub = compiled[key] = self.compile(argument[key])
                if not sub(item):
                    return False
            return True
        return check

    def _lazy_list(self, argument: list) -> Callable[[], list[Check]]:
        """The compiled subschemas of a union or `allOf`, compiled on first use."""
        compiled: list[Check] = []

        def subs() -> list[Check]:
            if not compiled:
                compiled.extend(self.compile(s) for s in argument)
            return compiled
        return subs

    def _additionalProperties(self, argument: Any, schema: dict) -> Check:
        known = set(schema.get("properties", {}))
        if "patternProperties" in schema:
            raise NotImplementedError("patternProperties")
        if argument is False:
            return lambda value: not isinstance(value, dict) or known.issuperset(value)
        sub = self.compile(argument)

        def check(value: Any) -> bool:
            if isinstance(value, dict):
                for key, item in value.items():
                    if key not in known and not sub(item):
                        return False
            return True
        return check

    def _required(self, argument: list, schema: dict) -> Check:
        wanted = set(argument)
        return lambda value: not isinstance(value, dict) or value.keys() >= wanted

    def _if(self, argument: Any, schema: dict) -> Check:
        condition = self.compile(argument)
        then = self.compile(schema.get("then", True))
        otherwise = self.compile(schema.get("else", True))
        return lambda value: then(value) if condition(value) else otherwise(value)

    def _then(self, argument: Any, schema: dict) -> None:
        return None  # handled by _if (and meaningless without it)

    _else = _then

    def _allOf(self, argument: list, schema: dict) -> Check:
        subs = self._lazy_list(argument)

        def check(value: Any) -> bool:
            for sub in subs():
                if not sub(value):
                    return False
            return True
        return check

    def _anyOf(self, argument: list, schema: dict) -> Check:
        subs = self._lazy_list(argument)

        def check(value: Any) -> bool:
            for sub in subs():
                if sub(value):
                    return True
            return False
        return check

    def _oneOf(self, argument: list, schema: dict) -> Check:
        subs = self._lazy_list(argument)
        return lambda value: sum(1 for sub in subs() if sub(value)) == 1

    def _not(self, argument: Any, schema: dict) -> Check:
        sub = self.compile(argument)
        return lambda value: not sub(value)

    def _items(self, argument: Any, schema: dict) -> Check:
        sub = self.compile(argument)

        def check(value: Any) -> bool:
            if isinstance(value, list):
                for item in value:
                    if not sub(item):
                        return False
            return True
        return check

    def _minItems(self, argument: int, schema: dict) -> Check:
        return lambda value: not isinstance(value, list) or len(value) >= argument

    def _minProperties(self, argument: int, schema: dict) -> Check:
        return lambda value: not isinstance(value, dict) or len(value) >= argument

    def _minLength(self, argument: int, schema: dict) -> Check:
        return lambda value: not isinstance(value, str) or len(value) >= argument

    def _pattern(self, argument: str, schema: dict) -> Check:
        regex = re.compile(argument)
        return lambda value: not isinstance(value, str) or regex.search(value) is not None

    def _exclusiveMinimum(self, argument: float, schema: dict) -> Check:
        number = _TYPES["number"]
        return lambda value: not number(value) or value > argument

    def _minimum(self, argument: float, schema: dict) -> Check:
        number = _TYPES["number"]
        return lambda value: not number(value) or value >= argument


def _all_of(checks: list[Check]) -> Check:
    # A loop, not all() over a generator: these run for every node of every valid file.
    def check(value: Any) -> bool:
        for each in checks:
            if not each(value):
                return False
        return True
    return check


def compile_schema(schema: dict) -> Check:
    return Compiler(schema).compile(schema)


def unsupported_keywords(schema: Any) -> set[str]:
    """The keywords anywhere in ``schema`` that :class:`Compiler` cannot compile (it compiles
    lazily, so an unsupported keyword would otherwise surface only when a file reaches it)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for keyword, argument in schema.items():
            if keyword in _IGNORED and keyword != "$defs" or keyword.startswith("x-"):
                continue
            if keyword != "$defs" and not hasattr(Compiler, "_" + keyword.replace("$", "dollar_")):
                found.add(keyword)
            if keyword == "$ref" and not str(argument).startswith("#/"):
                found.add(f"$ref {argument}")
            if keyword == "additionalProperties" and "patternProperties" in schema:
                found.add("patternProperties")
            if keyword in ("properties", "$defs"):
                for sub in argument.values():
                    found |= unsupported_keywords(sub)
            elif keyword not in ("enum", "const", "required", "pattern", "type"):
                found |= unsupported_keywords(argument)
    elif isinstance(schema, list):
        for sub in schema:
            found |= unsupported_keywords(sub)
    return found
