"""The Python code a spec runs: find the entry script of a command, read and parse it once.

Rules that look into training code (checkpoints, metric logging, argument parsing) share this
module, so each script is read and parsed at most once per process however many rules and specs
ask. Nothing here raises: a command it cannot follow, a missing or unreadable file and a syntax
error all give ``None``, and callers then judge nothing.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple

from . import paths as fs
from .paths import resolved
from .references import is_local_path
from .loader import read_limited

if TYPE_CHECKING:
    from .loader import Document

MAX_SOURCE_BYTES = 1024 * 1024

_PYTHON = re.compile(r"^python(\d+(\.\d+)*)?$")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
# Interpreter options that take a separate argument (`-W ignore`, `-X dev`).
_PYTHON_OPTIONS_WITH_VALUE = {"-W", "-X", "--check-hash-based-pycs"}
# Launchers that start the script themselves (their own options first).
_LAUNCHERS = {"torchrun", "deepspeed"}
_LAUNCHER_MODULES = {"torch.distributed.run", "torch.distributed.launch"}
_SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", ";;", "|&"}
# Words that may stand before the program in a simple command without changing the directory.
_WRAPPERS = {"env", "time", "nohup", "exec", "stdbuf", "nice", "ionice", "xvfb-run"}
_CHANGES_DIRECTORY = {"cd", "pushd", "popd"}


class EntryPoint(NamedTuple):
    """What a command starts: a script path as written (``kind == "script"``) or a dotted
    module name (``kind == "module"``)."""

    kind: str
    name: str


def _segments(command: str) -> Iterator[list[str]]:
    """Simple commands of a shell command line, as token lists (best effort)."""
    text = command.replace("\\\r\n", " ").replace("\\\n", " ")
    for line in text.splitlines():
        if _NEEDS_SHLEX.search(line) is None:
            # No quotes or escapes: shlex would give exactly these words and punctuation runs.
            tokens = _PLAIN_TOKEN.findall(line)
        else:
            tokens = _shlex_tokens(line)
        current: list[str] = []
        for token in tokens:
            if token in _SEPARATORS:
                if current:
                    yield current
                current = []
            else:
                current.append(token)
        if current:
            yield current


_NEEDS_SHLEX = re.compile(r"""['"\\]""")
# shlex's tokens (posix, punctuation_chars=True, whitespace_split) for a line without quotes or
# backslashes: runs of its punctuation characters, and words between them and whitespace.
_PLAIN_TOKEN = re.compile(r"[();<>|&]+|[^ \t\r\n();<>|&]+")


def _shlex_tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: fall back to plain words
        return line.split()


def _after_python(tokens: list[str]) -> tuple[EntryPoint | None, list[str] | None]:
    """Interpret ``python [options] (script | -m module) ...``. Returns the entry point, or the
    remaining tokens when ``-m`` names a launcher module (torch.distributed.run)."""
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == "-m" or (token.startswith("-m") and not token.startswith("--")):
            module = token[2:] or (tokens[index + 1] if index + 1 < len(tokens) else "")
            rest = tokens[index + (1 if token[2:] else 2):]
            if module in _LAUNCHER_MODULES:
                return None, rest
            return (EntryPoint("module", module) if _MODULE.match(module) else None), None
        if token == "-c" or (token.startswith("-c") and not token.startswith("--")) or token == "-":
            return None, None
        if token in _PYTHON_OPTIONS_WITH_VALUE:
            index += 2
            continue
        if token.startswith("-"):
            index += 1
            continue
        return EntryPoint("script", token), None
    return None, None


def _after_launcher(tokens: list[str]) -> EntryPoint | None:
    """``torchrun [options] (script.py | -m module)``: options may take separate values, so
    the script is the first ``.py`` word, or the first plain word after ``-m``/``--module``."""
    module_flag = False
    for token in tokens:
        if token in ("-m", "--module"):
            module_flag = True
            continue
        if token.startswith("-"):
            continue
        if token.endswith(".py"):
            return EntryPoint("script", token)
        if module_flag and _MODULE.match(token) and not token.isdigit():
            return EntryPoint("module", token)
    return None


def entry_points(command: object) -> list[EntryPoint]:
    """The Python entry points a command starts, in order, up to the first change of directory
    (``cd src && python x.py`` runs a path this cannot resolve, so it stops there).

    Understood forms: ``python x.py``, ``python3 -u x.py``, ``python -m pkg.mod``,
    ``torchrun --nproc_per_node 4 x.py``, ``python -m torch.distributed.run ... x.py``,
    ``accelerate launch [--config_file c.yaml] x.py``, ``deepspeed x.py``, any of them after
    ``VAR=value``, ``env``, ``time``, ``mpirun -np 2`` and the like, or after ``&&``/``;``.
    """
    if not isinstance(command, str):
        return []
    found: list[EntryPoint] = []
    for tokens in _segments(command):
        start = 0
        while start < len(tokens) and ("=" in tokens[start] and not tokens[start].startswith("-")
                                       or tokens[start] in _WRAPPERS):
            start += 1
        if start < len(tokens) and tokens[start] in _CHANGES_DIRECTORY:
            break
        for index in range(start, len(tokens)):
            word = tokens[index].rsplit("/", 1)[-1]
            rest = tokens[index + 1:]
            if _PYTHON.match(word):
                entry, launcher_rest = _after_python(rest)
                if launcher_rest is not None:
                    entry = _after_launcher(launcher_rest)
            elif word in _LAUNCHERS:
                entry = _after_launcher(rest)
            elif word == "accelerate" and rest[:1] == ["launch"]:
                entry = _after_launcher(rest[1:])
            else:
                continue
            if entry is not None:
                found.append(entry)
            break
    return found


def code_folder(document: "Document", holder: object) -> Path | None:
    """The local folder (or single file) that ``holder``'s ``code:`` uploads, resolved against
    the spec's folder; ``None`` for no code, a remote or registered code asset, or a binding."""
    if not isinstance(holder, dict):
        return None
    code = holder.get("code")
    if not is_local_path(code) or "${{" in code:
        return None
    text = code.strip()
    if text.startswith("file:"):
        text = text[len("file:"):]
    try:
        return resolved(Path(document.base_dir) / text)
    except (OSError, RuntimeError, ValueError):
        return None


def _resolve(root: Path, entry: EntryPoint) -> Path | None:
    try:
        if fs.is_file(root):
            # `code:` names a single file: the snapshot holds just that file.
            if entry.kind == "script" and Path(entry.name).name == root.name \
                    and Path(entry.name).parent in (Path("."), Path("")):
                return root
            return None
        if not fs.is_dir(root):
            return None
        if entry.kind == "script":
            if "${{" in entry.name or "$" in entry.name or Path(entry.name).is_absolute():
                return None
            candidates = [root / entry.name]
        else:
            relative = Path(*entry.name.split("."))
            candidates = [root / relative.with_suffix(".py"), root / relative / "__main__.py"]
        for candidate in candidates:
            if fs.is_file(candidate):
                return resolved(candidate)
    except (OSError, ValueError):
        return None
    return None


def find_entry_script(document: "Document", holder: object) -> Path | None:
    """The local Python file that ``holder`` (a mapping with ``command`` and ``code``: a command
    job, a sweep's ``trial``, a command component, an inline pipeline step) starts, or ``None``.

    The command is searched for ``python``/``python3`` (with interpreter options such as ``-u``),
    ``python -m pkg.mod``, ``torchrun``, ``python -m torch.distributed.run``/``launch``,
    ``accelerate launch`` and ``deepspeed``, also after environment assignments, wrappers
    (``env``, ``time``, ``mpirun ...``) and earlier commands joined with ``&&`` or ``;``. The file
    is looked up under the local ``code:`` folder, resolved against ``document.base_dir`` as the
    SDK does. ``None`` when there is no local ``code``, the command changes directory first
    (``cd src && python x.py``), runs inline code (``python -c``), or the file does not exist.
    When a command starts several scripts, the first one that exists is returned.
    """
    if not isinstance(holder, dict):
        return None
    root = code_folder(document, holder)
    if root is None:
        return None
    for entry in entry_points(holder.get("command")):
        path = _resolve(root, entry)
        if path is not None:
            return path
    return None


def _stamp(path: Path) -> tuple[int, int] | None:
    status = fs.stat(path)
    return None if status is None else (status.st_mtime_ns, status.st_size)


@lru_cache(maxsize=512)
def _read(path: str, stamp: tuple[int, int]) -> str | None:
    if stamp[1] > MAX_SOURCE_BYTES:
        return None
    try:
        # A regular file only (a FIFO named `train.py` would block the read).
        return read_limited(path, MAX_SOURCE_BYTES)[0].decode("utf-8", errors="replace")
    except OSError:
        return None


def read_source(path: Path | str) -> str | None:
    """The text of a source file (cached per path and modification time), or ``None`` when it
    cannot be read or is larger than :data:`MAX_SOURCE_BYTES`."""
    stamp = _stamp(Path(path))
    return None if stamp is None else _read(str(path), stamp)


def _parse(path: str, stamp: tuple[int, int]) -> ast.Module | None:
    # Not cached: a syntax tree is hundreds of objects, and keeping hundreds of trees alive makes
    # each garbage collection walk them all (a third of a lint run's time went there). The facts
    # a rule needs are read from the tree once and cached instead (_facts_of_tree).
    source = _read(path, stamp)
    if source is None:
        return None
    try:
        return ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def parse_source(path: Path | str) -> ast.Module | None:
    """The AST of a Python file (parsed anew on each call), or ``None`` when it cannot be read or
    parsed."""
    stamp = _stamp(Path(path))
    return None if stamp is None else _parse(str(path), stamp)


_OUTPUTS_PATH = re.compile(r"^(\./)?outputs([/\\]|$)")


def is_outputs_path(text: Any) -> bool:
    """``outputs``, ``./outputs`` or a path below it: the folder the service uploads."""
    return isinstance(text, str) and bool(_OUTPUTS_PATH.match(text.strip()))


def mentions_outputs_folder(path: Path | str) -> bool | None:
    """Whether the script uses the ``./outputs`` folder in a string constant (``"outputs"``,
    ``"./outputs/model.pt"``, ``os.path.join("outputs", ...)``, ``f"outputs/{name}"``).
    ``None`` when the file cannot be read or parsed."""
    facts = script_facts(path)
    return None if facts is None else facts.mentions_outputs


# =============================================================================================
# Training-code analysis (the training-code family, AML7xx, and the entry-script check of the
# asset family, AML8xx). Everything above belongs to the compute family's entry-script lookup;
# this section adds what a command passes to each script it starts, and what a script logs and
# which command-line options it defines. Scripts are only parsed (`ast`), never executed.
# =============================================================================================

# Stands for a `${{...}}` value in a command: any word that holds it is not judged.
PLACEHOLDER = "__amllab_value__"
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}|(?<![\$\{])\{(?:inputs|outputs|search_space)\.[A-Za-z0-9_.-]+\}(?!\})")
# Programs after which `python`/launchers are looked for among the arguments.
_RUNNERS = {"mpirun", "mpiexec", "horovodrun", "srun", "sudo", "timeout", "conda", "xvfb-run"}
_ARG_LAUNCHERS = {"torchrun", "deepspeed", "accelerate"}
# Simple commands that neither write scripts nor run other code that could log metrics; any
# other program (`unzip`, `git`, `bash run.sh`) may do both.
_HARMLESS = {"echo", "printf", "ls", "mkdir", "cat", "pwd", "date", "sleep", "env", "export", "set",
             "true", "false", "hostname", "uname", "nvidia-smi", "wc", "head", "tail", "find", "which",
             "pip", "pip3", "tee", "df", "du", "free", "nproc", "whoami", "grep", "sort", "rm", "touch",
             "chmod", "source", ".", "unset", "ulimit", "lscpu", "nvcc", "exit", "test", "[", "wait"}
_REDIRECT = re.compile(r"^[0-9]*[<>]+&?$|^&>$")


class Invocation(NamedTuple):
    """One Python program a command starts. ``kind`` is ``"script"`` (``name`` is the path as
    written), ``"module"`` (a dotted name, ``python -m``) or ``"inline"`` (``name`` is the code of
    ``python -c``). ``args`` are the words after it, with :data:`PLACEHOLDER` for expressions.
    ``directory`` is the folder earlier ``cd`` commands moved to (``""`` for none, ``None`` when
    unknown); ``after_writes`` tells whether an earlier command may have written files."""

    kind: str
    name: str
    args: tuple[str, ...]
    directory: str | None
    after_writes: bool


class CommandLine(NamedTuple):
    invocations: tuple[Invocation, ...]
    # Other programs the command runs (a shell script, a binary): they may do anything.
    opaque: tuple[str, ...]


def _without_expressions(command: str) -> str:
    text = _EXPRESSION.sub(PLACEHOLDER, command)
    if "$[[" in text:
        text = text.replace("$[[", " ").replace("]]", " ")
    return text


def _python_words(tokens: list[str]) -> tuple[str, str, list[str]] | None:
    """``python [options] (script | -m module | -c code) args...`` → (kind, name, args)."""
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == "--":
            index += 1
            continue
        if token in ("-m", "-c") or (token[:2] in ("-m", "-c") and not token.startswith("--")):
            value = token[2:] if len(token) > 2 else (tokens[index + 1] if index + 1 < len(tokens) else None)
            if value is None:
                return None
            rest = tokens[index + (1 if len(token) > 2 else 2):]
            return ("module" if token[:2] == "-m" else "inline"), value, rest
        if token in _PYTHON_OPTIONS_WITH_VALUE:
            index += 2
            continue
        if token.startswith("-"):
            index += 1
            continue
        return "script", token, tokens[index + 1:]
    return None


def _launched(tokens: list[str]) -> tuple[str, str, list[str]] | None:
    """``torchrun [options] script.py args`` (options may take values, so the script is the
    first ``.py`` word)."""
    for index, token in enumerate(tokens):
        if token in ("-m", "--module") and index + 1 < len(tokens):
            return "module", tokens[index + 1], tokens[index + 2:]
        if not token.startswith("-") and token.endswith(".py"):
            return "script", token, tokens[index + 1:]
    return None


def _strip_redirections(tokens: list[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for token in tokens:
        if skip:
            skip = False
            continue
        if _REDIRECT.match(token):
            skip = True
            continue
        kept.append(token)
    return kept


@lru_cache(maxsize=2048)
def command_line(command: str) -> CommandLine:
    """The Python programs a shell command line starts, with their arguments (best effort:
    ``&&``, ``;``, pipes, ``cd``, environment assignments, ``env``/``time`` wrappers,
    ``mpirun ... python``, ``torchrun``/``deepspeed``/``accelerate launch``,
    ``python -m torch.distributed.run``)."""
    invocations: list[Invocation] = []
    opaque: list[str] = []
    directory: str | None = ""
    writes = False
    for tokens in _segments(_without_expressions(command)):
        tokens = _strip_redirections(tokens)
        start = 0
        while start < len(tokens) and (("=" in tokens[start] and not tokens[start].startswith("-"))
                                       or tokens[start] in _WRAPPERS):
            start += 1
        if start >= len(tokens):
            continue
        program = tokens[start].rsplit("/", 1)[-1]
        rest = tokens[start + 1:]
        if program in _CHANGES_DIRECTORY:
            target = rest[0] if rest and program != "popd" else None
            if target is None or PLACEHOLDER in target or "$" in target or target.startswith(("-", "/", "~")):
                directory = None
            elif directory is not None:
                directory = str(Path(directory) / target) if directory else target
            continue
        found = None
        if _PYTHON.match(program):
            found = _python_words(rest)
            if found and found[0] == "module" and found[1] in _LAUNCHER_MODULES:
                found = _launched(found[2])
        elif program in _ARG_LAUNCHERS:
            found = _launched(rest[1:] if program == "accelerate" and rest[:1] == ["launch"] else rest)
        elif program in _RUNNERS:
            for index, token in enumerate(rest):
                if _PYTHON.match(token.rsplit("/", 1)[-1]):
                    found = _python_words(rest[index + 1:])
                    break
                if token in _ARG_LAUNCHERS:
                    found = _launched(rest[index + 1:])
                    break
        if found is not None:
            kind, name, args = found
            invocations.append(Invocation(kind, name, tuple(args), directory, writes))
        elif program in _HARMLESS:
            continue
        else:
            # Anything else (a shell script, a binary, `bash -c`) may write files and log metrics.
            writes = True
            opaque.append(program)
    return CommandLine(tuple(invocations), tuple(opaque))


class Snapshot(NamedTuple):
    """The files a job's working directory starts with: the ``code`` folder (or a single code
    file) and the ``additional_includes`` copied next to it."""

    root: Path
    includes: tuple[Path, ...] = ()

    def find(self, relative: str, directory: str = "") -> Path | None:
        """The file ``relative`` (as a command names it, seen from ``directory``), or ``None``."""
        try:
            if Path(relative).is_absolute() or PLACEHOLDER in relative or "$" in relative:
                return None
            wanted = Path(directory or ".") / relative
            if fs.is_file(self.root):
                return self.root if Path(wanted.as_posix()) == Path(self.root.name) else None
            candidate = self.root / wanted
            if fs.is_file(candidate):
                return resolved(candidate)
            first = wanted.parts[0] if wanted.parts else ""
            for include in self.includes:
                if include.name == first:
                    candidate = include.parent / wanted
                    if fs.is_file(candidate):
                        return resolved(candidate)
        except (OSError, ValueError, RuntimeError):
            return None
        return None

    def find_module(self, dotted: str, directory: str = "") -> Path | None:
        parts = dotted.split(".")
        if not all(parts):
            return None
        base = "/".join(parts)
        return self.find(base + ".py", directory) or self.find(base + "/__main__.py", directory)

    def search_roots(self) -> list[Path]:
        roots = [self.root] if fs.is_dir(self.root) else [self.root.parent]
        return roots + [include.parent for include in self.includes]


def snapshot(document: "Document", holder: object) -> Snapshot | None:
    """The local snapshot of ``holder`` (a mapping with ``code`` and maybe
    ``additional_includes``), or ``None`` when there is no local code or it does not exist."""
    root = code_folder(document, holder)
    if root is None or not fs.exists(root):
        return None
    includes: list[Path] = []
    raw = holder.get("additional_includes") if isinstance(holder, dict) else None
    for item in raw if isinstance(raw, list) else []:
        if is_local_path(item) and "${{" not in item and "://" not in item:
            try:
                includes.append(resolved(Path(document.base_dir) / item.strip()))
            except (OSError, RuntimeError, ValueError):
                continue
    return Snapshot(root, tuple(includes))


# ---------------------------------------------------------------------------- script facts
class MetricLog(NamedTuple):
    """One call that logs metrics. ``name`` is a literal metric name; ``pattern`` a regular
    expression for a name built from parts (``f"val_{k}"``); both ``None`` when the name is
    computed. ``repeats``: True inside a loop, False visibly run once, None unknown."""

    line: int
    name: str | None
    pattern: str | None
    repeats: bool | None

    def matches(self, metric: str) -> bool:
        if self.name is not None:
            return self.name == metric
        return self.pattern is not None and re.fullmatch(self.pattern, metric, re.S) is not None

    @property
    def computed(self) -> bool:
        return self.name is None


class ArgumentParsing(NamedTuple):
    """What the argparse parsers of a file define. ``blocker`` says why the options cannot be
    known for sure (computed option names, ``parse_known_args``, subcommands...)."""

    options: frozenset[str]
    abbreviations: bool
    blocker: str | None
    # Functions the parser object is handed to: they may add options this file does not show.
    handed_to: frozenset[str]
    builds_parser: bool
    parses: bool


class ScriptFacts(NamedTuple):
    logs: tuple[MetricLog, ...]
    autolog: int | None                 # line of an `autolog()` call
    framework: str | None               # an imported library that logs metrics by itself
    runs_other_code: int | None         # line of subprocess/os.system/runpy/exec
    strings: frozenset[str]
    imports: tuple[tuple[str, int, tuple[str, ...]], ...]  # (module, level, imported names)
    functions: frozenset[str]
    parsing: ArgumentParsing | None     # None: no argparse parser in this file
    other_cli: str | None               # click, typer, sys.argv...
    mentions_outputs: bool = False      # a string constant names ./outputs (is_outputs_path)


_SELF_LOGGING = ("transformers", "lightning", "pytorch_lightning", "ultralytics", "azureml.automl",
                 "azureml.train.automl", "ray.tune", "ray.train")
# Calls after which metrics are logged under names the library picks.
_SELF_LOGGING_CALLS = {"autolog", "MlflowCallback", "MLflowCallback", "MLFlowLogger", "MlflowLogger"}
_OTHER_CLI = ("click", "typer", "fire", "hydra", "docopt", "absl", "jsonargparse", "simple_parsing",
              "configargparse", "tap", "omegaconf", "plac", "cyclopts", "tyro", "defopt")
_RUNS_CODE = {("subprocess", None), ("os", "system"), ("os", "popen"), ("os", "execv"), ("os", "execvp"),
              ("os", "spawnv"), ("runpy", None), (None, "exec")}
_NOT_METRIC_LOGGERS = {"math", "cmath", "np", "numpy", "torch", "tf", "jnp", "jax", "sp", "scipy", "mx",
                       "cp", "cupy", "pd", "sympy", "f", "k", "backend"}


def _looks_like_level(node: ast.AST) -> bool:
    """``logging.INFO``, ``LEVEL`` or ``20``: the first argument of ``Logger.log``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int)
    if isinstance(node, ast.Attribute):
        return node.attr.isupper()
    return isinstance(node, ast.Name) and node.id.isupper()


_METRIC_LIKE = re.compile(r"^[\w.\-/:]{1,250}$")
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module, ast.ClassDef)


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _name_shape(node: ast.AST | None) -> tuple[str | None, str | None]:
    """(literal, pattern) of an expression giving a metric name."""
    if node is None:
        return None, None
    literal = _string(node)
    if literal is not None:
        return literal, None
    parts: list[str] = []
    if isinstance(node, ast.JoinedStr):
        for value in node.values:
            text = _string(value)
            parts.append(re.escape(text) if text is not None else ".+")
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for side in (node.left, node.right):
            text, pattern = _name_shape(side)
            parts.append(re.escape(text) if text is not None else (pattern or ".+"))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _string(node.left) is not None:
        pieces = re.split(r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdifrgeEx]", _string(node.left) or "")
        parts = [p for piece in pieces for p in (re.escape(piece), ".+")][:-1]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
            and _string(node.func.value) is not None:
        pieces = re.split(r"\{[^{}]*\}", _string(node.func.value) or "")
        parts = [p for piece in pieces for p in (re.escape(piece), ".+")][:-1]
    else:
        return None, None
    pattern = "".join(parts)
    if not pattern.replace(".+", ""):
        return None, None
    if ".+" not in pattern:
        return re.sub(r"\\(.)", r"\1", pattern), None
    return None, pattern


# Fields of each node class that may hold child nodes. Skipped: names and other plain values,
# and the shared context/operator singletons (`Load`, `Add`, `Eq`), which no fact looks at.
_NOT_CHILDREN = {"ctx", "op", "ops", "id", "attr", "arg", "name", "asname", "module", "level",
                 "conversion", "simple", "is_async", "type_comment", "kind", "tag", "kwd_attrs",
                 "lineno", "col_offset", "end_lineno", "end_col_offset"}
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.MatchSingleton: ()}


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = tuple(f for f in getattr(cls, "_fields", ()) if f not in _NOT_CHILDREN)
    _CHILD_FIELDS[cls] = fields
    return fields


# Calls that take a parser without adding options to it.
_NOT_HANDED = {"add_argument", "parse_args", "parse_known_args", "add_argument_group",
               "add_mutually_exclusive_group", "set_defaults", "ArgumentParser", "print_help",
               "print_usage", "error", "parse_intermixed_args", "format_help", "format_usage",
               "vars", "print", "str", "repr"}


class _Scan:
    """The facts of one module: one walk indexes parents, functions, name reads and the node
    types the facts need (calls, imports, short strings, `sys.argv`); the passes read those."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.parent: dict[int, ast.AST] = {}
        self.mlflow_names: set[str] = set()        # names bound to the mlflow module
        self.fluent: dict[str, str] = {}           # local name -> mlflow function it imports
        self.argparse_names: set[str] = set()
        self.parser_classes: set[str] = set()
        self.framework: str | None = None
        self.other_cli: str | None = None
        self.functions: dict[str, list[ast.AST]] = {}
        self.loads: dict[str, list[ast.Name]] = {}   # every read of a name, for call sites
        self._repeats: dict[int, bool | None] = {}
        # One traversal, kept by node type: the facts passes iterate these lists only.
        self.calls: list[ast.Call] = []
        self.imports: list[ast.AST] = []       # Import and ImportFrom
        self.argv: list[ast.Attribute] = []    # `sys.argv` reads
        self.strings: set[str] = set()         # short string constants
        self.mentions_outputs = False
        parent = self.parent
        functions = self.functions
        loads = self.loads
        calls = self.calls
        nodes: list[ast.AST] = [tree]
        append = nodes.append
        for node in nodes:  # grows while iterating: a breadth-first walk, as ast.walk's order
            cls = type(node)
            fields = _CHILD_FIELDS.get(cls)
            if fields is None:
                fields = _child_fields(cls)
            for field in fields:
                value = getattr(node, field, None)
                if value is None:
                    continue
                if value.__class__ is list:
                    for item in value:
                        if isinstance(item, ast.AST):
                            parent[id(item)] = node
                            append(item)
                elif isinstance(value, ast.AST):
                    parent[id(value)] = node
                    append(value)
            if cls is ast.Call:
                calls.append(node)
            elif cls is ast.Name:
                if isinstance(node.ctx, ast.Load):
                    loads.setdefault(node.id, []).append(node)
            elif cls is ast.Constant:
                value = node.value
                if isinstance(value, str):
                    if len(value) <= 200:
                        self.strings.add(value)
                    if not self.mentions_outputs and is_outputs_path(value):
                        self.mentions_outputs = True
            elif cls is ast.Attribute:
                if node.attr == "argv" and isinstance(node.value, ast.Name) and node.value.id == "sys":
                    self.argv.append(node)
            elif cls is ast.FunctionDef or cls is ast.AsyncFunctionDef:
                functions.setdefault(node.name, []).append(node)
            elif cls is ast.Import or cls is ast.ImportFrom:
                self.imports.append(node)

    # -- loops ---------------------------------------------------------------------------
    def _scope_and_loop(self, node: ast.AST) -> tuple[ast.AST, bool]:
        child = node
        current = self.parent.get(id(node))
        while current is not None and not isinstance(current, _SCOPES):
            if isinstance(current, _LOOPS):
                # The iterable of a `for` (and the first generator of a comprehension) is
                # evaluated once; everything else in the loop repeats.
                if isinstance(current, (ast.For, ast.AsyncFor)) and child is current.iter:
                    pass
                else:
                    return current, True
            child = current
            current = self.parent.get(id(current))
        return current if current is not None else self.tree, False

    def repeats(self, node: ast.AST, seen: frozenset[int] = frozenset()) -> bool | None:
        scope, looped = self._scope_and_loop(node)
        if looped:
            return True
        if isinstance(scope, ast.Module):
            return False
        if isinstance(scope, ast.ClassDef):
            return False
        if isinstance(scope, ast.Lambda) or id(scope) in seen:
            return None
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if isinstance(self.parent.get(id(scope)), ast.ClassDef):
            return None  # a method: its callers (a framework, a base class) are not visible
        if id(scope) in self._repeats:
            return self._repeats[id(scope)]
        results: list[bool | None] = []
        for other in self.loads.get(scope.name, []):
            call = self.parent.get(id(other))
            if isinstance(call, ast.Call) and call.func is other:
                results.append(self.repeats(call, seen | {id(scope)}))
            else:
                results.append(None)  # handed over as a callback: called who knows how often
            if None in results or len(results) > 200:
                break
        verdict = None if not results or None in results else any(results)
        self._repeats[id(scope)] = verdict
        return verdict

    # -- facts ---------------------------------------------------------------------------
    def facts(self) -> ScriptFacts:
        logs: list[MetricLog] = []
        autolog: int | None = None
        runs_code: int | None = None
        other_cli: str | None = None
        strings = self.strings
        imports: list[tuple[str, int, tuple[str, ...]]] = []
        parsers: list[ast.Call] = []
        parser_vars: set[str] = set()
        options: set[str] = set()
        abbreviations = True
        blocker: str | None = None
        handed: set[str] = set()
        parse_calls = 0
        argv_ok: set[int] = set()

        for node in self.imports:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    imports.append((alias.name, 0, ()))
                    top = alias.name.split(".")[0]
                    if top == "mlflow":
                        self.mlflow_names.add(alias.asname or "mlflow")
                    elif alias.name == "argparse":
                        self.argparse_names.add(alias.asname or "argparse")
                    self._library(alias.name)
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                imports.append((module, node.level, tuple(a.name for a in node.names)))
                if node.level == 0 and module.split(".")[0] == "mlflow":
                    for alias in node.names:
                        self.fluent[alias.asname or alias.name] = alias.name
                if node.level == 0 and module == "argparse":
                    for alias in node.names:
                        if alias.name == "ArgumentParser":
                            self.parser_classes.add(alias.asname or alias.name)
                if node.level == 0:
                    self._library(module)
                    for alias in node.names:
                        if alias.name == "HfArgumentParser":
                            self.other_cli = "transformers.HfArgumentParser"
                        elif module == "sys" and alias.name == "argv":
                            self.other_cli = "sys.argv"

        for node in self.calls:
            func = node.func
            attr = func.attr if isinstance(func, ast.Attribute) else None
            name = func.id if isinstance(func, ast.Name) else None
            base = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
            called = attr or name or ""
            # metric logging
            fluent_target = self.fluent.get(name or "") if name else None
            if called in _SELF_LOGGING_CALLS or fluent_target in ("autolog", "evaluate") or \
                    (attr == "evaluate" and base in self.mlflow_names):
                autolog = autolog or node.lineno
            elif called in ("log_metric", "log_metrics", "log_batch", "log", "log_list", "log_row") \
                    or fluent_target in ("log_metric", "log_metrics"):
                logs.extend(self._metric_logs(node, attr, name, base, fluent_target))
            # code that runs other code
            for module, function in _RUNS_CODE:
                if (module is None and name == function) or \
                        (module is not None and base == module and (function is None or attr == function)):
                    runs_code = runs_code or node.lineno
            # argparse
            is_parser = (attr == "ArgumentParser" and base in self.argparse_names) or \
                        (name is not None and name in self.parser_classes)
            if is_parser:
                parsers.append(node)
                for keyword in node.keywords:
                    if keyword.arg == "allow_abbrev":
                        if isinstance(keyword.value, ast.Constant) and keyword.value.value is False:
                            abbreviations = False
                    elif keyword.arg == "prefix_chars":
                        if _string(keyword.value) != "-":
                            blocker = blocker or "it sets prefix_chars"
                    elif keyword.arg is None:
                        blocker = blocker or "its parser is built from **kwargs"
                target = self.parent.get(id(node))
                if isinstance(target, ast.Assign):
                    for item in target.targets:
                        if isinstance(item, ast.Name):
                            parser_vars.add(item.id)
                        elif isinstance(item, ast.Attribute):
                            parser_vars.add(item.attr)
            elif attr == "add_argument":
                for argument in node.args:
                    text = _string(argument)
                    if text is None:
                        blocker = blocker or f"line {node.lineno} computes an option name"
                    elif text.startswith("-"):
                        options.add(text)
                        for keyword in node.keywords:
                            if keyword.arg == "action" and (
                                    (isinstance(keyword.value, ast.Attribute) and keyword.value.attr == "BooleanOptionalAction")
                                    or (isinstance(keyword.value, ast.Name) and keyword.value.id == "BooleanOptionalAction")):
                                if text.startswith("--"):
                                    options.add("--no-" + text[2:])
                for keyword in node.keywords:
                    if keyword.arg == "nargs" and (_string(keyword.value) == "..." or (
                            isinstance(keyword.value, ast.Attribute) and keyword.value.attr == "REMAINDER")):
                        blocker = blocker or f"line {node.lineno} collects the remaining arguments (REMAINDER)"
                    elif keyword.arg is None:
                        blocker = blocker or f"line {node.lineno} passes **kwargs to add_argument"
            elif attr in ("parse_known_args", "parse_known_intermixed_args"):
                blocker = blocker or "it uses parse_known_args (unknown options are allowed)"
            elif attr == "add_subparsers":
                blocker = blocker or "it defines subcommands"
            elif attr in ("parse_args", "parse_intermixed_args"):
                parse_calls += 1
                for argument in node.args:
                    if isinstance(argument, ast.Constant) and argument.value is None:
                        continue
                    if isinstance(argument, ast.Name):
                        continue
                    if isinstance(argument, ast.Subscript) and isinstance(argument.value, ast.Attribute) \
                            and argument.value.attr == "argv":
                        argv_ok.add(id(argument.value))
                        continue
                    blocker = blocker or f"line {node.lineno} parses a fixed list, not the command line"
        # A second pass, once every parser variable is known: the parser handed to a helper
        # (which may add options this file does not show), and sys.argv read directly.
        if parser_vars:
            for node in self.calls:
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called in _NOT_HANDED:
                    continue
                for value in node.args:
                    if isinstance(value, ast.Name) and value.id in parser_vars:
                        handed.add(called)
                for keyword in node.keywords:
                    value = keyword.value
                    if keyword.arg != "parents" and isinstance(value, ast.Name) and value.id in parser_vars:
                        handed.add(called)
        for node in self.argv:
            if id(node) not in argv_ok:
                other_cli = other_cli or "sys.argv"

        for parser in parsers:
            for keyword in parser.keywords:
                if keyword.arg != "parents":
                    continue
                items = keyword.value.elts if isinstance(keyword.value, (ast.List, ast.Tuple)) else [keyword.value]
                if not all(isinstance(item, ast.Name) and item.id in parser_vars for item in items):
                    blocker = blocker or f"line {parser.lineno} inherits options from a parser built elsewhere"

        parsing = None
        if parsers or options or parse_calls:
            # Without a constructor here, add_argument works on a parser built elsewhere.
            parsing = ArgumentParsing(frozenset(options), abbreviations, blocker, frozenset(handed),
                                      bool(parsers), parse_calls > 0)
        return ScriptFacts(tuple(logs), autolog, self.framework, runs_code, frozenset(strings),
                           tuple(imports), frozenset(self.functions), parsing,
                           self.other_cli or other_cli, self.mentions_outputs)

    def _library(self, module: str) -> None:
        for name in _SELF_LOGGING:
            if module == name or module.startswith(name + "."):
                self.framework = self.framework or name
        top = module.split(".")[0]
        if top in _OTHER_CLI:
            self.other_cli = self.other_cli or top

    def _metric_logs(self, node: ast.Call, attr: str | None, name: str | None, base: str | None,
                     fluent_target: str | None) -> list[MetricLog]:
        repeats = self.repeats(node)
        line = node.lineno
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        function = fluent_target or attr or name or ""
        is_fluent = fluent_target is not None or (base is not None and base in self.mlflow_names)
        if function in ("log", "log_list", "log_row"):
            # run.log("auc", v) (azureml Run) or self.log("val_loss", v) (Lightning). Not metrics:
            # logger.log(logging.INFO, msg), np.log(x), wandb.log({...}).
            if function == "log" and (len(args) < 2 or (base or "").lower() in _NOT_METRIC_LOGGERS
                                      or "log" in (base or "").lower() or _looks_like_level(args[0])):
                return []
            literal, pattern = _name_shape(args[0]) if args else (None, None)
            if literal is not None and not _METRIC_LIKE.match(literal):
                return []
            return [MetricLog(line, literal, pattern, repeats)]
        if function == "log_batch":
            return [MetricLog(line, None, None, repeats)]
        if function == "log_metric":
            if "key" in keywords:
                key = keywords["key"]
            elif not args:
                key = None
            elif is_fluent:
                key = args[0]
            else:
                # MlflowClient().log_metric(run_id, "auc", v): the name comes second.
                key = args[1] if len(args) >= 3 and _name_shape(args[0]) == (None, None) else args[0]
            literal, pattern = _name_shape(key)
            return [MetricLog(line, literal, pattern, repeats)]
        # log_metrics({...})
        metrics = keywords.get("metrics")
        if metrics is None and args:
            metrics = args[0] if is_fluent or isinstance(args[0], (ast.Dict, ast.DictComp)) or len(args) < 2 else args[1]
        found: list[MetricLog] = []
        if isinstance(metrics, ast.Dict):
            for key in metrics.keys:
                literal, pattern = _name_shape(key) if key is not None else (None, None)
                found.append(MetricLog(line, literal, pattern, repeats))
        elif isinstance(metrics, ast.DictComp):
            literal, pattern = _name_shape(metrics.key)
            found.append(MetricLog(line, literal, pattern, repeats))
        elif isinstance(metrics, ast.Call) and isinstance(metrics.func, ast.Name) and metrics.func.id == "dict" \
                and not metrics.args:
            for keyword in metrics.keywords:
                found.append(MetricLog(line, keyword.arg, None, repeats))
        else:
            found.append(MetricLog(line, None, None, repeats))
        return found or [MetricLog(line, None, None, repeats)]


@lru_cache(maxsize=512)
def _facts_of_tree(path: str, stamp: tuple[int, int]) -> ScriptFacts | None:
    tree = _parse(path, stamp)
    if tree is None:
        return None
    try:
        return _Scan(tree).facts()
    except RecursionError:
        return None


def script_facts(path: Path | str) -> ScriptFacts | None:
    """What a Python file logs, imports and parses (cached per path and modification time), or
    ``None`` when it cannot be read or parsed."""
    stamp = _stamp(Path(path))
    return None if stamp is None else _facts_of_tree(str(path), stamp)


@lru_cache(maxsize=256)
def source_facts(source: str) -> ScriptFacts | None:
    """The same for code given as text (``python -c "..."``)."""
    try:
        return _Scan(ast.parse(source)).facts()
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# For one lint run: which modules exist beside a script can change between runs.
_LOCAL_MODULES: dict[tuple, list[Path]] = fs.run_cache()


def local_modules(script: Path, facts: ScriptFacts, roots: list[Path], limit: int = 40) -> list[Path]:
    """Files of the snapshot that ``script`` imports, directly or through each other (helper
    modules next to the script, packages in the code folder). Cached per script version within a
    lint run."""
    stamp = _stamp(script) if script.name != "__inline__.py" else None
    key = (script, stamp, tuple(roots), limit) if stamp is not None else None
    if key is not None and key in _LOCAL_MODULES:
        return list(_LOCAL_MODULES[key])
    found = _local_modules(script, facts, roots, limit)
    if key is not None:
        _LOCAL_MODULES[key] = found
    return list(found)


def _local_modules(script: Path, facts: ScriptFacts, roots: list[Path], limit: int) -> list[Path]:
    found: list[Path] = []
    seen = {script}
    queue: list[tuple[Path, ScriptFacts]] = [(script, facts)]
    while queue and len(found) < limit:
        current, current_facts = queue.pop(0)
        for module, level, names in current_facts.imports:
            for candidate in _module_files(current, module, level, names, roots):
                if candidate in seen:
                    continue
                seen.add(candidate)
                candidate_facts = script_facts(candidate)
                if candidate_facts is None:
                    continue
                found.append(candidate)
                queue.append((candidate, candidate_facts))
    return found


def _module_files(script: Path, module: str, level: int, names: tuple[str, ...], roots: list[Path]) -> list[Path]:
    if level:
        base = script.parent
        for _ in range(level - 1):
            base = base.parent
        bases = [base]
    else:
        bases = [script.parent, *roots]
    parts = [p for p in module.split(".") if p]
    stems = [parts] if parts else [[]]
    stems += [[*parts, name] for name in names if name != "*"]
    found: list[Path] = []
    # Plain strings and os.path: this runs for every import of every script, and most
    # candidates (`numpy.py` beside the script) do not exist.
    isfile = fs.is_file
    join = os.path.join
    for base in dict.fromkeys(bases):
        folder = str(base)
        for stem in stems:
            if not stem:
                candidates = [join(folder, "__init__.py")]
            else:
                relative = join(folder, *stem)
                candidates = [relative + ".py", join(relative, "__init__.py")]
            for candidate in candidates:
                if isfile(candidate):
                    try:
                        found.append(resolved(Path(candidate)))
                    except OSError:
                        continue
    return found
