"""Reads a Python module the way the SDK v2 would build jobs from it, without running it.

Statements are followed in order, as a notebook's cells run top to bottom. A name holds what
its last assignment gave it: a literal, an object an azure-ai-ml constructor built (with the
keywords it was given), a ``@dsl.pipeline`` function, or *unknown*. Nothing is imported and
nothing is called: a call of anything but the SDK's constructors and methods gives an unknown
value, as does a name assigned differently in two branches of an ``if``, or in a loop. This is
what pyflakes and ruff do with scopes and bindings (https://github.com/PyCQA/pyflakes): where a
value cannot be known without running the code, the linter says nothing of it rather than
guess.

What the interpreter hands on:

- every job a statement submits (``ml_client.jobs.create_or_update(job)``,
  ``ml_client.create_or_update(job)``, ``ml_client.schedules.begin_create_or_update(schedule)``):
  the object as it stands at that line, given to ``on_submit``;
- the keywords a builder drops without a word (``command(comptue=...)``): :attr:`dropped`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from .signatures import CONSTANTS, KEYWORDS
from .values import (Entries, Items, Keyword, Known, PipelineFunction, Reference, Sdk, Span, Symbol, Unknown,
                     Value)

# azure-ai-ml's callables the linter follows, by the last part of their name.
CONSTRUCTORS = frozenset({
    "command", "Input", "Output", "MpiDistribution", "PyTorchDistribution", "TensorFlowDistribution",
    "JobResourceConfiguration", "QueueSettings", "CronTrigger", "RecurrenceTrigger", "RecurrencePattern",
    "JobSchedule", "load_component", "MedianStoppingPolicy", "BanditPolicy", "TruncationSelectionPolicy",
    "Choice", "Uniform", "LogUniform", "Normal", "LogNormal", "QUniform", "QLogUniform", "QNormal", "QLogNormal",
    "Randint",
})
# The positional parameters of the search-space classes, in order.
POSITIONAL = {
    "Choice": ("values",), "Uniform": ("min_value", "max_value"), "LogUniform": ("min_value", "max_value"),
    "Normal": ("mu", "sigma"), "LogNormal": ("mu", "sigma"), "QUniform": ("min_value", "max_value", "q"),
    "QLogUniform": ("min_value", "max_value", "q"), "QNormal": ("mu", "sigma", "q"),
    "QLogNormal": ("mu", "sigma", "q"), "Randint": ("upper",), "load_component": ("source",),
}
# Methods of the SDK's objects, by the object's kind: the keyword table's name for each.
METHODS = {
    ("command", "sweep"): "Command.sweep",
    ("command", "set_limits"): "Command.set_limits",
    ("command", "set_resources"): "Command.set_resources",
    ("command", "set_queue_settings"): "Command.set_queue_settings",
    ("sweep", "set_limits"): "Sweep.set_limits",
    ("sweep", "set_objective"): "Sweep.set_objective",
    ("sweep", "set_resources"): "Sweep.set_resources",
}
SUBMITTING = frozenset({"create_or_update", "begin_create_or_update"})
JOBS = frozenset({"command", "sweep", "pipeline", "JobSchedule"})


class Dropped(tuple):
    """A keyword an SDK builder drops: (callable, keyword, where, the keywords it does use)."""


# Calls that make files or folders when the code runs (`ml_client.jobs.download(...,
# download_path="./out")`, `os.makedirs("src")`): a local path under one of their literal
# arguments may well exist by the time a job that names it is submitted.
CREATING = frozenset({"makedirs", "mkdir", "download", "copytree", "copyfile", "copy", "extractall",
                      "urlretrieve", "write_text", "write_bytes", "to_csv", "to_parquet", "save", "dump"})


class Interpreter:
    def __init__(self, text: str, on_submit: Callable[[Sdk, Span], None], base_dir: Path | None = None) -> None:
        self.lines = text.splitlines()
        self.on_submit = on_submit
        self.base_dir = base_dir or Path.cwd()
        self.dropped: list[tuple[str, str, Span]] = []
        # Literal paths the code itself creates (see CREATING).
        self.created: set[str] = set()

    # -- positions ---------------------------------------------------------------------------

    def column(self, line: int, offset: int) -> int:
        """The 1-based character column of a UTF-8 byte ``offset`` (what ast gives) on ``line``."""
        if not 0 < line <= len(self.lines):
            return offset + 1
        text = self.lines[line - 1]
        if text.isascii():
            return offset + 1
        return len(text.encode("utf-8")[:offset].decode("utf-8", "ignore")) + 1

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1)
        start = self.column(line, getattr(node, "col_offset", 0))
        end_line = getattr(node, "end_lineno", line) or line
        if end_line == line:
            end = self.column(line, getattr(node, "end_col_offset", 0) or 0)
        else:  # a value over several lines: its first line, to its end
            end = len(self.lines[line - 1]) + 1 if 0 < line <= len(self.lines) else start + 1
        return Span(line, start, max(end, start + 1))

    def keyword_span(self, keyword: ast.keyword) -> Span:
        """Where a keyword's name is written (``compute`` in ``compute="x"``)."""
        start = self.span(keyword)
        name = keyword.arg or ""
        return Span(start.line, start.column, start.column + len(name))

    # -- statements --------------------------------------------------------------------------

    def run(self, tree: ast.Module) -> dict[str, Value]:
        """Follow the module; its names as they stand at its end."""
        env: dict[str, Value] = {}
        self.block(tree.body, env)
        return env

    def block(self, statements: list[ast.stmt], env: dict[str, Value]) -> Value | None:
        """Follow ``statements`` in ``env``; the value of a ``return`` met, if any."""
        for statement in statements:
            returned = self.statement(statement, env)
            if returned is not None:
                return returned
        return None

    def statement(self, node: ast.stmt, env: dict[str, Value]) -> Value | None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self.imports(node, env)
        elif isinstance(node, ast.Assign):
            value = self.value(node.value, env)
            for target in node.targets:
                self.assign(target, value, env)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, self.value(node.value, env), env)
        elif isinstance(node, ast.AugAssign):
            self.forget(node.target, env, "changed in place here")
        elif isinstance(node, ast.Expr):
            self.value(node.value, env)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            env[node.name] = self.function(node, env)
        elif isinstance(node, ast.ClassDef):
            env[node.name] = Unknown(self.span(node), f"the class {node.name}")
        elif isinstance(node, ast.Return):
            return self.value(node.value, env) if node.value is not None else Known(self.span(node), None)
        elif isinstance(node, ast.If):
            self.branches([node.body, node.orelse], env)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self.branches([node.body + node.orelse, *[h.body for h in node.handlers]], env)  # type: ignore[attr-defined]
            self.block(node.finalbody, env)  # type: ignore[attr-defined]
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            self.loop(node, env)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self.forget(item.optional_vars, env, "what a with statement gives")
            return self.block(node.body, env)
        return None

    def imports(self, node: ast.Import | ast.ImportFrom, env: dict[str, Value]) -> None:
        span = self.span(node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    env[alias.asname] = Symbol(span, alias.name)
                else:
                    top = alias.name.split(".")[0]
                    env[top] = Symbol(span, top)
            return
        module = node.module or ""
        for alias in node.names:
            if alias.name != "*":
                env[alias.asname or alias.name] = Symbol(span, f"{module}.{alias.name}")

    def assign(self, target: ast.expr, value: Value, env: dict[str, Value]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Attribute):
            self.set_attribute(target, value, env)
        else:
            self.forget(target, env, "unpacked from another value")

    def forget(self, target: ast.expr, env: dict[str, Value], why: str) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                env[node.id] = Unknown(self.span(node), why)

    def set_attribute(self, target: ast.Attribute, value: Value, env: dict[str, Value]) -> None:
        """``job.display_name = ...``, ``job.settings.default_compute = ...``,
        ``step.outputs.model.mode = ...``: a keyword of the object, by its dotted path."""
        path = [target.attr]
        base: ast.expr = target.value
        while isinstance(base, ast.Attribute):
            path.insert(0, base.attr)
            base = base.value
        owner = self.value(base, env)
        if isinstance(owner, Sdk):
            span = self.span(target)
            attribute_span = Span(span.line, max(span.end - len(target.attr), span.column), span.end)
            owner.keywords[".".join(path)] = Keyword(attribute_span, value)

    def branches(self, blocks: list[list[ast.stmt]], env: dict[str, Value]) -> None:
        """Branches of which one runs: a name keeps its value only where every branch leaves it
        the same (the same object); submissions in any branch count."""
        results = []
        for statements in blocks:
            copy = dict(env)
            self.block(statements, copy)
            results.append(copy)
        for name in set().union(*results) if results else ():
            values = [result.get(name) for result in results]
            first = values[0]
            if all(v is first for v in values) and first is not None:
                env[name] = first
            elif any(v is not env.get(name) for v in values):
                span = next(v.span for v in values if v is not None)
                env[name] = Unknown(span, f"'{name}' is assigned differently in the branches of an if or try")

    def loop(self, node: ast.For | ast.AsyncFor | ast.While, env: dict[str, Value]) -> None:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self.forget(node.target, env, "a loop variable")
        before = dict(env)
        self.block(node.body + node.orelse, env)
        for name, value in list(env.items()):
            if before.get(name) is not value:
                env[name] = Unknown(value.span, f"'{name}' is assigned in a loop")

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, env: dict[str, Value]) -> Value:
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.sdk_name(self.value(target, env)) == "dsl.pipeline":
                keywords = self.keywords(decorator, "dsl.pipeline", env) if isinstance(decorator, ast.Call) else {}
                return PipelineFunction(self.span(node), node, keywords)
        return Unknown(self.span(node), f"what the function {node.name} returns")

    # -- expressions -------------------------------------------------------------------------

    def value(self, node: ast.expr | None, env: dict[str, Value]) -> Value:
        if node is None:
            return Known(Span(1, 1, 1), None)
        span = self.span(node)
        if isinstance(node, ast.Constant):
            return Known(span, node.value)
        if isinstance(node, (ast.List, ast.Tuple)):
            return Items(span, [self.value(item, env) for item in node.elts])
        if isinstance(node, ast.Dict):
            if any(key is None for key in node.keys):
                return Unknown(span, "a dict built with **")
            return Entries(span, [(self.value(k, env), self.value(v, env)) for k, v in zip(node.keys, node.values)])
        if isinstance(node, ast.Name):
            found = env.get(node.id)
            if found is None:
                return Unknown(span, f"'{node.id}' is not assigned before this line")
            return found
        if isinstance(node, ast.Attribute):
            return self.attribute(node, env)
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.JoinedStr):
            return self.f_string(node, env)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left, env), self.value(node.right, env)
            if isinstance(left, Known) and isinstance(right, Known):
                try:
                    return Known(span, left.value + right.value)
                except TypeError:
                    pass
            return Unknown(span, "a sum of values known only when the code runs")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = self.value(node.operand, env)
            if isinstance(operand, Known) and isinstance(operand.value, (int, float)) \
                    and not isinstance(operand.value, bool):
                return Known(span, -operand.value)
        return Unknown(span, "an expression evaluated when the code runs")

    def f_string(self, node: ast.JoinedStr, env: dict[str, Value]) -> Value:
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
                continue
            if isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion == -1:
                inner = self.value(part.value, env)
                if isinstance(inner, Known) and isinstance(inner.value, (str, int, float)):
                    parts.append(str(inner.value))
                    continue
            return Unknown(self.span(node), "an f-string with a value known only when the code runs")
        return Known(self.span(node), "".join(parts))

    def attribute(self, node: ast.Attribute, env: dict[str, Value]) -> Value:
        span = self.span(node)
        owner = self.value(node.value, env)
        if isinstance(owner, Symbol):
            qualified = f"{owner.qualified}.{node.attr}"
            constant = CONSTANTS.get(self.constant_name(qualified))
            return Known(span, constant) if constant is not None else Symbol(span, qualified)
        if isinstance(owner, Sdk):
            if (owner.what == "step" or "replaces" in owner.parts) and node.attr in ("outputs", "inputs"):
                return Sdk(span, f"step.{node.attr}", parts={"step": owner})
            if owner.what in ("step.outputs", "step.inputs"):
                step = owner.parts["step"]
                kind = owner.what.split(".")[1]
                return Reference(span, step=step, port=f"{kind}.{node.attr}")
            keyword = owner.keywords.get(node.attr)
            if keyword is not None:
                return keyword.value
            if owner.what == "pipeline" and node.attr == "settings":
                return Sdk(span, "pipeline.settings", parts={"pipeline": owner})
        return Unknown(span, f"the attribute {node.attr} of a value known only when the code runs")

    @staticmethod
    def constant_name(qualified: str) -> str:
        """``azure.ai.ml.constants.AssetTypes.URI_FOLDER`` -> ``AssetTypes.URI_FOLDER``."""
        parts = qualified.split(".")
        return ".".join(parts[-2:])

    @staticmethod
    def sdk_name(value: Value) -> str | None:
        """The keyword table's name of an azure-ai-ml callable, or None."""
        if not isinstance(value, Symbol) or not value.qualified.startswith("azure.ai.ml"):
            return None
        parts = value.qualified.split(".")
        if parts[-1] == "pipeline" and "dsl" in parts:
            return "dsl.pipeline"
        return parts[-1] if parts[-1] in CONSTRUCTORS else None

    def keywords(self, node: ast.Call, callable_name: str, env: dict[str, Value]) -> dict[str, Keyword]:
        """The keywords of a call that ``callable_name`` uses; the others are recorded as dropped."""
        found: dict[str, Keyword] = {}
        used = KEYWORDS.get(callable_name)
        for keyword in node.keywords:
            if keyword.arg is None:
                continue  # **options: not known here
            span = self.keyword_span(keyword)
            value = self.value(keyword.value, env)
            if used is not None and keyword.arg not in used:
                # Dropped by the SDK: not in what it sends, so not in the spec either.
                self.dropped.append((callable_name, keyword.arg, span))
                continue
            found[keyword.arg] = Keyword(span, value)
        return found

    def call(self, node: ast.Call, env: dict[str, Value]) -> Value:
        span = self.span(node)
        if isinstance(node.func, ast.Attribute):
            receiver = self.value(node.func.value, env)
            method = node.func.attr
            if method in SUBMITTING:
                return self.submission(node, env, span)
            if isinstance(receiver, Sdk) and (receiver.what in ("command", "sweep")
                                              or (receiver.what == "step" and method == "sweep")):
                return self.method(receiver, method, node, env, span)
        function = self.value(node.func, env)
        if isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args \
                and node.func.id not in env and all(k.arg for k in node.keywords):
            # dict(a=..., b=...): the keywords are the keys.
            return Entries(span, [(Known(self.keyword_span(k), k.arg), self.value(k.value, env))
                                  for k in node.keywords])
        name = self.sdk_name(function)
        if name is not None and name != "dsl.pipeline":
            built = Sdk(span, name, self.keywords(node, name, env),
                        [self.value(argument, env) for argument in node.args])
            for parameter, argument in zip(POSITIONAL.get(name, ()), built.positional):
                built.keywords.setdefault(parameter, Keyword(argument.span, argument))
            if name == "load_component":
                built.parts.update(self.component_file(built.known("source")))
            return built
        if isinstance(function, Sdk) and function.what in ("command", "load_component"):
            return self.bind(function, node, env, span)
        if isinstance(function, PipelineFunction):
            return self.pipeline(function, node, env, span)
        values = [self.value(argument, env) for argument in (*node.args, *(k.value for k in node.keywords))]
        callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if callee in CREATING or (callee == "open" and len(values) > 1 and isinstance(values[1], Known)
                                  and isinstance(values[1].value, str) and values[1].value[:1] in "wax"):
            self.created.update(v.value for v in values if isinstance(v, Known) and isinstance(v.value, str))
        return Unknown(span, "what a call returns when the code runs")

    def method(self, receiver: Sdk, method: str, node: ast.Call, env: dict[str, Value], span: Span) -> Value:
        kind = "command" if receiver.what == "step" else receiver.what
        table_name = METHODS.get((kind, method))
        if table_name is None:
            return Unknown(span, f"what {method}() returns")
        keywords = self.keywords(node, table_name, env)
        if method == "sweep":
            if receiver.what == "step":
                # A step swept in a pipeline: the sweep takes the step's place (its trial is the
                # step's component, its inputs the step's), as azure-ai-ml's pipeline does.
                return Sdk(span, "sweep", keywords, bound=dict(receiver.bound),
                           parts={"trial": receiver.parts["component"], "replaces": receiver, "name": None})
            return Sdk(span, "sweep", keywords, parts={"trial": receiver})
        if method == "set_limits":
            for name, keyword in keywords.items():
                receiver.keywords[f"limits.{name}"] = keyword
        elif method == "set_resources":
            for name, keyword in keywords.items():
                receiver.keywords[f"resources.{name}"] = keyword
        elif method == "set_queue_settings":
            for name, keyword in keywords.items():
                receiver.keywords[f"queue_settings.{name}"] = keyword
        elif method == "set_objective":
            receiver.keywords.update(keywords)
        return Known(span, None)

    def bind(self, function: Sdk, node: ast.Call, env: dict[str, Value], span: Span) -> Value:
        """A command (or a loaded component) called with inputs: in a pipeline body, one of its
        steps; elsewhere a copy of the command with those inputs (what a sweep samples)."""
        bound = {k.arg: Keyword(self.keyword_span(k), self.value(k.value, env)) for k in node.keywords if k.arg}
        if "__pipeline__" in env:
            return Sdk(span, "step", bound=bound, parts={"component": function, "name": None})
        copy = Sdk(span, function.what, dict(function.keywords), list(function.positional),
                   {**function.bound, **bound}, dict(function.parts))
        return copy

    def submission(self, node: ast.Call, env: dict[str, Value], span: Span) -> Value:
        arguments = [self.value(argument, env) for argument in node.args]
        keywords = {k.arg: (self.keyword_span(k), self.value(k.value, env)) for k in node.keywords if k.arg}
        job = arguments[0] if arguments else next(
            (value for name, (_, value) in keywords.items() if name in ("job", "schedule", "entity")), None)
        if isinstance(job, Sdk) and job.what in JOBS:
            submitted = job
            if "experiment_name" in keywords:  # ml_client.jobs.create_or_update(job, experiment_name=...)
                where, value = keywords["experiment_name"]
                submitted = replace(job, keywords={**job.keywords, "experiment_name": Keyword(where, value)})
            self.on_submit(submitted, span)
        return Unknown(span, "what the service returns")

    # -- pipelines -----------------------------------------------------------------------------

    def pipeline(self, function: PipelineFunction, node: ast.Call, env: dict[str, Value], span: Span) -> Value:
        """A ``@dsl.pipeline`` function called: its body followed as the DSL it is, each call of
        a component a step named after the variable it is assigned to, its parameters the
        pipeline's inputs (given by this call or their defaults), what it returns its outputs."""
        definition: ast.FunctionDef = function.definition
        arguments = definition.args
        parameters = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
        defaults = dict(zip([a.arg for a in (*arguments.posonlyargs, *arguments.args)][::-1],
                            arguments.defaults[::-1]))
        defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
        given: dict[str, Keyword] = {}
        for parameter, argument in zip(parameters, node.args):
            given[parameter] = Keyword(self.span(argument), self.value(argument, env))
        for keyword in node.keywords:
            if keyword.arg:
                given[keyword.arg] = Keyword(self.keyword_span(keyword), self.value(keyword.value, env))
        inputs: dict[str, Keyword] = {}
        for parameter in parameters:
            if parameter in given:
                inputs[parameter] = given[parameter]
            elif parameter in defaults:
                default = defaults[parameter]
                inputs[parameter] = Keyword(self.span(default), self.value(default, env))
            else:
                inputs[parameter] = Keyword(self.span(definition), Known(self.span(definition), None))
        body_env = dict(env)
        body_env["__pipeline__"] = Known(span, True)
        for parameter in parameters:
            body_env[parameter] = Reference(self.span(definition), fixed=f"parent.inputs.{parameter}")
        made: list[Sdk] = []
        returned = None
        for statement in definition.body:
            returned = self.step_statement(statement, body_env, made)
            if returned is not None:
                break
        steps = self.name_steps(made)
        outputs: dict[str, Keyword] = {}
        if isinstance(returned, Entries):
            for key, value in returned.entries:
                if isinstance(key, Known) and isinstance(key.value, str):
                    outputs[key.value] = Keyword(key.span, value)
        return Sdk(span, "pipeline", dict(function.keywords),
                   parts={"inputs": inputs, "steps": steps, "outputs": outputs, "function": function})

    def step_statement(self, statement: ast.stmt, env: dict[str, Value], made: list[Sdk]) -> Value | None:
        """One statement of a pipeline body: a step made (named after the variable it is assigned
        to), or any other statement."""
        if isinstance(statement, (ast.Assign, ast.Expr)) and isinstance(statement.value, ast.Call):
            targets = statement.targets if isinstance(statement, ast.Assign) else []
            value = self.value(statement.value, env)
            if isinstance(value, Sdk) and value.what == "sweep" and "replaces" in value.parts:
                made[:] = [step for step in made if step is not value.parts["replaces"]]
            if isinstance(value, Sdk) and (value.what == "step" or "replaces" in value.parts):
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id != "_":
                    value.parts["variable"] = targets[0].id
                made.append(value)
            elif isinstance(value, Known) and value.value is None and isinstance(statement, ast.Expr):
                pass  # a method that changed a step (set_limits, set_resources)
            else:
                made.append(Sdk(value.span, "unknown-step", parts={"value": value}))
            for target in targets:
                self.assign(target, value, env)
            return None
        return self.statement(statement, env)

    def name_steps(self, made: list[Sdk]) -> dict[str, Sdk]:
        """The steps by the names the SDK gives them (azure-ai-ml's
        ``_update_nodes_variable_names``): a name set with ``step.name = ...``, else the variable
        the step is assigned to; an anonymous step takes its component's name (that of a named
        step of the same component, if any), lower-cased with ``_`` for what is not a letter or a
        digit, and ``_1``, ``_2``... for the next ones."""
        steps: dict[str, Sdk] = {}
        counts: dict[str, int] = {}
        named_for: dict[str, str] = {}
        for step in made:
            if step.what not in ("step", "sweep"):
                continue
            name = step.known("name") or step.parts.get("variable")
            if isinstance(name, str):
                step.parts["name"] = name
                counts[name] = 1
                named_for[self.component_name(step)] = name
        for number, step in enumerate(made):
            if step.what not in ("step", "sweep"):
                steps[f"\0unknown{number}"] = step
                continue
            if step.parts.get("name") is None:
                target = named_for.get(self.component_name(step)) or self.component_name(step)
                counts[target] = counts.get(target, 0) + 1
                suffix = "" if counts[target] == 1 else f"_{counts[target] - 1}"
                step.parts["name"] = f"{sanitized(target)}{suffix}"
            steps[step.parts["name"]] = step
        return steps

    @staticmethod
    def component_name(step: Sdk) -> str:
        component = step.parts.get("component") or step.parts["trial"]
        return str(component.known("name") or component.parts.get("name") or "component")

    def component_file(self, source: Any) -> dict[str, Any]:
        """What a step needs of a component file ``load_component`` reads (a YAML file, read as
        data): its name and type."""
        if not isinstance(source, str) or not source.endswith((".yml", ".yaml")):
            return {}
        from ..loader import parse

        path = self.base_dir / source
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return {}
        data = parse(str(path), text, path.parent)[0].data
        if not isinstance(data, dict):
            return {}
        return {key: data[key] for key in ("name", "type") if isinstance(data.get(key), str)}


def sanitized(name: str) -> str:
    """A component's name as the SDK makes a step name of it (``_sanitize_python_variable_name``)."""
    normalized = re.sub(" +", " ", re.sub(r"[\W_]", " ", name.lower())).strip()
    if re.match(r"\d", normalized):
        normalized = "n" + normalized
    return normalized.replace(" ", "_")
