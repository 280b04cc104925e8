"""Rewind that restores: the workspace back as it was at the start of a phase, what it
replaced archived; end to end with a worker SIGKILLed between the restore and the next phase
(and the history replayed), by the model's todo_rewind when the config allows it, and the
restore activity's retries and late attempts on real S3."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import uuid

import pytest
import yaml
from temporalio.api.enums.v1 import EventType
from temporalio.contrib.pydantic import pydantic_data_converter

from switchback.activities.storage.files import WorkspaceChanged, WorkspaceFiles
from switchback.activities.storage.snapshots import SnapshotActivities
from switchback.activities.storage.workspace_restore import RestoreActivities
from switchback.operate.replay import replay
from switchback.workflows.contract import RestoreRequest, SnapshotRequest, WorkspaceRef
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical, transition
from tests.test_durability import wait_started, worker_process
from tests.waits import wait_for_requests

BUCKET = "switchback"
PLAN_AT_PHASE_2 = "# Plan\n\n- phase A\n"  # what bootstrap() writes to main_plan.md


def wrong_turns() -> list[dict]:
    """Phase 2 (tactical) going the wrong way: a new file, the plan overwritten."""
    return [step(call("write_file", path="work/a_1.md", content="result a 1\n"),
                 call("todo_complete", notes="did a 1")),
            step(call("write_file", path="main_plan.md", content="# Plan\n\nthe wrong plan\n"),
                 call("write_file", path="work/a_2.md", content="result a 2\n"),
                 call("todo_complete", notes="did a 2"))]


async def text(s3, job_id: str, path: str) -> str | None:
    data = await s3.get(BUCKET, f"{job_id}/{path}")
    return None if data is None else data.decode()


async def completed_activities(handle, name: str) -> int:
    history = await handle.fetch_history()
    scheduled = {e.event_id for e in history.events
                 if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                 and e.activity_task_scheduled_event_attributes.activity_type.name == name}
    return sum(1 for e in history.events
               if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
               and e.activity_task_completed_event_attributes.scheduled_event_id in scheduled)


async def test_signal_restores_the_workspace_across_a_worker_kill(
        client, task_queue, start_job, model_server, s3, tmp_path):
    issue = "the plan assumed a batch API"
    slow = {**tactical(5)[2], "latency_ms": 2500}  # phase 2's third step: the signal lands here
    first_of_rewind = {**transition("Revised", 5, memory="rewound")[0], "latency_ms": 4000}
    script = (bootstrap() + wrong_turns() + [slow] + [first_of_rewind]
              + transition("Revised", 5, memory="rewound")[1:] + tactical(5, "r") + finish())
    first = worker_process(client, task_queue, tmp_path / "w1.log")
    second = None
    try:
        await wait_started(tmp_path / "w1.log")
        handle = await start_job(script, model_server, instructions="x", documents=[],
                                 config={"extends": "creator",
                                         "llm": {"heartbeat_timeout_seconds": 2}})
        await wait_for_requests(model_server, handle.id, len(bootstrap()) + 3)
        await handle.signal("rewind", {"issue": issue, "restore_phase": 2})
        for _ in range(600):  # the restore done, the rewind phase's first call under way
            if await completed_activities(handle, "restore_workspace"):
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the restore never completed")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        # the workspace as the restore left it, before the rewind phase wrote anything
        assert await text(s3, handle.id, "main_plan.md") == PLAN_AT_PHASE_2
        assert await text(s3, handle.id, "work/a_1.md") is None
        assert await text(s3, handle.id, "work/a_2.md") is None
        second = worker_process(client, task_queue, tmp_path / "w2.log")
        result = await asyncio.wait_for(handle.result(), 180)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    assert result.status == "completed" and result.phases == 5
    # nothing lost: what the restore replaced is archived, under the phase it left
    assert await text(s3, handle.id, "archive/rewound/2/main_plan.md") == (
        "# Plan\n\nthe wrong plan\n")
    assert await text(s3, handle.id, "archive/rewound/2/work/a_1.md") == "result a 1\n"
    assert await text(s3, handle.id, "archive/rewound/2/work/a_2.md") == "result a 2\n"
    arch = yaml.safe_load(await text(s3, handle.id, "archive/phase_2.yaml") or "")
    assert arch["status"] == "rewound" and arch["issue"].startswith(issue)
    assert "restored to the start of phase 2" in arch["issue"]
    assert "archive/rewound/2/" in arch["issue"]
    plan = json.loads(await text(s3, handle.id, ".switchback/restores/from_2.json") or "")
    assert sorted(f["path"] for f in plan["files"]) == ["main_plan.md", "work/a_1.md",
                                                       "work/a_2.md"]
    # the rewind phase saw the issue and what was restored; the job went on from there
    kickoffs = [r["messages"][1]["content"] for r in model_server.requests(handle.id)
                if len(r["messages"]) == 3]  # a phase's first call: system, kickoff, todo block
    assert issue in kickoffs[2] and "restored to the start of phase 2" in kickoffs[2]
    assert await text(s3, handle.id, "work/r_5.md") == "result r 5\n"
    assert await completed_activities(handle, "restore_workspace") == 1
    st = (await handle.describe())
    progress = await st.memo_value("progress", dict)
    assert progress["status"] == "completed"
    details = "\n".join(await st.memo_value("details", list))
    assert "**Last rewind:** from phase 2: the plan assumed a batch API" in details
    [report] = await replay([await handle.fetch_history()], pydantic_data_converter)
    assert report.ok, report.detail


GATED_RESTORE = {"extends": "creator", "phase_settings": {"model_may_restore": True}}


@pytest.mark.parametrize("allowed", [True, False], ids=["allowed", "not-allowed"])
async def test_todo_rewind_restores_when_the_config_allows_it(
        client, task_queue, start_job, model_server, s3, allowed):
    issue = "todos 3-5 cannot work"
    script = (bootstrap() + wrong_turns()
              + [step(call("todo_rewind", issue=issue, restore_phase=2))]
              + transition("Revised", 5, memory="rewound") + tactical(5, "r") + finish())
    async with running_worker(client, task_queue, max_cached_workflows=0):  # replays every task
        handle = await start_job(script, model_server, instructions="x", documents=[],
                                 config=GATED_RESTORE if allowed else "creator")
        result = await handle.result()
    assert result.status == "completed"
    arch = yaml.safe_load(await text(s3, handle.id, "archive/phase_2.yaml") or "")
    assert arch["status"] == "rewound" and arch["issue"].startswith(issue)
    kept = await text(s3, handle.id, "archive/rewound/2/work/a_1.md")
    if allowed:
        assert kept == "result a 1\n" and "restored to the start of phase 2" in arch["issue"]
        assert await text(s3, handle.id, "work/a_1.md") is None
    else:
        assert kept is None and await text(s3, handle.id, "work/a_1.md") == "result a 1\n"
        assert "restore_phase 2 was not applied" in arch["issue"]
        assert "phase_settings.model_may_restore" in arch["issue"]


async def snapshot(s3, ws: WorkspaceRef, phase: int) -> None:
    await SnapshotActivities(s3).snapshot_phase(SnapshotRequest(workspace=ws, phase=phase,
                                                                state={}))


async def test_restore_retried_and_late_attempts_on_real_s3(s3):
    ws = WorkspaceRef(bucket=BUCKET, job_id=f"restore-{uuid.uuid4().hex[:8]}")
    put = lambda path, body: s3.put(BUCKET, f"{ws.job_id}/{path}", body.encode())  # noqa: E731
    for path, body in (("plan.md", "v1"), ("notes/a.md", "a1"), ("gone.md", "keep me"),
                       ("instructions.md", "the task"), ("archive/phase_1.yaml", "x: 1")):
        await put(path, body)
    await snapshot(s3, ws, 2)
    tools = WorkspaceFiles(s3, ws.model_copy(update={"snapshot": 2}))  # phase 2's writes
    await tools.write_text("plan.md", "v2", 100)  # changed
    await tools.delete("gone.md")  # deleted
    await tools.write_text("new.md", "new", 100)  # created
    await put("archive/phase_2.yaml", "x: 2")  # the workflow's own record: never touched
    acts = RestoreActivities(s3)
    req = RestoreRequest(workspace=ws, phase=2, from_phase=3)
    first = await acts.restore_workspace(req)
    assert (first.found, first.restored, first.deleted, first.archived) == (True, 2, 1, 2)
    assert first.archive_dir == "archive/rewound/3"
    assert await text(s3, ws.job_id, "plan.md") == "v1"
    assert await text(s3, ws.job_id, "gone.md") == "keep me"
    assert await text(s3, ws.job_id, "new.md") is None
    assert await text(s3, ws.job_id, "archive/rewound/3/plan.md") == "v2"
    assert await text(s3, ws.job_id, "archive/rewound/3/new.md") == "new"
    assert await text(s3, ws.job_id, "archive/phase_2.yaml") == "x: 2"
    # a retried attempt carries out the same plan: the same answer, nothing changed twice
    again = await acts.restore_workspace(req)
    assert again == first
    assert await text(s3, ws.job_id, "archive/rewound/3/plan.md") == "v2"
    # the next phase writes; then a late attempt of the restore wakes up: it is refused and
    # the next phase's work stays
    await put("plan.md", "v3 of the next phase")
    with pytest.raises(WorkspaceChanged):
        await acts.restore_workspace(req)
    assert await text(s3, ws.job_id, "plan.md") == "v3 of the next phase"
    await put("plan.md", "v1")  # (the plan back as restored, so the late attempt gets further)
    await put("new.md", "created again")  # a file the restore removed, created anew
    with pytest.raises(WorkspaceChanged):
        await RestoreActivities(s3).restore_workspace(req)
    assert await text(s3, ws.job_id, "new.md") == "created again"
    # no snapshot of that phase: nothing is changed, and the answer says which there are
    missing = await acts.restore_workspace(RestoreRequest(workspace=ws, phase=7, from_phase=4))
    assert not missing.found and "no snapshot of phase 7 (snapshots: 2)" in missing.reason
    assert await text(s3, ws.job_id, "new.md") == "created again"
