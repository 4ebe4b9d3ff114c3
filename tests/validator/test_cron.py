"""Properties of validator/cron.py: total on any input, accepts every well-formed expression
built from in-range fields (and selects exactly the values it says), and reports a value out
of range at that value's position inside the expression."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator import cron
from validator.engine import lint_text

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = {cron.MONTHS: cron.MONTH_NAMES, cron.DAYS_OF_WEEK: cron.DAY_NAMES}


def check_well_formed(parsed: cron.Cron, text: str) -> None:
    for problem in (*parsed.problems, *parsed.reversed):
        assert 0 <= problem.start <= problem.end <= len(text), problem
        assert text[problem.start:problem.end] == problem.token, problem
        assert problem.message and problem.message == problem.message.strip()
    for field in parsed.fields:
        assert text[field.start:field.end] == field.text
        low, high = cron.LIMITS[field.index]
        assert all(low <= v <= high for v in field.values)


@SETTINGS
@given(st.text(max_size=60))
def test_total_on_arbitrary_text(text: str) -> None:
    parsed = cron.parse(text)
    check_well_formed(parsed, text)
    assert parsed.valid == (not parsed.problems)
    assert len(parsed.fields) in (0, 5)


cron_alphabet = st.sampled_from(list("0123456789*/-,? \tLW#") + ["MON", "jan", "SUN", "Fri", "DEC", "x"])


@SETTINGS
@given(st.lists(cron_alphabet, max_size=30).map("".join))
def test_total_on_cron_like_text(text: str) -> None:
    check_well_formed(cron.parse(text), text)


@given(st.one_of(st.none(), st.integers(), st.floats(), st.lists(st.integers()), st.binary()))
def test_total_on_any_value(value: object) -> None:
    parsed = cron.parse(value)
    assert not parsed.valid and not parsed.fields


# ----------------------------------------------------------------------------- valid expressions
def _spell(index: int, value: int, draw) -> str:
    """A value as a number, or (months, days of week) a name in some case and length."""
    names = NAMES.get(index)
    if names is None or not draw(st.booleans()):
        return str(value)
    full = names[value - cron.LIMITS[index][0]]
    name = full[: draw(st.integers(3, len(full)))]
    return draw(st.sampled_from([name, name.upper(), name.capitalize()]))


@st.composite
def item(draw, index: int) -> tuple[str, set[int]]:
    """One list item of field ``index`` and the values it selects."""
    low, high = cron.LIMITS[index]
    form = draw(st.sampled_from(["star", "star-step", "value", "value-step", "range", "range-step"]))
    step = draw(st.integers(1, high - low + 2))
    if form == "star":
        return "*", set(range(low, high + 1))
    if form == "star-step":
        return f"*/{step}", set(range(low, high + 1, step))
    first = draw(st.integers(low, high))
    if form == "value":
        return _spell(index, first, draw), {first}
    if form == "value-step":
        return f"{first}/{step}", set(range(first, high + 1, step))
    last = draw(st.integers(first, high))
    text = f"{_spell(index, first, draw)}-{_spell(index, last, draw)}"
    if form == "range":
        return text, set(range(first, last + 1))
    return f"{text}/{step}", set(range(first, last + 1, step))


@st.composite
def field(draw, index: int) -> tuple[str, set[int]]:
    items = draw(st.lists(item(index), min_size=1, max_size=4))
    return ",".join(text for text, _ in items), set().union(*(values for _, values in items))


@st.composite
def expression(draw) -> tuple[str, list[tuple[str, set[int]]]]:
    fields = [draw(field(index)) for index in range(5)]
    gaps = [draw(st.sampled_from([" ", "  ", "\t", " \t "])) for _ in range(4)]
    lead, tail = draw(st.sampled_from(["", " "])), draw(st.sampled_from(["", " ", "\n"]))
    text = lead + "".join(f[0] + gap for f, gap in zip(fields, gaps)) + fields[4][0] + tail
    return text, fields


@SETTINGS
@given(expression())
def test_every_in_range_expression_is_accepted(case) -> None:
    text, fields = case
    parsed = cron.parse(text)
    assert parsed.valid, parsed.problems
    assert not parsed.reversed
    check_well_formed(parsed, text)
    for parsed_field, (written, values) in zip(parsed.fields, fields):
        assert parsed_field.text == written
        assert parsed_field.values == values


@SETTINGS
@given(expression(), st.integers(0, 4), st.data())
def test_out_of_range_value_is_reported_at_its_field(case, index: int, data) -> None:
    _, fields = case
    low, high = cron.LIMITS[index]
    bad = data.draw(st.one_of(st.integers(high + 1, 10**6), st.integers(0, low - 1) if low else st.nothing()))
    written = [f[0] for f in fields]
    written[index] = data.draw(st.sampled_from([str(bad), f"{bad}-{bad}", f"{low}-{bad}", f"{bad}/2"]))
    broken = " ".join(written)
    parsed = cron.parse(broken)
    assert not parsed.valid
    start = sum(len(w) + 1 for w in written[:index])
    end = start + len(written[index])
    ours = parsed.field_problems(index)
    assert ours, parsed.problems
    assert all(start <= p.start < p.end <= end and p.token == str(bad) for p in ours)
    assert all(p.field == index for p in parsed.problems)  # the other fields are fine


@SETTINGS
@given(st.lists(st.sampled_from(["0", "*", "*/5", "1-5", "MON"]), max_size=9).filter(lambda f: len(f) != 5))
def test_wrong_field_count_is_one_problem(fields: list[str]) -> None:
    parsed = cron.parse(" ".join(fields))
    assert len(parsed.problems) == 1 and parsed.problems[0].field is None
    assert not parsed.fields


@SETTINGS
@given(st.integers(0, 4), st.data())
def test_backwards_range_is_swapped_and_noted(index: int, data) -> None:
    low, high = cron.LIMITS[index]
    first = data.draw(st.integers(low + 1, high))
    last = data.draw(st.integers(low, first - 1))
    written = ["*"] * 5
    written[index] = f"{first}-{last}"
    parsed = cron.parse(" ".join(written))
    assert parsed.valid
    assert [p.field for p in parsed.reversed] == [index]
    assert parsed.fields[index].values == set(range(last, first + 1))


def test_documented_choices() -> None:
    assert cron.parse("0 2 * * 7").field_problems(cron.DAYS_OF_WEEK)       # 7 is not Sunday here
    assert cron.parse("0 2 * * SUN").fields[4].values == {0}
    assert cron.parse("0 2 * * T").problems                                 # too short to read
    assert cron.parse("0 2 * * thurs").fields[4].values == {4}
    assert cron.parse("0 2 * * */0").problems                               # step 0
    assert cron.parse("5/20 * * * *").fields[0].values == {5, 25, 45}       # a/n = a-max/n
    for quartz in ("0 2 ? * *", "0 2 L * *", "0 2 * * 5#3", "0 2 15W * *"):
        assert cron.parse(quartz).problems, quartz
    assert cron.parse("@daily").problems[0].hint == "write '0 0 * * *'"
    assert "five" in cron.parse("every hour").problems[0].message


# ----------------------------------------------------------------------------- through the linter
SCHEDULE = """\
name: nightly
trigger:
  type: cron
  expression: "{expression}"
create_job: azureml:nightly-pipeline
"""


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expression(), st.integers(0, 4), st.data())
def test_linter_points_inside_the_expression(case, index: int, data) -> None:
    _, fields = case
    written = [f[0] for f in fields]
    clean = lint_text(SCHEDULE.format(expression=" ".join(written)), "s.yml")
    assert not [d for d in clean.diagnostics if d.code in ("AML601", "AML602")], clean.diagnostics
    high = cron.LIMITS[index][1]
    written[index] = str(data.draw(st.integers(high + 1, 999)))
    report = lint_text(SCHEDULE.format(expression=" ".join(written)), "s.yml")
    found = [d for d in report.diagnostics if d.code == "AML602"]
    assert len(found) == 1
    column = len('  expression: "') + 1 + sum(len(w) + 1 for w in written[:index])
    assert (found[0].line, found[0].column) == (4, column)
    assert found[0].end_column == column + len(written[index])
