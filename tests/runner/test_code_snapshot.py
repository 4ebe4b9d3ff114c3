"""runner.snapshot: the copy of a job's ``code`` the local runner runs in, selected as Azure ML
selects what it uploads (.amlignore over .gitignore, gitignore syntax, no .git, limits)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner import snapshot
from runner.snapshot import SnapshotError, SnapshotReport, take_snapshot

SETTINGS = settings(max_examples=int(os.environ.get("AMLLAB_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
GIT = shutil.which("git")


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def listing(root: Path) -> set[str]:
    """Every file and link under root, relative and "/"-separated; folders only through them."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            out.add(Path(dirpath, name).relative_to(root).as_posix())
    return out


def snap(tmp_path: Path, files: dict[str, str | bytes], **kwargs) -> tuple[SnapshotReport, set[str]]:
    code = make_tree(tmp_path / "code", files)
    report = take_snapshot(code, tmp_path / "snap", **kwargs)
    return report, listing(tmp_path / "snap")


# -- what is copied, and how ---------------------------------------------------------------------

def test_without_an_ignore_file_everything_is_copied_with_its_metadata(tmp_path: Path) -> None:
    code = make_tree(tmp_path / "code", {"train.py": "print(1)\n", "pkg/util.py": b"\x00\xffbinary",
                                         "pkg/deep/er/conf.yml": "a: 1\n"})
    os.chmod(code / "train.py", 0o750)
    os.utime(code / "pkg" / "util.py", ns=(1_000_000_000_123, 1_000_000_000_123))
    os.utime(code / "pkg", ns=(2_000_000_000_000, 2_000_000_000_000))

    report = take_snapshot(code, tmp_path / "snap")

    dest = tmp_path / "snap"
    assert listing(dest) == {"train.py", "pkg/util.py", "pkg/deep/er/conf.yml"}
    assert (dest / "pkg" / "util.py").read_bytes() == b"\x00\xffbinary"
    assert stat.S_IMODE((dest / "train.py").stat().st_mode) == 0o750
    assert (dest / "pkg" / "util.py").stat().st_mtime_ns == 1_000_000_000_123
    # Folder times are set after their content is written, or writing would bump them.
    assert (dest / "pkg").stat().st_mtime_ns == 2_000_000_000_000
    assert report == SnapshotReport(files=3, bytes=9 + 8 + 5, ignored=0, ignore_file=None, warnings=[])


def test_empty_folders_are_not_recreated(tmp_path: Path) -> None:
    # The service's snapshot is a set of files: a folder with no file in it does not arrive.
    code = make_tree(tmp_path / "code", {"a/f.txt": "x", "a/only_ignored/x.log": "x"})
    (code / "empty" / "nested").mkdir(parents=True)
    (code / ".amlignore").write_text("*.log\n")
    take_snapshot(code, tmp_path / "snap")
    assert sorted(p.name for p in (tmp_path / "snap").iterdir()) == [".amlignore", "a"]
    assert [p.name for p in (tmp_path / "snap" / "a").iterdir()] == ["f.txt"]


def test_single_file_code_is_copied_into_dest(tmp_path: Path) -> None:
    script = make_tree(tmp_path, {"train.py": "print('hi')\n", ".amlignore": "*.py\n"}) / "train.py"
    report = take_snapshot(script, tmp_path / "snap")
    assert listing(tmp_path / "snap") == {"train.py"}
    assert (tmp_path / "snap" / "train.py").read_text() == "print('hi')\n"
    assert (report.files, report.bytes, report.ignored, report.ignore_file) == (1, 12, 0, None)


def test_single_file_code_given_as_a_link_copies_the_content_under_the_links_name(tmp_path: Path) -> None:
    real = make_tree(tmp_path, {"src/real.py": "x = 1\n"}) / "src" / "real.py"
    (tmp_path / "entry.py").symlink_to(real)
    take_snapshot(tmp_path / "entry.py", tmp_path / "snap")
    copied = tmp_path / "snap" / "entry.py"
    assert not copied.is_symlink() and copied.read_text() == "x = 1\n"


# -- ignore files ----------------------------------------------------------------------------------

def test_amlignore_is_used_and_gitignore_is_not_when_both_exist(tmp_path: Path) -> None:
    report, copied = snap(tmp_path, {".amlignore": "*.log\n", ".gitignore": "*.txt\n",
                                     "run.log": "", "notes.txt": "", "train.py": ""})
    assert copied == {".amlignore", ".gitignore", "notes.txt", "train.py"}
    assert (report.ignore_file, report.ignored) == (".amlignore", 1)


def test_gitignore_is_used_when_it_is_the_only_one(tmp_path: Path) -> None:
    report, copied = snap(tmp_path, {".gitignore": "*.txt\n", "notes.txt": "", "train.py": ""})
    assert copied == {".gitignore", "train.py"}
    assert (report.ignore_file, report.ignored) == (".gitignore", 1)


def test_an_ignore_file_may_leave_itself_out(tmp_path: Path) -> None:
    _, copied = snap(tmp_path, {".amlignore": ".amlignore\n", "train.py": ""})
    assert copied == {"train.py"}


def test_negation_reincludes_a_file(tmp_path: Path) -> None:
    _, copied = snap(tmp_path, {".amlignore": "# logs\n*.log\n!keep.log\n\n",
                                "a.log": "", "keep.log": "", "sub/b.log": "", "sub/keep.log": ""})
    assert copied == {".amlignore", "keep.log", "sub/keep.log"}


def test_a_directory_pattern_matches_folders_at_any_depth_but_not_files(tmp_path: Path) -> None:
    report, copied = snap(tmp_path, {".amlignore": "data/\n", "data/a.csv": "", "data/b/c.csv": "",
                                     "src/data/d.csv": "", "src/data.py": "", "other/data": "a file"})
    assert copied == {".amlignore", "src/data.py", "other/data"}
    assert report.ignored == 2  # the two folders, not the three files in them


def test_nothing_under_an_excluded_folder_can_be_reincluded(tmp_path: Path) -> None:
    # gitignore: "It is not possible to re-include a file if a parent directory of that file is excluded."
    _, copied = snap(tmp_path / "one", {".amlignore": "build/\n!build/keep.txt\n", "build/keep.txt": "",
                                        "build/out.bin": ""})
    assert copied == {".amlignore"}
    # Excluding the folder's content instead of the folder lets the negation work.
    _, copied = snap(tmp_path / "two", {".amlignore": "build/*\n!build/keep.txt\n", "build/keep.txt": "",
                                        "build/out.bin": ""})
    assert copied == {".amlignore", "build/keep.txt"}


def test_folders_reincluded_by_a_later_pattern_are_walked(tmp_path: Path) -> None:
    # The classic allow-list. pathspec alone, asked about "src/", says the folder is ignored.
    _, copied = snap(tmp_path / "one", {".amlignore": "*\n!*/\n!*.py\n", "train.py": "", "README.md": "",
                                        "src/a.py": "", "src/a.txt": "", "src/x/y.py": ""})
    assert copied == {"train.py", "src/a.py", "src/x/y.py"}
    # "a/**" matches what is inside a, not a itself, so a negation inside a still applies.
    _, copied = snap(tmp_path / "two", {".amlignore": "a/**\n!a/keep\n", "a/keep": "", "a/other": ""})
    assert copied == {".amlignore", "a/keep"}


def test_anchored_and_nested_patterns(tmp_path: Path) -> None:
    _, copied = snap(tmp_path, {
        ".amlignore": "/top.txt\nsub/deep/*.bin\n**/cache\ndoc/**/*.pdf\n",
        "top.txt": "", "sub/top.txt": "",
        "sub/deep/w.bin": "", "sub/deep/more/w.bin": "", "deep/w.bin": "",
        "cache/x": "", "a/b/cache": "", "a/b/cached": "",
        "doc/a.pdf": "", "doc/x/y/b.pdf": "", "doc/x/y/b.md": "",
    })
    assert copied == {".amlignore", "sub/top.txt", "sub/deep/more/w.bin", "deep/w.bin", "a/b/cached",
                      "doc/x/y/b.md"}


def test_ignore_files_in_sub_folders_are_copied_but_not_applied(tmp_path: Path) -> None:
    # azure-ai-ml reads the ignore file at the root of code only.
    report, copied = snap(tmp_path, {".amlignore": "*.log\n", "sub/.amlignore": "*\n", "sub/.gitignore": "*\n",
                                     "sub/a.py": "", "sub/b.log": ""})
    assert copied == {".amlignore", "sub/.amlignore", "sub/.gitignore", "sub/a.py"}
    assert report.ignore_file == ".amlignore"


def test_an_unusable_pattern_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    report, copied = snap(tmp_path, {".amlignore": "!\n*.log\n", "a.log": "", "a.py": ""})
    assert copied == {".amlignore", "a.py"}
    assert len(report.warnings) == 1 and ".amlignore line 1" in report.warnings[0]


def test_a_byte_order_mark_does_not_spoil_the_first_pattern(tmp_path: Path) -> None:
    code = make_tree(tmp_path / "code", {"a.log": "", "a.py": ""})
    (code / ".amlignore").write_bytes(b"\xef\xbb\xbf*.log\n")
    take_snapshot(code, tmp_path / "snap")
    assert listing(tmp_path / "snap") == {".amlignore", "a.py"}


# -- what is never copied --------------------------------------------------------------------------

def test_git_folders_and_files_are_never_copied(tmp_path: Path) -> None:
    report, copied = snap(tmp_path, {".amlignore": "!.git\n", ".git/HEAD": "ref", ".git/objects/x": "",
                                     "vendor/lib/.git": "gitdir: ../../.git/modules/lib", "vendor/lib/a.py": "",
                                     "a.git": ""})
    assert copied == {".amlignore", "vendor/lib/a.py", "a.git"}
    assert report.ignored == 0


def test_excluded_workspace_inside_code_is_not_copied(tmp_path: Path) -> None:
    code = make_tree(tmp_path / "code", {"train.py": "", ".amllab/runs/r1/wd/train.py": "",
                                         ".amllab/runs/r1/log.txt": "", "sub/.amllab/x": ""})
    dest = code / ".amllab" / "runs" / "r2" / "wd"
    report = take_snapshot(code, dest, exclude=[code / ".amllab"])
    assert listing(dest) == {"train.py", "sub/.amllab/x"}
    assert (report.files, report.ignored) == (2, 0)


def test_exclude_is_matched_on_real_paths(tmp_path: Path) -> None:
    code = make_tree(tmp_path / "real", {"train.py": "", "ws/run/x": "", "keep/ws": ""})
    (tmp_path / "alias").symlink_to(code)
    take_snapshot(tmp_path / "alias", tmp_path / "snap", exclude=[code / "ws"])
    assert listing(tmp_path / "snap") == {"train.py", "keep/ws"}
    take_snapshot(code, tmp_path / "snap2", exclude=[tmp_path / "alias" / "ws"])
    assert listing(tmp_path / "snap2") == {"train.py", "keep/ws"}


def test_dest_inside_code_is_not_copied_into_itself(tmp_path: Path) -> None:
    code = make_tree(tmp_path / "code", {"train.py": "", "a/b.py": ""})
    take_snapshot(code, code / "out" / "snap")
    assert listing(code / "out" / "snap") == {"train.py", "a/b.py"}


# -- links and special files ---------------------------------------------------------------------

def test_symbolic_links_are_recreated_not_followed(tmp_path: Path) -> None:
    big = make_tree(tmp_path / "big", {f"part{i}.bin": b"x" * 1000 for i in range(5)})
    code = make_tree(tmp_path / "code", {"train.py": "print(1)\n", "conf/base.yml": "a: 1\n"})
    (code / "data").symlink_to(big, target_is_directory=True)
    (code / "entry.py").symlink_to("train.py")
    (code / "conf" / "current.yml").symlink_to("base.yml")
    (code / "dangling").symlink_to("no/such/file")

    report = take_snapshot(code, tmp_path / "snap")

    dest = tmp_path / "snap"
    assert listing(dest) == {"train.py", "conf/base.yml", "data", "entry.py", "conf/current.yml", "dangling"}
    for name, target in [("data", str(big)), ("entry.py", "train.py"), ("conf/current.yml", "base.yml"),
                         ("dangling", "no/such/file")]:
        assert (dest / name).is_symlink() and os.readlink(dest / name) == target, name
    assert (dest / "entry.py").read_text() == "print(1)\n"
    assert not (dest / "dangling").exists()
    assert (report.files, report.bytes) == (6, 9 + 5)  # links count as entries, not as their targets' bytes


def test_a_link_is_matched_as_a_file_by_the_ignore_file(tmp_path: Path) -> None:
    # git stores a link as a blob: "data/" (folders only) does not match a link to a folder.
    code = make_tree(tmp_path / "code", {".amlignore": "data/\n*.lnk\n", "real/x": ""})
    (code / "data").symlink_to(code / "real", target_is_directory=True)
    (code / "a.lnk").symlink_to("real/x")
    report = take_snapshot(code, tmp_path / "snap")
    assert listing(tmp_path / "snap") == {".amlignore", "real/x", "data"}
    assert report.ignored == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_a_fifo_is_skipped_with_a_warning_instead_of_blocking(tmp_path: Path) -> None:
    code = make_tree(tmp_path / "code", {"train.py": ""})
    os.mkfifo(code / "pipe")
    report = take_snapshot(code, tmp_path / "snap")
    assert listing(tmp_path / "snap") == {"train.py"}
    assert report.warnings == ["pipe is not a regular file, a folder or a link; it is not copied"]


# -- limits ---------------------------------------------------------------------------------------

def test_limits_are_warnings_above_not_at_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "MAX_SNAPSHOT_FILES", 3)
    monkeypatch.setattr(snapshot, "MAX_SNAPSHOT_BYTES", 3 * 1024 * 1024)
    at_limit, _ = snap(tmp_path / "at", {"a": b"x" * (3 * 1024 * 1024 - 2), "b": "1", "c": "2"})
    assert at_limit.warnings == []

    over, copied = snap(tmp_path / "over", {"a": b"x" * (3 * 1024 * 1024), "b": "1", "c": "2", "d": "3"})
    assert copied == {"a", "b", "c", "d"}  # still copied: the local run goes on
    assert over.warnings == [
        "the snapshot holds 4 files; Azure ML refuses more than 3 "
        "(list what the job does not need in .amlignore, or move data to a datastore)",
        "the snapshot holds 3.0 MB; Azure ML refuses more than 3 MB "
        "(list what the job does not need in .amlignore, or move data to a datastore)",
    ]


def test_the_real_limits_are_the_services(tmp_path: Path) -> None:
    assert (snapshot.MAX_SNAPSHOT_FILES, snapshot.MAX_SNAPSHOT_BYTES) == (2000, 300 * 1024 * 1024)
    report, _ = snap(tmp_path, {f"f{i:04}": "" for i in range(2001)} | {".gitignore": "f000*\n"})
    assert (report.files, report.ignored, report.warnings) == (1992, 10, [])
    report, _ = snap(tmp_path / "more", {f"f{i:04}": "" for i in range(2001)})
    assert report.warnings[0].startswith("the snapshot holds 2,001 files; Azure ML refuses more than 2,000 ")


def test_the_remedy_names_the_ignore_file_in_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "MAX_SNAPSHOT_FILES", 1)
    report, _ = snap(tmp_path, {".gitignore": "", "a": ""})
    assert "in .gitignore," in report.warnings[0]


# -- refusals ---------------------------------------------------------------------------------------

def test_dest_must_be_missing_or_empty(tmp_path: Path) -> None:
    code = make_tree(tmp_path / "code", {"train.py": "new"})
    make_tree(tmp_path / "full", {"old.txt": "old"})
    with pytest.raises(SnapshotError, match="is not empty") as info:
        take_snapshot(code, tmp_path / "full")
    assert str(tmp_path / "full") in str(info.value)
    assert listing(tmp_path / "full") == {"old.txt"}

    (tmp_path / "afile").write_text("")
    with pytest.raises(SnapshotError, match="not a folder"):
        take_snapshot(code, tmp_path / "afile")

    (tmp_path / "empty").mkdir()
    take_snapshot(code, tmp_path / "empty")
    take_snapshot(code, tmp_path / "new" / "parents" / "too")
    assert listing(tmp_path / "empty") == listing(tmp_path / "new" / "parents" / "too") == {"train.py"}


def test_missing_code_is_a_snapshot_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError) as info:
        take_snapshot(tmp_path / "nope", tmp_path / "snap")
    assert str(info.value) == f"cannot read the code path {tmp_path / 'nope'}: No such file or directory"
    assert isinstance(info.value, OSError) and info.value.path == str(tmp_path / "nope")
    assert not (tmp_path / "snap").exists()


def test_an_unreadable_file_is_a_snapshot_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = make_tree(tmp_path / "code", {".amlignore": "secret.key\n", "secret.key": "", "a/train.py": ""})
    real_copy2 = shutil.copy2
    copied_from = []

    def copy2(src, dst, **kwargs):
        copied_from.append(Path(src).name)
        if Path(src).name == "train.py":
            raise PermissionError(13, "Permission denied", str(src))
        return real_copy2(src, dst, **kwargs)

    monkeypatch.setattr(shutil, "copy2", copy2)
    with pytest.raises(SnapshotError) as info:
        take_snapshot(code, tmp_path / "snap")
    assert str(info.value) == f"cannot copy {code / 'a' / 'train.py'}: Permission denied"
    assert info.value.errno == 13
    assert "secret.key" not in copied_from  # an ignored file is never opened


def test_really_unreadable_file_and_folder(tmp_path: Path) -> None:
    code = make_tree(tmp_path / "code", {"locked.txt": "x", "shut/a.txt": "", "ignored/a.txt": "",
                                         ".amlignore": "ignored/\n"})
    os.chmod(code / "locked.txt", 0)
    try:
        (code / "locked.txt").read_bytes()
        os.chmod(code / "locked.txt", 0o644)
        pytest.skip("this process reads files whatever their mode (root with CAP_DAC_OVERRIDE)")
    except PermissionError:
        pass
    os.chmod(code / "ignored", 0)
    try:
        with pytest.raises(SnapshotError, match="locked.txt: Permission denied"):
            take_snapshot(code, tmp_path / "snap1")
        os.chmod(code / "locked.txt", 0o644)
        os.chmod(code / "shut", 0)
        with pytest.raises(SnapshotError, match="cannot list the folder .*shut: Permission denied"):
            take_snapshot(code, tmp_path / "snap2")
        os.chmod(code / "shut", 0o755)
        take_snapshot(code, tmp_path / "snap3")  # the unreadable but ignored folder is never listed
    finally:
        for p in ("locked.txt", "shut", "ignored"):
            os.chmod(code / p, 0o755)


# -- properties -----------------------------------------------------------------------------------

NAMES = ["a", "b", "c.txt", "d.py", "build", "x.log", "keep"]
PATTERNS = ["a", "b/", "*.txt", "*/", "*", "build/", "a/**", "/b", "**/c.txt", "a/*", "keep/", "a/b/", "*.py",
            "**/build/", "b/**/d.py", "x.log/", "/a/c.txt", "d.py"]
NEGATIONS = ["!*.txt", "!*/", "!a", "!build/keep", "!a/**", "!keep", "!b/", "!a/b/c.txt", "!**/keep", "!d.py"]
paths = st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join), min_size=1, max_size=25)


def build(root: Path, rels: list[str]) -> dict[str, bytes]:
    """Write each path as a file unless a file or folder is already in the way; return the files."""
    files: dict[str, bytes] = {}
    for rel in rels:
        parts = rel.split("/")
        if rel in files or any("/".join(parts[:i]) in files for i in range(1, len(parts))) \
                or any(f.startswith(rel + "/") for f in files):
            continue
        files[rel] = f"{rel}\n".encode() * (len(rel) % 3)
    make_tree(root, files)
    return files


@SETTINGS
@given(rels=paths, lines=st.lists(st.sampled_from(PATTERNS), max_size=5))
def test_every_file_the_spec_does_not_match_is_copied_byte_identically_and_no_other(
        rels: list[str], lines: list[str]) -> None:
    # Without negations a file is left out exactly when a pattern matches it or a folder above it,
    # which is what pathspec answers for the file's own path.
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    with tempfile.TemporaryDirectory() as tmp:
        code, dest = Path(tmp, "code"), Path(tmp, "snap")
        files = build(code, rels)
        (code / ".amlignore").write_text("\n".join(lines) + "\n")
        files[".amlignore"] = (code / ".amlignore").read_bytes()
        report = take_snapshot(code, dest)
        expected = {rel for rel in files if not spec.match_file(rel)}
        assert listing(dest) == expected
        for rel in expected:
            assert (dest / rel).read_bytes() == files[rel], rel
        assert report.files == len(expected)
        assert report.bytes == sum(len(files[rel]) for rel in expected)
        assert (report.ignored == 0) == (expected == set(files))


@pytest.mark.skipif(GIT is None, reason="git is the reference for gitignore semantics")
@SETTINGS
@given(rels=paths, lines=st.lists(st.sampled_from(PATTERNS + NEGATIONS), max_size=6))
def test_the_selection_is_gits(rels: list[str], lines: list[str]) -> None:
    # With negations the order and the excluded-parent rule matter; git itself is the oracle.
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    with tempfile.TemporaryDirectory() as tmp:
        code, dest = Path(tmp, "code"), Path(tmp, "snap")
        build(code, rels)
        (code / ".gitignore").write_text("\n".join(lines) + "\n")
        env["HOME"] = env["XDG_CONFIG_HOME"] = tmp  # no user-wide excludes file
        subprocess.run([GIT, "init", "-q", str(code)], env=env, check=True)
        out = subprocess.run([GIT, "ls-files", "-z", "--others", "--exclude-standard"], cwd=code, env=env,
                             capture_output=True, check=True).stdout
        expected = {p for p in out.decode().split("\0") if p}
        take_snapshot(code, dest)
        assert listing(dest) == expected, lines
