"""validator.paths: within a lint run each folder is resolved once and each path stat-ed once;
the answers must be the standard library's, and nothing may be cached outside a run."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from validator import paths
from validator.engine import lint_file

NAMES = st.sampled_from(["a", "b", "c", "d.py", "..", "."])


def _tree(root: Path, links: list[tuple[str, str]]) -> None:
    """Folders a/b/c, files beside them, and the links hypothesis asks for (relative or absolute,
    to folders, files, missing targets, or each other: loops included)."""
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "d.py").write_text("")
    (root / "a" / "b" / "d.py").write_text("")
    for name, target in links:
        link = root / name
        if not link.parent.is_dir() or link.exists() or link.is_symlink():
            continue
        os.symlink(target, link)


LINK_NAMES = st.sampled_from(["l1", "a/l2", "a/b/l3", "a/b/c/l4"])
LINK_TARGETS = st.sampled_from(["a", "a/b", "../a", "..", "b", "c", "d.py", "missing", "l1", "../l1",
                                "a/l2", "/", "../../a/b/c"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(links=st.lists(st.tuples(LINK_NAMES, LINK_TARGETS), max_size=4),
       queries=st.lists(st.lists(st.one_of(NAMES, st.sampled_from(["l1", "l2", "l3", "l4"])),
                                 min_size=1, max_size=6), min_size=1, max_size=8))
def test_resolved_in_a_run_is_realpath(tmp_path_factory, links, queries) -> None:
    root = tmp_path_factory.mktemp("tree")
    _tree(root, links)
    with paths.one_run():
        for parts in queries:
            text = str(root.joinpath(*parts))
            # Asked twice: the second answer comes from the cache.
            assert str(paths.resolved(text)) == os.path.realpath(text)
            assert str(paths.resolved(text)) == os.path.realpath(text)
            assert paths.is_file(text) == os.path.isfile(text)
            assert paths.is_dir(text) == os.path.isdir(text)
            assert paths.exists(text) == os.path.exists(text)


def test_relative_paths_resolve_against_the_working_directory(tmp_path, monkeypatch) -> None:
    (tmp_path / "src").mkdir()
    os.symlink("src", tmp_path / "code")
    monkeypatch.chdir(tmp_path)
    with paths.one_run():
        assert paths.resolved("code/train.py") == tmp_path.resolve() / "src" / "train.py"
        assert paths.resolved(Path("src")) == tmp_path.resolve() / "src"


def test_runs_nest_and_the_cache_ends_with_the_outermost(tmp_path) -> None:
    target = tmp_path / "data.csv"
    with paths.one_run():
        with paths.one_run():
            assert not paths.exists(target)
        target.write_text("x")
        assert not paths.exists(target), "within one run the first answer stands"
    assert paths.exists(target), "a new run sees the file"


def test_a_long_lived_process_sees_a_file_created_between_two_lint_calls(tmp_path) -> None:
    # The quiz and the runner lint again in the same process after the user fixed something.
    (tmp_path / "src").mkdir()
    spec = tmp_path / "job.yml"
    spec.write_text("$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json\n"
                    "command: python train.py\ncode: ./src\nenvironment: azureml:sklearn:1\n"
                    "compute: azureml:cpu-cluster\n")
    before = {d.code for d in lint_file(spec).diagnostics}
    assert "AML804" in before  # the entry script does not exist
    (tmp_path / "src" / "train.py").write_text("print('hello')\n")
    after = {d.code for d in lint_file(spec).diagnostics}
    assert "AML804" not in after


def test_a_run_cache_keeps_answers_only_within_a_run() -> None:
    cache = paths.run_cache()
    cache["outside"] = 1
    assert "outside" not in cache, "outside a run nothing is kept"
    with paths.one_run():
        cache["inside"] = 2
        assert cache["inside"] == 2
    assert not cache, "the outermost run's end empties it"
