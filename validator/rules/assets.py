"""AML8xx: what a spec points at outside itself. `azureml:` references to environments, code,
data, models and components must have one of the forms Azure ML resolves (SPEC §3.1, §3.2,
§3.4, §12 rules 6-7); local paths (`code`, data inputs, a conda file, a Docker build context,
`additional_includes`) must exist relative to the spec's folder, and so must the script the
command starts. Computes and datastores (`azureml:cpu-cluster`) are not versioned and are left
to their own families; so are component files referenced by pipeline steps and the job file of
a schedule."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterator, NamedTuple

from .. import expressions, pycode, workspace
from ..diagnostic import Finding, Severity
from ..loader import Document, Path_
from .. import paths as fs
from ..paths import resolved
from ..references import WORKSPACE_URI, datastore_path, is_arm_id, resolve
from ..suggest import closest
from ._base import check
from ._commands import holders, word_span
from ._shape import problems as shape_problems
from ..values import mapping as _mapping, text
from .file_level import JOB

# What each role of a reference is called in messages.
NOUNS = {"environment": "environment", "code": "code", "data": "data asset", "model": "model",
         "component": "component", "pipeline_component": "pipeline component", "output": "output path"}
VERSIONED = {"environment", "code", "data", "model", "component", "pipeline_component"}
# The asset-type segment of registry URIs and ARM ids, per role (None: not checked).
TYPE_SEGMENTS: dict[str, set[str] | None] = {
    "environment": {"environments", "environment"},
    "code": {"codes", "code"},
    "component": {"components", "component"},
    "pipeline_component": {"components", "component"},
    "data": None,
    "model": None,
}
KNOWN_TYPE_SEGMENTS = {"environments", "environment", "codes", "code", "components", "component",
                       "models", "model", "data"}
MODEL_TYPES = {"custom_model", "mlflow_model", "triton_model"}
LITERAL_TYPES = {"integer", "number", "string", "boolean"}

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
_ARM = re.compile(r"^/subscriptions/[^/]+/resourcegroups/[^/]+/providers/microsoft\.machinelearningservices/"
                  r"workspaces/[^/]+/(?P<type>[^/]+)/(?P<name>[^/]+)(?:/versions/(?P<version>[^/]+))?/?$",
                  re.IGNORECASE)
# A data asset's long-form URI (its datastore paths are validator.references.datastore_path's).
_LONG_DATA = re.compile(r"^" + WORKSPACE_URI + r"data/[^/]+/versions/[^/]+/?$", re.IGNORECASE)
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


class Slot(NamedTuple):
    """A value of the spec that points outside it: ``role`` says what it must be."""

    path: Path_
    value: Any
    role: str            # see NOUNS, or "includes" (an additional_includes entry), "inline_env"
    local: bool = True   # whether a local path here is resolved against this file


def _ports(data: dict, base: Path_, local: bool) -> Iterator[Slot]:
    for name, value in _mapping(data.get("inputs")).items():
        if isinstance(value, dict) and "path" in value:
            kind = text(value.get("type"))
            if kind in LITERAL_TYPES:
                continue
            role = "model" if kind in MODEL_TYPES else "data"
            yield Slot(base + ("inputs", name, "path"), value.get("path"), role, local)
    for name, value in _mapping(data.get("outputs")).items():
        if isinstance(value, dict) and "path" in value:
            yield Slot(base + ("outputs", name, "path"), value.get("path"), "output", False)


def _runnable(data: dict, base: Path_, local: bool, includes: bool = False) -> Iterator[Slot]:
    """environment, code (and a component's additional_includes) of a job, trial or component."""
    environment = data.get("environment")
    if isinstance(environment, dict):
        yield Slot(base + ("environment",), environment, "inline_env", local)
    elif "environment" in data:
        yield Slot(base + ("environment",), environment, "environment", local)
    if "code" in data:
        yield Slot(base + ("code",), data.get("code"), "code", local)
    if includes and isinstance(data.get("additional_includes"), list):
        for index, item in enumerate(data["additional_includes"]):
            yield Slot(base + ("additional_includes", index), item, "includes", local)


def _node(name: str, node: dict) -> Iterator[Slot]:
    base: Path_ = ("jobs", name)
    for key in ("component", "trial"):
        value = node.get(key)
        if isinstance(value, dict):
            yield from _runnable(value, base + (key,), True, includes=True)
        elif isinstance(value, str):
            role = "pipeline_component" if node.get("type") == "pipeline" else "component"
            yield Slot(base + (key,), value, role)
    yield from _runnable(node, base, True)
    task = node.get("task")
    if isinstance(task, dict):
        yield from _runnable(task, base + ("task",), True)
    yield from _ports(node, base, True)


def slots(document: Document) -> Iterator[Slot]:
    data = _mapping(document.data)
    kind = document.kind
    if kind == "commandJob":
        yield from _runnable(data, (), True)
        yield from _ports(data, (), True)
    elif kind == "sweepJob":
        yield from _runnable(_mapping(data.get("trial")), ("trial",), True)
        yield from _ports(data, (), True)
    elif kind == "commandComponent":
        yield from _runnable(data, (), True, includes=True)
    elif kind in ("pipelineJob", "pipelineComponent"):
        if kind == "pipelineJob":
            if isinstance(data.get("component"), str):
                yield Slot(("component",), data["component"], "pipeline_component")
            yield from _ports(data, (), True)
        for name, node in _mapping(data.get("jobs")).items():
            if isinstance(node, dict):
                yield from _node(name, node)
    elif kind == "schedule":
        create_job = data.get("create_job")
        if isinstance(create_job, dict):
            # Overrides are merged into the job file: local paths are left to that file.
            yield from _runnable(create_job, ("create_job",), False)
            yield from _ports(create_job, ("create_job",), False)


# ----------------------------------------------------------------------------- reference forms
def _with_placeholders(text: str) -> str:
    return _EXPRESSION.sub("x", text)


def reference_problem(text: str, role: str) -> tuple[str | None, str | None, bool]:
    """(problem, hint, unpinned) for an ``azureml:`` reference used as ``role``."""
    noun = NOUNS.get(role, "asset")
    value = _with_placeholders(text.strip())
    rest = value[len("azureml:"):]
    expected = TYPE_SEGMENTS.get(role)
    if rest.startswith("//"):
        parts = rest[2:].split("/")
        if parts and parts[-1] == "" and len(parts) > 1:
            parts = parts[:-1]
        host = parts[0] if parts else ""
        if host == "registries":
            if role == "output":
                return (f"an output is written to a datastore, not to registry asset '{text}'",
                        "write 'azureml://datastores/<datastore>/paths/<path>'", False)
            if len(parts) < 4 or not all(parts[1:4]):
                return (f"'{text}' is not a registry reference: it needs "
                        f"'azureml://registries/<registry>/<type>/<name>/versions/<version>'",
                        "or end it with '/labels/latest'", False)
            # No '/versions/...' or '/labels/...': the service resolves the default version (AML802).
            unpinned = len(parts) == 4
            if not unpinned and (len(parts) != 6 or parts[4] not in ("versions", "labels") or not parts[5]):
                return (f"'{text}' is not a registry reference: after the name comes "
                        "'/versions/<version>' or '/labels/<label>'", None, False)
            segment = parts[2]
            if segment not in KNOWN_TYPE_SEGMENTS:
                return (f"'{segment}' in '{text}' is not an asset type of a registry (environments, "
                        "components, models, data, codes)", None, False)
            if expected is not None and segment not in expected:
                return (f"'{text}' names {segment}, but `{_key(role)}` takes {'an' if noun[0] in 'aeiou' else 'a'} "
                        f"{noun}", None, False)
            return None, None, unpinned and role in VERSIONED
        if host == "datastores":
            if role not in ("data", "model", "output"):
                return (f"a datastore path cannot be used as {'an' if noun[0] in 'aeiou' else 'a'} {noun}: '{text}'",
                        None, False)
            if len(parts) < 3 or not parts[1] or parts[2] != "paths":
                return (f"'{text}' is not a datastore URI: write "
                        "'azureml://datastores/<datastore>/paths/<path>'", None, False)
            return None, None, False
        if host == "subscriptions":
            if role in ("data", "model", "output") and (datastore_path(value) is not None
                                                        or _LONG_DATA.match("/".join(parts))):
                return None, None, False
            return (f"'{text}' is not a workspace URI Azure ML resolves: the long form is "
                    "'azureml://subscriptions/<sub>/resourcegroups/<rg>/workspaces/<ws>/datastores/<ds>/paths/<path>'",
                    None, False)
        if host == "jobs":
            if role not in ("data", "model"):
                return f"a job output cannot be used as {'an' if noun[0] in 'aeiou' else 'a'} {noun}: '{text}'", None, False
            if len(parts) < 4 or not parts[1] or parts[2] != "outputs" or not parts[3]:
                return (f"'{text}' is not a job output URI: write "
                        "'azureml://jobs/<job-name>/outputs/<output>/paths/<path>'", None, False)
            return None, None, False
        if host in ("feeds", "locations"):
            return None, None, False
        return (f"'{text}' is not an Azure ML URI: 'azureml://' is followed by registries/, "
                "datastores/, subscriptions/ or jobs/",
                "a workspace asset is written 'azureml:<name>:<version>' (one colon, no slashes)", False)
    if role == "output":
        return (f"an output path is a storage location, not asset '{text}'",
                "write 'azureml://datastores/<datastore>/paths/<path>'; to register the output, "
                "set the output's `name` and `version`", False)
    if rest.startswith("/"):
        match = _ARM.match(rest)
        if match is None:
            return (f"'{text}' is not a valid ARM id: it needs "
                    "'/subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.MachineLearningServices/"
                    "workspaces/<ws>/<type>/<name>/versions/<version>'", None, False)
        segment = match.group("type").lower()
        if expected is not None and segment not in expected:
            return f"'{text}' names {segment}, but `{_key(role)}` takes {'an' if noun[0] in 'aeiou' else 'a'} {noun}", None, False
        return None, None, match.group("version") is None
    if not rest:
        return (f"'{text}' names no {noun} after 'azureml:'",
                "write 'azureml:<name>:<version>' or 'azureml:<name>@latest'", False)
    if "@" in rest:
        name, label = rest.split("@", 1)
        if not name:
            return (f"'{text}' has no {noun} name before '@'", "write 'azureml:<name>@latest'", False)
        if not label:
            return (f"'{text}' has no label after '@'", f"write 'azureml:{name}@latest'", False)
        if not _NAME.match(name) or not _NAME.match(label):
            bad = name if not _NAME.match(name) else label
            return (f"'{bad}' in '{text}' is not a valid {'name' if bad == name else 'label'}: "
                    "use letters, digits, '-', '_' and '.'",
                    "write 'azureml:<name>:<version>' or 'azureml:<name>@<label>' (not both)", False)
        return None, None, False
    if ":" in rest:
        name, version = rest.split(":", 1)
        if not name:
            return (f"'{text}' has no {noun} name before the version",
                    "write 'azureml:<name>:<version>'", False)
        if not version:
            return (f"'{text}' has no version after ':'",
                    f"write 'azureml:{name}:<version>', or 'azureml:{name}@latest' for the newest one", False)
        if not _NAME.match(name) or not _NAME.match(version):
            bad = name if not _NAME.match(name) else version
            why = ("a reference is 'azureml:<name>:<version>', with one colon" if ":" in bad
                   else "use letters, digits, '-', '_' and '.'")
            return (f"'{bad}' in '{text}' is not a valid {'name' if bad == name else 'version'}: {why}",
                    None, False)
        return None, None, False
    if not _NAME.match(rest):
        return (f"'{rest}' in '{text}' is not a valid {noun} name: use letters, digits, '-', '_' and '.'",
                "write 'azureml:<name>:<version>'", False)
    return None, None, role in VERSIONED


FORMS = {
    "environment": "an environment is 'azureml:<name>:<version>', 'azureml:<name>@latest' or "
                   "'azureml://registries/<registry>/environments/<name>/versions/<version>'",
    "code": "code is a local folder, a URL, or 'azureml:<name>:<version>'",
    "component": "a component is 'azureml:<name>:<version>', 'azureml:<name>@latest' or "
                 "'azureml://registries/<registry>/components/<name>/versions/<version>'",
    "pipeline_component": "a component is 'azureml:<name>:<version>' or 'azureml:<name>@latest'",
    "data": "data is 'azureml:<name>:<version>', 'azureml:<name>@latest' or "
            "'azureml://datastores/<datastore>/paths/<path>'",
    "model": "a model is 'azureml:<name>:<version>', 'azureml:<name>@latest' or "
             "'azureml://registries/<registry>/models/<name>/versions/<version>'",
    "output": "write 'azureml://datastores/<datastore>/paths/<path>'",
}


def _key(role: str) -> str:
    return {"environment": "environment", "code": "code", "component": "component",
            "pipeline_component": "component", "data": "path", "model": "path"}.get(role, role)


def _references(document: Document) -> Iterator[tuple[Slot, str | None, str | None, bool]]:
    for slot in slots(document):
        value = slot.value
        if slot.role in ("includes", "inline_env") or not isinstance(value, str):
            continue
        if not value.strip().startswith("azureml:"):
            continue
        if expressions.has_expression(value) and expressions.parse(value).problems:
            continue  # a malformed `${{ }}` inside is AML201's finding
        problem, hint, unpinned = reference_problem(value, slot.role)
        yield slot, problem, hint, unpinned


def _env(reference: str) -> str:
    return JOB.replace("environment: azureml:sklearn-train:2", f"environment: {reference}")


_DATA_JOB = JOB.replace("--lr ${{inputs.lr}}", "--lr ${{inputs.lr}} --data ${{inputs.iris}}") + \
    "  iris:\n    type: uri_file\n    path: {path}\n"


@check("AML801", "invalid-asset-reference", Severity.ERROR,
       "An `azureml:` reference to an environment, code, data, model or component is malformed.",
       bad=_env("azureml://registries/azureml/environments/sklearn-1.5/version/3"), good=JOB)
def invalid_asset_reference(document: Document) -> Iterator[Finding]:
    """
    Azure ML resolves a registered asset from one of these forms (the core YAML syntax page):
    `azureml:<name>:<version>`, `azureml:<name>@<label>` (`@latest`), a long ARM id
    `azureml:/subscriptions/.../workspaces/<ws>/<type>/<name>/versions/<version>`, a registry URI
    `azureml://registries/<registry>/<type>/<name>/versions/<version>` or `.../labels/<label>`;
    data also `azureml://datastores/<datastore>/paths/<path>`, the long
    `azureml://subscriptions/.../datastores/<ds>/paths/<path>` form and job outputs
    `azureml://jobs/<job>/outputs/<name>`. Anything else (`azureml:my-env:` with an empty version,
    `azureml:@latest`, a registry URI whose name is followed by something other than
    `/versions/<version>` or `/labels/<label>`, a registry URI to a model where an environment is
    expected, a datastore path as an environment) is refused at submission, or resolves to nothing.
    An output's `path` is a storage location (`azureml://datastores/...`); an output is registered
    with its `name` and `version`. Computes and datastores (`azureml:cpu-cluster`) are not checked
    here.

    A registry URI that stops after the name (`azureml://registries/<registry>/components/<name>`)
    is not malformed: the SDK loads it and the service resolves the default version (Microsoft's
    examples use it), so it is AML802's warning, not an error. The core syntax page lists only the
    pinned registry forms; what the SDK and Microsoft's examples do wins here.

    See: reference-yaml-core-syntax

    Provenance: SPEC §3.2, §3.4.
    """
    for slot, problem, hint, _ in _references(document):
        if problem is not None:
            yield Finding(problem, slot.path, hint=hint or FORMS.get(slot.role))


@check("AML802", "unpinned-asset-version", Severity.WARNING,
       "An `azureml:<name>` reference or a registry URI has no version or label, so the default "
       "version is used.",
       bad=_env("azureml:sklearn-train"), good=JOB)
def unpinned_asset_version(document: Document) -> Iterator[Finding]:
    """
    `azureml:<name>` without `:<version>` or `@<label>` is accepted for environments, data, models,
    code and components: the SDK allows a default version, but the documented forms name one. So is
    a registry URI that stops after the name, `azureml://registries/<registry>/components/<name>`
    (also environments and models): azure-ai-ml 1.35.2 loads and validates it, and the service
    resolves the registry's default version. Which version runs then depends on the workspace's (or
    registry's) state when the job is submitted, so two runs of the same spec can use different
    environments, components or data. Pin a version (`azureml:<name>:3`, `.../<name>/versions/3`),
    or say `@latest` (`.../<name>/labels/latest`) when the newest one is what you mean. Computes
    and datastores have no versions and get no warning.

    See: reference-yaml-core-syntax

    Provenance: SPEC §3.4, §12 rule 6; EXP:cmd_env_noversion.
    """
    for slot, problem, _, unpinned in _references(document):
        if problem is None and unpinned:
            noun = NOUNS.get(slot.role, "asset")
            value = slot.value.strip()
            if value.startswith(("azureml://", "azureml:/")):
                base = value.rstrip("/")
                hint = f"write '{base}/versions/<version>', or '{base}/labels/latest' to follow the newest version"
            else:
                hint = f"write '{value}:<version>', or '{value}@latest' to follow the newest version"
            yield Finding(
                f"{noun} '{value}' has no version or label: the default version is used; pin it",
                slot.path, hint=hint)


# ----------------------------------------------------------------------------- `file:` references
FILE_PREFIX = "file:"
# What a `file:` reference names, per role: the SDK loads these files (YamlFileSchema).
FILE_ROLES = {"environment": "environment", "component": "component", "pipeline_component": "component"}


def _file_slots(document: Document) -> Iterator[Slot]:
    """Values written in the older `file:<path>` form that name a YAML spec file: an environment,
    a step's component (or trial), a pipeline job's component, a schedule's import_data."""
    for slot in slots(document):
        if slot.local and slot.role in FILE_ROLES and isinstance(slot.value, str) \
                and slot.value.strip().startswith(FILE_PREFIX):
            yield slot
    if document.kind == "schedule":
        value = _mapping(document.data).get("import_data")
        if isinstance(value, str) and value.strip().startswith(FILE_PREFIX):
            yield Slot(("import_data",), value, "import_data")


@check("AML810", "file-prefix-reference", Severity.INFO,
       "An environment, component or data import is named with the older `file:<path>` form.",
       bad=_env("file:scenarios/command-job/environment.yml"), good=JOB)
def file_prefix_reference(document: Document) -> Iterator[Finding]:
    """
    `environment: file:./env.yml`, `component: file:./train.yml` and `import_data:
    file:./import.yml` are an older CLI form that azure-ai-ml still reads: the file is loaded
    in place of the value (`YamlFileSchema.load_from_file`), relative to the spec's folder, so
    an environment file becomes an inline (anonymous) environment. amllab reads it the same
    way: a component is linted as its plain path would be (AML516), an environment file is
    checked as an inline environment (AML811), a data import file as an inline data import
    (AML648). This info (shown with `-v`) only says the form is old. `code: file:./src` and an
    input's `path: file:./data` are documented local-path forms and get nothing. Not accepted
    by the SDK: `create_job: file:./job.yml` ("Not supporting non file for create_job"); write
    `create_job: ./job.yml`.

    The core syntax page lists the environment forms without `file:`; azure-ai-ml 1.35.2 loads it
    (`YamlFileSchema`), so the schema accepts it and this rule only informs.

    See: reference-yaml-core-syntax

    Provenance: SPEC §3.4.
    """
    for slot in _file_slots(document):
        value = slot.value.strip()
        path = value[len(FILE_PREFIX):]
        if slot.role == "environment":
            message = (f"environment '{value}' uses the older `file:` form: the file is read as an inline "
                       "environment")
            hint = ("define the environment inline (`image:` or `build:`, `conda_file:`), or register it and "
                    "write 'azureml:<name>:<version>'")
        else:
            noun = FILE_ROLES.get(slot.role, "data import")
            message = f"{noun} '{value}' uses the older `file:` prefix: it is read as the path '{path}'"
            hint = f"write '{path}'"
        yield Finding(message, slot.path, hint=hint)


def _environment_file_problems(document: Document, value: str) -> Iterator[tuple[str, str | None]]:
    """(problem, hint) for the environment file that ``value`` (`file:<path>`) names."""
    referenced = resolve(document, value)
    shown = _shown(document, value[len(FILE_PREFIX):])
    if not referenced.exists:
        yield (f"environment file '{value}' does not exist (no file '{shown}')",
               "the path is resolved against the folder of this spec file")
        return
    if fs.is_dir(referenced.path):
        yield f"environment file '{value}' is a folder", "name the environment's YAML file"
        return
    data = referenced.data
    if referenced.document is None or not isinstance(data, dict):
        yield (f"environment file '{value}' is not an environment spec (a YAML mapping with `image` or "
               "`build`)", None)
        return
    if "channels" in data or "dependencies" in data:
        yield (f"environment file '{value}' is a conda file, not an environment: the SDK refuses it "
               "(\"It looks like you are trying to specify a conda file\")",
               f"write the environment inline with `image:` and `conda_file: {value[len(FILE_PREFIX):]}`")
        return
    for problem in shape_problems(data, "commandJob", "environment", "an environment"):
        yield f"environment file '{value}': {problem}", None
    folder = referenced.path.parent
    conda_text = data.get("conda_file")
    if isinstance(conda_text, str) and conda_text.strip().startswith(FILE_PREFIX):
        # Unlike `environment:`, `conda_file:` takes the path as it is: azure-ai-ml 1.35.2 looks
        # for a file literally named 'file:./conda.yml' ("No such file or directory").
        yield (f"environment file '{value}': conda_file '{conda_text.strip()}' keeps its `file:` prefix "
               "as part of the path, so the SDK finds no such file",
               f"write `conda_file: {conda_text.strip()[len(FILE_PREFIX):]}`")
        return
    conda = _local(conda_text)
    if conda is not None and not fs.is_file(folder / conda):
        yield (f"environment file '{value}': conda file '{conda}' does not exist (no file "
               f"'{_shown(document, os.path.join(os.path.dirname(value[len(FILE_PREFIX):]), conda))}')",
               "paths in an environment file are resolved against that file's folder")
    build = data.get("build")
    context = _local(build.get("path")) if isinstance(build, dict) else None
    if context is not None and not fs.is_dir(folder / context):
        yield (f"environment file '{value}': Docker build context '{context}' is not a folder next to it",
               "paths in an environment file are resolved against that file's folder")


@check("AML811", "environment-file", Severity.ERROR,
       "The environment file that `environment: file:<path>` names is missing or not an environment.",
       bad=_env("file:scenarios/command-job/enviroment.yml"), good=JOB)
def environment_file(document: Document) -> Iterator[Finding]:
    """
    With the older `environment: file:<path>` form (AML810) azure-ai-ml loads the named YAML
    file, relative to the spec's folder, as an inline environment: a missing file fails the
    load ("No such file or directory"), a conda file in its place is refused ("It looks like
    you are trying to specify a conda file"), and its keys are those of an inline environment
    (`image`, `build`, `conda_file`, `os_type`, `inference_config`, plus the `$schema`, `name`,
    `version`, `description` and `tags` of an environment spec; a `name` and `version` are
    dropped for anonymous registration). Its `conda_file` and `build.path` are resolved against
    the environment file's own folder, and `conda_file` takes no `file:` prefix (the SDK would
    look for a file literally named `file:...`). An environment file is source, so a missing
    one is an error.
    """
    for slot in _file_slots(document):
        if slot.role != "environment":
            continue
        for problem, hint in _environment_file_problems(document, slot.value.strip()):
            yield Finding(problem, slot.path,
                          hint=hint or "an environment file holds `image:` or `build:`, and "
                                       "optionally `conda_file:`, as an inline environment does")


# ----------------------------------------------------------------------------- local paths
def _local(value: Any) -> str | None:
    """The local path a value names, or None for a reference, URL, binding or non-string."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or "$" in text or "://" in text or text.startswith(("azureml:", "git+", "http:", "https:")):
        return None
    if _DRIVE.match(text) or any(c in text for c in "*?["):
        return None
    return text[len("file:"):] if text.startswith("file:") else text


def _shown(document: Document, relative: str) -> str:
    """The path as the user would write it from where they ran aml-lint."""
    if os.path.isabs(relative):
        return os.path.normpath(relative)
    return os.path.normpath(os.path.join(os.path.dirname(document.path), relative))


def _exists(document: Document, relative: str) -> Path | None:
    try:
        path = resolved(Path(document.base_dir) / relative)
        return path if fs.exists(path) else None
    except (OSError, RuntimeError, ValueError):
        return None


# Source paths (AML803, an error): they belong in the repository next to the spec.
WHAT = {"code": "code folder", "includes": "additional include"}
# Data paths (AML806, a warning): inputs are usually downloaded or generated before a job is
# submitted, so a fresh checkout does not have them yet.
DATA_WHAT = {"data": "input", "model": "model input"}


def _missing(document: Document, slot: Slot, code: str) -> str | None:
    """The local path ``slot`` names when nothing is there, for the rule ``code``; None when it
    exists, is no local path (a reference, URL or binding) or is the other rule's. AML806 takes
    the data and model input paths, which may be fetched later; AML803 every other local path,
    and an input path that starts with `/subscriptions/` but is no ARM id. An input path that
    is an ARM id is a reference, not a local path. Each path is looked up once."""
    relative = _local(slot.value)
    if relative is None:
        return None
    if slot.role in DATA_WHAT and is_arm_id(relative):
        return None
    fetched_later = slot.role in DATA_WHAT and not _asset_id_without_prefix(relative)
    if fetched_later != (code == "AML806"):
        return None
    return relative if _exists(document, relative) is None else None


def _asset_id_without_prefix(relative: str) -> bool:
    """`/subscriptions/...`: an ARM id (or the start of one) without its 'azureml:' prefix, never
    a local path."""
    return relative.startswith("/subscriptions/")


def _path_problems(document: Document) -> Iterator[Finding]:
    for slot in slots(document):
        if not slot.local:
            continue
        if slot.role == "inline_env":
            yield from _environment_paths(document, slot)
            continue
        if slot.role not in WHAT and slot.role not in DATA_WHAT:
            continue
        relative = _missing(document, slot, "AML803")
        if relative is None:
            continue  # there, not a local path, or data that is not there yet (AML806)
        what = WHAT.get(slot.role) or f"{DATA_WHAT[slot.role]} path"
        value = slot.value.strip()
        if _asset_id_without_prefix(relative) and slot.role in DATA_WHAT:
            # A complete ARM id never gets here (_missing): this one is cut short or misspelt.
            yield Finding(
                f"{what} '{value}' starts like an ARM id but is not a complete one: read as "
                "a local path, it does not exist", slot.path,
                hint="an asset's ARM id is '/subscriptions/<sub>/resourceGroups/<rg>/providers/"
                     "Microsoft.MachineLearningServices/workspaces/<ws>/<type>/<name>/versions/<version>'")
        elif _asset_id_without_prefix(relative):
            yield Finding(
                f"{what} '{value}' is an asset id without the 'azureml:' prefix: read as "
                "a local path, it does not exist", slot.path,
                hint=f"write 'azureml:{value}'")
        else:
            yield Finding(
                f"{what} '{value}' does not exist: no file or folder '{_shown(document, relative)}'",
                slot.path, hint="paths are resolved against the folder of this spec file")


def _environment_paths(document: Document, slot: Slot) -> Iterator[Finding]:
    environment = slot.value
    conda = environment.get("conda_file")
    relative = _local(conda)
    if relative is not None:
        path = _exists(document, relative)
        where = slot.path + ("conda_file",)
        if path is None:
            yield Finding(
                f"conda file '{conda.strip()}' does not exist: no file "
                f"'{_shown(document, relative)}'", where,
                hint="paths are resolved against the folder of this spec file")
        elif fs.is_dir(path):
            yield Finding(
                f"conda file '{conda.strip()}' is a folder; `conda_file` names a conda YAML file",
                where, hint="point it at the environment's conda.yml inside that folder")
        else:
            referenced = resolve(document, relative)
            if referenced.document is None or not isinstance(referenced.data, dict):
                yield Finding(
                    f"conda file '{conda.strip()}' is not a conda YAML file (a mapping with "
                    "`channels` and `dependencies`); the SDK fails to load it",
                    where, hint="a pip requirements file goes under `dependencies: - pip: [...]` of a conda file")
    build = environment.get("build")
    if isinstance(build, dict):
        relative = _local(build.get("path"))
        if relative is None:
            return
        path = _exists(document, relative)
        if path is None:
            yield Finding(
                f"Docker build context '{build['path'].strip()}' does not exist: no folder "
                f"'{_shown(document, relative)}'", slot.path + ("build", "path"),
                hint="paths are resolved against the folder of this spec file")
            return
        if not fs.is_dir(path):
            yield Finding(
                f"Docker build context '{build['path'].strip()}' is a file; `build.path` names "
                "the folder that holds the Dockerfile", slot.path + ("build", "path"))
            return
        dockerfile = build.get("dockerfile_path", "Dockerfile")
        if not isinstance(dockerfile, str) or "${{" in dockerfile or not dockerfile.strip():
            return
        if not fs.is_file(path / dockerfile.strip()):
            where = slot.path + ("build", "dockerfile_path") if "dockerfile_path" in build else slot.path + ("build", "path")
            shown = _shown(document, os.path.join(relative, dockerfile.strip()))
            yield Finding(
                f"the Docker build context '{build['path'].strip()}' has no '{dockerfile.strip()}' "
                f"(looked for '{shown}')", where,
                hint="set `dockerfile_path` to the Dockerfile's path inside the build context")


def _code_job(code: str) -> str:
    return _DATA_JOB.replace("{path}", "azureml:iris-csv:2").replace(
        "command: python train.py", f"code: {code}\ncommand: python train.py")


@check("AML803", "missing-local-path", Severity.ERROR,
       "A local source path (code folder, conda file, Docker build context, additional include) "
       "does not exist.",
       bad=_code_job("./src"), good=_code_job("./scenarios/command-job/src"))
def missing_local_path(document: Document) -> Iterator[Finding]:
    """
    Local paths are resolved against the folder of the YAML file that names them, and uploaded when
    the job is submitted. The source a job is built from belongs in the repository next to the
    spec, so each of these must exist: `code`, an inline environment's `conda_file` (which must be
    a conda YAML file) and `build.path` (a folder holding the Dockerfile, `Dockerfile` unless
    `dockerfile_path` says otherwise), and a component's `additional_includes`. The SDK refuses a
    missing `code` folder when loading ("Can't find directory or file in resolved absolute path");
    a missing component file is AML515's finding and a missing `create_job` file AML640's. Bindings
    (`${{parent.inputs.x}}`), URLs and `azureml:` references are not local paths.

    A data or model input's local path is data, not source: when it is missing that is
    AML806's warning (data is usually downloaded or generated before a job is submitted).

    ARM ids: an input `path` that is an asset's ARM id without the `azureml:` prefix
    (`/subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.MachineLearningServices/
    workspaces/<ws>/data/<name>/versions/<version>`, or `.../models/...`) is no local path:
    azure-ai-ml 1.35.2 passes it to the service unchanged (`is_ARM_id_for_resource`), and it
    is the form the service itself stores, so it gets no finding. An input path that starts with
    `/subscriptions/` but is no complete ARM id is read by the SDK as an absolute local path,
    which no download will ever create: that stays an error here. `code:` is different: the
    SDK reads a `code` ARM id without `azureml:` as a local folder and refuses it ("Can't find
    directory or file"), so that is an error whose hint adds the prefix.

    See: reference-yaml-job-command, reference-yaml-environment

    Provenance: SPEC §1.2, §12 rule 7.
    """
    yield from _path_problems(document)


@check("AML806", "missing-local-data", Severity.WARNING,
       "A data or model input's local path does not exist yet: submitting the job now would fail.",
       bad=_DATA_JOB.replace("{path}", "./data/iris.csv"),
       good=_DATA_JOB.replace("{path}", "azureml:iris-csv:2"),
       kinds=("commandJob", "sweepJob", "pipelineJob", "pipelineComponent"))
def missing_local_data(document: Document) -> Iterator[Finding]:
    """
    A job input with a local `path` (`./data/iris.csv`, `file:./data`, any `type`: `uri_file`,
    `uri_folder`, `mltable`, a model type) is uploaded from the folder of the spec when the job is
    submitted. Training data is rarely kept in git: a `prepare_data.sh`, a notebook cell or a
    `make_data.py` downloads or generates it first, and Microsoft's own examples reference local
    data folders that their set-up scripts create. So a missing input path is a warning, not an
    error: the spec is fine, but submitting it now would fail at the upload (azure-ai-ml does not
    look when it loads the file), and `aml-run` refuses to start the job until the data is there.
    Steps of a pipeline and the pipeline's own inputs are checked alike. A path that exists gets no
    finding, and neither do registered assets, datastore URIs, URLs and `${{...}}` bindings.

    Where data must be in place when aml-lint runs (a CI job after the download step), make it
    an error: `warnings-as-errors = ["AML806"]` in `[tool.amllab.lint]`, or `aml-lint --strict`
    (every warning). Missing source (`code`, a conda file, a build context, an include) is
    AML803's error, always.

    See: how-to-read-write-data-v2, reference-yaml-job-command

    Provenance: SPEC §3.2; EXP:cmd_input_local_missing. SPEC §12 rule 7 lists local input paths
    among the paths that must exist; real repositories show that this holds at submission, not at
    lint time, hence the split from AML803.
    """
    for slot in slots(document):
        if not slot.local or slot.role not in DATA_WHAT:
            continue
        relative = _missing(document, slot, "AML806")
        if relative is None:
            continue
        name = slot.path[-2]  # (..., "inputs", <name>, "path")
        yield Finding(
            f"{DATA_WHAT[slot.role]} '{name}': local path '{slot.value.strip()}' does not "
            f"exist yet: the job would fail if submitted now (no file or folder "
            f"'{_shown(document, relative)}')", slot.path,
            hint="create it before you submit (run the step that downloads or generates it), or fix "
                 "the path: it is resolved against the folder of this spec file")


# ----------------------------------------------------------------------------- entry script
def _python_files(folder: Path) -> list[str]:
    try:
        return sorted(p.name for p in folder.iterdir() if p.suffix == ".py")[:200]
    except OSError:
        return []


def _elsewhere(root: Path, name: str, limit: int = 2000) -> str | None:
    """The path, inside ``root``, of a file called ``name`` in a sub-folder (the script the
    command meant when `code` is one level too high)."""
    seen = 0
    try:
        for folder, dirs, files in os.walk(root):
            depth = len(Path(folder).relative_to(root).parts)
            dirs[:] = [] if depth >= 4 else sorted(
                d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules"))
            if name in files:
                return Path(os.path.relpath(os.path.join(folder, name), root)).as_posix()
            seen += len(files)
            if seen > limit:
                break
    except (OSError, ValueError):
        return None
    return None


@check("AML804", "missing-entry-script", Severity.ERROR,
       "The script the command starts is not in the local `code` folder.",
       bad=JOB.replace("command: python train.py", "code: .\ncommand: python no_such_script.py"),
       good=JOB.replace("command: python train.py", "code: azureml:train-code:1\ncommand: python train.py"))
def missing_entry_script(document: Document) -> Iterator[Finding]:
    """
    The command runs in the root of the uploaded `code` folder: `python train.py` needs `train.py`
    there (or in an `additional_includes` entry, which is copied next to it). Otherwise the job
    fails right after start-up with "can't open file ... No such file or directory", once the
    compute is up and the environment pulled. Usual causes: `code` points at the parent folder
    (`python src/train.py` was meant), or the script was renamed.

    Scripts started through `python`, `python -m torch.distributed.run`, `torchrun`,
    `deepspeed` or `accelerate launch` are checked, also after `cd <folder> &&`. Not checked:
    `python -m <module>` (it may be installed in the environment), paths with `${{...}}` or
    `$VAR`, absolute paths, and scripts that an earlier command could write (`unzip`, `git
    clone`, a shell script).

    See: reference-yaml-job-command

    Provenance: SPEC §9.4.
    """
    for holder in holders(document):
        if holder.command_path is None:
            continue
        command = holder.data.get("command")
        if not isinstance(command, str):
            continue
        snap = pycode.snapshot(holder.document, holder.data)
        if snap is None:
            continue
        seen: dict[str, int] = {}
        for invocation in pycode.command_line(command).invocations:
            if invocation.kind != "script" or invocation.directory is None or invocation.after_writes:
                continue
            name = invocation.name
            if pycode.PLACEHOLDER in name or "$" in name or os.path.isabs(name) or name.startswith("~"):
                continue
            if os.path.normpath(os.path.join(invocation.directory, name)).startswith(".."):
                continue  # outside the snapshot: the image or a parent folder may hold it
            nth = seen.get(name, 0)
            seen[name] = nth + 1
            if snap.find(name, invocation.directory) is not None:
                continue
            code = holder.data.get("code", "").strip() if isinstance(holder.data.get("code"), str) else ""
            inside = os.path.join(invocation.directory or "", name)
            message = f"'{name}' is not in the code folder '{code}'"
            if snap.root.is_dir():
                expected = snap.root / inside
                message += f" (no file '{_shown(holder.document, os.path.join(_local(code) or code, inside))}')"
                close = closest(Path(name).name, _python_files(expected.parent))
                moved = _elsewhere(snap.root, Path(name).name)
                if moved and moved != Path(inside).as_posix():
                    message += f"; it is at '{moved}' inside the code folder"
                elif close:
                    message += f"; did you mean '{str(Path(name).parent / close) if Path(name).parent != Path('.') else close}'?"
            else:
                message += f", which is the single file '{snap.root.name}'"
            yield Finding(
                message, holder.command_path,
                hint="the command runs in the root of the uploaded `code` folder: fix the script path or `code:`",
                span=word_span(document, holder.command_path, command, name, nth))


# ----------------------------------------------------------------------------- workspace registry
_ROLE_SECTIONS = {"environment": "environments", "data": "data", "component": "components",
                  "pipeline_component": "components"}


def _compute_slots(document: Document) -> Iterator[Slot]:
    data = _mapping(document.data)
    if "compute" in data:
        yield Slot(("compute",), data.get("compute"), "compute")
    settings = _mapping(data.get("settings"))
    if "default_compute" in settings:
        yield Slot(("settings", "default_compute"), settings.get("default_compute"), "compute")
    for name, node in _mapping(data.get("jobs")).items():
        if isinstance(node, dict) and "compute" in node:
            yield Slot(("jobs", name, "compute"), node.get("compute"), "compute")


@check("AML805", "unregistered-asset", Severity.ERROR,
       "With `--workspace`, a referenced data asset, environment, component or compute is not "
       "registered in that local workspace.",
       bad=JOB, good=JOB, examples_are_runnable=False)
def unregistered_asset(document: Document) -> Iterator[Finding]:
    """
    Only with `aml-lint --workspace DIR` (or `AMLLAB_WORKSPACE`): the folder's `workspace.yml`
    is the local registry that `aml-run ... create` writes (validator/workspace.py documents its
    format). A job whose `azureml:churn-raw:3`, `azureml:sklearn-train:2`,
    `azureml:prep_data:1` or `azureml:cpu-cluster` is not there would be refused by the service
    ("not found") and is refused by `aml-run` before anything runs; the message lists the
    registered versions and gives the command that registers the missing one. Curated
    environments (`azureml:AzureML-sklearn-1.5@latest`, any `AzureML-` name) exist in every
    workspace and are not checked unless the workspace registers that name itself. Registry URIs,
    datastore paths and ARM ids point outside a local workspace and are not checked. The
    example is the same file linted against a workspace without, and then with, those assets.
    """
    registry = document.workspace
    if registry is None:
        return
    for slot in [*slots(document), *_compute_slots(document)]:
        section = "computes" if slot.role == "compute" else _ROLE_SECTIONS.get(slot.role)
        if section is None or not isinstance(slot.value, str):
            continue
        value = slot.value.strip()
        if section == "computes" and value in ("serverless", "azureml:serverless", "local"):
            continue
        parsed = workspace.parse_reference(value)
        if parsed is None:
            continue
        name, version, label = parsed
        if registry.has(section, name, version, label):
            continue
        if section == "environments" and workspace.is_curated_environment(name) and not registry.has(section, name):
            continue  # curated: in every workspace (a local registration of the name is checked as one)
        title = workspace.TITLES[section]
        known = registry.versions(section, name)
        if section == "computes" or not known:
            others = list(registry.assets.get(section, {}))
            close = closest(name, others)
            message = f"{title} '{name}' is not registered in workspace '{registry.folder}'"
            if close:
                message += f"; did you mean '{close}'?"
        else:
            wanted = f"version {version}" if version else f"label '{label}'"
            message = (f"{title} '{name}' has no {wanted} in workspace '{registry.folder}' "
                       f"(registered: {', '.join(known)})")
        command = workspace.REGISTER_COMMANDS[section].format(name=name, version=version or "<version>")
        yield Finding(message, slot.path,
                      hint=f"register it: `{command} --workspace {registry.folder}`")


# ----------------------------------------------------------------------------- datastore paths
_DOT_SEGMENTS = (".", "..")
_OUTPUT_JOB = JOB.replace("--lr ${{inputs.lr}}", "--lr ${{inputs.lr}} --out ${{outputs.model}}") + (
    "outputs:\n  model:\n    type: uri_folder\n"
    "    path: azureml://datastores/workspaceblobstore/paths/PATH\n")


def _datastore_uri_slots(document: Document) -> Iterator[Slot]:
    """Every value that may be an `azureml://` storage location: data and model inputs and
    outputs of jobs, steps and a schedule's job, and a schedule's inline data import."""
    for slot in slots(document):
        if slot.role in ("data", "model", "output") and isinstance(slot.value, str):
            yield slot
    if document.kind == "schedule":
        imported = _mapping(document.data).get("import_data")
        if isinstance(imported, dict) and isinstance(imported.get("path"), str):
            yield Slot(("import_data", "path"), imported["path"], "output", False)


def datastore_path_problem(text: str) -> tuple[str, str] | None:
    """(problem, hint) when the `azureml://` URI ``text`` names a datastore that cannot exist or
    has a `.` or `..` segment in its path; None for a clean one and for anything else."""
    from urllib.parse import unquote

    from ..names import name_problem

    value = _with_placeholders(text.strip())
    if not value.startswith("azureml://"):
        return None
    parts = value[len("azureml://"):].split("/")
    if parts[0] == "jobs" and len(parts) > 4 and parts[2] == "outputs" and parts[4] == "paths":
        path = "/".join(parts[5:])  # a path inside a job's output is a location in storage too
    else:
        # `datastores/<ds>/paths/...`, also in the long `subscriptions/.../workspaces/<ws>/` form.
        found = datastore_path(value)
        if found is None:
            return None
        datastore = unquote(found.datastore)
        problem = name_problem("datastore", datastore)
        if problem is not None:
            return (f"'{text.strip()}' names no datastore: {problem}",
                    "write 'azureml://datastores/<datastore>/paths/<path>' with the datastore's registered name")
        path = found.path
    segments = [unquote(s) for s in path.replace("\\", "/").split("/")]
    dots = [s for s in segments if s in _DOT_SEGMENTS]
    if not dots:
        return None
    kept: list[str] = []
    above = False
    for segment in segments:
        if segment == "..":
            above = above or not kept
            kept = kept[:-1]
        elif segment not in ("", "."):
            kept.append(segment)
    kinds = list(dict.fromkeys(dots))
    shown = "'.' and '..' segments" if len(kinds) > 1 else f"a '{kinds[0]}' segment"
    problem = (f"'{text.strip()}' has {shown}: a datastore path is a location "
               "from the datastore's root, and Azure Storage has no '.' or '..' folders (no path segment "
               "may end with a dot)")
    if above:
        return problem + "; this one climbs above the datastore's root", \
            "write the path from the datastore's root, without '..'"
    prefix = text.strip()[:len(text.strip()) - len(path)] if path and text.strip().endswith(path) else None
    fixed = "/".join(kept) + ("/" if path.endswith("/") and kept else "")
    if prefix is not None and not expressions.has_expression(text):
        return problem, f"write '{prefix}{fixed}'"
    return problem, "write the path from the datastore's root, without '.' or '..' segments"


@check("AML807", "datastore-path-escape", Severity.ERROR,
       "An `azureml://datastores/<datastore>/paths/<path>` URI has a `.` or `..` segment, or names no "
       "datastore that can exist.",
       bad=_OUTPUT_JOB.replace("PATH", "../../models/${{name}}/"),
       good=_OUTPUT_JOB.replace("PATH", "models/${{name}}/"))
def datastore_path_escape(document: Document) -> Iterator[Finding]:
    """
    A datastore path (`azureml://datastores/<datastore>/paths/<path>`, and the long
    `azureml://subscriptions/.../workspaces/<ws>/datastores/<datastore>/paths/<path>` form) is
    a location inside the datastore, written from its root. A `..` segment does not climb to a
    parent folder there: Azure Storage names blobs, not folders, and says no path segment should
    end with a dot (https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata),
    so `paths/runs/../models/` is at best another name for `paths/models/` and at worst a blob
    name nothing else can read. Locally it is worse: `aml-run` maps a datastore to a folder of
    its workspace, and `paths/../../../../x/` would write an output (or read an input) outside
    the workspace, which `aml-run` refuses. `.` segments are reported for the same reason.

    Checked wherever a storage location is written: the `path` of data and model inputs and of
    outputs (jobs, sweeps, pipeline jobs and their steps, a schedule's `create_job`) and a
    schedule's inline `import_data.path`. A datastore name must also be one the service can
    hold (letters, digits, `-` and `_`, starting with a letter or digit:
    https://learn.microsoft.com/en-us/azure/templates/microsoft.machinelearningservices/workspaces/datastores);
    `${{default_datastore}}` stands for the workspace's default datastore and is accepted.
    """
    for slot in _datastore_uri_slots(document):
        if expressions.has_expression(slot.value) and expressions.parse(slot.value).problems:
            continue  # a malformed `${{ }}` inside is AML201's finding
        found = datastore_path_problem(slot.value)
        if found is not None:
            yield Finding(found[0], slot.path, hint=found[1])
