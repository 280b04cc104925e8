"""Signals and updates with payloads that do not fit: a `rewind` of the wrong type is
recorded in `state` as rejected with the reason (not dropped without a trace), its text is
capped; `approve` refuses a bad payload through its validator with a clear message."""

from __future__ import annotations

import asyncio
import json

import pytest
import yaml
from temporalio.client import WorkflowUpdateFailedError

from switchback.workflows.contract import JobState
from switchback.workflows.contract.inputs import MAX_REWIND_CHARS
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical, transition
from tests.test_approvals import GATED
from tests.waits import temporal_cli, wait_for_requests, wait_state


async def test_bad_rewinds_are_recorded_and_long_ones_capped(client, task_queue, start_job,
                                                             model_server, s3):
    slow = {**tactical(5)[1], "latency_ms": 2000}
    script = (bootstrap() + tactical(1) + [slow] + transition("Revised", 5)
              + tactical(5, "r") + finish())
    long_issue = "scope " * 1000  # 6,000 characters
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        await wait_for_requests(model_server, handle.id, len(bootstrap()) + 2)
        for raw in ("5", '{"issue": 5}', '{"issue": "x", "restore_phase": 9}',
                    '{"issue": "x", "restore_phase": "2"}', '{"issue": "x", "phase": 2}',
                    '["a"]'):
            await asyncio.to_thread(temporal_cli, client, "workflow", "signal", "--workflow-id",
                                    handle.id, "--name", "rewind", "--input", raw)
        await handle.signal("rewind", {"issue": long_issue})
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "completed"
    arch = yaml.safe_load(await s3.get("switchback", f"{handle.id}/archive/phase_2.yaml"))
    assert arch["status"] == "rewound"
    assert arch["issue"] == (f"{long_issue.strip()[:MAX_REWIND_CHARS]} [... cut: the issue had "
                             f"{len(long_issue.strip())} characters, at most 2000 are kept]")
    reasons = [r.split(" ", 2)[2] for r in state.rejected]  # "<date> <time> <reason>"
    assert reasons == [
        'rewind: the payload must be an issue string or {"issue": string, "restore_phase": N}, '
        "got 5; the signal was ignored",
        "rewind: 'issue' must be a string, got 5; the signal was ignored",
        "rewind: 'restore_phase' 9 has not started yet (the job is in phase 2); the signal was "
        "ignored",
        "rewind: 'restore_phase' must be a phase number (a whole number >= 1) or null, got "
        '"2"; the signal was ignored',
        'rewind: unknown key "phase" (known: issue, restore_phase); the signal was ignored',
        'rewind: the payload must be an issue string or {"issue": string, "restore_phase": N}, '
        'got ["a"]; the signal was ignored']


async def test_bad_approve_payloads_are_refused_by_the_validator(client, task_queue, start_job,
                                                                 model_server, s3):
    script = (bootstrap() + [step(call("write_file", path="scratch.md", content="tmp"))]
              + [step(call("delete_file", path="scratch.md"))] + tactical(5) + finish())
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=GATED, instructions="x",
                                 documents=[])
        st = await wait_state(handle, lambda s: bool(s.pending_approvals))
        call_id = st.pending_approvals[0].call_id
        refusals = []
        for bad in ("yes", {"call_id": 5, "approved": True},
                    {"call_id": call_id, "approved": "yes"},
                    {"call_id": call_id, "approved": True, "by": "me"},
                    {"call_id": call_id, "approved": True, "note": 7}):
            with pytest.raises(WorkflowUpdateFailedError) as info:
                await handle.execute_update("approve", bad)
            refusals.append(str(info.value.cause))
        still = await handle.query("state", result_type=JobState)
        answer = await asyncio.to_thread(
            temporal_cli, client, "workflow", "update", "execute", "--workflow-id", handle.id,
            "--name", "approve", "--input", json.dumps({"call_id": call_id, "approved": True}))
        assert (await handle.result()).status == "completed"
    assert [p.call_id for p in still.pending_approvals] == [call_id]  # untouched by refusals
    assert "approved delete_file" in answer
    assert refusals[0].endswith('approve must be a JSON object ({"call_id": "call_3", '
                                '"approved": true, "note": "ok"}), got "yes"')
    assert "approve: 'call_id' must be the id of the waiting call (a string of 1-200 " \
           "characters), got 5" in refusals[1]
    assert "approve: 'approved' must be true or false, got \"yes\"" in refusals[2]
    assert 'approve: unknown key "by" (known: call_id, approved, note)' in refusals[3]
    assert "approve: 'note' must be a string of at most 2000 characters, got 7" in refusals[4]
