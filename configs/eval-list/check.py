"""Checks this eval job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right)."""

from __future__ import annotations

import sys
from pathlib import Path


def text(root: Path, path: str) -> str | None:
    f = root / path
    return f.read_text(errors="replace") if f.is_file() else None


def problems(root: Path) -> list[str]:
    out: list[str] = []
    t = text(root, "shopping.md")
    items = [ln for ln in (t or "").splitlines() if ln.startswith("- ") and ln[2:].strip()]
    if t is None:
        out.append("shopping.md is missing")
    elif len(items) < 5 or len({i.lower() for i in items}) < 5:
        out.append(f"shopping.md has {len(items)} list items, not five different ones")
    return out


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
