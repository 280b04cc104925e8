"""Checks this held-out job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right).

calendar/days.md is a numbered list 1. to 7. of the days of the week from Monday, and no
other list items.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
ITEM = re.compile(r"^\s*(?:[-*+]\s+)?(\d+)[.)]\s+(.*)$")


def text(root: Path, path: str) -> str | None:
    f = root / path
    return f.read_text(errors="replace") if f.is_file() else None


def problems(root: Path) -> list[str]:
    t = text(root, "calendar/days.md")
    if t is None:
        return ["calendar/days.md is missing"]
    items = [(int(m[1]), m[2].strip().strip("*_`.").strip().lower())
             for m in map(ITEM.match, t.splitlines()) if m]
    others = [ln.strip() for ln in t.splitlines() if ln.strip() and not ITEM.match(ln)
              and not ln.lstrip().startswith("#") and not ln.strip().startswith("```")]
    want = list(enumerate(DAYS, 1))
    if items != want:
        return [f"calendar/days.md lists {items[:8]}, not 1. Monday to 7. Sunday"]
    if others:
        return [f"calendar/days.md holds more than the list: {others[0][:50]!r}"]
    return []


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
