"""The keyword arguments azure-ai-ml's job-building functions take, read from the SDK itself, for
the linter of Python sources (validator/python_jobs/signatures.py, generated).

Several SDK builders take ``**kwargs`` and pass them on: ``command(...)`` hands them to the
``CommandComponent`` and ``Command`` it creates, which keep what their own ``__init__`` names
and drop the rest without a word. So ``command(comptue="cpu-cluster")`` raises nothing and the job
runs on the default compute. What a builder *uses* is the union of the parameters of the
functions the keywords reach; any other keyword is lost.

    python tools/sdk_signatures.py            # rewrite the table (needs azure-ai-ml)
    python tools/sdk_signatures.py --check    # exit 1 when the table is stale

tests/validator/test_python_jobs.py runs ``--check`` where azure-ai-ml is importable.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "validator" / "python_jobs" / "signatures.py"


def _parameters(*functions: object) -> frozenset[str]:
    """The keywords ``functions`` name: their parameters, and what they read of their
    ``**kwargs`` (``kwargs.pop("intellectual_property", None)``), which only their source shows."""
    import re

    names: set[str] = set()
    for function in functions:
        for parameter in inspect.signature(function).parameters.values():  # type: ignore[arg-type]
            if parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL) and parameter.name != "self":
                names.add(parameter.name)
        try:
            source = inspect.getsource(function)  # type: ignore[arg-type]
        except (OSError, TypeError):
            continue
        names.update(re.findall(r"kwargs\.(?:get|pop)\(\s*[\"']([A-Za-z_]+)[\"']", source))
    return frozenset(names)


def _init_chain(cls: type) -> list[object]:
    """The ``__init__`` of ``cls`` and of every class in its MRO that defines one (keywords a
    class does not name go up the chain through ``**kwargs``)."""
    return [klass.__dict__["__init__"] for klass in cls.__mro__
            if "__init__" in klass.__dict__ and klass is not object]


def table() -> dict[str, frozenset[str]]:
    """Callable name (as the linter knows it) -> the keywords it uses."""
    from azure.ai.ml import (Input, MpiDistribution, Output, PyTorchDistribution, TensorFlowDistribution, command,
                             dsl, load_component)
    from azure.ai.ml.entities import (CommandComponent, CronTrigger, JobResourceConfiguration, JobSchedule,
                                      QueueSettings, RecurrencePattern, RecurrenceTrigger)
    from azure.ai.ml.entities._builders.command import Command
    from azure.ai.ml.entities._builders.sweep import Sweep
    from azure.ai.ml.sweep import (BanditPolicy, Choice, LogNormal, LogUniform, MedianStoppingPolicy, Normal,
                                   QLogNormal, QLogUniform, QNormal, QUniform, Randint, TruncationSelectionPolicy,
                                   Uniform)

    found = {
        # command(...) passes its **kwargs to CommandComponent(...) and Command(...).
        "command": _parameters(command, *_init_chain(CommandComponent), *_init_chain(Command)),
        "Command.sweep": _parameters(Command.sweep),
        "Command.set_limits": _parameters(Command.set_limits),
        "Command.set_resources": _parameters(Command.set_resources),
        "Command.set_queue_settings": _parameters(Command.set_queue_settings),
        "Sweep.set_limits": _parameters(Sweep.set_limits),
        "Sweep.set_objective": _parameters(Sweep.set_objective),
        "Sweep.set_resources": _parameters(Sweep.set_resources),
        "Input": _parameters(*_init_chain(Input)),
        "Output": _parameters(*_init_chain(Output)),
        "MpiDistribution": _parameters(*_init_chain(MpiDistribution)),
        "PyTorchDistribution": _parameters(*_init_chain(PyTorchDistribution)),
        "TensorFlowDistribution": _parameters(*_init_chain(TensorFlowDistribution)),
        "JobResourceConfiguration": _parameters(*_init_chain(JobResourceConfiguration)),
        "QueueSettings": _parameters(*_init_chain(QueueSettings)),
        "CronTrigger": _parameters(*_init_chain(CronTrigger)),
        "RecurrenceTrigger": _parameters(*_init_chain(RecurrenceTrigger)),
        "RecurrencePattern": _parameters(*_init_chain(RecurrencePattern)),
        "JobSchedule": _parameters(*_init_chain(JobSchedule)),
        "load_component": _parameters(load_component),
        "dsl.pipeline": _parameters(dsl.pipeline) | _pipeline_decorator_keywords(),
        "MedianStoppingPolicy": _parameters(*_init_chain(MedianStoppingPolicy)),
        "BanditPolicy": _parameters(*_init_chain(BanditPolicy)),
        "TruncationSelectionPolicy": _parameters(*_init_chain(TruncationSelectionPolicy)),
    }
    for cls in (Choice, Uniform, LogUniform, Normal, LogNormal, QUniform, QLogUniform, QNormal, QLogNormal, Randint):
        found[cls.__name__] = _parameters(*_init_chain(cls))
    return found


def _pipeline_decorator_keywords() -> frozenset[str]:
    """What ``@dsl.pipeline(...)`` reads from its ``**kwargs`` (``kwargs.get("compute")``...):
    the decorator's own source is the only record of them."""
    import re

    from azure.ai.ml.dsl import _pipeline_decorator

    source = inspect.getsource(_pipeline_decorator)
    return frozenset(re.findall(r'kwargs\.(?:get|pop)\(\s*"([a-z_]+)"', source))


def constants() -> dict[str, str]:
    """``AssetTypes.URI_FOLDER`` -> ``uri_folder``: the SDK's named constants a job is written
    with (asset types, input and output modes, input types, schedule time zones)."""
    from enum import Enum

    from azure.ai.ml import constants as module

    found = {}
    for holder in ("AssetTypes", "InputOutputModes", "InputTypes", "TimeZone", "DistributionType"):
        cls = getattr(module, holder)
        for name in dir(cls):
            value = getattr(cls, name)
            if name.isupper() and isinstance(value, (str, Enum)):
                found[f"{holder}.{name}"] = value.value if isinstance(value, Enum) else value
    return found


def render(found: dict[str, frozenset[str]], named: dict[str, str]) -> str:
    from importlib.metadata import version

    lines = [
        '"""The keyword arguments azure-ai-ml\'s job-building functions use (generated by',
        "tools/sdk_signatures.py from azure-ai-ml " + version("azure-ai-ml") + "; do not edit).",
        "",
        "A keyword not listed for a function is dropped by the SDK without an error (several builders",
        'take ``**kwargs``): the linter of Python sources reports it."""',
        "",
        "SDK_VERSION = " + repr(version("azure-ai-ml")),
        "",
        "KEYWORDS: dict[str, frozenset[str]] = {",
    ]
    for name in sorted(found):
        names = ", ".join(repr(n) for n in sorted(found[name]))
        lines.append(f"    {name!r}: frozenset({{{names}}}),")
    lines.append("}")
    lines += ["", "# The SDK's named constants (azure.ai.ml.constants), by class and member.", "CONSTANTS: dict[str, str] = {"]
    lines += [f"    {name!r}: {named[name]!r}," for name in sorted(named)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the table is stale")
    args = parser.parse_args(argv)
    text = render(table(), constants())
    if args.check:
        if TABLE.read_text() != text:
            sys.stderr.write(f"{TABLE.relative_to(ROOT)} is stale: run python tools/sdk_signatures.py\n")
            return 1
        return 0
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
