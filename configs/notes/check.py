"""Checks a `notes` job's workspace: `python configs/notes/check.py WORKSPACE_FOLDER`.

Exit status 0 when the three files of configs/notes/instructions.md exist as it asks: each
note its heading and one sentence under it (two lines), the summary its three lines and no
more; 1 otherwise,
printing what is wrong. `starter.py eval` runs it on a copy of each run's workspace.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def problems(root: Path) -> list[str]:
    out = []
    for path, heading in (("notes/apples.md", "Apples"), ("notes/bananas.md", "Bananas")):
        f = root / path
        if not f.is_file():
            out.append(f"{path} is missing")
            continue
        lines = [ln.strip() for ln in f.read_text(errors="replace").splitlines() if ln.strip()]
        if not lines or lines[0].strip("`") != f"# {heading}":
            out.append(f"{path} does not start with '# {heading}'")
        elif len(lines) != 2:  # the task's two lines (a note holding every file fails)
            out.append(f"{path} has {len(lines)} lines, not its heading and one sentence")
        elif not any(re.search(r"[A-Za-z]{3,}.*[A-Za-z]", ln) and not ln.startswith("#")
                     for ln in lines[1:]):
            out.append(f"{path} has no sentence under its heading")
    summary = root / "output/summary.md"
    if not summary.is_file():
        out.append("output/summary.md is missing")
    else:
        text = summary.read_text(errors="replace")
        lines = [ln.strip().strip("`") for ln in text.splitlines()]
        if "# Summary" not in lines:
            out.append("output/summary.md has no '# Summary' heading")
        for want in ("- notes/apples.md: Apples", "- notes/bananas.md: Bananas"):
            if want not in lines:
                out.append(f"output/summary.md lacks the line '{want}'")
        if not out and len([ln for ln in lines if ln]) != 3:
            out.append("output/summary.md holds more than its three lines")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: check.py WORKSPACE_FOLDER", file=sys.stderr)
        return 2
    found = problems(Path(argv[1]))
    print("; ".join(found) if found else "all three files as asked")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
