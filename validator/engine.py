"""The lint pipeline for one file and for many:

    bytes ─▶ decode ─▶ parse (data + positions) ─▶ kind ─▶ schema ─▶ rule checks
          ─▶ configuration (select/ignore/per-file) ─▶ inline suppressions ─▶ FileReport
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Iterable, Iterator

from . import kinds, loader, references, suppress, workspace
from .config import Config
from .diagnostic import Diagnostic, Severity
from .rules import CODES, checks_for, declared
from . import paths as fs  # `paths` is lint_paths' parameter
from .schema_check import check_schema
from .workspace import Registry

YAML_SUFFIXES = (".yml", ".yaml")
PYTHON_SUFFIXES = (".py", ".ipynb")  # jobs written with the SDK v2 (validator/python_jobs)
SKIP_DIRS = {"node_modules", "__pycache__", "venv", "site-packages"}


@dataclass
class FileReport:
    path: str
    kind: str | None = None
    skipped: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # The decoded source, for excerpts; None when the bytes could not be read as text.
    text: str | None = field(default=None, repr=False)
    # Whether the bytes ``text`` was decoded from began with a UTF-8 byte-order mark (decoding
    # drops it): with it, ``text`` gives back those very bytes, which `--fix` checks the file
    # still holds before it writes. None for a text given as text (lint_text).
    bom: bool | None = field(default=None, repr=False)
    # A notebook's findings are placed in its code cells joined into one text (``source``):
    # (the line each cell starts on, its number), for reports that say "cell 3, line 2".
    cells: tuple[tuple[int, int], ...] = field(default=(), repr=False)
    source: str | None = field(default=None, repr=False)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)


@dataclass
class LintResult:
    files: list[FileReport] = field(default_factory=list)
    # Folders that could not be walked, one sentence each (the CLI prints them as warnings).
    unreadable: list[str] = field(default_factory=list)
    # Under a baseline (validator/baseline.py): (findings it suppressed, entries that matched
    # nothing this run could have found). None: no baseline.
    baselined: tuple[int, int] | None = None

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.diagnostics]

    def count(self, severity: Severity) -> int:
        return sum(f.count(severity) for f in self.files)

    @property
    def internal_errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.code == "AML000" and "internal error" in d.message)


def _run_checks(document: loader.Document) -> list[Diagnostic]:
    findings: list[Diagnostic] = []
    for rule in checks_for(document.kind or ""):
        try:
            # A check function yields what is wrong, where and the fix; Rule.check stamps the
            # rule's code and severity from the registry on each.
            findings.extend(rule.check(document))
        except Exception as error:  # a bug of ours must not hide the other findings
            findings.append(Diagnostic(
                document.path, 1, 1, "AML000",
                f"internal error in rule {rule.code} ({rule.name}): {type(error).__name__}: {error}",
                hint="please report this to amllab with the file that triggered it"))
    return findings


# Workspace registries read for --workspace, per folder and version of workspace.yml.
_REGISTRIES: dict[tuple, Registry] = {}


def _registry(config: Config) -> Registry | None:
    if config.workspace is None:
        return None
    folder = config.workspace.resolve()
    try:
        stamp = (folder / workspace.FILE_NAME).stat().st_mtime_ns
    except OSError:
        stamp = 0
    key = (folder, stamp)
    if key not in _REGISTRIES:
        if not folder.is_dir():
            # A workspace not created yet registers nothing (the CLI refuses a missing folder
            # itself; aml-run lints a first job before it creates the workspace).
            return Registry(config.workspace, {section: {} for section in workspace.SECTIONS})
        _REGISTRIES[key] = workspace.load_registry(config.workspace)  # as given, for messages
    return _REGISTRIES[key]


def lint_text(text: str, path: str = "<stdin>", config: Config | None = None,
              base_dir: Path | None = None) -> FileReport:
    """Lint a spec given as text. ``path`` is shown in diagnostics and decides per-file ignores."""
    config = config or Config()
    with fs.one_run():
        return _finish(_analyse(path, text, base_dir, _registry(config)), config)


def lint_bytes(raw: bytes, path: str, config: Config | None = None, base_dir: Path | None = None,
               size: int | None = None) -> FileReport:
    """Lint a spec given as bytes; ``raw`` may be the start of a longer input whose whole size is
    ``size`` (the limit and one byte are enough to tell it is too large)."""
    config = config or Config()
    with fs.one_run():
        return _finish(_analyse_bytes(raw, path, base_dir, config.max_file_size, _registry(config), size=size),
                       config)


def _analyse_bytes(raw: bytes, path: str, base_dir: Path | None, max_bytes: int,
                   registry: Registry | None = None, source: str | None = None,
                   size: int | None = None) -> FileReport:
    text, problem = loader.decode(path, raw, max_bytes, size)
    if problem is not None:
        return FileReport(path, diagnostics=[problem])
    report = _analyse(path, text, base_dir, registry, source)
    report.bom = raw.startswith(loader.UTF8_BOM)
    return report


# The configuration-independent analysis of each file version, so that a component file used by
# many pipelines (and linted in its own right) is analysed once per run. Not longer: the analysis
# also reads other files (code folders, components), which may change between two runs.
_ANALYSED: dict[tuple, FileReport] = fs.run_cache()
_ANALYSED_LIMIT = 20_000


def _analysed(path: Path, shown: str, max_bytes: int, registry: Registry | None = None) -> FileReport:
    status = fs.stat(path)
    key: tuple | None = None
    if status is not None:
        key = (str(fs.resolved(path)), status.st_mtime_ns, status.st_size, max_bytes, id(registry))
    report = _ANALYSED.get(key) if key else None
    if report is None:
        try:
            # At most the limit and one byte: a huge file (or a device) is not held in memory.
            raw, size = loader.read_limited(path, max_bytes)
        except OSError as error:
            reason = error.strerror or str(error)
            try:
                if path.is_symlink():
                    reason += f" (a symbolic link to '{os.readlink(path)}', which cannot be read)"
            except OSError:
                pass  # the folder that holds it cannot be read either: the reason says so
            return FileReport(shown, diagnostics=[Diagnostic(shown, 1, 1, "AML000", f"cannot read file: {reason}")])
        # The parse is shared with the reference loader (validator.loader), under the real path.
        report = _analyse_bytes(raw, shown, path.parent, max_bytes, registry,
                                source=key[0] if key else None, size=size)
        if key is not None:
            if len(_ANALYSED) >= _ANALYSED_LIMIT:
                _ANALYSED.clear()
            _ANALYSED[key] = report
    diagnostics = [d if d.path == shown else replace(d, path=shown) for d in report.diagnostics]
    return FileReport(shown, report.kind, report.skipped, diagnostics, report.text, report.bom, report.cells,
                      report.source)


def lint_file(path: Path, config: Config | None = None, display: str | None = None) -> FileReport:
    config = config or Config()
    with fs.one_run():
        return _finish(_analysed(path, display or str(path), config.max_file_size, _registry(config)), config)


def _lint_referenced(path: Path) -> list[Diagnostic]:
    return lint_file(path).diagnostics


# A component, trial or create_job file a spec points at is linted in its own right, by the same
# pipeline: the engine hands references this callback (references sit below the rules, which sit
# below the engine, so they cannot import it).
references.set_linter(_lint_referenced)


def _analyse(path: str, text: str, base_dir: Path | None, registry: Registry | None = None,
             source: str | None = None) -> FileReport:
    try:
        if path.endswith(PYTHON_SUFFIXES):
            return _analyse_python(path, text, base_dir, registry)
        return _analyse_unguarded(path, text, base_dir, registry, source)
    except Exception as error:  # a bug of ours: one clear line, never a traceback
        return FileReport(path, text=text, diagnostics=[Diagnostic(
            path, 1, 1, "AML000", f"internal error while checking this file: {type(error).__name__}: {error}",
            hint="please report this to amllab with the file that triggered it")])


def _analyse_unguarded(path: str, text: str, base_dir: Path | None, registry: Registry | None,
                       source: str | None = None) -> FileReport:
    document, problems = loader.parse(path, text, base_dir, source=source)
    document.workspace = registry
    report = FileReport(path, diagnostics=list(problems), text=text)
    if document.data is None:
        return report
    detection = kinds.detect(document)
    report.diagnostics.extend(detection.diagnostics)
    report.skipped = detection.skip_reason
    if detection.kind is None:
        return report
    document.kind = report.kind = detection.kind
    # One problem, one message: where the loader or kind detection already explained a value
    # (an unsafe tag, a missing `type`), the schema's view of the same value is left out.
    covered = detection.covered | {d.pointer for d in report.diagnostics if d.pointer}
    report.diagnostics.extend(d for d in check_schema(document) if d.pointer not in covered)
    report.diagnostics.extend(_run_checks(document))
    if detection.kind in ("commandComponent", "pipelineComponent"):  # what a pipeline step can use
        from .rules.pipeline import for_anonymous_use  # the pipeline family: not for jobs alone

        report.diagnostics = for_anonymous_use(document, report.diagnostics)
    return report


def _analyse_python(path: str, text: str, base_dir: Path | None, registry: Registry | None) -> FileReport:
    """A ``.py`` file or a notebook: each job it submits checked as the spec it becomes
    (validator/python_jobs), the findings placed on the Python source."""
    from . import python_jobs

    analysis = python_jobs.analyse(path, text, base_dir or Path.cwd())
    source = analysis.source
    report = FileReport(path, text=text, diagnostics=list(analysis.findings))
    if source is not None:
        report.cells, report.source = source.cells, source.text
    if source is None or not python_jobs.imports_sdk(source.text):
        return report  # not a notebook, or no azure-ai-ml code: nothing to check
    report.kind = python_jobs.KIND
    checks_for(python_jobs.KIND)  # the family that declares what only the source shows
    seen = {(d.line, d.column, d.code) for d in report.diagnostics}
    for document, unknown in analysis.documents:
        document.workspace = registry
        found = check_schema(document) + _run_checks(document)
        for diagnostic in found:
            # A YAML rule's fix edits YAML text: none applies to Python source.
            diagnostic = replace(diagnostic, path=path, fix=None)
            # One mistake in an object two submitted jobs share (a command, and the sweep of it)
            # is reported once, at its place in the source.
            key = (diagnostic.line, diagnostic.column, diagnostic.code)
            if key not in seen and not python_jobs.covered(diagnostic, unknown) \
                    and not python_jobs.made_at_runtime(diagnostic, document, analysis.created):
                seen.add(key)
                report.diagnostics.append(diagnostic)
    return report


def _finish(report: FileReport, config: Config) -> FileReport:
    """Apply the configuration and the file's suppression comments (to a report of our own)."""
    path = report.path
    text = report.source if report.source is not None else report.text or ""
    kept = []
    for diagnostic in report.diagnostics:
        if not config.enabled(diagnostic.code, path):
            continue
        rule = declared(diagnostic.code)
        # The registry owns severities, so one declaration changes a rule everywhere.
        if rule is not None and diagnostic.code != "AML000" and rule.severity is not diagnostic.severity:
            diagnostic = replace(diagnostic, severity=rule.severity)
        kept.append(diagnostic)
    kept = suppress.apply(path, kept, suppress.parse(text), CODES,
                          lambda code: config.enabled(code, path), text=text)
    escalated = set()
    for diagnostic in kept:
        severity = config.severity(diagnostic.code, diagnostic.severity)
        escalated.add(diagnostic if severity is diagnostic.severity else replace(diagnostic, severity=severity))
    report.diagnostics = sorted(escalated, key=lambda d: (d.line, d.column, d.code, d.message))
    return report


def iter_spec_files(paths: Iterable[Path], unreadable: list[str] | None = None) -> Iterator[tuple[Path, bool]]:
    """Files to lint, with whether the user named them explicitly. Directories are walked for
    *.yml / *.yaml, skipping hidden folders, virtual environments and what is no regular file
    (a FIFO named `x.yml` would block the read). A folder that cannot be listed is skipped and
    its reason appended to ``unreadable``."""

    def note(error: OSError) -> None:
        if unreadable is not None:
            unreadable.append(f"cannot read folder {error.filename}: {error.strerror or error}; skipped")

    for path in paths:
        if fs.is_dir(path):
            for folder, dirs, files in os.walk(path, onerror=note):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
                for name in sorted(files):
                    if name.endswith(YAML_SUFFIXES) or name.endswith(PYTHON_SUFFIXES):
                        candidate = Path(folder) / name
                        status = fs.stat(candidate)
                        # A dangling link is kept: linting it says it cannot be read.
                        if status is None or stat.S_ISREG(status.st_mode):
                            yield candidate, False
        else:
            yield path, True


def _lint_in_worker(path: Path, config: Config) -> FileReport:
    report = lint_file(path, config)
    if not report.diagnostics:
        report.text = None  # only excerpts need the source: do not ship it back for clean files
    return report


def _prepare_workers() -> None:
    """Import every rule family and compile the top of the fast schema checks before the workers
    fork, so that every worker inherits them (jsonschema itself is only loaded by a worker that
    meets an invalid file)."""
    from .schema_check import fast_validator

    for kind in kinds.KINDS:
        checks_for(kind)
        fast_validator(kind)


# A forked worker starts with cold caches (the scripts its files run, the components they use,
# the jsonschema import a broken file needs). Measured on two cores: on Microsoft's examples (284
# files) two workers took a quarter more CPU than one process for a seventh less wall time; on
# 553 files, a tenth more CPU for a third less wall time on an idle machine (a tenth on a busy
# one). So a worker gets at least this many files: below that its start costs more than it saves.
FILES_PER_WORKER = 250


def lint_paths(paths: Iterable[str | Path], config: Config | None = None, jobs: int = 1) -> LintResult:
    """Lint files and directories. ``jobs`` > 1 spreads the files of a large tree over worker
    processes (one per :data:`FILES_PER_WORKER` files, at most ``jobs``)."""
    config = config or Config()
    with fs.one_run():  # the workers fork inside it, and inherit it
        unreadable: list[str] = []
        files = [p for p, _ in iter_spec_files((Path(p) for p in paths), unreadable)]
        workers = min(jobs, len(files) // FILES_PER_WORKER)
        if workers > 1:
            from .parallel import map_in_processes  # multiprocessing: only loaded for big trees

            return LintResult(map_in_processes(partial(_lint_in_worker, config=config), files, workers,
                                               prepare=_prepare_workers), unreadable)
        return LintResult([lint_file(p, config) for p in files], unreadable)
