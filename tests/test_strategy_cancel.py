"""Cancel under each strategy: a Temporal cancel during a model call ends the job Cancelled
with output/completion.json "cancelled" (nested: tests/test_nested_steering.py)."""

from __future__ import annotations

import asyncio
import json

import pytest
from temporalio.client import WorkflowExecutionStatus

from tests import strategy_scripts as scripts
from tests.conftest import running_worker
from tests.waits import wait_for_requests

SCRIPTS = {"react": scripts.react,
           "plan_revise_execute": lambda: scripts.plan_revise_execute(revise=False,
                                                                      fail_step=False),
           "auto": lambda: scripts.auto("C") + scripts.react()}


@pytest.mark.parametrize("strategy", sorted(SCRIPTS))
async def test_cancel_during_a_model_call(client, task_queue, start_job, model_server, s3,
                                          strategy):
    script = SCRIPTS[strategy]()
    script[3] = {**script[3], "latency_ms": 20000}
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, documents=[],
                                 instructions=scripts.INSTRUCTIONS,
                                 config={"extends": "creator", "strategy": strategy,
                                         "llm": {"heartbeat_timeout_seconds": 2}})
        await wait_for_requests(model_server, handle.id, 4)
        await handle.cancel()
        for _ in range(200):
            if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
                break
            await asyncio.sleep(0.1)
        status = (await handle.describe()).status
        state = await handle.query("state")
    assert status == WorkflowExecutionStatus.CANCELED
    assert state["status"] == "cancelled" and state["strategy"] == strategy
    done = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert done["status"] == "cancelled"
    if strategy == "plan_revise_execute":  # the plan records what was left
        plan = (await s3.get("switchback", f"{handle.id}/archive/plan.md")).decode()
        assert "[-] 3. Write report.md" in plan
