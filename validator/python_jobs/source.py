"""A Python source as the linter reads it: a ``.py`` file's text, or a notebook's code cells
joined into one text, with where each cell starts, so that a finding can say "cell 3, line 2" as
Jupyter shows it.

A notebook cell may hold IPython syntax that is no Python: line magics (``%pip install x``),
shell escapes (``!ls``, ``files = !ls``), cell magics (``%%bash``) and help (``x?``). Such a line
becomes a no-op (``pass``, or ``files = None``; a cell magic empties its whole cell), so every
other line keeps its number and the rest parses as Python. Nothing in the notebook is run.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

NOTEBOOK_SUFFIX = ".ipynb"
PYTHON_SUFFIX = ".py"


class Source(NamedTuple):
    """The text the linter parses, and for a notebook the line each code cell starts on (1-based,
    in the text) with its number among all the notebook's cells (1-based, as Jupyter counts), and
    the files its ``%%writefile`` cells write (as written: ``{src_dir}/train.py``)."""

    text: str
    cells: tuple[tuple[int, int], ...] = ()
    written: tuple[str, ...] = ()

    def cell_of(self, line: int) -> tuple[int, int] | None:
        """(cell number, line within the cell) of a line of the text; None for a plain file."""
        found = None
        for start, number in self.cells:
            if start > line:
                break
            found = (number, line - start + 1)
        return found


class NotANotebook(ValueError):
    """The .ipynb file is not a notebook (not JSON, or no list of cells)."""


# `files = !ls`, `out = %timeit f()`: IPython assigns a shell's or a magic's output.
_ASSIGNED_MAGIC = re.compile(r"^(\s*[A-Za-z_][\w.]*\s*=\s*)[!%].*$")


def _ipython_free(line: str) -> str:
    """``line`` with IPython syntax replaced by a no-op of the same indentation (a blank line
    could leave a block empty)."""
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if stripped.startswith(("%", "!")) or (stripped.endswith("?") and not stripped.startswith("#")):
        return indent + "pass"
    return _ASSIGNED_MAGIC.sub(r"\1None", line)


def read_notebook(text: str) -> Source:
    """The code cells of a notebook (nbformat 4, or 3's worksheets), IPython syntax blanked."""
    try:
        document = json.loads(text)
    except ValueError as error:
        raise NotANotebook(f"not JSON ({error})") from None
    if not isinstance(document, dict):
        raise NotANotebook("not a JSON object")
    cells = document.get("cells")
    if cells is None and isinstance(document.get("worksheets"), list):  # nbformat 3
        cells = [cell for sheet in document["worksheets"] if isinstance(sheet, dict)
                 for cell in sheet.get("cells") or []]
    if not isinstance(cells, list):
        raise NotANotebook("no list of cells")
    lines: list[str] = []
    starts: list[tuple[int, int]] = []
    written: list[str] = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        if isinstance(source, list):
            source = "".join(part for part in source if isinstance(part, str))
        if not isinstance(source, str):
            continue
        cell_lines = source.splitlines() or [""]
        if cell_lines[0].lstrip().startswith("%%"):
            magic = cell_lines[0].split()
            if magic[0] == "%%writefile" and len(magic) > 1:
                written.append(magic[-1])  # `%%writefile [-a] path`
            cell_lines = [""] * len(cell_lines)  # a cell magic: the cell is another language
        else:
            cell_lines = [_ipython_free(line) for line in cell_lines]
        starts.append((len(lines) + 1, number))
        lines.extend(cell_lines)
    return Source("\n".join(lines) + ("\n" if lines else ""), tuple(starts), tuple(written))
