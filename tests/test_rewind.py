"""Rewind, by the model's todo_rewind tool and by a person's `rewind` signal."""

from __future__ import annotations

import asyncio
import json

import yaml

from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical, transition
from tests.waits import temporal_cli, wait_for_requests


def rewind_phase(n_todos: int = 5) -> list[dict]:
    """A rewind strategic phase done properly: reconsider, plan, new todos."""
    return transition("Revised phase", n_todos, memory="rewound")


async def archive(s3, job_id: str, phase: int) -> dict:
    return yaml.safe_load(await s3.get("switchback", f"{job_id}/archive/phase_{phase}.yaml"))


def system_prompts(model_server, job_id: str) -> list[str]:
    return [r["messages"][0]["content"] for r in model_server.requests(job_id)
            if len(r["messages"]) == 3]


async def test_rewind_by_tool(client, task_queue, start_job, model_server, s3):
    issue = "the API has no batch mode; todos 3-5 assume it"
    script = (bootstrap() + tactical(2) + [step(call("todo_rewind", issue=issue))]
              + rewind_phase() + tactical(5, "r") + finish())
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        result = await handle.result()
    assert result.status == "completed" and result.phases == 5
    arch = await archive(s3, handle.id, 2)
    assert arch["status"] == "rewound" and arch["issue"] == issue
    assert [t["status"] for t in arch["todos"]] == ["completed"] * 2 + ["pending"] * 3
    assert arch["completed"] == 2
    prompts = system_prompts(model_server, handle.id)
    assert "Rewind" in prompts[2] and issue in prompts[2]  # phase 3 is the rewind phase
    assert "reconsider" in prompts[2].lower()
    kickoff = [r["messages"][1]["content"] for r in model_server.requests(handle.id)
               if len(r["messages"]) == 3][2]
    assert issue in kickoff


async def test_rewind_by_signal_during_a_model_call(client, task_queue, start_job, model_server,
                                                    s3):
    issue = "the customer changed the scope"
    slow_step = {**tactical(5)[1], "latency_ms": 1500}
    script = (bootstrap() + tactical(1) + [slow_step] + rewind_phase() + tactical(5, "r")
              + finish())
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        await wait_for_requests(model_server, handle.id, len(bootstrap()) + 2)
        await asyncio.to_thread(temporal_cli, client, "workflow", "signal", "--workflow-id",
                                handle.id, "--name", "rewind", "--input", json.dumps(issue))
        result = await handle.result()
    assert result.status == "completed"
    arch = await archive(s3, handle.id, 2)
    assert arch["status"] == "rewound" and arch["issue"] == issue
    # the slow step's tool calls were not run: the rewind took effect at the boundary
    assert arch["completed"] == 1
    assert await s3.get("switchback", f"{handle.id}/work/a_2.md") is None
    assert issue in system_prompts(model_server, handle.id)[2]


async def test_several_rewinds_in_a_row(client, task_queue, start_job, model_server, s3):
    slow = {**tactical(5)[1], "latency_ms": 1500}
    slow_rewind = {**rewind_phase()[0], "latency_ms": 1500}
    script = (bootstrap() + tactical(1) + [slow] + [slow_rewind] + rewind_phase()
              + tactical(5, "r") + finish())
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        n = len(bootstrap()) + 2
        await wait_for_requests(model_server, handle.id, n)
        await handle.signal("rewind", "first issue")
        await handle.signal("rewind", "second issue")
        await wait_for_requests(model_server, handle.id, n + 1)  # the rewind phase's 1st call
        await handle.signal("rewind", "third issue")
        result = await handle.result()
    assert result.status == "completed"
    first, second = await archive(s3, handle.id, 2), await archive(s3, handle.id, 3)
    assert first["issue"] == "first issue; second issue" and first["status"] == "rewound"
    assert second["issue"] == "third issue" and second["status"] == "rewound"
    assert [t["status"] for t in second["todos"]] == ["pending"] * 3
    assert result.phases == 6  # bootstrap, tactical, rewind, rewind, tactical, final
