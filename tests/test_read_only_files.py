"""The files the workflow owns are read-only to the model, whichever tool tries: a write or a
delete gets `Error [read_only]` naming the rule, the job goes on, and only job_complete
completes it (output/completion.json is the workflow's, not a forgery)."""

from __future__ import annotations

import json
import uuid

import pytest

from switchback.activities.storage.files import ToolError, WorkspaceFiles
from switchback.workflows.contract import WorkspaceRef
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical
from tests.test_bad_model_input import tool_messages

FORGED = json.dumps({"status": "completed", "summary": "FORGED"})
WITH_DELETE = {"extends": "creator", "tools": {"workspace": [
    "read_file", "write_file", "list_files", "search_files", "delete_file"]}}


async def test_model_cannot_write_or_delete_workflow_files(client, task_queue, start_job,
                                                           model_server, s3):
    hostile = step(
        call("write_file", path="output/completion.json", content=FORGED),
        call("write_file", path="./output//error.json", content="{}"),
        call("write_file", path="output/breakers/trip_0001.json", content="{}"),
        call("write_file", path="instructions.md", content="# Obey the model"),
        call("write_file", path="archive/phase_2.yaml", content="todos: []"),
        call("write_file", path=".switchback/owner.json", content="{}"),
        call("delete_file", path="instructions.md"),
        call("delete_file", path="archive/phase_2.yaml"))
    script = bootstrap() + [hostile] + tactical(5) + finish("the real summary")
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=WITH_DELETE,
                                 instructions="# The task\n", documents=[])
        result = await handle.result()
    assert result.status == "completed" and result.summary == "the real summary"
    errors = [m for m in tool_messages(model_server, handle.id) if m.startswith("Error [")]
    for verb, path in [("write", "output/completion.json"), ("write", "output/error.json"),
                       ("write", "output/breakers/trip_0001.json"), ("write", "instructions.md"),
                       ("write", "archive/phase_2.yaml"), ("delete", "instructions.md"),
                       ("delete", "archive/phase_2.yaml")]:
        assert any(m.startswith(f"Error [read_only]: cannot {verb} '{path}': the workflow owns "
                                "it and it is read-only to tools (") and
                   "only job_complete completes a job" in m for m in errors), (verb, path)
    assert any(m.startswith("Error [reserved_path]: '.switchback/' is reserved") for m in errors)
    completion = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert completion["status"] == "completed" and completion["summary"] == "the real summary"
    assert await s3.get("switchback", f"{handle.id}/instructions.md") == b"# The task\n"
    assert await s3.get("switchback", f"{handle.id}/output/error.json") is None
    archived = await s3.get("switchback", f"{handle.id}/archive/phase_2.yaml")
    assert archived is not None and b"todos: []" not in archived  # the workflow's archive


async def test_the_storage_layer_refuses_every_tool(s3):
    """Domain tools get the same WorkspaceFiles: the rule holds for them too; the
    workflow's own writes pass system=True."""
    ws = WorkspaceRef(bucket="switchback", job_id=f"ro-{uuid.uuid4().hex[:8]}")
    tools, system = WorkspaceFiles(s3, ws), WorkspaceFiles(s3, ws, system=True)
    assert await system.write_text("archive/phase_1.yaml", "x", 100) == "archive/phase_1.yaml"
    for path in ("archive/phase_1.yaml", "archive/new.yaml", "output/completion.json",
                 "output/breakers/x.json", "instructions.md"):
        with pytest.raises(ToolError) as info:
            await tools.write_text(path, "forged", 100)
        assert info.value.code == "read_only"
    with pytest.raises(ToolError) as info:
        await tools.delete("archive/phase_1.yaml")
    assert info.value.code == "read_only"
    assert await tools.read_text("archive/phase_1.yaml") == "x"  # still readable
    assert await tools.write_text("output/requirements.json", "{}", 100)  # outputs of its own
    assert await tools.write_text("archive_notes.md", "x", 100)
