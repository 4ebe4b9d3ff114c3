"""The yes/no fast path must give exactly jsonschema's verdict, or a valid-looking file could
hide an error (or a valid file be reported without a message)."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator.kinds import KINDS
from validator.schema_check import fast_validator, _validator

ROOT = Path(__file__).resolve().parents[2]
SPECS = [(p.parent.name, yaml.safe_load(p.read_text()))
         for p in sorted((ROOT / "tests" / "fixtures" / "valid").glob("*/*.yml"))]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([0.5, 2.0, -1.0]),
                    st.sampled_from(["command", "pipeline", "sweep", "uri_folder", "mltable", "azureml:x:1",
                                     "choice", "uniform", "bandit", "maximize", "Maximize", "cron", "",
                                     "ro_mount", "rw_mount", "pytorch", "integer", "string", "x"]))
keys = st.sampled_from(["type", "command", "environment", "inputs", "outputs", "jobs", "trial", "path",
                        "mode", "search_space", "objective", "limits", "compute", "trigger", "values",
                        "create_job", "name", "version", "component", "goal", "primary_metric",
                        "max_total_trials", "expression", "frequency", "interval", "job", "value", "zz"])
values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(keys, c, max_size=5)),
                      max_leaves=25)


def _agree(kind: str, data) -> None:
    expected = next(iter(_validator(kind).iter_errors(data)), None) is None
    assert fast_validator(kind)(data) == expected, (kind, data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(KINDS), st.dictionaries(keys, values, max_size=8))
def test_fast_verdict_matches_jsonschema_on_arbitrary_documents(kind: str, data: dict) -> None:
    _agree(kind, data)


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, path + (index,))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fast_verdict_matches_jsonschema_on_mutated_valid_specs(data: st.DataObject) -> None:
    import copy

    kind, spec = data.draw(st.sampled_from(SPECS))
    spec = copy.deepcopy(spec)
    where = data.draw(st.sampled_from([p for p in _paths(spec) if p]))
    parent = spec
    for part in where[:-1]:
        parent = parent[part]
    parent[where[-1]] = data.draw(values)
    _agree(kind, spec)


def test_valid_fixtures_pass_the_fast_path() -> None:
    for kind, spec in SPECS:
        assert fast_validator(kind)(spec), kind


def test_every_bundled_schema_uses_only_keywords_fastcheck_compiles() -> None:
    # Subschemas compile on first use: a keyword fastcheck lacks must be caught here, not by a user's file.
    from validator.fastcheck import unsupported_keywords
    from validator.schema_check import load_schema

    for kind in KINDS:
        assert unsupported_keywords(load_schema(kind)) == set(), kind
