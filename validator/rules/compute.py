"""AML4xx: where a job runs and how it spreads out — compute references, `resources`,
`distribution`, queue settings and the command-job timeout (SPEC §3.5-§3.9, §5.2, §11.1,
§11.12, §12 rules 18-24 and 47).

Every rule works on the mappings that can carry these keys: a command job, a sweep job and
its `trial`, a command component, and each pipeline step with its inline component or trial.
:func:`holders` walks them once and gives each one the context its rules need: which compute
it runs on, and which other mappings fill in what it leaves out (a step's component, a sweep's
trial).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, NamedTuple

from .. import gpu_sizes, pycode
from ..diagnostic import Finding, Fix, Severity
from ..edits import replace_scalar
from ..loader import Document, Path_
from ..references import is_local_path, resolve
from ..suggest import closest
from ._base import check
from ..values import mapping as _mapping
from .file_level import JOB

JOB_KINDS = ("commandJob", "sweepJob")
RESOURCE_KINDS = ("commandJob", "sweepJob", "commandComponent", "pipelineJob", "pipelineComponent")
PIPELINE_KINDS = ("pipelineJob", "pipelineComponent")

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: ddp_train
version: "1"
inputs:
  epochs:
    type: integer
    default: 10
command: python train.py --epochs ${{inputs.epochs}}
environment: azureml:AzureML-acpt-pytorch-2.2-cuda12.1@latest
resources:
  instance_count: 2
  instance_type: Standard_NC24s_v3
distribution:
  type: pytorch
  process_count_per_instance: 4
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  train:
    type: command
    command: python train.py --lr ${{inputs.lr}}
    environment: azureml:sklearn-train:2
    inputs:
      lr: 0.01
"""


# ----------------------------------------------------------------------------- the walk


class Layer(NamedTuple):
    """A mapping that contributes settings to a run: the holder itself, a step's component, a
    sweep's trial. ``path`` is where it sits in this file, ``None`` for a referenced file."""

    path: Path_ | None
    data: dict


class Context(NamedTuple):
    """What the rules need to know about a holder besides its own keys."""

    role: str                      # "command job", "sweep job", "sweep trial", "component", "step", "inline component"
    owner: str                     # how messages name it: "the job", "step 'train'"
    # The mappings whose settings apply, highest precedence first (a step before its component).
    layers: tuple[Layer, ...] = ()
    compute: Any = None            # the compute the run uses, as written (None: not set)
    compute_path: Path_ | None = None
    # True: serverless; False: a named compute or `local`; None: not known from this file.
    serverless: bool | None = None
    # What an absent instance_count means: 1, or None when another file or the caller decides.
    count_default: int | None = 1
    # Whether run-level findings (the effective configuration) are reported at this holder; a
    # step's inline component and a sweep's trial leave them to the step / the sweep.
    primary: bool = True
    # Where the command and code are: (document, mapping) for the entry-script locator.
    code_site: tuple[Document, dict] | None = None
    node_type: Any = None


class Holder(NamedTuple):
    path: Path_
    data: dict
    context: Context = Context("", "")


def _is_binding(value: Any) -> bool:
    return isinstance(value, str) and "${{" in value


def is_serverless_reference(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in ("serverless", "azureml:serverless")


def is_local_compute(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() == "local"


def _serverless(compute: Any, absent_means_serverless: bool) -> bool | None:
    if compute is None:
        return True if absent_means_serverless else None
    if not isinstance(compute, str) or _is_binding(compute):
        return None
    return is_serverless_reference(compute)


def _referenced_component(document: Document, reference: Any) -> tuple[Document, dict] | None:
    """The command component a step names by a local file path (loaded once, cached)."""
    if not is_local_path(reference) or _is_binding(reference):
        return None
    try:
        found = resolve(document, reference)
    except (OSError, ValueError, RuntimeError):
        return None
    if found.document is None or not isinstance(found.data, dict) or found.kind != "commandComponent":
        return None
    return found.document, found.data


def holders(document: Document) -> list[Holder]:
    """Every mapping of the document that can carry compute, resources, distribution, queue
    settings or limits, with its context (walked once per document, shared by the rules)."""
    cached = document.__dict__.get("_compute_holders")
    if cached is not None and cached[0] is document.data:
        return cached[1]
    found = list(_walk(document))
    document.__dict__["_compute_holders"] = (document.data, found)
    return found


def _walk(document: Document) -> Iterator[Holder]:
    data = _mapping(document.data)
    kind = document.kind
    if kind == "commandJob":
        compute = data.get("compute")
        yield Holder((), data, Context(
            "command job", "the job", (Layer((), data),), compute, ("compute",) if "compute" in data else None,
            _serverless(compute, True), 1, True, (document, data)))
    elif kind == "sweepJob":
        compute = data.get("compute")
        compute_path = ("compute",) if "compute" in data else None
        serverless = _serverless(compute, True)
        trial = data.get("trial")
        trial_layer = (Layer(("trial",), trial),) if isinstance(trial, dict) else ()
        code_site = (document, trial) if isinstance(trial, dict) else None
        yield Holder((), data, Context("sweep job", "the sweep", (Layer((), data),) + trial_layer, compute,
                                       compute_path, serverless, 1, True, code_site))
        if isinstance(trial, dict):
            yield Holder(("trial",), trial, Context("sweep trial", "the sweep's trial",
                                                    trial_layer + (Layer((), data),), compute, compute_path,
                                                    serverless, 1, False, code_site))
    elif kind == "commandComponent":
        yield Holder((), data, Context("component", "the component", (Layer((), data),), None, None,
                                       None, None, True, (document, data)))
    elif kind in PIPELINE_KINDS:
        yield from _steps(document, data, kind)


def _steps(document: Document, data: dict, kind: str) -> Iterator[Holder]:
    settings = _mapping(data.get("settings"))
    for name, node in _mapping(data.get("jobs")).items():
        if not isinstance(node, dict):
            continue
        base: Path_ = ("jobs", name)
        # The step's own compute, else the pipeline's, else settings.default_compute (SPEC §5.2).
        compute, compute_path = node.get("compute"), base + ("compute",)
        if compute is None and kind == "pipelineJob":
            if data.get("compute") is not None:
                compute, compute_path = data.get("compute"), ("compute",)
            elif settings.get("default_compute") is not None:
                compute, compute_path = settings.get("default_compute"), ("settings", "default_compute")
        if compute is None:
            compute_path = None
        # Nothing named anywhere: a pipeline job's step runs on serverless compute (AML517); a
        # pipeline component's steps get their compute from the job that runs the component.
        serverless = _serverless(compute, kind == "pipelineJob")
        node_type = node.get("type")
        key = "trial" if node_type == "sweep" else "component"
        definition = node.get(key)
        layers = [Layer(base, node)]
        count_default: int | None = 1
        code_site: tuple[Document, dict] | None = (document, node) if "command" in node else None
        inline: Holder | None = None
        if isinstance(definition, dict):
            layers.append(Layer(base + (key,), definition))
            code_site = (document, definition)
            inline = Holder(base + (key,), definition, Context(
                "inline component", f"the inline component of step '{name}'", tuple(layers), compute,
                compute_path, serverless, 1, False, code_site, node_type))
        elif isinstance(definition, str):
            referenced = _referenced_component(document, definition)
            if referenced is None:
                count_default = None  # a registered component: its resources are not known here
            else:
                layers.append(Layer(None, referenced[1]))
                code_site = referenced
        yield Holder(base, node, Context("step", f"step '{name}'", tuple(layers), compute, compute_path,
                                         serverless, count_default, True, code_site, node_type))
        if inline is not None:
            yield inline


def _int(value: Any) -> int | None:
    """An integer as YAML wrote it (not a bool, not a float); the schema reports the rest."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _effective(context: Context, section: str, key: str) -> tuple[Any, Path_ | None, bool]:
    """(value, path in this file or None, found) of ``section.key`` over the context's layers."""
    for layer in context.layers:
        block = layer.data.get(section)
        if isinstance(block, dict) and key in block:
            path = layer.path + (section, key) if layer.path is not None else None
            return block[key], path, True
    return None, None, False


def _effective_distribution(context: Context) -> tuple[dict | None, Path_ | None]:
    for layer in context.layers:
        block = layer.data.get("distribution")
        if isinstance(block, dict):
            return block, (layer.path + ("distribution",) if layer.path is not None else None)
    return None, None


def _instance_count(context: Context) -> int | None:
    value, _, found = _effective(context, "resources", "instance_count")
    if found:
        return _int(value)
    return context.count_default


def _distribution_type(block: dict) -> str | None:
    value = block.get("type")
    return value.strip().lower() if isinstance(value, str) else None


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiomx" else "a"  # "an mpi job", "a pytorch job"


def _owner_of(context: Context, path: Path_ | None) -> str:
    """How messages name the place a setting comes from (a sweep's trial, not the sweep)."""
    if context.role == "sweep job" and path is not None and path[:1] == ("trial",):
        return "the sweep's trial"
    return context.owner


def _own(holder: Holder, section: str) -> tuple[dict, Path_] | None:
    block = holder.data.get(section)
    if isinstance(block, dict):
        return block, holder.path + (section,)
    return None


# ----------------------------------------------------------------------------- resources


@check("AML401", "instance-count-range", Severity.ERROR,
       "`resources.instance_count` is below 1.",
       bad=JOB + "resources:\n  instance_count: 0\n",
       good=JOB + "resources:\n  instance_count: 2\n",
       kinds=RESOURCE_KINDS)
def instance_count_range(document: Document) -> Iterator[Finding]:
    """
    `instance_count` is the number of nodes (VMs) the job runs on; the default is 1. The SDK has no
    range check, so `0` or `-1` loads and is submitted; the service then cannot allocate the job.
    Use 1 for a single node, more for distributed training.

    See: reference-yaml-job-command

    Provenance: SPEC §3.6, §12 rule 18; EXP:num_ic_0.
    """
    for holder in holders(document):
        own = _own(holder, "resources")
        if own is None:
            continue
        block, path = own
        count = _int(block.get("instance_count"))
        if count is not None and count < 1:
            yield Finding(
                f"instance_count {count} in {holder.context.owner} is not a number of nodes: "
                "it must be at least 1", path + ("instance_count",),
                hint="instance_count: 1 (or the number of nodes for distributed training)")


@check("AML402", "max-instance-count", Severity.ERROR,
       "`resources.max_instance_count` is below `instance_count` (or below 1).",
       bad=JOB + "resources:\n  instance_count: 4\n  max_instance_count: 2\n",
       good=JOB + "resources:\n  instance_count: 2\n  max_instance_count: 4\n",
       kinds=RESOURCE_KINDS)
def max_instance_count(document: Document) -> Iterator[Finding]:
    """
    `max_instance_count` is the upper bound for elastic training: the job starts on
    `instance_count` nodes and may grow up to `max_instance_count`. A maximum below the start count
    (or below one node) is a contradiction the SDK does not check (the comparison is an inference
    from the meaning of the two keys).

    See: reference-yaml-job-command, how-to-train-distributed-gpu

    Provenance: SPEC §3.6, §12 rule 18.
    """
    for holder in holders(document):
        own = _own(holder, "resources")
        if own is None:
            continue
        block, path = own
        maximum = _int(block.get("max_instance_count"))
        if maximum is None:
            continue
        count = _int(block.get("instance_count"))
        if count is not None and count >= 1 and maximum < count:
            yield Finding(
                f"max_instance_count {maximum} is below instance_count {count} in "
                f"{holder.context.owner}: elastic training cannot start more nodes than its maximum",
                path + ("max_instance_count",),
                hint=f"set max_instance_count to at least {count}, or remove it")
        elif maximum < 1:
            yield Finding(
                f"max_instance_count {maximum} in {holder.context.owner} is not a number of "
                "nodes: it must be at least 1 (and at least instance_count)",
                path + ("max_instance_count",), hint="remove max_instance_count, or set it above instance_count")


SHM_SIZE = re.compile(r"^[1-9][0-9]*[bkmg]$")
_SHM_LOOSE = re.compile(r"^\s*0*([1-9][0-9]*)\s*([bkmgBKMG])?(?:[bB]|i[bB]|iB)?\s*$")


def _shm_suggestion(text: str) -> str:
    match = _SHM_LOOSE.match(text)
    if match:
        return match.group(1) + (match.group(2) or "g").lower()
    return "16g"


@check("AML403", "shm-size-format", Severity.ERROR,
       "`resources.shm_size` is not `<number><unit>` with unit b, k, m or g (for example `16g`).",
       bad=JOB + "resources:\n  shm_size: 16GB\n",
       good=JOB + "resources:\n  shm_size: 16g\n",
       kinds=RESOURCE_KINDS)
def shm_size_format(document: Document) -> Iterator[Finding]:
    """
    `shm_size` sets the size of the container's shared memory (`/dev/shm`, default `2g`), which
    PyTorch data loaders with several workers fill quickly. The documented format is a positive
    number followed by one unit letter, `b`, `k`, `m` or `g` (`^[1-9][0-9]*[bkmg]$`). The SDK
    passes any string on unchecked, so a value outside the format reaches the node as written: a
    bare number is read as bytes by container runtimes (`"16"` gives a 16-byte `/dev/shm`, and data
    loader workers crash), and other spellings (`16GB`, `16G`) are not the documented form. Write
    the number and one lower-case unit letter.

    See: reference-yaml-job-command

    Provenance: SPEC §3.6, §12 rule 18.
    """
    for holder in holders(document):
        own = _own(holder, "resources")
        if own is None:
            continue
        block, path = own
        value = block.get("shm_size")
        if not isinstance(value, str) or SHM_SIZE.match(value):
            continue
        suggestion = _shm_suggestion(value)
        yield Finding(
            f"shm_size '{value}' is not a size: write a number and one of the units b, k, m, g "
            f"(for example '{suggestion}')", path + ("shm_size",), hint=f"shm_size: {suggestion}")


# ----------------------------------------------------------------------------- distribution


@check("AML404", "process-count-range", Severity.ERROR,
       "A pytorch or mpi distribution has `process_count_per_instance` below 1.",
       bad=JOB + "resources:\n  instance_count: 2\ndistribution:\n  type: pytorch\n  process_count_per_instance: 0\n",
       good=JOB + "resources:\n  instance_count: 2\ndistribution:\n  type: pytorch\n  process_count_per_instance: 1\n",
       kinds=RESOURCE_KINDS)
def process_count_range(document: Document) -> Iterator[Finding]:
    """
    `process_count_per_instance` is how many processes Azure ML starts on each node, usually one
    per GPU. The SDK accepts 0 and negative numbers; no process means no training.

    See: reference-yaml-job-command, how-to-train-distributed-gpu

    Provenance: SPEC §3.7, §12 rule 19.
    """
    for holder in holders(document):
        own = _own(holder, "distribution")
        if own is None:
            continue
        block, path = own
        kind = _distribution_type(block)
        count = _int(block.get("process_count_per_instance"))
        if kind in ("pytorch", "mpi") and count is not None and count < 1:
            yield Finding(
                f"process_count_per_instance {count} in {holder.context.owner}: {_article(kind)} {kind} job "
                "needs at least 1 process per node", path + ("process_count_per_instance",),
                hint="set it to the number of GPUs per node (1 on a CPU node)")


@check("AML405", "mpi-process-count-missing", Severity.WARNING,
       "An mpi distribution does not set `process_count_per_instance`.",
       bad=JOB + "resources:\n  instance_count: 2\ndistribution:\n  type: mpi\n",
       good=JOB + "resources:\n  instance_count: 2\ndistribution:\n  type: mpi\n  process_count_per_instance: 1\n",
       kinds=RESOURCE_KINDS)
def mpi_process_count_missing(document: Document) -> Iterator[Finding]:
    """
    The command job reference marks `process_count_per_instance` as required for `type: mpi`; the
    SDK does not, and the job then starts one process per node, which leaves all but one GPU of a
    multi-GPU node idle. Say how many processes you want.

    See: reference-yaml-job-command, how-to-train-distributed-gpu

    Provenance: SPEC §3.7, §11 row 12.
    """
    for holder in holders(document):
        own = _own(holder, "distribution")
        if own is None:
            continue
        block, path = own
        if _distribution_type(block) == "mpi" and "process_count_per_instance" not in block:
            yield Finding(
                f"the mpi distribution of {holder.context.owner} does not set "
                "process_count_per_instance: the docs mark it required, and one process per node is used",
                path + ("type",), hint="process_count_per_instance: <GPUs per node> (1 on a CPU node)")


@check("AML406", "tensorflow-counts", Severity.ERROR,
       "A tensorflow distribution has `worker_count` below 1 or a negative `parameter_server_count`.",
       bad=JOB + "resources:\n  instance_count: 2\ndistribution:\n  type: tensorflow\n  worker_count: 0\n",
       good=JOB + "resources:\n  instance_count: 2\ndistribution:\n  type: tensorflow\n  worker_count: 2\n",
       kinds=RESOURCE_KINDS)
def tensorflow_counts(document: Document) -> Iterator[Finding]:
    """
    A TensorFlow job needs at least one worker (`worker_count` defaults to `instance_count`), and
    `parameter_server_count` is 0 or more (default 0). The SDK accepts any integer; `TF_CONFIG`
    cannot describe a cluster with no worker.

    See: reference-yaml-job-command, how-to-train-distributed-gpu

    Provenance: SPEC §3.7, §12 rule 19.
    """
    for holder in holders(document):
        own = _own(holder, "distribution")
        if own is None:
            continue
        block, path = own
        if _distribution_type(block) != "tensorflow":
            continue
        workers = _int(block.get("worker_count"))
        if workers is not None and workers < 1:
            yield Finding(
                f"worker_count {workers} in {holder.context.owner}: a tensorflow job needs at "
                "least 1 worker", path + ("worker_count",),
                hint="worker_count: <number of nodes> (or remove it: it defaults to instance_count)")
        servers = _int(block.get("parameter_server_count"))
        if servers is not None and servers < 0:
            yield Finding(
                f"parameter_server_count {servers} in {holder.context.owner} cannot be negative",
                path + ("parameter_server_count",), hint="parameter_server_count: 0 (the default)")


@check("AML407", "nothing-distributed", Severity.WARNING,
       "A `distribution` runs one process on one node, so nothing is distributed.",
       bad=JOB + "distribution:\n  type: pytorch\n  process_count_per_instance: 1\n",
       good=JOB + "resources:\n  instance_count: 2\ndistribution:\n  type: pytorch\n  process_count_per_instance: 1\n",
       kinds=RESOURCE_KINDS)
def nothing_distributed(document: Document) -> Iterator[Finding]:
    """
    A pytorch or mpi distribution on one node (`instance_count` 1, the default) with one process
    per node, or a tensorflow distribution with one worker and no parameter server, runs a single
    process: the job is not distributed at all. Usually `instance_count` or
    `process_count_per_instance` was forgotten (Azure ML starts one process per node by default). A
    component's node count is often set by the pipeline step that uses it, so a component is judged
    only when it says `instance_count: 1` itself.

    See: how-to-train-distributed-gpu, reference-yaml-job-command

    Provenance: SPEC §3.7.
    """
    for holder in holders(document):
        context = holder.context
        if not context.primary:
            continue
        block, path = _effective_distribution(context)
        if block is None or path is None:
            continue
        kind = _distribution_type(block)
        nodes = _instance_count(context)
        if nodes != 1:
            continue
        if kind in ("pytorch", "mpi"):
            if kind == "mpi" and "process_count_per_instance" not in block:
                continue  # AML405 says what to set
            per_node = block.get("process_count_per_instance", 1)
            if _int(per_node) != 1:
                continue
            detail = "1 node with 1 process per node"
        elif kind == "tensorflow":
            workers = block.get("worker_count", nodes)
            servers = block.get("parameter_server_count", 0)
            if _int(workers) != 1 or _int(servers) != 0:
                continue
            detail = "1 worker and no parameter server"
        else:
            continue
        yield Finding(
            f"the {kind} distribution of {_owner_of(context, path)} distributes nothing: {detail}",
            path + ("type",),
            hint="set resources.instance_count to the number of nodes"
                 + (" or process_count_per_instance to the GPUs per node" if kind != "tensorflow" else "")
                 + ", or remove `distribution:`")


@check("AML408", "processes-exceed-gpus", Severity.ERROR,
       "`process_count_per_instance` is larger than the number of GPUs of the chosen VM size.",
       bad=COMPONENT.replace("Standard_NC24s_v3", "Standard_NC12s_v3"),
       good=COMPONENT,
       kinds=RESOURCE_KINDS)
def processes_exceed_gpus(document: Document) -> Iterator[Finding]:
    """
    Each process of a pytorch or mpi job takes the GPU of its local rank. With more processes
    per node than the node has GPUs, two processes share a GPU and NCCL stops the job with
    "Duplicate GPU detected". The GPU count is known for common Azure GPU sizes
    (validator/gpu_sizes.py) when `resources.instance_type` picks the VM, which is the case on
    serverless compute and in a component; on a named compute cluster the VM size is not known
    offline, and nothing is judged.
    """
    for holder in holders(document):
        context = holder.context
        if not context.primary or context.serverless is False:
            continue
        block, distribution_path = _effective_distribution(context)
        if block is None or _distribution_type(block) not in ("pytorch", "mpi"):
            continue
        per_node = _int(block.get("process_count_per_instance"))
        instance_type, type_path, _ = _effective(context, "resources", "instance_type")
        gpus = gpu_sizes.gpu_count(instance_type)
        if per_node is None or gpus is None or per_node <= gpus:
            continue
        if distribution_path is not None:
            where = distribution_path + ("process_count_per_instance",)
        elif type_path is not None:
            where = type_path
        else:
            continue  # both come from a referenced component, which is linted on its own
        name = gpu_sizes.canonical_name(instance_type)
        yield Finding(
            f"process_count_per_instance {per_node} in {_owner_of(context, distribution_path)} is more than the "
            f"{gpus} GPU{'s' if gpus != 1 else ''} of '{name}': processes would share a GPU and the job "
            "fails with 'Duplicate GPU detected'", where,
            hint=f"process_count_per_instance: {gpus} (one process per GPU), or a VM size with more GPUs")


# ----------------------------------------------------------------------------- compute


def _pipeline_computes(document: Document) -> Iterator[tuple[Path_, Any, str]]:
    """(path, value, where) of each compute a pipeline names itself: its own and its steps'."""
    data = _mapping(document.data)
    if document.kind == "pipelineJob" and "compute" in data:
        yield ("compute",), data.get("compute"), "the pipeline"
    for name, node in _mapping(data.get("jobs")).items():
        if isinstance(node, dict) and "compute" in node:
            yield ("jobs", name, "compute"), node.get("compute"), f"step '{name}'"


@check("AML409", "local-compute-in-pipeline", Severity.WARNING,
       "A pipeline or one of its steps uses `compute: local`.",
       bad=PIPELINE.replace("    type: command\n", "    type: command\n    compute: local\n"),
       good=PIPELINE, kinds=PIPELINE_KINDS)
def local_compute_in_pipeline(document: Document) -> Iterator[Finding]:
    """
    Local runs are for single command jobs; the command job reference says that jobs inside a
    pipeline cannot use `local`. Name a compute cluster (`azureml:<name>`) or use serverless
    compute.

    See: reference-yaml-job-command

    Provenance: SPEC §3.5, §11 row 1, §12 rule 24.
    """
    for path, value, where in _pipeline_computes(document):
        if is_local_compute(value):
            yield Finding(
                f"compute 'local' for {where}: pipelines cannot run on local compute", path,
                hint="name a compute: compute: azureml:<cluster> (or serverless)")


@check("AML410", "local-compute-distributed", Severity.WARNING,
       "A job on `compute: local` asks for a distribution or several nodes.",
       bad=JOB.replace("azureml:cpu-cluster", "local") + "resources:\n  instance_count: 2\n",
       good=JOB + "resources:\n  instance_count: 2\n",
       kinds=("commandJob",))
def local_compute_distributed(document: Document) -> Iterator[Finding]:
    """
    A local run is one process on the machine that submits it: `distribution` and an
    `instance_count` above 1 are not honoured there, so the run does not test what the spec
    describes (the distribution part is an inference).

    See: reference-yaml-job-command

    Provenance: SPEC §12 rule 24.
    """
    data = _mapping(document.data)
    if not is_local_compute(data.get("compute")):
        return
    reasons = []
    distribution = data.get("distribution")
    if isinstance(distribution, dict):
        kind = _distribution_type(distribution)
        reasons.append(f"the {kind} distribution" if kind else "the distribution")
    count = _int(_mapping(data.get("resources")).get("instance_count"))
    if count is not None and count > 1:
        reasons.append(f"instance_count {count}")
    if reasons:
        yield Finding(
            f"compute 'local' runs a single process on this machine, so {' and '.join(reasons)} "
            f"{'is' if len(reasons) == 1 else 'are'} not honoured", ("compute",),
            hint="run distributed jobs on a cluster (compute: azureml:<cluster>) or on serverless compute")


@check("AML411", "default-compute-form", Severity.ERROR,
       "`settings.default_compute` is not `azureml:<name>`, `serverless` or `azureml:serverless`.",
       bad=PIPELINE.replace("default_compute: azureml:cpu-cluster", "default_compute: cpu-cluster"),
       good=PIPELINE, kinds=("pipelineJob",), fix="safe")
def default_compute_form(document: Document) -> Iterator[Finding]:
    """
    Unlike a job's or a step's `compute`, `settings.default_compute` has no fallback for plain
    strings: the SDK rejects `default_compute: cpu-cluster` with "Value 'cpu-cluster' passed is not
    in set ['serverless']; In order to specify an existing computes ...". Write
    `azureml:cpu-cluster`, or `serverless`.

    See: reference-yaml-job-pipeline, reference-yaml-core-syntax

    Provenance: SPEC §5.2, §12 rule 47; EXP:p_setting_compute_noprefix.
    """
    settings = _mapping(_mapping(document.data).get("settings"))
    value = settings.get("default_compute")
    if not isinstance(value, str) or not value.strip() or _is_binding(value):
        return
    text = value.strip()
    if is_serverless_reference(text) or (text.startswith("azureml:") and len(text) > len("azureml:")):
        return
    path = ("settings", "default_compute")
    if is_local_compute(text):
        yield Finding(
            "default_compute 'local' is not accepted: pipelines cannot run on local compute, and "
            "default_compute is 'azureml:<name>' or 'serverless'", path,
            hint="default_compute: azureml:<cluster> (or serverless)")
        return
    name = text[len("azureml"):].lstrip(":/") if text.lower().startswith("azureml") else text
    fix = _prefix_fix(document, path, value, name) if name else None
    name = name or "cpu-cluster"
    yield Finding(
        f"default_compute '{text}' is not a compute reference: the SDK accepts only "
        f"'azureml:<name>' or 'serverless' here; did you mean 'azureml:{name}'?", path,
        hint=f"default_compute: azureml:{name}", fix=fix)


# A compute's name: letters, digits and hyphens (Azure's rule for compute names), so that the
# prefixed form is the one evident repair.
_COMPUTE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]{1,31}")


def _prefix_fix(document: Document, path: Path_, value: str, name: str) -> Fix | None:
    """Write a bare compute name as `azureml:<name>`. A misspelt prefix (`azure:cpu-cluster`)
    is left to the user: the SDK reads that as another name, so no repair is the evident one."""
    if value.strip() != name or not _COMPUTE_NAME.fullmatch(name):
        return None
    edit = replace_scalar(document, path, f"azureml:{name}", expected=value)
    return Fix((edit,), title=f"write 'azureml:{name}'") if edit else None


def _job_computes(document: Document) -> Iterator[tuple[Path_, Any, str]]:
    data = _mapping(document.data)
    if document.kind in JOB_KINDS and "compute" in data:
        yield ("compute",), data.get("compute"), "the job" if document.kind == "commandJob" else "the sweep"
    elif document.kind in PIPELINE_KINDS:
        yield from _pipeline_computes(document)


@check("AML412", "compute-without-prefix", Severity.WARNING,
       "A `compute:` names a cluster without the `azureml:` prefix.",
       bad=JOB.replace("azureml:cpu-cluster", "cpu-cluster"), good=JOB,
       kinds=JOB_KINDS + PIPELINE_KINDS, fix="safe")
def compute_without_prefix(document: Document) -> Iterator[Finding]:
    """
    The docs write an existing compute as `azureml:<name>` (or `local`, or a full ARM id). The
    SDK's compute field ends in a plain-string fallback, so `compute: cpu-cluster` loads and is
    resolved by name, but the same name is rejected in `settings.default_compute` (AML411), and a
    typo'd prefix (`azure:cpu-cluster`) is taken as a compute name. A binding such as
    `${{parent.inputs.train_compute}}` is not judged: the value arrives at run time.

    See: reference-yaml-job-command, reference-yaml-core-syntax

    Provenance: SPEC §3.5.
    """
    for path, value, _where in _job_computes(document):
        if not isinstance(value, str) or not value.strip() or _is_binding(value):
            continue
        text = value.strip()
        if (text.startswith("azureml:") or is_local_compute(text) or is_serverless_reference(text)
                or text.startswith("/subscriptions/")):
            continue
        name = text.split(":", 1)[1] if ":" in text else text
        name = name.lstrip("/") or text
        yield Finding(
            f"compute '{text}' has no 'azureml:' prefix: an existing compute is written "
            f"'azureml:{name}'", path, hint=f"compute: azureml:{name}",
            fix=_prefix_fix(document, path, value, name))


@check("AML413", "serverless-compute", Severity.INFO,
       "A command or sweep job names no compute, so it runs on serverless compute.",
       bad=JOB.replace("compute: azureml:cpu-cluster\n", ""), good=JOB, kinds=JOB_KINDS)
def serverless_compute(document: Document) -> Iterator[Finding]:
    """
    Without `compute:`, command and sweep jobs run on serverless compute: by default a single CPU
    node that Azure ML picks by quota, cost and disk size, on the dedicated tier, in the
    workspace's region ("Model training on serverless compute": "When `compute` isn't specified for
    a job, the job runs on serverless compute"). `resources.instance_type` and `instance_count`
    choose the VM size and node count, and `queue_settings.job_tier` chooses dedicated or spot (the
    command job reference still says the default is `local`). Nothing is missing, so this is a fact
    (info), never a finding; the same holds for a pipeline step that names no compute (AML517).

    See: how-to-use-serverless-compute, reference-yaml-job-command

    Provenance: SPEC §3.5, §11 row 1.
    """
    data = _mapping(document.data)
    if "compute" in data:
        return
    runner = _mapping(data.get("trial")) if document.kind == "sweepJob" else data
    if not runner.get("command") or not runner.get("environment"):
        return  # a job that cannot be submitted runs nowhere; the missing key is the finding
    if any(key != "compute" and isinstance(key, str) and closest(key, ("compute",)) for key in data):
        return  # a misspelt `compute:` (`comptue:`) is the finding (AML101), not serverless
    for holder in holders(document):
        if not holder.context.primary:
            continue
        instance_type, type_path, _ = _effective(holder.context, "resources", "instance_type")
        if isinstance(instance_type, str) and instance_type.strip() and type_path is not None:
            yield Finding(
                f"no compute is named, so {holder.context.owner} runs on serverless compute, "
                f"on '{instance_type}' VMs (resources.instance_type)", type_path)
        else:
            where: Path_ = ("type",) if "type" in data else (
                ("trial",) if document.kind == "sweepJob" else ("command",))
            yield Finding(
                f"no compute is named, so {holder.context.owner} runs on serverless compute, on "
                "a VM size that Azure ML picks", where, key=True,
                hint="set resources.instance_type to choose the VM size, or compute: azureml:<cluster>")
        return


def _queue_settings(holder: Holder) -> Iterator[tuple[dict, Path_]]:
    """The holder's queue_settings, and for a sweep also its trial's."""
    own = _own(holder, "queue_settings")
    if own is not None:
        yield own
    if holder.context.role == "sweep job":
        trial = holder.data.get("trial")
        if isinstance(trial, dict) and isinstance(trial.get("queue_settings"), dict):
            yield trial["queue_settings"], ("trial", "queue_settings")


def _tier(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    tier = value.strip().lower()
    return None if tier in ("", "null") else tier


@check("AML414", "job-tier-on-cluster", Severity.INFO,
       "`queue_settings.job_tier` is set on a job that runs on a named compute cluster.",
       bad=JOB + "queue_settings:\n  job_tier: spot\n",
       good=JOB + "queue_settings:\n  priority: high\n",
       kinds=JOB_KINDS + PIPELINE_KINDS)
def job_tier_on_cluster(document: Document) -> Iterator[Finding]:
    """
    The job tier (spot, basic, standard, premium) is how serverless compute chooses between spot
    and dedicated capacity. A compute cluster has its own tier, chosen when the cluster was created
    (dedicated or low-priority nodes), and the SDK documents no effect of `job_tier` there. The
    command job reference lists the allowed values but says neither that the service rejects the
    key on a cluster nor that it ignores it, and a named compute may be a Kubernetes or virtual
    cluster that does use tiers, so this is a fact to check (info), not a finding. `priority` is
    meaningful on clusters and is not reported.

    See: how-to-use-serverless-compute, reference-yaml-job-command

    Provenance: SPEC §3.5, §3.8.
    """
    for holder in holders(document):
        context = holder.context
        if not context.primary or context.serverless is not False or is_local_compute(context.compute):
            continue
        for block, path in _queue_settings(holder):
            tier = _tier(block.get("job_tier"))
            if tier is None:
                continue
            yield Finding(
                f"job_tier '{block.get('job_tier')}' on {context.owner}, which runs on "
                f"'{context.compute}': the job tier chooses serverless capacity, and a compute cluster "
                "uses the tier it was created with", path + ("job_tier",),
                hint="remove compute: to run on serverless compute with this tier, or remove job_tier")


# ----------------------------------------------------------------------------- limits


@check("AML415", "command-timeout", Severity.ERROR,
       "A command job's `limits.timeout` is not a positive number of seconds.",
       bad=JOB + "limits:\n  timeout: 0\n",
       good=JOB + "limits:\n  timeout: 7200\n",
       kinds=("commandJob",) + PIPELINE_KINDS)
def command_timeout(document: Document) -> Iterator[Finding]:
    """
    `limits.timeout` is the longest the job may run, in seconds, after which it is cancelled. The
    SDK sends any integer as an ISO-8601 duration without a range check, and unlike sweep limits it
    does not round command-job timeouts up: a timeout of 0 or less leaves the job no time to run.
    Sweep limits are checked by the sweep rules.

    See: reference-yaml-job-command

    Provenance: SPEC §3.8, §12 rule 20.
    """
    for holder in holders(document):
        context = holder.context
        if context.role == "step" and context.node_type not in (None, "command"):
            continue
        if context.role not in ("command job", "step"):
            continue
        own = _own(holder, "limits")
        if own is None:
            continue
        block, path = own
        timeout = _int(block.get("timeout"))
        if timeout is not None and timeout <= 0:
            yield Finding(
                f"timeout {timeout} in {context.owner} is not a duration: limits.timeout is a "
                "positive number of seconds", path + ("timeout",),
                hint="timeout: 3600 (one hour), or remove it for no limit")


# ----------------------------------------------------------------------------- spot


_OUTPUTS_IN_COMMAND = re.compile(r"(^|[\s=\"'])(\./)?outputs([/\\\s\"']|$)|\$\{\{\s*outputs\.")


def _writes_outputs_by_command(command: Any) -> bool:
    return isinstance(command, str) and bool(_OUTPUTS_IN_COMMAND.search(command))


# Its examples need a training script on disk, which a text example cannot carry:
# tests/validator/test_compute_rules.py runs both next to a real script instead.
@check("AML416", "spot-without-checkpoints", Severity.INFO,
       "A spot job's script never writes to `./outputs`, so a preempted job starts over.",
       examples_are_runnable=False,
       bad=JOB.replace("compute: azureml:cpu-cluster\n", "code: ./src\n")
       + "resources:\n  instance_type: Standard_DS3_v2\nqueue_settings:\n  job_tier: spot\n",
       good=JOB.replace("compute: azureml:cpu-cluster\n", "code: ./src\n")
       .replace("--lr ${{inputs.lr}}", "--lr ${{inputs.lr}} --checkpoint-dir ./outputs")
       + "resources:\n  instance_type: Standard_DS3_v2\nqueue_settings:\n  job_tier: spot\n",
       kinds=JOB_KINDS + PIPELINE_KINDS)
def spot_without_checkpoints(document: Document) -> Iterator[Finding]:
    """
    Spot capacity (`queue_settings.job_tier: spot`) is cheaper because Azure may take the VMs back
    at any time; the job is then requeued and its command starts again from the beginning. Only
    what was saved survives: files under `./outputs` are uploaded with the job, as are declared
    outputs. When the entry script (found from `command` under the local `code:` folder, see
    validator/pycode.py) never mentions `./outputs` and the command passes no output folder, a
    preempted job cannot resume: save checkpoints there and load the latest one at start. Nothing
    is said when the script cannot be found.

    See: how-to-use-serverless-compute

    Provenance: SPEC §9.4.
    """
    for holder in holders(document):
        context = holder.context
        if not context.primary or context.code_site is None:
            continue
        for block, path in _queue_settings(holder):
            if _tier(block.get("job_tier")) != "spot":
                continue
            source, runner = context.code_site
            if _writes_outputs_by_command(runner.get("command")):
                break
            script = pycode.find_entry_script(source, runner)
            if script is None or pycode.mentions_outputs_folder(script) is not False:
                break
            shown = _shown(script, source)
            yield Finding(
                f"{context.owner} runs on spot capacity but '{shown}' never writes to ./outputs: "
                "a preempted job cannot resume", path + ("job_tier",),
                hint="write checkpoints to ./outputs (uploaded with the job) and load the latest one at start")
            break


def _shown(script: Path, source: Document) -> str:
    try:
        return script.relative_to(Path(source.base_dir).resolve()).as_posix()
    except ValueError:
        return script.name



# ----------------------------------------------------------------------------- interactive services


@check("AML417", "ssh-service-without-key", Severity.WARNING,
       "An `ssh` service of a job sets no `ssh_public_keys`, so nobody can connect to it.",
       bad=JOB + "services:\n  my_ssh:\n    type: ssh\n    nodes: all\n",
       good=JOB + "services:\n  my_ssh:\n    type: ssh\n    ssh_public_keys: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample me@laptop\n"
                  "    nodes: all\n",
       kinds=("commandJob",) + PIPELINE_KINDS)
def ssh_service_without_key(document: Document) -> Iterator[Finding]:
    """
    An interactive `ssh` service lets you open a shell in the job's container while it runs
    (`az ml job connect-ssh --private-key-file-path ...`). The container accepts only the public
    keys listed in `ssh_public_keys`: "To use SSH, you need an SSH key pair", and the service's
    YAML example pastes the whole public key there. Without one, azure-ai-ml submits the job and
    the job trains as usual, but its SSH endpoint is of no use: the connection is refused (or
    hangs) when you need it. Paste the content of your `.pub` file. Checked for command jobs and
    each step of a pipeline.

    See: how-to-interactive-jobs,
    https://github.com/Azure/azure-dev/blob/main/cli/azd/extensions/azure.ai.training/internal/utils/job_validator.go
    """
    data = _mapping(document.data)
    sites: list[tuple[Path_, Any, str]] = []
    if document.kind == "commandJob":
        sites.append((("services",), data.get("services"), "the job"))
    else:
        for name, node in _mapping(data.get("jobs")).items():
            if isinstance(node, dict):
                sites.append((("jobs", name, "services"), node.get("services"), f"step '{name}'"))
    for path, services, owner in sites:
        for name, service in _mapping(services).items():
            if not isinstance(service, dict) or str(service.get("type", "")).strip().lower() != "ssh":
                continue
            key = service.get("ssh_public_keys")
            if isinstance(key, str) and key.strip():
                continue
            where = path + (name,) + (("ssh_public_keys",) if "ssh_public_keys" in service else ())
            yield Finding(
                f"ssh service '{name}' of {owner} has no `ssh_public_keys`: the job runs, but no key "
                "can open its SSH endpoint", where, key="ssh_public_keys" not in service,
                hint="add `ssh_public_keys: <the content of your .pub file>` (make a key pair with "
                     "`ssh-keygen -f <file>`)")
