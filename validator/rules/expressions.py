"""AML2xx (first part): the `${{ }}` / `$[[ ]]` expression language in commands and values —
syntax, and references to inputs, outputs and search-space entries that are not declared.
Bindings across pipeline steps (`parent.*`) are checked by the pipeline family."""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple

from .. import expressions
from ..diagnostic import Finding, Fix, Severity
from ..edits import replace_span
from ..loader import Document, Path_, count_before
from ..suggest import closest
from ._base import check
from ._commands import command_owners
from ..values import mapping as _mapping
from .file_level import JOB

COMMAND_KINDS = ("commandJob", "sweepJob", "commandComponent", "pipelineJob", "pipelineComponent")

COMPONENT_WITH_BRACES = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: train_model
version: "1"
command: python train.py --lr {inputs.lr}
environment: azureml:sklearn-train:2
inputs:
  lr:
    type: number
    default: 0.01
"""

SWEEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  command: python train.py --lr ${{search_space.lr}}
  environment: azureml:sklearn-train:2
compute: azureml:cpu-cluster
sampling_algorithm: random
search_space:
  lr:
    type: uniform
    min_value: 0.001
    max_value: 0.1
objective:
  goal: maximize
  primary_metric: auc
limits:
  max_total_trials: 20
"""


class CommandSite(NamedTuple):
    """A command string and the names it may refer to."""

    path: Path_
    text: str
    inputs: dict
    outputs: dict
    search_space: dict | None
    owner: str


def command_sites(document: Document) -> Iterator[CommandSite]:
    """Every command string of the document, with the inputs, outputs (and search space) it may
    name: a sweep's trial command sees the sweep's own inputs and outputs."""
    for node, path, owner in command_owners(document):
        text = node.get("command")
        if not isinstance(text, str):
            continue
        if document.kind == "sweepJob":
            data = _mapping(document.data)
            # Inputs misplaced under trial are reported by the schema (AML101, "move them up");
            # counting them as declared here keeps that one problem to one message.
            yield CommandSite(path, text, {**_mapping(node.get("inputs")), **_mapping(data.get("inputs"))},
                              {**_mapping(node.get("outputs")), **_mapping(data.get("outputs"))},
                              _mapping(data.get("search_space")), "the sweep")
        else:
            yield CommandSite(path, text, _mapping(node.get("inputs")), _mapping(node.get("outputs")), None, owner)


def _strings(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, path + (index,))


def _occurrence(template: expressions.Template, start: int, token: str) -> int:
    """How many times ``token`` appears in the text before ``start`` (to find it in the source)."""
    return count_before(template.text, token, start) if token else 0


@check("AML201", "expression-syntax", Severity.ERROR,
       "A `${{ }}` or `$[[ ]]` expression is malformed.",
       bad=JOB.replace("${{inputs.lr}}", "${{inputs.lr}"), good=JOB)
def expression_syntax(document: Document) -> Iterator[Finding]:
    """
    Every `${{` needs its `}}`; the inside is a dotted name (`inputs.lr`,
    `parent.jobs.prep.outputs.clean`); optional blocks `$[[ ... ]]` close with `]]`, do not nest,
    and contain an input reference (a block without one is never dropped, so the brackets only
    confuse). A malformed expression reaches the script as literal text.
    """
    for path, text in _strings(document.data):
        if not expressions.has_expression(text):
            continue
        template = expressions.parse(text)
        for problem in template.problems:
            span = document.locate_text(path, problem.token, _occurrence(template, problem.start, problem.token))
            yield Finding(problem.message, path, span=span)


def _undeclared(document: Document, context: str, noun: str, nouns: str) -> Iterator[Finding]:
    for site in command_sites(document):
        template = expressions.parse(site.text)
        declared = site.search_space if context == "search_space" else getattr(site, context)
        if context == "search_space" and not declared:
            continue  # no search space at all is its own finding (AML102/AML106), not one per use
        # The SDK still rewrites the deprecated {inputs.x} form, so those references count too.
        for reference in [*template.references, *template.deprecated]:
            if reference.context != context or len(reference.parts) < 2:
                continue
            name = reference.port(declared)
            if name in declared:
                continue
            message = f"'{reference.text}' refers to {noun} '{name}', which {site.owner} does not declare"
            close = closest(name, declared)
            if close:
                message += f"; did you mean '{close}'?"
            if reference.block is not None:
                message += " (its optional block would always be dropped)"
            known = ", ".join(str(k) for k in declared) or "none"
            where = "search_space" if context == "search_space" else context
            hint = f"declared {nouns}: {known}; declare '{name}' under `{where}:` or fix the name"
            span = document.locate_text(site.path, reference.text,
                                        _occurrence(template, reference.start, reference.text))
            yield Finding(message, site.path, hint=hint, span=span)


@check("AML202", "undefined-input", Severity.ERROR,
       "A command refers to `${{inputs.X}}` but no input X is declared.",
       bad=JOB.replace("${{inputs.lr}}", "${{inputs.learning_rate}}"), good=JOB, kinds=COMMAND_KINDS)
def undefined_input(document: Document) -> Iterator[Finding]:
    """
    The command is resolved against the job's (or component's, or step's) own `inputs`. The SDK
    lets an undeclared reference through `az ml job create --dry-run`-style loading and fails
    only at submission ("Inputs to job does not contain 'x' referenced in command"); for a
    component it says "Invalid data binding expression". Inside an optional block `$[[ ]]` the
    reference is not even checked at submission: the block is silently dropped on every run.
    """
    yield from _undeclared(document, "inputs", "input", "inputs")


@check("AML203", "undefined-output", Severity.ERROR,
       "A command refers to `${{outputs.X}}` but no output X is declared.",
       bad=JOB.replace("--lr ${{inputs.lr}}", "--lr ${{inputs.lr}} --model-dir ${{outputs.model}}"),
       good=JOB.replace("--lr ${{inputs.lr}}", "--lr ${{inputs.lr}} --model-dir ${{outputs.model}}")
               + "outputs:\n  model:\n    type: uri_folder\n",
       kinds=COMMAND_KINDS)
def undefined_output(document: Document) -> Iterator[Finding]:
    """
    Nothing in the SDK checks `${{outputs.X}}` in a job's command: the job is submitted and the
    script receives the literal text instead of a folder. Declare the output (an empty entry
    `model:` gives a default `uri_folder`).
    """
    yield from _undeclared(document, "outputs", "output", "outputs")


@check("AML204", "undefined-search-space", Severity.ERROR,
       "A sweep's trial command refers to `${{search_space.X}}` but the search space has no X.",
       bad=SWEEP.replace("${{search_space.lr}}", "${{search_space.learning_rate}}"), good=SWEEP,
       kinds=("sweepJob",))
def undefined_search_space(document: Document) -> Iterator[Finding]:
    """
    Each trial gets the sampled value of every search-space entry; a reference to an entry that
    does not exist is passed to the script as literal text, so every trial runs with the same
    (wrong) argument and the sweep tunes nothing.
    """
    yield from _undeclared(document, "search_space", "search-space entry", "search-space entries")


def _rewritten(document: Document, site: CommandSite) -> bool:
    """Whether azure-ai-ml rewrites the single-brace form in this command before submitting it:
    only a command job's own command and a sweep job's trial command
    (`map_single_brackets_and_warn`); a component's command, and a pipeline step's, which the
    SDK turns into a component, are sent as written."""
    return (document.kind, site.path) in {("commandJob", ("command",)), ("sweepJob", ("trial", "command"))}


def _single_braces(document: Document, rewritten: bool) -> Iterator[tuple[CommandSite, expressions.Reference,
                                                                          tuple[int, int, int]]]:
    for site in command_sites(document):
        if _rewritten(document, site) != rewritten:
            continue
        template = expressions.parse(site.text)
        for reference in template.deprecated:
            span = document.locate_text(site.path, reference.text,
                                        _occurrence(template, reference.start, reference.text))
            yield site, reference, span


@check("AML205", "single-brace-reference", Severity.WARNING,
       "A command uses the deprecated single-brace form `{inputs.X}`.",
       bad=JOB.replace("${{inputs.lr}}", "{inputs.lr}"), good=JOB, kinds=("commandJob", "sweepJob"), fix="safe")
def single_brace_reference(document: Document) -> Iterator[Finding]:
    """
    In a command job's command and a sweep's trial command, the SDK still rewrites `{inputs.x}`
    (and `{outputs.x}`, `{search_space.x}`) to `${{inputs.x}}` before it submits the job, with a
    deprecation warning ("Use of {} for parameters is deprecated, instead use ${{}}"). Other
    clients do not: the Azure Developer CLI's training extension refuses the form, since the
    service itself does not resolve it. Write the `${{ }}` form. In a component's or a pipeline
    step's command nothing rewrites it (AML221).

    See: reference-yaml-job-command,
    https://github.com/Azure/azure-dev/blob/main/cli/azd/extensions/azure.ai.training/internal/utils/job_validator.go
    """
    for site, reference, span in _single_braces(document, rewritten=True):
        # The SDK makes the same rewrite, so the fix keeps what the job runs: safe.
        yield Finding(f"'{reference.text}' is the deprecated single-brace form", site.path,
                      hint=f"write '${{{{{reference.dotted}}}}}'", span=span,
                      fix=_brace_fix(document, reference, span, safe=True))


@check("AML221", "single-brace-not-rewritten", Severity.ERROR,
       "A component's or pipeline step's command uses the single-brace form `{inputs.X}`, which nothing resolves there.",
       bad=COMPONENT_WITH_BRACES, good=COMPONENT_WITH_BRACES.replace("{inputs.lr}", "${{inputs.lr}}"),
       kinds=("commandComponent", "pipelineJob", "pipelineComponent"), fix="unsafe")
def single_brace_not_rewritten(document: Document) -> Iterator[Finding]:
    """
    azure-ai-ml rewrites the deprecated `{inputs.x}` to `${{inputs.x}}` only in a command job's
    command and a sweep's trial command (AML205). A component's command, and a pipeline step's
    (which the SDK registers as an anonymous component), are sent as written, and the service
    does not resolve single braces: the script receives the literal text `{inputs.lr}` instead of
    the value. The Azure Developer CLI's training extension refuses the form for the same reason.
    Write `${{inputs.lr}}`.

    See: reference-yaml-component-command,
    https://github.com/Azure/azure-dev/blob/main/cli/azd/extensions/azure.ai.training/internal/utils/job_validator.go

    Provenance: azure-ai-ml 1.35.2: `map_single_brackets_and_warn` is called from CommandJob and
    SweepJob only; a component's and an inline step's command reach the request unchanged.
    """
    for site, reference, span in _single_braces(document, rewritten=False):
        yield Finding(
            f"'{reference.text}' in the command of {site.owner} is sent to the service as it is "
            "written: only a command job's or a sweep's command has the single-brace form rewritten, "
            "so the script receives this text instead of the value",
            site.path, hint=f"write '${{{{{reference.dotted}}}}}'", span=span,
            # The script then receives the value instead of the literal text: a change of what
            # runs, however evidently meant, so unsafe.
            fix=_brace_fix(document, reference, span, safe=False))


def _brace_fix(document: Document, reference: expressions.Reference, span: tuple[int, int, int],
               safe: bool) -> Fix | None:
    modern = "${{" + reference.dotted + "}}"
    edit = replace_span(document, span, reference.text, modern)
    return Fix((edit,), safe=safe, title=f"write '{modern}'") if edit else None


@check("AML206", "command-context", Severity.ERROR,
       "A command uses an expression that is not available to a command (`parent.*`, `name`...).",
       bad=JOB.replace("${{inputs.lr}}", "${{parent.inputs.lr}}"), good=JOB, kinds=COMMAND_KINDS)
def command_context(document: Document) -> Iterator[Finding]:
    """
    A command is resolved in its own context: it sees `inputs.*` and `outputs.*`, and in a
    sweep's trial `search_space.*`. Pipeline bindings (`${{parent.inputs.x}}`) belong in a
    step's `inputs:` mapping, which then feeds `${{inputs.x}}` in the command. Nothing in the SDK
    checks this; the script receives the literal text.
    """
    for site in command_sites(document):
        allowed = ["inputs", "outputs"] + (["search_space"] if site.search_space is not None else [])
        template = expressions.parse(site.text)
        for reference in template.references:
            if reference.context in allowed and reference.names_port(
                    site.search_space if reference.context == "search_space" else getattr(site, reference.context)):
                continue
            if reference.context in allowed:
                message = f"'{reference.text}' is not a port reference: write '${{{{{reference.context}.<name>}}}}'"
                hint = None
            else:
                message = (f"'{reference.text}' cannot be used in a command: the command of {site.owner} "
                           f"sees only {', '.join(a + '.*' for a in allowed)}")
                hint = None
                if reference.context == "parent":
                    hint = ("bind the value in the step's `inputs:` (for example `lr: "
                            "${{parent.inputs.lr}}`) and use `${{inputs.lr}}` in the command")
                elif reference.context in ("name", "output_name", "default_datastore"):
                    hint = ("`${{name}}`, `${{output_name}}` and `${{default_datastore}}` are resolved "
                            "in an output's `path`, not in a command")
            span = document.locate_text(site.path, reference.text,
                                        _occurrence(template, reference.start, reference.text))
            yield Finding(message, site.path, hint=hint, span=span)
