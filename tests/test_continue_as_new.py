"""Continue-as-new at phase boundaries: bounded runs, signals and state across them, replay."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.worker import Replayer

from switchback.workflows.agent_job import AgentJob
from tests.conftest import running_worker
from tests.scripts import full_job
from tests.test_job_end_to_end import assert_conversations_whole
from tests.waits import wait_for_requests, wait_state


async def test_job_continues_as_new_every_two_phases(client, task_queue, start_job,
                                                     model_server, s3):
    script = [{**s, "latency_ms": 40} for s in full_job(3)]
    config = {"extends": "creator", "continue_as_new": {"every_phases": 2}}
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions="x",
                                 documents=[])
        # a pause sent around the first boundary (end of phase 2) is kept across it
        await wait_for_requests(model_server, handle.id, 12)
        await handle.signal("pause")
        st = await wait_state(handle, lambda s: s.status == "paused")
        await handle.signal("resume")
        await wait_state(handle, lambda s: s.run >= 2 and s.status == "running")
        result = await handle.result()
    assert result.status == "completed" and result.phases == 7
    assert result.steps == len(script) and st.steps_total >= 11
    runs = [wf async for wf in client.list_workflows(f'WorkflowId="{handle.id}"')]
    assert len(runs) == 4  # phases 1-2, 3-4, 5-6, 7
    replayer = Replayer(workflows=[AgentJob], data_converter=client.data_converter)
    for wf in runs:
        history = await client.get_workflow_handle(handle.id, run_id=wf.run_id).fetch_history()
        outcome = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        assert outcome.replay_failure is None, outcome.replay_failure
        assert len(history.events) < 1000
    finished = [wf for wf in runs if wf.status and wf.status.name == "CONTINUED_AS_NEW"]
    assert len(finished) == 3
    last = await client.get_workflow_handle(handle.id, run_id=runs[-1].run_id).fetch_history()
    assert last.events[-1].event_type in (
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
    for n in (2, 4, 6):
        assert await s3.get("switchback", f"{handle.id}/archive/phase_{n}.yaml") is not None
    await assert_conversations_whole(s3, handle.id, phases=7)
