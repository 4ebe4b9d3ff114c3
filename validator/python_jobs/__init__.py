"""Azure ML jobs written in Python with the SDK v2 (``command(...)``, ``.sweep(...)``,
``@dsl.pipeline``, ``JobSchedule``), in a ``.py`` file or a notebook, linted without running a line
of them.

The module is read as an abstract syntax tree (:mod:`.interpreter`); each job it submits is
turned into the CLI YAML spec the SDK would send for it (:mod:`.to_spec`), and the YAML rules
check that spec, their findings placed on the Python source. What only the source shows is
checked here too: a keyword an SDK builder drops without a word (AML901), a value the linter
cannot know without running the code (AML902, info), a file that is not Python (AML903).

Nothing of azure-ai-ml is imported: what the SDK's functions take is a generated table
(:mod:`.signatures`, from tools/sdk_signatures.py).
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import NamedTuple

from ..diagnostic import Diagnostic, Severity
from ..loader import Document
from .source import NOTEBOOK_SUFFIX, PYTHON_SUFFIX, NotANotebook, Source, read_notebook

SUFFIXES = (PYTHON_SUFFIX, NOTEBOOK_SUFFIX)
KIND = "python"
# What a file must contain to be read at all: every job-building module imports azure-ai-ml.
MARKERS = ("azure.ai.ml", "azure.ai import ml")
# Mappings the rules cross-check: when one is unknown as a whole, the job is not checked.
WHOLE = frozenset({"inputs", "outputs", "search_space", "jobs", "trial"})


class Analysis(NamedTuple):
    """A Python file read: its source (a notebook's cells joined), the specs of the jobs it
    submits (each a Document for the YAML rules, with the pointers whose value is not known),
    what only the source shows, and the local paths the code makes as it runs."""

    source: Source | None
    documents: list[tuple[Document, frozenset[tuple]]]
    findings: list[Diagnostic]
    created: frozenset[Path] = frozenset()


def is_python_path(path: str) -> bool:
    return path.endswith(SUFFIXES)


def imports_sdk(text: str) -> bool:
    """Whether a source may build Azure ML jobs (it names azure-ai-ml): a training script or a
    helper module is not Azure ML at all, and is skipped silently."""
    return any(marker in text for marker in MARKERS)


def analyse(path: str, text: str, base_dir: Path) -> Analysis:
    """Read ``text`` (the file at ``path``) and build what the rules check."""
    if path.endswith(NOTEBOOK_SUFFIX):
        try:
            source = read_notebook(text)
        except NotANotebook as error:
            return Analysis(None, [], [Diagnostic(path, 1, 1, "AML903", f"not a Jupyter notebook: {error}",
                                                  hint="a .ipynb file holds a notebook's JSON; save it again "
                                                       "from Jupyter")])
    else:
        source = Source(text)
    if not imports_sdk(source.text):
        return Analysis(source, [], [])
    try:
        tree = ast.parse(source.text, filename=path)
    except SyntaxError as error:
        line = error.lineno or 1
        return Analysis(source, [], [Diagnostic(
            path, line, max(1, error.offset or 1), "AML903", f"not valid Python: {error.msg}; nothing in this "
            "file is checked", hint="fix the syntax error (python -m py_compile shows it too)")])
    from .interpreter import Interpreter
    from .to_spec import build

    documents: list[tuple[Document, frozenset[tuple]]] = []

    def submitted(job, _span) -> None:  # type: ignore[no-untyped-def]
        spec = build(job)
        unknown = frozenset(where for where, _ in spec.unknown) | spec.elsewhere
        findings.extend(_not_static(path, spec.unknown))
        # A whole mapping the rules cross-check (every input, every step) that is not known: no
        # finding about what refers to it could be trusted, so the job is not checked.
        if not any(where[-1:] and where[-1] in WHOLE for where in unknown):
            documents.append((Document(path, source.text, spec.data, spec.positions, base_dir, spec.kind), unknown))
        created = job.get("create_job") if job.what == "JobSchedule" else None
        if created is not None and getattr(created, "what", None) in ("command", "sweep", "pipeline"):
            submitted(created, _span)  # the job a schedule creates is checked as a job

    findings: list[Diagnostic] = []
    interpreter = Interpreter(source.text, submitted, base_dir)
    names = interpreter.run(tree)
    findings.extend(_dropped(path, interpreter.dropped))
    made = {*interpreter.created, *(_expanded(target, names) for target in source.written)}
    created = frozenset(Path(os.path.normpath(base_dir / target)) for target in made if target)
    return Analysis(source, documents, findings, created=created)


def _expanded(target: str, names: dict) -> str:
    """A ``%%writefile`` target as IPython expands it: ``{src_dir}/train.py`` with ``src_dir``'s
    literal value ("" when a name has no literal value: then the path is not known)."""
    from .values import Known

    def value(match: re.Match) -> str:
        found = names.get(match.group(1))
        if isinstance(found, Known) and isinstance(found.value, str):
            return found.value
        raise KeyError(match.group(1))

    try:
        return re.sub(r"\{([A-Za-z_]\w*)\}", value, target)
    except KeyError:
        return ""


# Findings about a local path that does not exist (a code folder, an entry script, a data input).
MISSING_PATHS = frozenset({"AML803", "AML804", "AML806"})


def made_at_runtime(diagnostic: Diagnostic, document: Document, created: frozenset[Path]) -> bool:
    """Whether a missing local path of a finding is one the code makes before it submits the
    job (``os.makedirs``, ``ml_client.jobs.download(download_path=...)``, a ``%%writefile``
    cell): the path and a made one lie one inside the other."""
    if diagnostic.code not in MISSING_PATHS or not created:
        return False
    value: object = document.data
    for part in diagnostic.pointer.split("/")[1:]:
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, dict):
        value = value.get("path") or value.get("code")
    candidates = [value] if isinstance(value, str) else []
    candidates += re.findall(r"'([^']+)'", diagnostic.message)
    for text in candidates:
        missing = Path(os.path.normpath(document.base_dir / text))
        for made in created:
            if missing == made or made in missing.parents or missing in made.parents:
                return True
    return False


def _dropped(path: str, dropped: list[tuple[str, str, object]]) -> list[Diagnostic]:
    from ..suggest import closest
    from .signatures import KEYWORDS

    found = []
    for callable_name, keyword, span in dropped:
        used = KEYWORDS[callable_name]
        close = closest(keyword, sorted(n for n in used if not n.startswith("_")))
        shown = callable_name.split(".")[-1] if callable_name.startswith(("Command.", "Sweep.")) else callable_name
        message = f"{shown}() does not use the keyword '{keyword}': azure-ai-ml drops it without an error"
        hint = f"did you mean '{close}'?" if close else f"remove it (what {shown}() uses: the SDK reference)"
        found.append(Diagnostic(path, span.line, span.column, "AML901", message + (f"; did you mean '{close}'?"
                                                                                   if close else ""),
                                end_column=span.end, hint=hint))
    return found


def _not_static(path: str, unknown: list) -> list[Diagnostic]:
    found = []
    for where, value in unknown:
        key = "/".join(str(part) for part in where) or "the job"
        found.append(Diagnostic(
            path, value.span.line, value.span.column, "AML902",
            f"'{key}' is not checked: its value is known only when the code runs ({value.why})",
            end_column=value.span.end, severity=Severity.INFO, pointer="/" + key if where else "",
            hint="write it as a literal (or a name assigned one) for the linter to check it"))
    return found


def covered(diagnostic: Diagnostic, unknown: frozenset[tuple]) -> bool:
    """Whether a finding on a spec may be a consequence of a value left out as unknown: its
    pointer is at or under one, or it is about the key one would have filled (a required key
    reported missing, "no compute is named")."""
    parts = tuple(diagnostic.pointer.split("/")[1:]) if diagnostic.pointer else ()
    for where in unknown:
        text = tuple(str(part) for part in where)
        if parts[:len(text)] == text:
            return True
        # In the mapping that holds it (at it, or at a sibling) and naming it.
        if parts[:len(text) - 1] == text[:-1] and re.search(rf"\b{re.escape(text[-1])}\b", diagnostic.message):
            return True
    return False


__all__ = ["KIND", "SUFFIXES", "Analysis", "analyse", "covered", "imports_sdk", "is_python_path", "made_at_runtime"]
