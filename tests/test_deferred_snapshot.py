"""A phase start's snapshot is taken once the phase's first model call has answered (patch
`deferred-snapshot`, workflows/continuation.py): the job's first model call is scheduled in
its first workflow task without waiting for it, and the snapshot still records the phase's
start - a rewind to phase 1 puts back exactly what the job began with - also when that first
call fails."""

from __future__ import annotations

import json

import yaml
from temporalio.api.enums.v1 import EventType
from temporalio.contrib.pydantic import pydantic_data_converter

from switchback.operate.replay import replay
from tests.conftest import running_worker
from tests.markers import local_activity
from tests.scripts import bootstrap, call, finish, step, tactical, transition

BUCKET = "switchback"


async def text(s3, job_id: str, path: str) -> str | None:
    data = await s3.get(BUCKET, f"{job_id}/{path}")
    return None if data is None else data.decode()


async def test_the_first_call_goes_first_and_a_rewind_to_phase_1_restores_the_start(
        client, task_queue, start_job, model_server, s3):
    issue = "start over: the plan is wrong"
    script = (bootstrap()
              + [step(call("write_file", path="work/a_1.md", content="result a 1\n"),
                      call("todo_complete", notes="did a 1")),
                 step(call("todo_rewind", issue=issue, restore_phase=1))]
              + transition("Again", 5, memory="rewound") + tactical(5, "r") + finish())
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x",
                                 documents=[{"name": "brief.md", "text": "the brief\n"}],
                                 config={"extends": "creator",
                                         "phase_settings": {"model_may_restore": True}})
        result = await handle.result()
    assert result.status == "completed"
    events = (await handle.fetch_history()).events
    first_call = next(e.event_id for e in events
                      if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    tasks = [e.event_id for e in events
             if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED]
    assert tasks[1] > first_call  # the call is a command of the job's first workflow task,
    snapshots = [e.event_id for e in events if local_activity(e) == "snapshot_phase"]
    assert snapshots and first_call < snapshots[0]  # which no longer takes the snapshot
    record = json.loads(await text(s3, handle.id, ".switchback/snapshots/phase_1.json") or "")
    # what create_workspace wrote, no more: the job's input and the workspace.md stub
    assert sorted(record["files"]) == ["documents/brief.md", "instructions.md", "workspace.md"]
    # the rewind put back the start: what phases 1 and 2 wrote is archived, not there
    assert await text(s3, handle.id, "archive/rewound/2/work/a_1.md") == "result a 1\n"
    assert await text(s3, handle.id, "archive/rewound/2/workspace.md") == (
        "# Workspace\n\nexplored\n")  # bootstrap()'s, replaced by the stub
    assert await text(s3, handle.id, "archive/rewound/2/todos.yaml") is not None
    arch = yaml.safe_load(await text(s3, handle.id, "archive/phase_2.yaml") or "")
    assert arch["status"] == "rewound" and "restored to the start of phase 1" in arch["issue"]
    assert await text(s3, handle.id, "work/a_1.md") is None
    assert await text(s3, handle.id, "documents/brief.md") == "the brief\n"
    [report] = await replay([await handle.fetch_history()], pydantic_data_converter)
    assert report.ok, report.detail


async def test_a_first_call_that_fails_still_leaves_the_phase_1_snapshot(
        client, task_queue, start_job, model_server, s3):
    script = [{"error": {"status": 400, "message": "bad request"}}]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[],
                                 config="creator")
        try:
            await handle.result()
        except Exception as e:  # the model's 400 fails the job, naming it
            failure = str(e.__cause__ or e)
        else:
            raise AssertionError("the job did not fail")
    assert "400" in failure or "bad request" in failure, failure
    record = json.loads(await text(s3, handle.id, ".switchback/snapshots/phase_1.json") or "")
    assert sorted(record["files"]) == ["instructions.md", "workspace.md"]
    assert json.loads(await text(s3, handle.id, "output/error.json") or "")["status"] == "failed"
