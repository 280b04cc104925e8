"""Are a job's deliverables there? Each path or glob must match a file that exists, is not
empty, and was written by this job.

"Written by this job" is read against the job's first snapshot (taken at the start of its
first phase, before any tool ran): a file the job's start left there (instructions.md,
documents/, the workspace.md stub) counts only once the job changed it. Without that
snapshot (a job that never reached its first phase), the files the start creates count
as not written.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any

from switchback.activities.storage.s3 import S3Store
from switchback.workflows.contract import WorkspaceRef, layout

GLOB_CHARS = frozenset("*?[")
MAX_LISTED = 10_000  # files a glob is matched against


async def check(s3: S3Store, ws: WorkspaceRef, patterns: list[str]
                ) -> tuple[list[str], list[str]]:
    """(the files that satisfy `patterns`, what is wrong: a sentence per pattern)."""
    root = layout.prefix(ws.job_id)
    start = await _first_snapshot(s3, ws)
    listed: dict[str, tuple[int, str]] | None = None
    delivered: list[str] = []
    problems: list[str] = []
    async def listing() -> dict[str, tuple[int, str]]:
        nonlocal listed
        if listed is None:
            listed = {o.key[len(root):]: (o.size, o.etag) for o in await s3.list(
                ws.bucket, root, limit=MAX_LISTED) if not layout.is_internal(o.key[len(root):])}
        return listed

    for pattern in dict.fromkeys(patterns):
        if GLOB_CHARS & set(pattern):
            found = {p: v for p, v in (await listing()).items()
                     if fnmatch.fnmatchcase(p, pattern)}
        else:  # one request: the listing of its own key carries size and ETag
            found = {o.key[len(root):]: (o.size, o.etag) for o in await s3.list(
                ws.bucket, root + pattern, limit=1) if o.key == root + pattern}
        good = [p for p, (size, etag) in sorted(found.items())
                if size > 0 and _written(p, etag, start)]
        if good:
            delivered += [p for p in good if p not in delivered]
        elif not found and GLOB_CHARS & set(pattern):
            problems.append(f"no file matches {pattern}")
        elif not found:  # a file of that name elsewhere, or at its folder's path, exactly
            files = await listing()
            other = layout.named_alike(pattern, files)
            folder = [p for p in files if pattern.startswith(f"{p}/")]
            problems.append(f"{pattern} does not exist" + (
                f" ({folder[0]} is a file: it is the folder of {pattern}; write each file "
                "at its own path)" if folder else
                f" ({', '.join(other[:3])} does: the deliverable is {pattern}, at that path)"
                if other else ""))
        elif all(size == 0 for size, _ in found.values()):
            problems.append(f"{', '.join(sorted(found))[:300]} is empty")
        else:
            problems.append(f"{', '.join(sorted(found))[:300]} was not written by this job "
                            "(it is as the job's start left it)")
    return delivered, problems


async def _first_snapshot(s3: S3Store, ws: WorkspaceRef) -> dict[str, Any] | None:
    """path -> {etag, size} as the job's first phase began, or None without a snapshot."""
    raw = await s3.get(ws.bucket, layout.key(ws.job_id, layout.snapshot_path(1)))
    try:
        files = json.loads(raw).get("files") if raw else None
    except (ValueError, AttributeError):
        return None
    return files if isinstance(files, dict) else None


def _written(path: str, etag: str, start: dict[str, Any] | None) -> bool:
    if start is None:
        return path not in (layout.INSTRUCTIONS, layout.MEMORY) and not path.startswith(
            f"{layout.DOCUMENTS}/")
    old = start.get(path)
    return not (isinstance(old, dict) and old.get("etag") == etag)
