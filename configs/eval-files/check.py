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
    for animal in ("cats", "dogs", "birds"):
        t = text(root, f"notes/{animal}.md")
        lines = [ln.strip() for ln in (t or "").splitlines() if ln.strip()]
        if t is None:
            out.append(f"notes/{animal}.md is missing")
        elif not lines[0:1] or not lines[0].startswith("#") or animal[:-1] not in lines[0].lower():
            out.append(f"notes/{animal}.md does not start with a heading naming the animal")
        elif any(ln.startswith("#") for ln in lines[1:]) or len(lines) > 3:
            # (at 259ee64 each note held all three notes, and this checker passed them)
            out.append(f"notes/{animal}.md holds more than its heading and one sentence")
        elif not any(re.search(r"[A-Za-z]{3,} [A-Za-z]", ln) for ln in lines[1:]):
            out.append(f"notes/{animal}.md has no sentence under its heading")
    return out


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
