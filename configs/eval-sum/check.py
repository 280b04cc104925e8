"""Checks this eval job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right)."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def text(root: Path, path: str) -> str | None:
    f = root / path
    return f.read_text(errors="replace") if f.is_file() else None


def problems(root: Path) -> list[str]:
    out: list[str] = []
    t = text(root, "output/total.txt")
    if t is None:
        out.append("output/total.txt is missing")
    elif re.findall(r"-?\d+", t) != ["100"]:
        out.append(f"output/total.txt holds {t.strip()[:40]!r}, not 100")
    return out


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
