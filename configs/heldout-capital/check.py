"""Checks this held-out job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right).

An answer-only job: the answer is the summary the job ended with (output/completion.json,
written by the workflow from job_complete). It names Canberra and no other Australian city.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

WRONG = ("sydney", "melbourne", "perth", "brisbane", "adelaide", "darwin", "hobart")


def problems(root: Path) -> list[str]:
    f = root / "output/completion.json"
    try:
        summary = str(json.loads(f.read_text(errors="replace")).get("summary") or "")
    except (OSError, ValueError, AttributeError):
        return ["output/completion.json is missing or not a JSON object"]
    said = summary.lower()
    if "canberra" not in said:
        return [f"the answer {summary[:80]!r} does not name Canberra"]
    if wrong := [c for c in WRONG if c in said]:
        return [f"the answer {summary[:80]!r} also names {', '.join(wrong)}"]
    return []


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
