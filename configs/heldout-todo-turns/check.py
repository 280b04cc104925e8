"""Checks this held-out job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right).

A job of two turns: the first asks for todo.txt with two entries, the second (turn-2.md,
sent by `starter.py eval` once the first turn is done) for a third after them. The second
turn was given (instructions.md holds it) and todo.txt holds the three entries in order,
list marks aside, and nothing else.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

EXPECTED = ["buy stamps", "call the plumber", "water the plants"]
MARK = re.compile(r"^(?:[-*+]|\d+[.)]|\[[ xX]?\])\s+")


def text(root: Path, path: str) -> str | None:
    f = root / path
    return f.read_text(errors="replace") if f.is_file() else None


def problems(root: Path) -> list[str]:
    out: list[str] = []
    if "## Follow-up instruction (turn 2)" not in (text(root, "instructions.md") or ""):
        out.append("the second turn was never given (instructions.md lacks it)")
    t = text(root, "todo.txt")
    if t is None:
        return [*out, "todo.txt is missing"]
    entries = []
    for ln in t.strip().strip("`").splitlines():
        entry = ln.strip()
        while MARK.match(entry):
            entry = MARK.sub("", entry, count=1)
        if entry:
            entries.append(entry.strip("`*_").rstrip(".").strip().lower())
    if entries != EXPECTED:
        out.append(f"todo.txt holds {entries[:5]}, not {EXPECTED}")
    return out


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
