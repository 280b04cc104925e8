"""Seeing a job: the `state` query, search attributes, current details, `starter.py --follow`."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from switchback.workflows.contract import SA_PHASE_NUMBER, SA_TODO, SA_TODOS
from tests.conftest import running_worker
from tests.scripts import full_job
from tests.waits import temporal_cli, wait_for_requests, wait_state

ROOT = Path(__file__).resolve().parent.parent


async def listed(client, query: str, job_id: str, timeout: float = 20) -> bool:
    for _ in range(int(timeout * 5)):
        if job_id in [wf.id async for wf in client.list_workflows(query)]:
            return True
        await asyncio.sleep(0.2)
    return False


async def test_state_search_attributes_and_details(client, task_queue, start_job, model_server,
                                                   s3):
    async with running_worker(client, task_queue):
        handle = await start_job(full_job(2), model_server, config="creator",
                                 instructions="# Find the rules\nmore", documents=[])
        await wait_for_requests(model_server, handle.id, 10)  # inside the first tactical phase
        # a retried model call also counts as a request: the phase is what to wait for
        await wait_state(handle, lambda s: s.phase.kind == "tactical")
        await handle.signal("pause")
        st = await wait_state(handle, lambda s: s.status == "paused")
        assert st.objective == "Find the rules" and st.phase.kind == "tactical"
        assert st.phase.number == 2 and st.todos and "/" in st.progress
        assert st.tokens.tokens_in > 0 and st.cost_usd > 0 and st.steps_total >= 9
        assert st.phases[0]["kind"] == "strategic" and st.efficiency is not None
        assert st.breakers["trip_count"] == 0 and st.pending_approvals == []
        assert await listed(client, f'SwitchbackPhase="tactical" AND WorkflowId="{handle.id}"',
                            handle.id)
        assert await listed(client, 'SwitchbackStatus="paused"', handle.id)
        cli = await asyncio.to_thread(temporal_cli, client, "workflow", "list", "--query",
                                      'SwitchbackPhase="tactical"')
        assert handle.id in cli
        meta = await handle.query("__temporal_workflow_metadata")
        details = meta.current_details
        assert "PAUSED" in details and "phase 2 (tactical)" in details and "☑" in details
        assert "[x]" not in details and "☐ **" in details and "← current" in details
        paused = await (await handle.describe()).memo_value("progress", dict)  # persisted
        assert paused["status"] == "paused" and paused["kind"] == "tactical"
        await handle.signal("resume")
        result = await handle.result()
    assert await listed(client, f'SwitchbackStatus="completed" AND SwitchbackTokens>0 '
                        f'AND WorkflowId="{handle.id}" AND SwitchbackStrategy="phase_alternation" '
                        'AND SwitchbackCostUsd>0', handle.id)
    assert result.status == "completed"
    desc = await handle.describe()  # the worker is gone: what the page shows from the server
    sa = desc.typed_search_attributes
    assert sa.get(SA_TODOS) == "3/3" and sa.get(SA_TODO) is None and sa.get(SA_PHASE_NUMBER) == 5
    progress = await desc.memo_value("progress", dict)
    assert progress["status"] == "completed" and progress["todos"] == "3/3"
    details = "\n".join(await desc.memo_value("details", list))
    assert details.startswith("### COMPLETED · phase 5 (strategic)") and "☑ 3." in details


async def test_starter_follow_shows_the_live_stream_and_exit_status(
        client, task_queue, model_server, s3, tmp_path):
    job_id = "follow-job"
    model_server.set_script(job_id, [{**s, "latency_ms": 30} for s in full_job(2)])
    (tmp_path / "task.md").write_text("# Follow me\n")
    env = {**os.environ, "TEMPORAL_ADDRESS": client.service_client.config.target_host}
    async with running_worker(client, task_queue):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "starter.py", "start", "--config", "creator", "--id", job_id,
            "--instructions", str(tmp_path / "task.md"), "--task-queue", task_queue, "--follow",
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(), 120)
    text = out.decode()
    assert proc.returncode == 0, text
    phases = [line for line in text.splitlines() if line.startswith("== phase")]
    assert len(phases) == 5, text  # the live stream: a line per phase, with its title
    assert "== phase 2 tactical: Phase 1" in text and "  todos 3/5 done" in text
    assert "  -> write_file work/p1_1.md" in text and text.count("  -> todo_complete") == 19
    assert "== end: completed - all phases done" in text
    assert f"{job_id}: COMPLETED after 5 phases, 24 model steps" in text


async def test_list_says_a_terminated_job_is_terminated(client, task_queue, start_job,
                                                        model_server, s3):
    """A terminated job cannot publish its end: its search attribute still says `paused`
    (or `running`). `starter.py list` shows how its run closed instead (the BFCL runner's
    stopped jobs were listed as running for hours)."""
    async with running_worker(client, task_queue):
        handle = await start_job(full_job(2), model_server, config="creator",
                                 instructions="# Stop me\n", documents=[])
        await wait_for_requests(model_server, handle.id, 3)
        await handle.signal("pause")
        await wait_state(handle, lambda s: s.status == "paused")
        assert await listed(client, f'SwitchbackStatus="paused" AND WorkflowId="{handle.id}"',
                            handle.id)
        await handle.terminate("stopped by the test")
    assert await listed(client, f'ExecutionStatus="Terminated" AND WorkflowId="{handle.id}"',
                        handle.id)
    env = {**os.environ, "TEMPORAL_ADDRESS": client.service_client.config.target_host}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "starter.py", "list", "--query", f'WorkflowId="{handle.id}"',
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    row = next(line for line in out.decode().splitlines() if line.startswith(handle.id))
    assert row.split()[1] == "terminated", out.decode()


def test_the_listed_status_of_a_closed_run():
    from temporalio.client import WorkflowExecutionStatus as S

    from switchback.operate.job_views import listed_status
    assert listed_status("paused", S.RUNNING) == "paused"
    assert listed_status(None, S.RUNNING) == "running"
    assert listed_status("stuck", S.COMPLETED) == "stuck"  # the job's own end
    assert listed_status("failed", S.FAILED) == "failed"
    assert listed_status("running", S.TERMINATED) == "terminated"
    assert listed_status("waiting_for_instructions", S.TIMED_OUT) == "timed_out"
    assert listed_status("running", S.CONTINUED_AS_NEW) == "continued"
    assert listed_status(None, S.CANCELED) == "cancelled"
