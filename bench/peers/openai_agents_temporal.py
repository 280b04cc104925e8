"""Contender 3: the OpenAI Agents SDK on Temporal (temporalio-openai-agents,
`temporalio.openai_agents`, which `temporalio.contrib.openai_agents` forwards to).

The workflow is plain Agents SDK code: `Runner.run(agent, prompt)`. The plugin runs every
model call as the `invoke_model_activity` activity; `write_file` is a Temporal activity made
into a tool with `activity_as_tool` (the integration's way for tools that do I/O). The model
provider is the SDK's OpenAIProvider on Chat Completions (`use_responses=False`: the scripted
server speaks Chat Completions only) with the client's own retries off, as the plugin's
default provider does. Tracing is off (it would export to the OpenAI platform).

Everything the plugin does not set is left at its defaults: model activity start-to-close
60 s, no heartbeat timeout unless BENCH_HEARTBEAT_SECONDS is set.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():  # not workflow code: keep it out of the sandbox
    from switchback.bench.peers import (
        SYSTEM,
        Contender,
        heartbeat_from_env,
        prompt,
        run_loop,
        serve_worker,
    )
    from switchback.bench.peers import (
        write_file as workspace_write,
    )

try:
    with workflow.unsafe.imports_passed_through():
        from agents import Agent, Runner, set_tracing_disabled
        from temporalio.openai_agents import OpenAIAgentsPlugin
        from temporalio.openai_agents.workflow import activity_as_tool
    AVAILABLE = True
except ImportError:
    AVAILABLE = False

WORKFLOW = "OpenAIAgentsBench"


@activity.defn
async def write_file(path: str, content: str) -> str:
    """Write a text file into the job's workspace."""
    job_id = activity.info().workflow_id
    assert job_id is not None  # an activity of a workflow (the job)
    return await workspace_write(job_id, path, content)


if AVAILABLE:
    @workflow.defn(name=WORKFLOW, sandboxed=True)
    class OpenAIAgentsBench:
        @workflow.run
        async def run(self, task: str, max_turns: int) -> str:
            agent = Agent(name="writer", instructions=SYSTEM, model="scripted", tools=[
                activity_as_tool(write_file,
                                 start_to_close_timeout=timedelta(seconds=60))])
            result = await Runner.run(agent, input=task, max_turns=max_turns)
            return str(result.final_output)


def _plugin(worker: bool) -> Any:
    if not worker:
        return OpenAIAgentsPlugin()
    import openai
    from agents.models.openai_provider import OpenAIProvider
    from temporalio.openai_agents import ModelActivityParameters

    set_tracing_disabled(True)
    client = openai.AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"],
                                api_key=os.environ.get("OPENAI_API_KEY") or "scripted",
                                max_retries=0)
    heartbeat = heartbeat_from_env()
    params = ModelActivityParameters(
        start_to_close_timeout=timedelta(seconds=60),
        heartbeat_timeout=timedelta(seconds=heartbeat) if heartbeat else None)
    return OpenAIAgentsPlugin(model_params=params, model_provider=OpenAIProvider(
        openai_client=client, use_responses=False))


class OpenAIAgentsTemporal(Contender):
    key = "openai_agents"
    title = "openai-agents on Temporal"
    needs = ("agents", "temporalio.openai_agents")
    timeouts = "model activity start-to-close 60 s, no heartbeat (plugin defaults)"

    async def connect(self, address: str, default_client: Any) -> Any:
        from temporalio.client import Client

        return await Client.connect(address, plugins=[_plugin(worker=False)])

    async def run_job(self, client: Any, task_queue: str, job_id: str, n: int,
                      heartbeat: float | None = None) -> None:
        result = await client.execute_workflow(WORKFLOW, args=[prompt(job_id, n), n + 5],
                                               id=job_id, task_queue=task_queue,
                                               result_type=str)
        if result.strip() != "done":
            raise RuntimeError(f"openai-agents job {job_id} answered {result[:80]!r}")

    def worker_env(self, task_queue: str, max_activities: int, heartbeat: float | None) -> dict:
        return {**super().worker_env(task_queue, max_activities, heartbeat),
                "OPENAI_AGENTS_DISABLE_TRACING": "1"}

    def model_call_step(self, event: Any, nth: int) -> int | None:
        name = event.activity_task_scheduled_event_attributes.activity_type.name
        return nth if name == "invoke_model_activity" else None

    def serve(self, task_queue: str) -> None:
        set_tracing_disabled(True)
        run_loop(serve_worker(self.key, task_queue, [_plugin(worker=True)],
                              [OpenAIAgentsBench], [write_file]))
