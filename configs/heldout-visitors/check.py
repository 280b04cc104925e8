"""Checks this held-out job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right).

visitors/week.csv is the header and one row per day with that day's visitor count from its
log (logs/*.txt, given as documents): no other rows, no other figure of the logs.
"""

from __future__ import annotations

import sys
from pathlib import Path

EXPECTED = ["day,visitors", "monday,14", "tuesday,9", "wednesday,22"]


def text(root: Path, path: str) -> str | None:
    f = root / path
    return f.read_text(errors="replace") if f.is_file() else None


def problems(root: Path) -> list[str]:
    t = text(root, "visitors/week.csv")
    if t is None:
        return ["visitors/week.csv is missing"]
    rows = [",".join(cell.strip().strip('"').lower() for cell in ln.split(","))
            for ln in t.strip().strip("`").splitlines() if ln.strip()]
    if rows != EXPECTED:
        return [f"visitors/week.csv is {rows[:6]}, not {EXPECTED}"]
    return []


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
