"""Run records a stopped command loses nothing of, and the commit they were made at.

`starter.py eval` (operate/evaluate.py) and `starter.py bfcl` (examples/bfcl) append one
JSON line per finished run to `<id>.runs.jsonl` as the run ends and read the lines back when
the command starts again with the same id; summaries are written whole or not at all. A
record says which checkout ran it (`checkout`), and a command may continue a record only
while nothing it runs changed since (`changed_since`): docs/evals.md.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# what a change of does not change a run: the record itself, its prose, the tests
NOT_RUN = ("docs", "tests", "README.md")


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a `.runs.jsonl`, in order; a line a kill cut short is left out
    (that run runs again)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            out.append(data)
    return out


def append_line(path: Path, data: dict[str, Any]) -> None:
    """One JSON line at the end of `path` (on a line of its own after a line cut short)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as f:
        f.seek(0, 2)
        if f.tell():
            f.seek(-1, 2)
            if f.read(1) != b"\n":
                f.write(b"\n")
        f.write(json.dumps(data).encode() + b"\n")


def write_whole(path: Path, text: str) -> None:
    """Whole or not at all (a kill while writing leaves the earlier file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_text(text, encoding="utf-8")
    part.replace(path)


def _git(*args: str, root: Path = ROOT) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def checkout(root: Path = ROOT) -> dict[str, Any]:
    """The commit of the checkout this code runs from, and its files that differ from it
    (outside NOT_RUN): a run made with uncommitted changes says so. No git: commit ''."""
    commit = _git("rev-parse", "HEAD", root=root) or ""
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ".",
                  *(f":(exclude){p}" for p in NOT_RUN), root=root) if commit else None
    # "XY path" per line (the output comes stripped: the first line may have lost X's blank)
    dirty = sorted(ln.split(None, 1)[1] for ln in (status or "").splitlines() if ln.strip())
    return {"commit": commit, "dirty": dirty[:20] + (["..."] if len(dirty) > 20 else [])}


def changed_since(commit: str, root: Path = ROOT) -> list[str] | None:
    """The files outside NOT_RUN that differ between `commit` and this checkout's HEAD
    (uncommitted changes aside: `checkout` records those); None when git cannot tell."""
    if not commit:
        return None
    out = _git("diff", "--name-only", commit, "HEAD", "--", ".",
               *(f":(exclude){p}" for p in NOT_RUN), root=root)
    return None if out is None else [ln for ln in out.splitlines() if ln]
