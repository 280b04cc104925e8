"""Checks this eval job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right)."""

from __future__ import annotations

import sys
from pathlib import Path


def text(root: Path, path: str) -> str | None:
    f = root / path
    return f.read_text(errors="replace") if f.is_file() else None


def problems(root: Path) -> list[str]:
    out: list[str] = []
    t = text(root, "report.md")
    if t is None:
        out.append("report.md is missing")
    elif "absent" not in t.lower() or "present" in t.lower():
        out.append(f"report.md says {t.strip()[:60]!r}, not that secret.md is absent")
    return out


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
