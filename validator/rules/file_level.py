"""AML0xx: the file itself — reading, YAML syntax, document structure, kind detection and
suppression comments. The loader, kind detection and the engine report these; this module
declares them so each has a code, a severity and documentation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator
from urllib.parse import urlsplit

from ..diagnostic import Finding, Fix, Severity
from ..edits import replace_scalar
from ..kinds import schema_stem
from ._base import check, declare

if TYPE_CHECKING:
    from ..loader import Document

JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
command: python train.py --lr ${{inputs.lr}}
environment: azureml:sklearn-train:2
compute: azureml:cpu-cluster
inputs:
  lr: 0.01
"""

declare(
    "AML000", "unreadable-file", Severity.ERROR,
    "The file could not be read, or a check failed inside amllab.",
    doc="""
    A path that does not exist, a permission problem, or (a bug in amllab) a check that crashed.
    An internal failure names the check; please report it with the file that triggered it.
    """,
    bad="aml-lint does-not-exist.yml", good="aml-lint job.yml",
    stage="engine", examples_are_runnable=False)

declare(
    "AML001", "yaml-syntax", Severity.ERROR,
    "The file is not valid YAML.",
    doc="""
    Azure ML refuses a spec it cannot parse ("Error while parsing yaml file"). The position is
    where the parser gave up, which is usually just after the real mistake: look at the line
    above too. Unbalanced quotes and a missing space after a colon are the usual causes.
    """,
    bad="""
    command: python train.py
    environment: "azureml:sklearn-train:2
    """,
    good=JOB, stage="file")

declare(
    "AML002", "duplicate-key", Severity.ERROR,
    "A mapping sets the same key twice.",
    doc="""
    YAML loaders, including the one Azure ML uses, silently keep the last value, so the first
    one is lost without a word. Remove one of them, or merge them.
    """,
    bad=JOB.replace("inputs:\n  lr: 0.01\n", "inputs:\n  lr: 0.01\n  lr: 0.1\n"),
    good=JOB, stage="file")

declare(
    "AML003", "tab-indentation", Severity.ERROR,
    "A tab character is used for indentation.",
    doc="""
    YAML allows only spaces for indentation; a tab makes the file unreadable to every YAML
    parser. Editors often insert tabs when a file was started in another format.
    """,
    bad="inputs:\n\tlr: 0.01\n", good=JOB, stage="file")

declare(
    "AML004", "empty-file", Severity.ERROR,
    "The file holds no YAML document.",
    doc="""
    An empty spec (or one with only comments) cannot be submitted. Write the spec or delete the
    file.
    """,
    bad="# TODO: write the training job\n", good=JOB, stage="file")

declare(
    "AML005", "multiple-documents", Severity.ERROR,
    "The file holds more than one YAML document.",
    doc="""
    `az ml job create --file` reads exactly one document; a second one after `---` makes the
    load fail. Put each job in its own file.
    """,
    bad=JOB + "---\n" + JOB, good=JOB, stage="file")

declare(
    "AML006", "unsafe-tag", Severity.ERROR,
    "A YAML tag asks for a Python object or another type the safe loader refuses.",
    doc="""
    Azure ML loads specs with a safe loader: `!!python/...` tags (which would run code) and
    custom tags are refused. Write plain values.
    """,
    bad=JOB.replace("lr: 0.01", "lr: !!python/object/apply:os.system ['echo hi']"),
    good=JOB, stage="file")

declare(
    "AML007", "alias-bomb", Severity.ERROR,
    "Aliases expand without bound, recurse into themselves, or nest too deep.",
    doc="""
    A few anchors and aliases are fine; a 'billion laughs' file whose aliases expand to millions
    of nodes, or an alias that contains itself, would hang or exhaust memory in a naive loader.
    So would a long string aliased many times: few nodes, but gigabytes of text once the SDK
    expands the aliases to send the job. amllab stops at 10,000 alias expansions, at aliases
    that add more than 1 MiB (1,048,576 characters) of text, and at 200 levels of nesting, and
    reports the place.
    """,
    bad="""
    a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]
    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
    d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
    command: echo hi
    """,
    good=JOB, stage="file")

declare(
    "AML008", "not-utf8", Severity.ERROR,
    "The file is not valid UTF-8.",
    doc="""
    Specs are read as UTF-8. A file saved in Latin-1 or UTF-16 (some Windows editors) fails to
    load. The position is the first byte that is not UTF-8; save the file as UTF-8.
    """,
    bad="display_name: caf\\xe9  (the byte 0xE9 alone, as Latin-1 writes it)",
    good="display_name: café  (saved as UTF-8)",
    stage="file", examples_are_runnable=False)

declare(
    "AML009", "file-too-large", Severity.ERROR,
    "The file is larger than a spec should be (1 MiB by default).",
    doc="""
    A job spec is a few kilobytes. A huge YAML file is usually data committed by mistake, and
    reading it would slow every commit's hook. Raise the limit with `max-file-size` in
    `[tool.amllab.lint]` or `--max-file-size` when a big file is intended.
    """,
    bad="a 5 MB file of inlined data", good="a spec that points at the data with a path",
    stage="file", examples_are_runnable=False)

declare(
    "AML010", "unknown-kind", Severity.ERROR,
    "The file looks like an Azure ML spec but its kind cannot be told.",
    doc="""
    amllab decides what a file is from `$schema`, then `type`, then its shape. A file with
    `trial:` or `jobs:` but no `type` would be loaded by Azure ML as a command job and fail with
    a confusing message; a `type` in the wrong case (`Command`) is refused outright. Add the
    `type` (or a `$schema` line) so both the service and amllab know what the file is.
    """,
    bad="""
    trial:
      command: python train.py
      environment: azureml:sklearn-train:2
    """,
    good=JOB, stage="kind")

declare(
    "AML011", "schema-type-mismatch", Severity.ERROR,
    "`$schema` names a different kind than `type` (or than the file's shape).",
    doc="""
    Azure ML ignores `$schema` and goes by `type` (default `command`), while editors validate
    against `$schema`. When they disagree, the editor checks one thing and the service runs
    another. A pipeline or sweep `$schema` without `type` is the classic case: the service loads
    the file as a command job. Make them agree.
    """,
    bad=JOB.replace("commandJob.schema.json", "sweepJob.schema.json"),
    good=JOB, stage="kind")

declare(
    "AML012", "unused-suppression", Severity.WARNING,
    "An `# amllab: ignore[...]` comment suppresses nothing.",
    doc="""
    Suppressions that no longer match a finding hide future problems on that line; remove them.
    A suppression naming a code that does not exist is reported too. Like ruff's RUF100.
    """,
    bad=JOB.replace("compute: azureml:cpu-cluster", "compute: azureml:cpu-cluster  # amllab: ignore[AML101]"),
    good=JOB, stage="engine", fix="safe")

declare(
    "AML013", "other-kind", Severity.INFO,
    "An Azure ML spec of a kind amllab does not check (environment, data, endpoint...).",
    doc="""
    amllab checks command, sweep and pipeline jobs, command and pipeline components, and
    schedules. Other Azure ML files are recognised by their `$schema` or shape and skipped, so a
    repository-wide run never flags them. Shown with `-v`.
    """,
    bad="""
    $schema: https://azuremlschemas.azureedge.net/latest/environment.schema.json
    name: sklearn-train
    image: mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04
    """,
    good=JOB, stage="kind")


# The current schema of each kind amllab checks, by the lower-case stem of a `$schema` URL.
CURRENT_SCHEMAS = {stem: f"https://azuremlschemas.azureedge.net/latest/{name}.schema.json" for stem, name in {
    "commandjob": "commandJob", "sweepjob": "sweepJob", "pipelinejob": "pipelineJob",
    "commandcomponent": "commandComponent", "pipelinecomponent": "pipelineComponent",
    "schedule": "schedule", "monitorschedule": "monitorSchedule"}.items()}
_STEM_KINDS = {"commandjob": "commandJob", "sweepjob": "sweepJob", "pipelinejob": "pipelineJob",
               "commandcomponent": "commandComponent", "pipelinecomponent": "pipelineComponent",
               "schedule": "schedule", "monitorschedule": "schedule"}


def outdated_schema(url: str) -> str | None:
    """The current `$schema` URL for ``url`` when ``url`` is an outdated or misspelt address of
    one of the kinds amllab checks (``http://azureml/sdk-2-0/CommandJob.json``, a preview blob,
    a file name in the wrong case); else None."""
    current = CURRENT_SCHEMAS.get(schema_stem(url))
    if current is None or url == current:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # not a URL at all ("https://x[", an unclosed IPv6 bracket): AML011's
        return None
    host, folder = parts.netloc.lower(), parts.path.rsplit("/", 1)[0].lower()
    if host in ("azureml", "azuremlsdk2.blob.core.windows.net"):
        return current
    if host == "azuremlschemas.azureedge.net" and folder == "/latest":
        return current
    return None


@check("AML014", "outdated-schema-url", Severity.WARNING,
       "`$schema` is an old or misspelt address of the kind's schema, which editors cannot fetch.",
       bad=JOB.replace("https://azuremlschemas.azureedge.net/latest/commandJob.schema.json",
                       "http://azureml/sdk-2-0/CommandJob.json"),
       good=JOB, fix="safe")
def outdated_schema_url(document: Document) -> Iterator[Finding]:
    """
    Azure ML ignores `$schema`; editors (VS Code's YAML extension) download it to check and
    complete the file. The preview's addresses (`http://azureml/sdk-2-0/CommandJob.json`, on a
    host that does not exist, and `https://azuremlsdk2.blob.core.windows.net/preview/0.0.1/...`)
    and a file name in the wrong case (`CommandJob.schema.json`: the address is case-sensitive)
    are not the schemas the YAML reference publishes, so the editor checks the file against
    nothing or against the preview's rules. The fix writes the current address of the same kind:
    what the service runs does not change.

    See: reference-yaml-overview
    """
    data = document.data if isinstance(document.data, dict) else {}
    url = data.get("$schema")
    if not isinstance(url, str):
        return
    current = outdated_schema(url)
    if current is None or _STEM_KINDS.get(schema_stem(url)) != document.kind:
        return  # a `$schema` of another kind is AML011's
    edit = replace_scalar(document, ("$schema",), current)
    yield Finding(f"'$schema: {url}' is an outdated address of the schema; the current one is '{current}'",
                  ("$schema",), hint=f"$schema: {current}",
                  fix=Fix((edit,), title="write the current $schema URL") if edit else None)
