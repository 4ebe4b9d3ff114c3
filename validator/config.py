"""Configuration: `[tool.amllab.lint]` in the nearest pyproject.toml, then command-line flags.

    [tool.amllab.lint]
    select = ["ALL"]                 # codes or prefixes ("AML3", "AML301"); default ALL
    ignore = ["AML205"]
    per-file-ignores = { "legacy/**" = ["AML101"] }
    warnings-as-errors = false       # or a list of codes/prefixes
    max-file-size = 1048576          # bytes
    baseline = "aml-lint-baseline.json"  # report only findings not recorded there (validator/baseline.py)

`warnings-as-errors` is also the switch for one warning that some projects want as an error: a
local data input that does not exist yet (AML806; data is usually downloaded or generated before
a job is submitted) fails the run with `warnings-as-errors = ["AML806"]`, where a CI step has
already fetched the data. `aml-lint --strict` does that for every warning.

Every problem in the configuration is one :class:`ConfigError` with the file and the fix.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from .diagnostic import Severity
from .errors import ConfigError
from .loader import DEFAULT_MAX_BYTES
from .suggest import closest

KEYS = ("select", "ignore", "extend-select", "per-file-ignores", "warnings-as-errors", "max-file-size",
        "baseline")


def _matches(code: str, selectors: Iterable[str]) -> bool:
    return any(s == "ALL" or code.startswith(s) for s in selectors)


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    warnings_as_errors: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_BYTES
    # A local workspace folder: referenced assets must be registered there (AML805).
    workspace: Path | None = None
    # A baseline file (validator/baseline.py): its findings are not reported.
    baseline: Path | None = None
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None

    def enabled(self, code: str, path: str | None = None) -> bool:
        if not _matches(code, self.select) or _matches(code, self.ignore):
            return False
        if path is not None and self.per_file_ignores:
            relative = _relative(path, self.root)
            for pattern, codes in self.per_file_ignores:
                if _path_matches(relative, pattern) and _matches(code, codes):
                    return False
        return True

    def severity(self, code: str, severity: Severity) -> Severity:
        if severity is Severity.WARNING and _matches(code, self.warnings_as_errors):
            return Severity.ERROR
        return severity

    def with_overrides(self, **changes: Any) -> "Config":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _relative(path: str, root: Path) -> str:
    candidate = Path(path)
    try:
        candidate = candidate.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        pass
    return candidate.as_posix()


def _path_matches(relative: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    return (fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern + "/*")
            or relative.startswith(pattern + "/"))


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _codes(value: Any, key: str, source: Path, known: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: `{key}` must be a list of rule codes, such as [\"AML101\", \"AML3\"]")
    known = list(known)
    for code in value:
        if code != "ALL" and not any(k.startswith(code) for k in known):
            close = closest(code, known, cutoff=0.8)
            suggestion = f"; did you mean {close}?" if close else ""
            raise ConfigError(f"{source}: `{key}` names unknown rule code '{code}'{suggestion} "
                              "(aml-lint --list-rules shows them all)")
    return tuple(value)


def parse_table(table: dict, source: Path, known: Iterable[str]) -> Config:
    known = list(known)
    for key in table:
        if key not in KEYS:
            close = closest(key, KEYS)
            suggestion = f"; did you mean '{close}'?" if close else f" (known keys: {', '.join(KEYS)})"
            raise ConfigError(f"{source}: unknown key '{key}' in [tool.amllab.lint]{suggestion}")
    config = Config(root=source.parent, source=source)
    select = _codes(table.get("select", ["ALL"]), "select", source, known)
    select += _codes(table.get("extend-select", []), "extend-select", source, known)
    ignore = _codes(table.get("ignore", []), "ignore", source, known)
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{source}: `per-file-ignores` must be a table of glob = [codes]")
    per_file_ignores = tuple((str(glob), _codes(codes, f"per-file-ignores.{glob}", source, known))
                             for glob, codes in per_file.items())
    wae = table.get("warnings-as-errors", False)
    if isinstance(wae, bool):
        warnings_as_errors: tuple[str, ...] = ("ALL",) if wae else ()
    else:
        warnings_as_errors = _codes(wae, "warnings-as-errors", source, known)
    max_size = table.get("max-file-size", DEFAULT_MAX_BYTES)
    if not isinstance(max_size, int) or isinstance(max_size, bool) or max_size <= 0:
        raise ConfigError(f"{source}: `max-file-size` must be a positive number of bytes")
    baseline = table.get("baseline")
    if baseline is not None and (not isinstance(baseline, str) or not baseline.strip()):
        raise ConfigError(f"{source}: `baseline` must be the path of a baseline file, relative to "
                          "this file, such as \"aml-lint-baseline.json\"")
    return replace(config, select=select, ignore=ignore, per_file_ignores=per_file_ignores,
                   warnings_as_errors=warnings_as_errors, max_file_size=max_size,
                   baseline=source.parent / baseline if baseline else None)


def load(start: Path, known: Iterable[str], explicit: Path | None = None) -> Config:
    """The configuration for a run started in ``start`` (or read from ``explicit``)."""
    import tomllib

    source = explicit or find_pyproject(start)
    if source is None:
        return Config(root=start.resolve())
    try:
        with open(source, "rb") as handle:
            document = tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"{source}: cannot read configuration: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: invalid TOML: {error}") from None
    table = document.get("tool", {}).get("amllab", {}).get("lint")
    if table is None:
        return Config(root=source.parent.resolve(), source=source)
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [tool.amllab.lint] must be a table")
    return parse_table(table, source, known)
