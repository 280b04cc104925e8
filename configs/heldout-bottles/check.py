"""Checks this held-out job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right).

stock/bottles.txt holds the number alone: 7 * 12 + 5 = 89.
"""

from __future__ import annotations

import sys
from pathlib import Path


def text(root: Path, path: str) -> str | None:
    f = root / path
    return f.read_text(errors="replace") if f.is_file() else None


def problems(root: Path) -> list[str]:
    t = text(root, "stock/bottles.txt")
    if t is None:
        return ["stock/bottles.txt is missing"]
    if t.strip().strip("`").strip() != "89":
        return [f"stock/bottles.txt holds {t.strip()[:40]!r}, not the number 89 alone"]
    return []


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
