"""Properties of the linter over inputs nobody wrote by hand: arbitrary text, arbitrary YAML
documents, and mutations of the valid fixtures. The outcome is always diagnostics or clean,
never an exception, and every diagnostic points inside the file."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from validator import expressions, kinds, loader
from validator.config import Config
from validator.engine import lint_bytes, lint_text
from validator.rules import RULES
from validator.schema_check import ignored_here

ROOT = Path(__file__).resolve().parents[2]
VALID = sorted((ROOT / "tests" / "fixtures" / "valid").rglob("*.yml"))
SPECS = [p for p in VALID if p.parent.name in {"commandJob", "sweepJob", "pipelineJob", "commandComponent",
                                               "pipelineComponent", "schedule"}]
# AMLLAB_EXAMPLES raises the example count for a longer hunt (the suite's default stays quick).
SETTINGS = settings(max_examples=int(os.environ.get("AMLLAB_EXAMPLES", "150")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def assert_well_formed(report, text: str) -> None:
    line_count = max(1, len(text.splitlines()) + 1)
    for d in report.diagnostics:
        assert d.code in RULES, d
        assert "internal error" not in d.message, d
        assert 1 <= d.line <= line_count, (d, line_count)
        assert d.column >= 1, d
        assert d.message and d.message == d.message.strip(), d


@SETTINGS
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    report = lint_text(text, "fuzz.yml")
    assert_well_formed(report, text)


@SETTINGS
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(raw: bytes) -> None:
    report = lint_bytes(raw, "fuzz.yml", Config())
    assert_well_formed(report, raw.decode("utf-8", errors="replace"))


scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30))
keys = st.one_of(st.sampled_from(["type", "command", "environment", "inputs", "outputs", "jobs", "trial",
                                  "search_space", "objective", "limits", "compute", "trigger",
                                  "create_job", "$schema", "name", "version", "settings", "component",
                                  "early_termination", "sampling_algorithm", "resources", "distribution"]),
                 st.text(min_size=1, max_size=12))
documents = st.recursive(scalars, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=6)), max_leaves=30)
type_values = st.sampled_from(["command", "sweep", "pipeline", "Command", "cron", "recurrence",
                               "uri_folder", "bandit", "choice", "spark"])


@SETTINGS
@given(st.dictionaries(keys, documents, max_size=8), type_values)
def test_arbitrary_documents_never_raise(data: dict, type_value: str) -> None:
    data = dict(data)
    data.setdefault("type", type_value)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    report = lint_text(text, "doc.yml")
    assert_well_formed(report, text)


# ----------------------------------------------------------------------------- mutations
def _mutate_text(text: str, data: st.DataObject) -> str:
    lines = text.splitlines(keepends=True)
    operation = data.draw(st.sampled_from(["delete", "duplicate", "insert", "indent", "truncate", "swap"]))
    if not lines:
        return text
    index = data.draw(st.integers(0, len(lines) - 1))
    if operation == "delete":
        del lines[index]
    elif operation == "duplicate":
        lines.insert(index, lines[index])
    elif operation == "insert":
        position = data.draw(st.integers(0, len(lines[index])))
        junk = data.draw(st.text(alphabet=":-[]{}#&*!|>'\"\t ${}.\n abc1", max_size=8))
        lines[index] = lines[index][:position] + junk + lines[index][position:]
    elif operation == "indent":
        lines[index] = " " * data.draw(st.integers(1, 3)) + lines[index]
    elif operation == "truncate":
        cut = data.draw(st.integers(0, len(text)))
        return text[:cut]
    else:
        other = data.draw(st.integers(0, len(lines) - 1))
        lines[index], lines[other] = lines[other], lines[index]
    return "".join(lines)


@SETTINGS
@given(st.data())
def test_text_mutations_of_valid_fixtures_never_raise(data: st.DataObject) -> None:
    assume(SPECS)
    path = data.draw(st.sampled_from(SPECS))
    text = path.read_text()
    for _ in range(data.draw(st.integers(1, 3))):
        text = _mutate_text(text, data)
    report = lint_text(text, str(path), base_dir=path.parent)
    assert_well_formed(report, text)


def _mappings(value, path=()):
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _mappings(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _mappings(item, path + (index,))


@SETTINGS
@given(st.data())
def test_an_unknown_key_is_always_reported_at_its_position(data: st.DataObject) -> None:
    """Adding a key no spec has, to any mapping the schema describes strictly, yields AML101 there
    (AML108 where azure-ai-ml keeps unknown keys and the service ignores them)."""
    assume(SPECS)
    path = data.draw(st.sampled_from(SPECS))
    document = yaml.safe_load(path.read_text())
    # Free-form maps (tags, environment variables, inputs, search spaces...) accept any key name.
    free_form = {"tags", "properties", "environment_variables", "inputs", "outputs", "jobs",
                 "search_space", "services", "conda_file", "inference_config", "settings_overrides"}
    candidates = [(p, m) for p, m in _mappings(document)
                  if not (p and p[-1] in free_form) and not any(isinstance(k, int) for k in p[-1:])
                  and not (p and p[-1] == "values")]
    assume(candidates)
    where, mapping = data.draw(st.sampled_from(candidates))
    mapping["zz_not_a_key"] = 1
    text = yaml.safe_dump(document, sort_keys=False)
    report = lint_text(text, str(path), base_dir=path.parent)
    codes = [(d.code, d.pointer) for d in report.diagnostics]
    expected_pointer = "".join("/" + str(p) for p in where) + "/zz_not_a_key"
    parsed, _ = loader.parse(str(path), text, path.parent)
    parsed.kind = kinds.detect(parsed).kind
    expected_code = "AML108" if ignored_here(parsed, tuple(where)) else "AML101"
    assert (expected_code, expected_pointer) in codes, (where, report.diagnostics)
    line = next(d.line for d in report.diagnostics if d.pointer == expected_pointer)
    assert "zz_not_a_key" in text.splitlines()[line - 1]


# ----------------------------------------------------------------------------- expressions
names = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
plain = st.text(alphabet="abc -=./:", max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="${}[]. abinputs", max_size=60))
def test_expression_parser_is_total_and_offsets_are_exact(text: str) -> None:
    template = expressions.parse(text)
    for reference in template.references:
        assert text[reference.start:reference.end] == reference.text
        assert reference.text.startswith("${{") and reference.text.endswith("}}")
    for block in template.blocks:
        assert text[block.start:block.start + 3] == "$[[" and text[block.end - 2:block.end] == "]]"
    for problem in template.problems:
        assert 0 <= problem.start <= problem.end <= len(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(plain, st.sampled_from(["inputs", "outputs", "search_space"]), names,
                          st.booleans()), max_size=6), plain)
def test_well_formed_templates_parse_back_to_their_references(parts, tail) -> None:
    text, expected = "", []
    for prefix, context, name, optional in parts:
        token = "${{" + context + "." + name + "}}"
        text += prefix + (" $[[--x " + token + "]] " if optional else " " + token + " ")
        expected.append(((context, name), optional))
    text += tail
    template = expressions.parse(text)
    assert template.problems == []
    assert [(r.parts, r.block is not None) for r in template.references] == expected
