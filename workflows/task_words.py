"""The task's own words about one of its files, for the small model profile's todo block.

A todo says which file to write ("Write notes/apples.md"); what goes in it is in the task,
which the 1.5B model reads at the top of a long prompt and then loses: told to write
`notes/apples.md` with "two lines. The first line is exactly `# Apples`; the second line is
one sentence about apples", it wrote the sentence alone, the heading dropped (the `notes`
job, 2026-11-27); eval-files' notes lost their headings the same way. A small model acts on
the last lines it reads, so the todo block shows, under the current todo, the part of the
task that names the todo's file, as the task wrote it: nothing the task did not say.

The part is a markdown unit: a list item with its continuation (indented lines and code
belong to the item, across blank lines), else a paragraph; a heading that names the file
takes the unit after it too. Pure text work in the workflow: linear in the text, which is
read up to a bound.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_TASK = 50_000  # characters of a task read
MAX_LINES = 12  # lines of a unit shown
MAX_CHARS = 700  # characters of a unit shown
ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,3}[.)])\s")
FENCE = ("```", "~~~")


def about(task: str, path: str) -> str:
    """The first unit of `task` that names `path` (at most MAX_LINES lines and MAX_CHARS
    characters, " ..." where cut), or "" when none does."""
    name = re.compile(r"(?<![\w./-])" + re.escape(path) + r"(?![\w/-]|\.\w)")
    units = list(_units(task[:MAX_TASK]))
    for i, unit in enumerate(units):
        text = "\n".join(unit)
        if not name.search(text):
            continue
        if unit[0].lstrip().startswith("#") and i + 1 < len(units):
            unit = unit + units[i + 1]  # a heading names the file: what follows says what
        return _shown(unit)
    return ""


def _units(task: str) -> Iterator[list[str]]:
    """The task's list items (with their continuation) and paragraphs; a heading is a unit
    of its own line."""
    unit: list[str] = []
    item = blank = fenced = False
    for line in task.splitlines():
        if line.lstrip().startswith(FENCE):
            fenced = not fenced
        elif fenced:
            pass
        elif not line.strip():
            blank = True
            continue
        else:
            heading = line.lstrip().startswith("#") and not line.startswith((" ", "\t"))
            continues = line.startswith(("  ", "\t")) if blank else not heading
            if ITEM.match(line) or heading or (blank and not (item and continues)) \
                    or (unit and unit[0].lstrip().startswith("#")):
                if unit:
                    yield unit
                unit, item = [], bool(ITEM.match(line))
        if blank and unit and not fenced:
            unit.append("")
        unit.append(line.rstrip())
        blank = False
    if unit:
        yield unit


def _shown(unit: list[str]) -> str:
    lines = [ln for ln in unit if ln.strip() or not ln][:MAX_LINES]
    text = "\n".join(lines).strip("\n")
    cut = len(lines) < len(unit) or len(text) > MAX_CHARS
    return text[:MAX_CHARS].rstrip() + (" ..." if cut else "")
