"""The task's own words about one of its files, for the small model profile's todo block.

A todo says which file to write ("Write notes/apples.md"); what goes in it is in the task,
which the 1.5B model reads at the top of a long prompt and then loses: told to write
`notes/apples.md` with "two lines. The first line is exactly `# Apples`; the second line is
one sentence about apples", it wrote the sentence alone, the heading dropped (the `notes`
job, 2026-11-27); eval-files' notes lost their headings the same way. A small model acts on
the last lines it reads, so the todo block shows, under the current todo, the part of the
task that names the todo's file, as the task wrote it: nothing the task did not say.

The part is a markdown unit: a list item with its continuation (its sub-items, indented
lines and code, across blank lines), else a paragraph with the indented lines after it; a
heading that names the file takes what follows it up to the next heading. Pure text work in
the workflow: the task is split once, up to a bound, and each file is one search of it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

MAX_TASK = 50_000  # characters of a task read
MAX_LINES = 12  # lines of a unit shown
MAX_CHARS = 700  # characters of a unit shown
ITEM = re.compile(r"^( {0,3})(?:[-*+]|\d{1,3}[.)])\s")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def about(task: str, path: str) -> str:
    """The first unit of `task` that names `path` (at most MAX_LINES lines and MAX_CHARS
    characters, " ..." where cut), or "" when none does."""
    return about_all(task, [path]).get(path, "")


def about_all(task: str, paths: Iterable[str]) -> dict[str, str]:
    """`about` for each of `paths` that `task` names, the task split once."""
    lines = task[:MAX_TASK].splitlines()
    units = _units(lines)
    starts = [u[0] for u in units]
    offsets, at = [], 0  # each line's first character in `text`
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    text = "\n".join(lines)
    out: dict[str, str] = {}
    for path in dict.fromkeys(paths):
        found = _name(path).search(text)
        if found is None:
            continue
        row = bisect.bisect_right(offsets, found.start()) - 1
        first, end = units[bisect.bisect_right(starts, row) - 1]
        if lines[first].lstrip().startswith("#"):  # a heading: what follows it says what
            end = next((u[0] for u in units if u[0] > first and _heading(lines[u[0]])),
                       len(lines))
        if shown := _shown(lines[first:end], row - first):
            out[path] = shown
    return out


def names(text: str, path: str) -> bool:
    """Does `text` name `path` (not a longer path that ends or begins with it)?"""
    return _name(path).search(text) is not None


def _name(path: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w./-])" + re.escape(path) + r"(?![\w/-]|\.\w)")


def _heading(line: str) -> bool:
    return line.startswith("#")


def _units(lines: list[str]) -> list[tuple[int, int]]:
    """The task's units as (first line, end line): list items with their continuation,
    paragraphs with the indented lines after them, headings on their own line."""
    units: list[tuple[int, int]] = []
    first, item_indent = 0, -1  # the current unit; its list marker's indent (-1: none)
    blank = False
    fence = ""  # the open fence's marker
    for i, line in enumerate(lines):
        opened = FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if not line.strip():
            blank = True
            continue
        indent = len(line) - len(line.lstrip(" \t"))
        item = ITEM.match(line)
        new = _heading(line) or (i > 0 and _heading(lines[first])) or (
            item is not None and (item_indent < 0 or len(item.group(1)) <= item_indent)) or (
            item is None and blank and indent < 2)
        if new and i > 0:
            units.append((first, i))
            first = i
        if new:
            item_indent = len(item.group(1)) if item else -1
        if opened:
            fence = opened.group(1)
        blank = False
    if lines:
        units.append((first, len(lines)))
    return units or [(0, 0)]


def _shown(unit: list[str], named: int) -> str:
    """`unit` from its start (or from the line that names the file, when that is beyond
    MAX_LINES), at most MAX_LINES lines and MAX_CHARS characters; a code fence the cut
    leaves open is closed."""
    while unit and not unit[-1].strip():
        unit = unit[:-1]
    start = 0 if named < MAX_LINES else named
    lines = [ln.rstrip() for ln in unit[start:start + MAX_LINES]]
    text = "\n".join(lines)
    cut = start > 0 or start + MAX_LINES < len(unit) or len(text) > MAX_CHARS
    text = text[:MAX_CHARS].rstrip()
    if fence := _open_fence(text.splitlines()):
        text += "\n" + fence
    return ("... " if start else "") + text + (" ..." if cut else "")


def _open_fence(lines: list[str]) -> str:
    """The marker of a code fence `lines` leave open ("" for none)."""
    fence = ""
    for line in lines:
        if opened := FENCE.match(line):
            marker = opened.group(1)
            if not fence:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = ""
    return fence
