"""What the linter knows of a Python expression without running it: a literal, a list or dict of
them, an object built by an azure-ai-ml constructor (with the keywords it was given), a reference
inside a ``@dsl.pipeline`` body, or *unknown* (a value that exists only when the code runs),
each with where it is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple


class Span(NamedTuple):
    """Where a value or a keyword is written: 1-based line and character column of its start,
    and the column its text ends at on that line (exclusive)."""

    line: int
    column: int
    end: int


NOWHERE = Span(1, 1, 1)


@dataclass(eq=False)
class Value:
    span: Span


@dataclass(eq=False)
class Known(Value):
    """A literal: str, int, float, bool or None."""

    value: Any


@dataclass(eq=False)
class Items(Value):
    """A list or tuple."""

    items: list[Value]


@dataclass(eq=False)
class Entries(Value):
    """A dict: its keys as written (usually Known strings) and their values."""

    entries: list[tuple[Value, Value]]


@dataclass(eq=False)
class Unknown(Value):
    """A value that exists only when the code runs; ``why`` says where it comes from."""

    why: str


@dataclass(eq=False)
class Symbol(Value):
    """A name of azure-ai-ml (``azure.ai.ml.command``, the module ``azure.ai.ml.dsl``)."""

    qualified: str


@dataclass(eq=False)
class Keyword:
    """A keyword given to a constructor or set afterwards (``job.display_name = ...``): where its
    name is written, and its value."""

    span: Span
    value: Value


@dataclass(eq=False)
class Sdk(Value):
    """An object an azure-ai-ml function built: ``what`` names the function (as the keyword table
    in signatures.py does: ``command``, ``Input``, ``Command.sweep``...), ``keywords`` what it was
    given, later assignments included. Shared, like the object it stands for: an assignment
    through one name is seen through every other."""

    what: str
    keywords: dict[str, Keyword] = field(default_factory=dict)
    positional: list[Value] = field(default_factory=list)
    # For a command called with inputs (`job(lr=Uniform(...))`) and a pipeline's step: the inputs
    # it binds; for a sweep: its trial; for a step: its component; for a pipeline: its steps
    # and outputs.
    bound: dict[str, Keyword] = field(default_factory=dict)
    parts: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str) -> Value | None:
        keyword = self.keywords.get(name)
        return keyword.value if keyword is not None else None

    def known(self, name: str) -> Any:
        """The literal value of keyword ``name``, or None when absent or not known."""
        value = self.get(name)
        return value.value if isinstance(value, Known) else None


@dataclass(eq=False)
class Reference(Value):
    """A binding inside a pipeline body, as the pipeline YAML writes it: ``parent.inputs.lr``, or
    a port of a step (``parent.jobs.train.outputs.model``), whose name is known only once the
    whole body is read (an anonymous step is named after its component, numbered)."""

    fixed: str = ""
    step: Any = None
    port: str = ""

    @property
    def expression(self) -> str:
        if self.step is None:
            return self.fixed
        return f"parent.jobs.{self.step.parts.get('name')}.{self.port}"

    @property
    def text(self) -> str:
        return "${{" + self.expression + "}}"


@dataclass(eq=False)
class PipelineFunction(Value):
    """A function decorated with ``@dsl.pipeline(...)``: its definition (an ``ast.FunctionDef``)
    and the decorator's keywords."""

    definition: Any
    keywords: dict[str, Keyword]


def walk(value: Value) -> Iterator[Value]:
    """``value`` and every value inside it."""
    yield value
    if isinstance(value, Items):
        for item in value.items:
            yield from walk(item)
    elif isinstance(value, Entries):
        for key, item in value.entries:
            yield from walk(key)
            yield from walk(item)
    elif isinstance(value, Sdk):
        for keyword in (*value.keywords.values(), *value.bound.values()):
            yield from walk(keyword.value)
        for item in value.positional:
            yield from walk(item)
