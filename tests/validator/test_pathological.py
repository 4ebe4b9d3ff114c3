"""Files built to be slow to lint: the work must grow with the file, not with its square, and
what they hide must still be reported. No clock here (bench/pathological.py times them): the
tests count the operations the linter performs, with a profiling hook, at one size and at
twice that size."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Callable

from validator import expressions, loader
from validator.diagnostic import Severity
from validator.engine import lint_paths, lint_text

JOB_HEAD = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
compute: azureml:cpu-cluster
"""

# Doubling the input may cost a little more than twice the work (a fixed part, rounding), never
# four times, which is what work proportional to the square of the input gives.
LINEAR = 2.2


def operations(action: Callable[[], object], names: set[str]) -> tuple[Counter, object]:
    """Run ``action`` and count the calls it makes to functions (Python or built-in, such as
    ``str.find``) whose name is in ``names``."""
    counts: Counter = Counter()

    def hook(frame, event, arg):  # noqa: ANN001 - sys.setprofile's signature
        if event == "c_call":
            name = getattr(arg, "__name__", "")
            if name in names:
                counts[name] += 1
        elif event == "call" and frame.f_code.co_name in names:
            counts[frame.f_code.co_name] += 1

    sys.setprofile(hook)
    try:
        result = action()
    finally:
        sys.setprofile(None)
    return counts, result


# Every way the rules search a value's text for a finding's place.
SEARCHES = {"find", "count", "startswith", "finditer"}


def undeclared_references(count: int, *, folded: bool = False) -> str:
    references = " ".join(["${{inputs.x}}"] * count)
    if folded:  # the same references over many source lines of a folded scalar
        words = references.split(" ")
        lines = "\n".join("  " + " ".join(words[i:i + 5]) for i in range(0, len(words), 5))
        return JOB_HEAD + "command: >-\n  echo\n" + lines + "\n"
    return JOB_HEAD + f"command: echo {references}\n"


def fresh_caches() -> None:
    """Forget the parses and searches of earlier tests, so that each measure does all its work."""
    expressions.parse.cache_clear()
    loader._FOUND.clear()


def test_many_undeclared_references_are_located_in_linear_work() -> None:
    for folded in (False, True):
        fresh_caches()
        small, report = operations(lambda: lint_text(undeclared_references(300, folded=folded), "job.yml"),
                                   SEARCHES)
        found = [d for d in report.diagnostics if d.code == "AML202"]
        assert len(found) == 300
        # Each finding points at its own reference, in order.
        places = [(d.line, d.column) for d in found]
        assert places == sorted(set(places))
        fresh_caches()
        large, _ = operations(lambda: lint_text(undeclared_references(600, folded=folded), "job.yml"),
                              SEARCHES)
        assert sum(large.values()) <= LINEAR * sum(small.values()), (folded, small, large)


def test_locate_text_keeps_its_answers() -> None:
    """The k-th occurrence of a needle is the same whichever occurrences were asked before."""
    text = JOB_HEAD + "command: >-\n  echo aaa ${{inputs.x}}\n  aa ${{inputs.x}} a\n"
    document, _ = loader.parse("job.yml", text)
    expected = [(6, 8, 10), (6, 9, 11), (7, 3, 5)]
    assert [document.locate_text(("command",), "aa", k) for k in (2, 0, 1)] == [expected[2], expected[0],
                                                                              expected[1]]
    assert document.locate_text(("command",), "aa", 3) == document.locate(("command",))
    assert document.locate_text(("command",), "${{inputs.x}}", 1) == (7, 6, 19)


def test_count_before_counts_as_str_count_does() -> None:
    samples = ["", "a", "aaaa", "ab$ab$$ab", "${{inputs.x}} ${{inputs.x}}${{inputs.x}}", "abababa"]
    needles = ["", "a", "aa", "ab", "$", "aba", "${{inputs.x}}", "{inputs.x}"]
    for text in samples:
        for needle in needles:
            loader._FOUND.clear()
            # In order, backwards, and again: answers do not depend on what was asked before.
            for end in [*range(len(text) + 2), *reversed(range(len(text) + 2))]:
                assert loader.count_before(text, needle, end) == text.count(needle, 0, end)
                if needle:
                    starting = sum(1 for i in range(end) if text.startswith(needle, i))
                    assert loader.count_before(text, needle, end, overlapping=True) == starting


def aliased_text(size: int, aliases: int) -> str:
    tags = "".join(f"  t{i}: *big\n" for i in range(aliases))
    return JOB_HEAD + f"command: echo hi\ndescription: &big {'a' * size}\ntags:\n{tags}"


def test_a_long_string_aliased_many_times_is_an_alias_bomb() -> None:
    # 100 KB aliased 20 times is 2 MB once expanded: few nodes, a lot of text.
    report = lint_text(aliased_text(100_000, 20), "job.yml")
    assert [d.code for d in report.diagnostics] == ["AML007"]
    assert "characters of text" in report.diagnostics[0].message
    # Reported at the alias that goes over (the 11th: 1.1 MB), not at the anchor.
    assert (report.diagnostics[0].line, report.diagnostics[0].pointer) == (18, "/tags/t10")


def test_merged_keys_count_as_expanded_text() -> None:
    keys = "".join(f"  k{i:03d}{'k' * 990}: v\n" for i in range(100))  # 100 KB of keys, 100 values
    users = "".join(f"  t{i}:\n    <<: *defaults\n" for i in range(15))
    report = lint_text(JOB_HEAD + f"command: echo hi\ndefaults: &defaults\n{keys}tags:\n{users}", "job.yml")
    assert [(d.code, "characters of text" in d.message) for d in report.diagnostics] == [("AML007", True)]


def test_anchored_text_reused_a_few_times_is_fine() -> None:
    report = lint_text(aliased_text(2_000, 50), "job.yml")  # 100 KB once expanded
    assert not [d for d in report.diagnostics if d.code == "AML007"]


COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: Comp_{index:04d}
version: 1
command: echo {index}
environment: azureml:sklearn-train:2
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  first:
    type: command
    component: ./comp_0000.yml
"""


def flat_folder(folder: Path, count: int) -> Path:
    """``count`` component files with a name finding (a title-case name) and a pipeline that
    uses the first of them, all in one folder."""
    folder.mkdir()
    for index in range(count):
        (folder / f"comp_{index:04d}.yml").write_text(COMPONENT.format(index=index))
    (folder / "pipeline.yml").write_text(PIPELINE)
    return folder


def test_a_flat_folder_of_components_is_read_in_linear_work(tmp_path: Path) -> None:
    reads = {"read_bytes", "listdir", "open"}
    small, result = operations(lambda: lint_paths([flat_folder(tmp_path / "small", 40)]), reads)
    by_file = {Path(f.path).name: f.diagnostics for f in result.files}
    # The component the pipeline uses: its name is a warning (registered anonymously);
    # the others keep their error.
    assert [d.code for d in by_file["comp_0000.yml"] if d.severity is Severity.WARNING] == ["AML549"]
    assert all("AML549" not in {d.code for d in by_file[f"comp_{i:04d}.yml"]} for i in range(1, 40))
    assert all(d.severity is Severity.ERROR for i in range(1, 40) for d in by_file[f"comp_{i:04d}.yml"])
    assert all(by_file[f"comp_{i:04d}.yml"] for i in range(1, 40))
    large, _ = operations(lambda: lint_paths([flat_folder(tmp_path / "large", 80)]), reads)
    assert sum(large.values()) <= LINEAR * sum(small.values()), (small, large)


def test_findings_on_one_long_line_print_in_linear_space() -> None:
    """The text format shows the source line of each finding: on a line of thousands of
    findings it shows the part around each, and prepares the line once."""
    from io import StringIO

    from validator.engine import LintResult
    from validator.report import write_text

    def printed(count: int) -> tuple[Counter, str]:
        fresh_caches()
        report = lint_text(undeclared_references(count), "job.yml")
        out = StringIO()
        calls, _ = operations(lambda: write_text(LintResult([report]), report.diagnostics, out, color=False),
                              {"expandtabs"})
        return calls, out.getvalue()

    small_calls, small = printed(400)
    large_calls, large = printed(800)
    assert len(large) <= LINEAR * len(small), (len(small), len(large))
    assert small_calls["expandtabs"] == large_calls["expandtabs"] == 1
    # The excerpt still points at the finding: the caret sits under the reference it reports.
    lines = large.splitlines()
    for head, source, caret in ((lines[i], lines[i + 2], lines[i + 3]) for i in (0, 5 * 400, 5 * 799)):
        assert "AML202" in head
        column = caret.index("^")
        assert source[column:column + len("${{inputs.x}}")] == "${{inputs.x}}", (source, caret)


class Scanned(str):
    """A text that adds up how many characters its searches go through."""

    characters = 0

    def find(self, sub: str, start: int = 0, end: int | None = None) -> int:  # type: ignore[override]
        found = str.find(self, sub, start, len(self) if end is None else end)
        Scanned.characters += (len(self) if found == -1 else found + len(sub)) - max(0, start)
        return found


def scanned_to_place(count: int) -> int:
    """Characters searched to place ``count`` different references of one command, as the rules
    do: the occurrence before each (count_before), then its place in the source (locate_text)."""
    fresh_caches()
    text = JOB_HEAD + "command: echo " + " ".join(f"${{{{inputs.x{i}}}}}" for i in range(count)) + "\n"
    document, _ = loader.parse("job.yml", text)
    document.__dict__["_lines"] = [Scanned(line) for line in text.splitlines()]
    command = Scanned(document.data["command"])
    Scanned.characters = 0
    places = []
    for reference in expressions.parse(str(command)).references:
        occurrence = loader.count_before(command, reference.text, reference.start)
        places.append(document.locate_text(("command",), reference.text, occurrence))
    assert [column for _, column, _ in places] == [10 + reference.start for reference in
                                                   expressions.parse(str(command)).references]
    return Scanned.characters


def test_many_different_references_are_located_in_linear_work() -> None:
    small, large = scanned_to_place(1_000), scanned_to_place(2_000)
    assert large <= LINEAR * small, (small, large)


def test_reference_tokens_are_found_where_a_search_finds_them() -> None:
    """The token index (for `${{...}}` needles) answers as the plain search does, on texts of
    unclosed, nested and run-together braces."""
    import random

    pieces = ["$", "{", "}", "a", " ", "${{", "}}", "\n"]
    chooser = random.Random(7)
    for _ in range(3000):
        text = "".join(chooser.choice(pieces) for _ in range(chooser.randint(0, 25)))
        needles = {text[i:j] for i in range(len(text)) for j in range(i + 5, min(len(text), i + 12) + 1)}
        needles = {n for n in needles if loader.is_reference_token(n)}
        fresh_caches()
        loader._TOKENS.clear()
        for needle in needles:
            for end in range(len(text) + 2):
                assert loader.count_before(text, needle, end) == text.count(needle, 0, end)
                starting = sum(1 for i in range(end) if text.startswith(needle, i))
                assert loader.count_before(text, needle, end, overlapping=True) == starting
        document, _ = loader.parse("job.yml", "command: >-\n  " + text.replace("\n", "\n  ") + "\n")
        if document.data is None:
            continue
        line, column, end = document.locate(("command",))
        for needle in needles:
            searched = list(document._hits(line, column, needle))
            for k in range(3):
                expected = searched[k] if k < len(searched) else (line, column, end)
                assert document.locate_text(("command",), needle, k) == expected, (text, needle, k)
