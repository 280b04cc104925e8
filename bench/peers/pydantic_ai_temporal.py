"""Contender 4: pydantic-ai's Temporal durable execution (`pydantic_ai.durable_exec.temporal`).

A plain pydantic-ai `Agent` with the `TemporalDurability` capability (the current API; the
older `TemporalAgent` wrapper is deprecated), its workflow a `PydanticAIWorkflow` that lists
the agent, client and worker with `PydanticAIPlugin`. The capability runs each model request
and each tool call as an activity. The model is `OpenAIChatModel` on an AsyncOpenAI client
with its own retries off (Temporal retries). `UsageLimits(request_limit=None)`: the default
limit of 50 requests would end a 200-step run.

Left at its defaults: activity start-to-close 60 s, model activity heartbeat 30 s (unless
BENCH_HEARTBEAT_SECONDS is set).
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

from temporalio import workflow

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
        import openai
        from pydantic_ai import Agent
        from pydantic_ai.durable_exec.temporal import (
            PydanticAIPlugin,
            PydanticAIWorkflow,
            TemporalDurability,
        )
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
        from pydantic_ai.usage import UsageLimits
        from temporalio import activity
    AVAILABLE = True
except ImportError:
    AVAILABLE = False

WORKFLOW = "PydanticAIBench"

if AVAILABLE:
    def _durability() -> TemporalDurability:
        heartbeat = heartbeat_from_env()
        model_config: Any = ({"heartbeat_timeout": timedelta(seconds=heartbeat)} if heartbeat
                             else None)  # an ActivityConfig (a TypedDict)
        return TemporalDurability(model_activity_config=model_config)

    _model = OpenAIChatModel("scripted", provider=OpenAIProvider(openai_client=openai.AsyncOpenAI(
        base_url=os.environ.get("OPENAI_BASE_URL") or "http://127.0.0.1:9/v1",
        api_key=os.environ.get("OPENAI_API_KEY") or "scripted", max_retries=0)))
    agent = Agent(_model, name="writer", instructions=SYSTEM, capabilities=[_durability()])

    @agent.tool_plain
    async def write_file(path: str, content: str) -> str:
        """Write a text file into the job's workspace."""
        job_id = activity.info().workflow_id
        assert job_id is not None  # an activity of a workflow (the job)
        return await workspace_write(job_id, path, content)

    @workflow.defn(name=WORKFLOW)
    class PydanticAIBench(PydanticAIWorkflow):
        __pydantic_ai_agents__ = [agent]

        @workflow.run
        async def run(self, task: str) -> str:
            result = await agent.run(task, usage_limits=UsageLimits(request_limit=None))
            return str(result.output)


class PydanticAITemporal(Contender):
    key = "pydantic_ai"
    title = "pydantic-ai on Temporal"
    needs = ("pydantic_ai", "pydantic_ai.durable_exec.temporal", "openai")
    timeouts = "model activity heartbeat 30 s, start-to-close 60 s (capability defaults)"

    async def connect(self, address: str, default_client: Any) -> Any:
        from temporalio.client import Client

        return await Client.connect(address, plugins=[PydanticAIPlugin()])

    async def run_job(self, client: Any, task_queue: str, job_id: str, n: int,
                      heartbeat: float | None = None) -> None:
        result = await client.execute_workflow(WORKFLOW, prompt(job_id, n), id=job_id,
                                               task_queue=task_queue, result_type=str)
        if result.strip() != "done":
            raise RuntimeError(f"pydantic-ai job {job_id} answered {result[:80]!r}")

    def model_call_step(self, event: Any, nth: int) -> int | None:
        name = event.activity_task_scheduled_event_attributes.activity_type.name
        return nth if name.endswith(("__model_request", "__model_request_stream")) else None

    def serve(self, task_queue: str) -> None:
        run_loop(serve_worker(self.key, task_queue, [PydanticAIPlugin()],
                              [PydanticAIBench], []))
