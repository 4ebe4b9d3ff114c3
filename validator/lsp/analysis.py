"""What the language server shows, computed without it: the lint of an open document under the
configuration of its folder, the key under the cursor, the schema of a key, hover text and key
completions. Positions here are 0-based lines and character (code point) columns; the server
converts them to the editor's units.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from ..config import Config, find_pyproject, load as load_config
from ..diagnostic import Diagnostic, Severity
from ..engine import FileReport, lint_bytes, lint_text
from ..errors import AmllabError
from ..kinds import kind_title
from ..loader import Path_, parse
from ..rules import RULES
from ..schema_check import load_schema

# The YAML reference page of each kind, linked from a key's hover.
REFERENCE_PAGES = {
    "commandJob": "reference-yaml-job-command",
    "sweepJob": "reference-yaml-job-sweep",
    "pipelineJob": "reference-yaml-job-pipeline",
    "commandComponent": "reference-yaml-component-command",
    "pipelineComponent": "reference-yaml-component-pipeline",
    "schedule": "reference-yaml-schedule",
}
LEARN = "https://learn.microsoft.com/azure/machine-learning/{page}?view=azureml-api-2"


# ---------------------------------------------------------------------------------------------
# Configuration and lint


@dataclass
class ConfigFinder:
    """The configuration aml-lint would use for a file: ``[tool.amllab.lint]`` of the nearest
    pyproject.toml above it, read again when that file changes. A broken configuration is
    reported (``problem``, for the file last asked about) and the defaults apply, so the editor
    keeps its diagnostics while the configuration is being fixed."""

    cache: dict[Path, tuple[int, Config, str | None]] = field(default_factory=dict)
    problem: str | None = None

    def for_file(self, path: Path) -> Config:
        folder = path.parent
        source = find_pyproject(folder)
        self.problem = None
        if source is None:
            config = Config(root=folder.resolve())
        else:
            try:
                stamp = source.stat().st_mtime_ns
            except OSError:
                stamp = 0
            cached = self.cache.get(source)
            if cached is None or cached[0] != stamp:
                try:
                    cached = (stamp, load_config(folder, RULES), None)
                except AmllabError as error:
                    cached = (stamp, Config(root=source.parent.resolve()), str(error))
                self.cache[source] = cached
            config, self.problem = cached[1], cached[2]
        workspace = os.environ.get("AMLLAB_WORKSPACE")
        if workspace and Path(workspace).is_dir():
            config = config.with_overrides(workspace=Path(workspace))
        return config


@dataclass
class Baselines:
    """The configured baseline files (``baseline`` in ``[tool.amllab.lint]``), read again when
    they change. A finding recorded there is not shown, as aml-lint does not report it."""

    cache: dict[Path, tuple[int, Any]] = field(default_factory=dict)

    def apply(self, report: FileReport, config: Config) -> None:
        """Take ``report``'s recorded findings out of it; raises AmllabError for a baseline
        that is missing or broken (the message names the file and the fix)."""
        if config.baseline is None or not report.diagnostics:
            return
        from .. import baseline as baselines
        from ..engine import LintResult

        file = config.baseline
        try:
            stamp = file.stat().st_mtime_ns
        except OSError:
            stamp = -1
        cached = self.cache.get(file)
        if cached is None or cached[0] != stamp:
            cached = (stamp, baselines.load(file, baselines.size_limit(config)))
            self.cache[file] = cached
        baselines.apply(cached[1], LintResult([report]), config)


def utf8_size(text: str) -> int:
    """The size of ``text`` saved as UTF-8, which is what aml-lint's size limit counts: free for
    ASCII text (most specs), one encoding otherwise. A lone surrogate (JSON can carry one)
    counts the three bytes Python would write for it."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def lint_document(text: str, path: Path, config: Config, baselines: Baselines | None = None,
                  size: int | None = None) -> FileReport:
    """Lint an open document's text as aml-lint lints the file at ``path``: per-file ignores
    and relative paths (code folders, components) are resolved from there, and the findings
    the configured baseline records are left out. ``size``: the text's :func:`utf8_size`, when
    known.

    A document over the configuration's ``max-file-size`` is not parsed, as aml-lint does not
    read such a file: it gets aml-lint's AML009 (unless the configuration or the baseline
    leaves that out) and nothing else, worded for an editor, where no command-line flag raises
    the limit. Parsing 8 MiB of YAML took seconds and hundreds of megabytes at every keystroke."""
    if size is None:
        size = utf8_size(text)
    limit = config.max_file_size
    if size <= limit:
        report = lint_text(text, str(path), config, base_dir=path.parent)
    else:
        # The limit and one byte tell the loader the file is too large; the rest is never encoded.
        start = text[:limit + 1].encode("utf-8", "surrogatepass")[:limit + 1]
        report = lint_bytes(start, str(path), config, path.parent, size=size)
    if baselines is not None:
        baselines.apply(report, config)  # before the rewording: a baseline records the CLI's words
    if size > limit:
        report.diagnostics = [too_large(d, config) if d.code == "AML009" else d for d in report.diagnostics]
    return report


def too_large(diagnostic: Diagnostic, config: Config) -> Diagnostic:
    """aml-lint's AML009 as an editor shows it: that nothing else is checked, and where the limit
    is raised (the configuration file the limit came from, or where one would go)."""
    if config.source is not None:
        where = f"raise `max-file-size` in [tool.amllab.lint] of {config.source}"
    else:
        where = "add `max-file-size = <bytes>` to [tool.amllab.lint] in a pyproject.toml in its folder or above"
    return replace(diagnostic, message=f"{diagnostic.message}: too large to lint, so nothing else in it is checked",
                   hint=f"a job spec is a few kilobytes; if this file is meant to be larger, {where}")


def shown(report: FileReport, was_spec: bool | None = None) -> list[Diagnostic]:
    """The findings an editor shows: none for YAML that is no Azure ML spec, or another kind
    of Azure ML file (the CLI's info line about skipping it is for ``-v``). A file that does
    not parse cannot tell: its syntax error is shown unless the file was last seen as other
    YAML (``was_spec`` False), whose half-typed lines are none of aml-lint's business."""
    if report.kind is None and report.skipped is not None:
        return []
    if report.kind is None and (was_spec is False or not any(d.code.startswith("AML0") for d in report.diagnostics)):
        return []
    return list(report.diagnostics)


# ---------------------------------------------------------------------------------------------
# Where the cursor is


def key_at(text: str, line: int, character: int, path: str = "<lsp>") -> tuple[Path_, tuple[int, int, int]] | None:
    """The data path of the key under (line, character) and its span (0-based line, start and
    end columns), from a parse of ``text``; None when the cursor is on no key or the text does
    not parse."""
    document, _ = parse(path, text)
    if document.data is None:
        return None
    best: tuple[Path_, tuple[int, int, int]] | None = None
    for where, position in document.positions.items():
        if position.key_line - 1 != line or not where:
            continue
        end = position.key_end or position.key_column + len(str(where[-1]))
        if position.key_column - 1 <= character < end - 1 or character == end - 1 == position.key_column - 1:
            if best is None or len(where) > len(best[0]):
                best = (where, (line, position.key_column - 1, end - 1))
    if best is None:
        # The cursor just after the key's last letter (where an editor puts it on a click) counts.
        for where, position in document.positions.items():
            if where and position.key_line - 1 == line and position.key_end - 1 == character:
                return where, (line, position.key_column - 1, position.key_end - 1)
    return best


_KEY_LINE = re.compile(r"^(?P<indent> *)(?P<dashes>(?:- +)*)(?P<key>[^\s#'\"{}\[\]:][^#:]*?|\"[^\"]*\"|'[^']*')"
                       r" *:(?: +(?P<value>.*?))?\s*$")
_ITEM = re.compile(r"^( *)((?:- +)+)")


def _key_of(line: str) -> tuple[int, int, str, str] | None:
    """(dash column, key column, key, value text) of a block-mapping line, or None."""
    match = _KEY_LINE.match(line)
    if match is None:
        return None
    key = match.group("key").strip()
    if key[:1] in "'\"":
        key = key[1:-1]
    indent = len(match.group("indent"))
    return indent, indent + len(match.group("dashes")), key, (match.group("value") or "")


@dataclass
class Place:
    """Where a new key is being written: the path of its mapping, the column its keys start
    at, the keys (and plain scalar values) already there, and the prefix typed so far."""

    path: Path_
    column: int
    siblings: dict[str, str]
    prefix: str


def place_at(text: str, line: int, character: int) -> Place | None:
    """The mapping a key typed at (line, character) goes into, read from the indentation of the
    lines above, so that it works while the document is half-written and does not parse.
    Block style only; None inside a block scalar, a flow collection or a value."""
    lines = text.split("\n")
    if line >= len(lines):
        lines += [""] * (line - len(lines) + 1)
    current = lines[line][:character]
    item = _ITEM.match(current)
    stripped = current.lstrip(" -") if item else current.lstrip(" ")
    if ":" in stripped or stripped.startswith(("#", "{", "[", "'", '"')) or " " in stripped:
        return None
    column = len(current) - len(stripped)
    prefix = stripped
    path: list[Any] = []
    need = column
    siblings: dict[str, str] = {}
    if item:
        path.insert(0, 0)
        need = len(item.group(1))
    first_parent = True
    for index in range(line - 1, -1, -1):
        raw = lines[index].rstrip("\r")
        body = raw.strip()
        if not body or body.startswith("#"):
            continue
        lead = len(raw) - len(raw.lstrip(" "))
        found = _key_of(raw)
        if found is None:
            if lead < need:
                if body.startswith("- ") or body == "-":
                    path.insert(0, 0)
                    need = lead
                    continue
                return None  # a scalar line less indented than the key: not a block mapping
            continue
        dash, key_column, key, value = found
        if key_column == column == need and dash == key_column:
            siblings.setdefault(key, value)
        if dash < need <= key_column:
            # The line starts the list item the cursor is in: its key is a sibling.
            if key_column == column == need:
                siblings.setdefault(key, value)
            path.insert(0, 0)
            need = dash
            continue
        if key_column < need:
            if first_parent and value.startswith(("|", ">")):
                return None  # inside a block scalar
            if value and not value.startswith(("&", "!", "#")):
                return None  # under a key with a scalar value: a continuation line
            path.insert(0, key)
            need = key_column
            first_parent = False
            if need == 0:
                break
    if need != 0 and path:
        return None
    # Keys of the same mapping below the cursor count too (they are not offered again).
    for raw in lines[line + 1:]:
        body = raw.strip()
        if not body or body.startswith("#"):
            continue
        found = _key_of(raw)
        lead = len(raw) - len(raw.lstrip(" "))
        if lead < column and (found is None or found[1] < column or found[0] < column):
            break
        if found is not None and found[1] == column and found[0] == column:
            siblings.setdefault(found[2], found[3])
    return Place(tuple(path), column, siblings, prefix)


# ---------------------------------------------------------------------------------------------
# The schema of a key


def _deref(node: Any, root: dict) -> dict:
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 32:
        target: Any = root
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node = target
        seen += 1
    return node if isinstance(node, dict) else {}


def _scalar(text: str) -> Any:
    text = text.strip()
    if text[:1] in "'\"" and text[-1:] == text[:1] and len(text) > 1:
        return text[1:-1]
    return text


def _matches(condition: Any, value: Any, root: dict) -> bool:
    """Whether ``value`` (a dict of known keys, a scalar, or None for unknown) may satisfy
    ``condition``. Unknown things match: this picks the branches of a union to offer."""
    condition = _deref(condition, root)
    if value is None:
        return True
    if "type" in condition:
        types = condition["type"] if isinstance(condition["type"], list) else [condition["type"]]
        kind = "object" if isinstance(value, dict) else "array" if isinstance(value, list) else None
        if kind and kind not in types:
            return False
        if kind is None and "object" in types and len(types) == 1:
            return False
    if "const" in condition and not isinstance(value, dict) and str(value) != str(condition["const"]):
        return False
    if "enum" in condition and not isinstance(value, dict) and str(value) not in [str(v) for v in condition["enum"]]:
        return False
    if isinstance(value, dict):
        for key in condition.get("required", []):
            if key not in value:
                return False
        for key, sub in (condition.get("properties") or {}).items():
            if key in value and value[key] is not None and not _matches(sub, value[key], root):
                return False
    if "not" in condition and _matches_strictly(condition["not"], value, root):
        return False
    if "anyOf" in condition and not any(_matches(s, value, root) for s in condition["anyOf"]):
        return False
    if "oneOf" in condition and not any(_matches(s, value, root) for s in condition["oneOf"]):
        return False
    if "allOf" in condition and not all(_matches(s, value, root) for s in condition["allOf"]):
        return False
    return True


def _matches_strictly(condition: Any, value: Any, root: dict) -> bool:
    # Under `not`, only a definite match counts: `not: {required: [type]}` fails only when
    # `type` is known to be there.
    condition = _deref(condition, root)
    if isinstance(value, dict) and set(condition) == {"required"}:
        return all(key in value for key in condition["required"])
    return _matches(condition, value, root)


def _leaves(node: Any, root: dict, value: Any, depth: int = 0) -> list[dict]:
    """The schemas that apply to ``value`` at ``node``: unions and conditionals resolved as far
    as ``value`` tells."""
    node = _deref(node, root)
    if depth > 16:
        return [node]
    out = [node]
    for sub in node.get("allOf", []):
        out += _leaves(sub, root, value, depth + 1)
    for key in ("anyOf", "oneOf"):
        for sub in node.get(key, []):
            if _matches(sub, value, root):
                out += _leaves(sub, root, value, depth + 1)
    if "if" in node:
        if value is None:  # nothing known of the value: both forms apply
            branches = ["then", "else"]
        else:
            branches = ["then" if _matches_strictly(node["if"], value, root) else "else"]
        for branch in branches:
            if branch in node:
                out += _leaves(node[branch], root, value, depth + 1)
    return out


def schemas_at(kind: str, path: Path_, data: Any = None, last: Any = None) -> list[dict]:
    """The schemas of the value at ``path`` in a document of ``kind``: ``data`` is the
    document's data where known (to pick union branches), ``last`` what is known of the value
    at ``path`` itself (its keys, for a mapping being written)."""
    root = load_schema(kind)
    current = _leaves(root, root, data if isinstance(data, dict) else {})
    for depth, part in enumerate(path):
        here = _child_data(data, path[:depth + 1])
        if depth == len(path) - 1 and last is not None:
            here = last
        following: list[dict] = []
        for node in current:
            if isinstance(part, int):
                items = node.get("items")
                if isinstance(items, dict):
                    following += _leaves(items, root, here)
                continue
            properties = node.get("properties") or {}
            if part in properties:
                following += _leaves(properties[part], root, here)
                continue
            for pattern, sub in (node.get("patternProperties") or {}).items():
                if re.search(pattern, str(part)):
                    following += _leaves(sub, root, here)
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                following += _leaves(extra, root, here)
        current = following
        if not current:
            break
    return current


def _child_data(data: Any, path: Path_) -> Any:
    for part in path:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            data = data[part]
        else:
            return None
    return data


def keys_of(schemas: Iterable[dict]) -> dict[str, list[dict]]:
    """The named keys the schemas allow, each with its schemas. Keys whose schema is empty
    (read-only fields `az ml job show` prints, such as `status`) are left out."""
    out: dict[str, list[dict]] = {}
    for node in schemas:
        for key, sub in (node.get("properties") or {}).items():
            if sub == {} and key not in out:
                continue
            out.setdefault(key, []).append(sub)
    return {k: v for k, v in out.items() if any(s != {} for s in v)}


def describe(kind: str, path: Path_, schemas: list[dict]) -> str:
    """A key's hover text, in Markdown: its description where the schema has one, else what
    it holds (types, allowed values), with the fix the linter gives and the reference page.
    ``schemas``: the value's schemas as :func:`schemas_at` gives them (unions resolved)."""
    leaves = schemas
    name = str(path[-1]) if path else kind_title(kind)
    where = ".".join(str(p) for p in path[:-1])
    title = f"**{name}**" + (f" in `{where}`" if where else f" ({kind_title(kind)})")
    parts = [title]
    descriptions = [leaf["description"] for leaf in leaves if isinstance(leaf.get("description"), str)]
    if descriptions:
        parts.append(descriptions[0])
    types: list[str] = []
    values: list[str] = []
    keys: list[str] = []
    for leaf in leaves:
        declared = leaf.get("type")
        for t in declared if isinstance(declared, list) else [declared] if declared else []:
            if t not in types:
                types.append(t)
        for value in leaf.get("enum", []) + ([leaf["const"]] if "const" in leaf else []):
            text = str(value)
            if text.lower() not in [v.lower() for v in values] or text == text.lower():
                values = [v for v in values if v.lower() != text.lower() or v == text] + (
                    [text] if text not in values else [])
        for key, sub in (leaf.get("properties") or {}).items():
            if sub != {} and key not in keys:
                keys.append(key)
    names = {"object": "mapping", "array": "list", "null": "empty", "boolean": "true or false"}
    if types:
        parts.append("Type: " + ", ".join(names.get(t, t) for t in types))
    if values:
        parts.append("Values: " + ", ".join(f"`{v}`" for v in values))
    if keys:
        parts.append("Keys: " + ", ".join(f"`{k}`" for k in keys))
    hints = [leaf["x-hint"] for leaf in leaves if isinstance(leaf.get("x-hint"), str)]
    if hints:
        parts.append(hints[0][0].upper() + hints[0][1:] + ".")
    page = REFERENCE_PAGES.get(kind)
    if page:
        parts.append(f"[{kind_title(kind)} YAML reference]({LEARN.format(page=page)})")
    return "\n\n".join(parts)


def rule_text(diagnostic: Diagnostic) -> str:
    """A finding's hover text, in Markdown: the message, the fix, and the rule's documentation."""
    rule = RULES.get(diagnostic.code)
    parts = [f"**{diagnostic.code}** {diagnostic.message}"]
    if diagnostic.hint:
        parts.append(f"Fix: {diagnostic.hint}")
    if rule is not None:
        parts.append(f"`{rule.code}` {rule.name} ({rule.severity}): {rule.summary}")
        parts.append(rule.doc.strip())
        if rule.sources:
            parts.append("See: " + ", ".join(f"<{url}>" for url in rule.sources))
    return "\n\n".join(parts)


def severity_rank(severity: Severity) -> int:
    """LSP's DiagnosticSeverity for ours: 1 error, 2 warning, and 4 (hint) for info, which
    editors show faintly: the CLI shows info findings only with -v."""
    return {Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 4}[severity]


@dataclass(frozen=True)
class Completion:
    key: str
    detail: str
    documentation: str


def completions(kind: str, text: str, line: int, character: int, data: Any = None) -> list[Completion]:
    """The keys the schema allows in the mapping being written at (line, character), less the
    keys already there. ``data``: the document's data as last parsed, to tell union branches
    apart (a pipeline step's keys depend on its `type`)."""
    place = place_at(text, line, character)
    if place is None:
        return []
    known = {key: _scalar(value) if value else {} for key, value in place.siblings.items()}
    schemas = schemas_at(kind, place.path, data, last=known)
    out = []
    for key, subs in sorted(keys_of(schemas).items()):
        if key in place.siblings or (key.startswith("$") and place.path):
            continue
        if place.prefix and not key.startswith(place.prefix) and place.prefix not in key:
            continue
        root = load_schema(kind)
        summary = describe(kind, place.path + (key,), [leaf for sub in subs for leaf in _leaves(sub, root, None)])
        detail = next((p for p in summary.split("\n\n") if p.startswith("Type: ")), "")[6:]
        out.append(Completion(key, detail, summary))
    return out
