"""Checks this eval job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right)."""

from __future__ import annotations

import sys
from pathlib import Path


def text(root: Path, path: str) -> str | None:
    f = root / path
    return f.read_text(errors="replace") if f.is_file() else None


def problems(root: Path) -> list[str]:
    out: list[str] = []
    parts = {"parts/a.txt": "alpha", "parts/b.txt": "beta", "parts/c.txt": "gamma"}
    for path, word in parts.items():
        held = (text(root, path) or "").lower()
        if word not in held:
            out.append(f"{path} does not hold {word}")
        elif others := [w for w in parts.values() if w != word and w in held]:
            out.append(f"{path} holds {', '.join(others)} too")
    t = text(root, "joined.txt")
    words = [ln.strip().lower() for ln in (t or "").splitlines() if ln.strip()]
    if words != ["alpha", "beta", "gamma"]:
        out.append(f"joined.txt is {words[:5]}, not alpha, beta, gamma")
    return out


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
