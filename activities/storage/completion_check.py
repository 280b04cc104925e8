"""`completion.check`: the job config's own script judges the deliverables' content.

The worker copies the job's workspace (its files, not `.switchback/`) into a temporary
folder and runs `python <configs>/<folder>/<command> <that folder>` with the timeout the
config gives; exit status 0 passes, anything else fails and what the script printed is
what the model is told. The script is the operator's (a file of a config folder on the
worker), never the job's: job input only chooses a config by name.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from temporalio import activity
from temporalio.exceptions import ApplicationError

from switchback.activities.config_roots import config_path
from switchback.activities.storage.s3 import S3Store
from switchback.workflows.contract import (
    CHECK_COMPLETION,
    CheckCompletionRequest,
    CheckCompletionResult,
    layout,
)

MAX_FILES = 2_000  # a workspace larger than this is copied in part (the check says so)
MAX_BYTES = 50_000_000
MAX_OUTPUT = 2_000


def script(folder: str, command: str, root: Path | None = None) -> Path:
    """The check script a config names, inside its folder; ValueError otherwise."""
    base = root / folder if root else config_path(folder)
    path = (base / command).resolve()
    if base.resolve() not in path.parents or not path.is_file():
        raise ValueError(f"completion.check: '{command}' is not a file of the config folder "
                         f"'{folder}'")
    return path


class CompletionCheckActivities:
    def __init__(self, s3: S3Store) -> None:
        self.s3 = s3

    @activity.defn(name=CHECK_COMPLETION)
    async def check_completion(self, req: CheckCompletionRequest) -> CheckCompletionResult:
        try:
            path = script(req.folder, req.command)
        except ValueError as e:
            raise ApplicationError(str(e), type="BadCheck", non_retryable=True) from e
        ws, root = req.workspace, layout.prefix(req.workspace.job_id)
        with tempfile.TemporaryDirectory(prefix="switchback-check-") as tmp:
            total = 0
            listed = await self.s3.list(ws.bucket, root, limit=MAX_FILES)
            # a key that is also the folder of others (`notes` beside `notes/a.md`: a model
            # wrote a file named as its notes' folder) cannot be a file here: left out
            folders = layout.folders_of(o.key[len(root):] for o in listed)
            for o in listed:
                rel = o.key[len(root):]
                if layout.is_internal(rel) or total + o.size > MAX_BYTES or rel in folders \
                        or not layout.is_workspace_path(rel, max_len=1000):
                    continue
                data = await self.s3.get(ws.bucket, o.key)
                if data is None:
                    continue
                total += len(data)
                target = Path(tmp) / rel
                try:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
                except OSError:
                    continue  # (a path this file system refuses)
            proc = await asyncio.create_subprocess_exec(
                sys.executable, str(path), tmp, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, cwd=tmp)
            try:
                out, _ = await asyncio.wait_for(proc.communicate(), req.timeout_seconds)
            except TimeoutError:
                proc.kill()
                await proc.wait()
                return CheckCompletionResult(ok=False, output=(
                    f"the check did not finish within {req.timeout_seconds:g} s"))
        text = " ".join(out.decode("utf-8", "replace").split())[:MAX_OUTPUT]
        return CheckCompletionResult(ok=proc.returncode == 0, output=text)
