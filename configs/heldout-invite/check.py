"""Checks this held-out job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right).

documents/invite.md (given to the job: invite.md beside this file) is the same invitation,
line for line, but the place: the Garden Terrace on the ground floor, Room 4B gone.
"""

from __future__ import annotations

import sys
from pathlib import Path

GIVEN = Path(__file__).resolve().parent / "invite.md"


def lines(t: str) -> list[str]:
    return [ln.strip() for ln in t.strip().strip("`").splitlines() if ln.strip()]


def problems(root: Path) -> list[str]:
    f = root / "documents/invite.md"
    if not f.is_file():
        return ["documents/invite.md is missing"]
    before, after = lines(GIVEN.read_text()), lines(f.read_text(errors="replace"))
    if after == before:
        return ["documents/invite.md is unchanged"]
    if len(after) != len(before):
        return [f"documents/invite.md has {len(after)} lines, the invitation {len(before)}"]
    out: list[str] = []
    for old, new in zip(before, after, strict=True):
        if not old.startswith("Place:"):
            if new != old:
                out.append(f"{new[:50]!r} should have stayed {old!r}")
            continue
        low = new.lower()
        if not (low.startswith("place:") and "garden terrace" in low and "ground" in low):
            out.append(f"the place is {new[:60]!r}, not the Garden Terrace, ground floor")
        elif "4b" in low or "second" in low:
            out.append(f"the place still names the old room: {new[:60]!r}")
    return out


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
