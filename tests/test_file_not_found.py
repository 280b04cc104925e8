"""A read of a file that does not exist names the files its path may mean (on the real S3
server): the 1.5B model read 'workspace' 10 times in a row, told only that it does not
exist (eval round 11, phase_alternation run 5)."""

from __future__ import annotations

import uuid

import pytest

from switchback.activities.storage.files import ToolError, WorkspaceFiles
from switchback.workflows.contract import WorkspaceRef

B = "switchback"


async def missing(s3, files: dict[str, bytes], path: str) -> str:
    ws = WorkspaceRef(bucket=B, job_id=f"near-{uuid.uuid4().hex[:8]}")
    for name, data in files.items():
        await s3.put(B, f"{ws.job_id}/{name}", data)
    with pytest.raises(ToolError) as e:
        await WorkspaceFiles(s3, ws).read_bytes(path)
    assert e.value.code == "file_not_found"
    return str(e.value)


async def test_a_name_without_its_extension_is_pointed_to_the_file(s3):
    assert await missing(s3, {"workspace.md": b"x", "main_plan.md": b"y"}, "workspace") == (
        "'workspace' does not exist; did you mean 'workspace.md'? list_files shows what is there")
    assert "did you mean 'notes/apples.md'?" in await missing(
        s3, {"notes/apples.md": b"x", "notes/bananas.md": b"y"}, "notes/apples")


async def test_a_near_name_is_offered_and_a_far_one_is_not(s3):
    assert "did you mean 'notes/bananas.md'?" in await missing(
        s3, {"notes/bananas.md": b"x"}, "notes/banana.md")
    assert await missing(s3, {"notes/apples.md": b"x"}, "missing.md") == (
        "'missing.md' does not exist; list_files shows what is there")
    # nothing outside the job's folder is offered, nor the workflow's internals
    assert "did you mean" not in await missing(s3, {".switchback/workspace": b"x"}, "workspace")
