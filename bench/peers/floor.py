"""Contender 1, the floor: the same agent loop in-process, no Temporal.

The openai client's Chat Completions call and the same `write_file` tool (switchback's
workspace write to S3), called directly in a plain loop; the conversation is a Python list
that grows by one assistant and one tool message a step. Nothing is durable: a crash loses
the job, so it has no history and no recovery figure. Concurrent jobs are asyncio tasks in
the harness process, sharing one AsyncOpenAI client, as an application would.
"""

from __future__ import annotations

import json
import os
from typing import Any

from switchback.bench.peers import SYSTEM, TOOL_SCHEMA, Contender, prompt, write_file


class Floor(Contender):
    key = "floor"
    title = "floor (in-process)"
    temporal = False
    timeouts = "not durable: a killed process loses the job"

    def __init__(self) -> None:
        self._client: Any = None

    def client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(
                base_url=os.environ["OPENAI_BASE_URL"],
                api_key=os.environ.get("OPENAI_API_KEY") or "scripted", max_retries=0)
        return self._client

    async def connect(self, address: str, default_client: Any) -> Any:
        return self.client()

    async def run_job(self, client: Any, task_queue: str, job_id: str, n: int,
                      heartbeat: float | None = None) -> None:
        messages: list[dict] = [{"role": "system", "content": SYSTEM},
                                {"role": "user", "content": prompt(job_id, n)}]
        for _ in range(n + 5):
            response = await client.chat.completions.create(
                model="scripted", messages=messages, tools=[TOOL_SCHEMA])
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            for call in message.tool_calls:
                args = json.loads(call.function.arguments)
                result = await write_file(job_id, args["path"], args["content"])
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        raise RuntimeError(f"floor job {job_id} did not finish in {n + 5} model calls")

    def model_call_step(self, event: Any, nth: int) -> int | None:
        return None

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
