"""One parse per YAML file per process: the engine and the reference loader share
validator.loader's cache, and no rule may change the data they share."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from validator import engine, loader, references
from validator.config import Config

ROOT = Path(__file__).resolve().parents[2]

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  prep:
    type: command
    component: ./tidy.yml
"""

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: tidy_rows
version: "1"
command: echo tidy
environment: azureml:tidy-env:3
"""


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Empty caches, and the list of files actually composed (by validator.loader._parse)."""
    monkeypatch.setattr(loader, "_PARSED", OrderedDict())
    monkeypatch.setattr(loader, "_PARSED_LIMIT", 100_000)
    monkeypatch.setattr(engine, "_ANALYSED", {})
    monkeypatch.setattr(references, "_CACHE", {})
    monkeypatch.setattr(references, "_PROBLEMS", {})
    composed: list[str] = []
    parse = loader._parse

    def counting(path, text, base_dir=None):
        composed.append(path)
        return parse(path, text, base_dir)

    monkeypatch.setattr(loader, "_parse", counting)
    return composed


def test_a_referenced_file_is_parsed_once(tmp_path: Path, fresh: list[str]) -> None:
    (tmp_path / "pipeline.yml").write_text(PIPELINE)
    (tmp_path / "tidy.yml").write_text(COMPONENT)
    result = engine.lint_paths([tmp_path], Config())
    assert sorted(Path(f.path).name for f in result.files) == ["pipeline.yml", "tidy.yml"]
    assert sorted(Path(p).name for p in fresh) == ["pipeline.yml", "tidy.yml"]


def test_documents_over_one_parse_are_their_own(tmp_path: Path, fresh: list[str]) -> None:
    (tmp_path / "tidy.yml").write_text(COMPONENT)
    first, _ = loader.load_path(tmp_path / "tidy.yml")
    second, _ = loader.load_path(tmp_path / "tidy.yml", display="shown/tidy.yml")
    assert first is not None and second is not None and len(fresh) == 1
    assert second.data is first.data
    assert (first.path, second.path) == (str(tmp_path / "tidy.yml"), "shown/tidy.yml")
    first.kind = "commandComponent"
    assert second.kind is None


def test_an_edited_file_is_parsed_again(tmp_path: Path, fresh: list[str]) -> None:
    path = tmp_path / "tidy.yml"
    path.write_text(COMPONENT)
    before, _ = loader.load_path(path)
    path.write_text(COMPONENT.replace("echo tidy", "echo tidier"))
    after, _ = loader.load_path(path)
    assert len(fresh) == 2
    assert before is not None and after is not None and after.data["command"] == "echo tidier"


def test_parse_problems_carry_each_callers_path(tmp_path: Path, fresh: list[str]) -> None:
    path = tmp_path / "twice.yml"
    path.write_text("name: a\nname: b\n")
    _, first = loader.load_path(path, display="one.yml")
    _, second = loader.load_path(path, display="two.yml")
    assert len(fresh) == 1 and first and second
    assert {d.path for d in first} == {"one.yml"} and {d.path for d in second} == {"two.yml"}


def test_rules_do_not_change_the_shared_data(fresh: list[str]) -> None:
    """Lint every fixture and golden case, then compare each cached parse with a new one."""
    engine.lint_paths([ROOT / "tests" / "fixtures", ROOT / "tests" / "golden"], Config())
    assert len(loader._PARSED) > 100
    changed = []
    for key, (text, data, positions, problems) in loader._PARSED.items():
        document, found = loader._parse(key, text)
        if repr(document.data) != repr(data) or document.positions != positions or \
                [d.message for d in found] != [d.message for d in problems]:
            changed.append(key)
    assert changed == []


def test_only_the_latest_files_are_kept(tmp_path: Path, fresh: list[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "_PARSED_LIMIT", 2)
    for name in ("a.yml", "b.yml", "c.yml"):
        (tmp_path / name).write_text(COMPONENT)
    for name in ("a.yml", "b.yml", "a.yml", "c.yml", "a.yml", "b.yml"):
        loader.load_path(tmp_path / name)
    # a is used again each time before it would be dropped; b is dropped when c comes
    assert [Path(p).name for p in fresh] == ["a.yml", "b.yml", "c.yml", "b.yml"]
    assert len(loader._PARSED) == 2


# The loader remembers the implicit tag of each plain scalar's text. That is sound only while the
# safe loader has no path resolvers (a tag that depends on where the scalar sits).
def test_the_safe_loader_resolves_plain_scalars_by_their_text_alone() -> None:
    assert not yaml.SafeLoader.yaml_path_resolvers
    assert not loader._Loader.yaml_path_resolvers


SCALAR_TEXTS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["true", "True", "TRUE", "yes", "no", "on", "off", "~", "null", "", "12", "-0", "0x1f",
                     "0o17", "1_000", "1e-3", "1.5e+10", ".inf", "-.Inf", ".nan", "2024-01-31", "12:30:00",
                     "<<", "=", "1:20", "0.1.2", "+12", "_", "1e3"]))


@settings(max_examples=400, deadline=None)
@given(text=SCALAR_TEXTS)
def test_a_remembered_tag_is_the_resolvers_tag(text: str) -> None:
    reference = yaml.SafeLoader("")
    ours = loader._Loader("")
    for implicit in ((True, False), (False, True), (True, True)):
        expected = reference.resolve(yaml.ScalarNode, text, implicit)
        assert ours.resolve(yaml.ScalarNode, text, implicit) == expected
        assert ours.resolve(yaml.ScalarNode, text, implicit) == expected  # the remembered answer
