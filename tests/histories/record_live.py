"""Record the live stream's history into tests/histories/live-stream.live.json: a job whose
first answer is streamed slowly with `live_token_seconds` (its text in batches: signals from
the model activity) while a reader long-polls with the stream's update (accepted and
completed updates in the history) - what the stream adds to a job's history (docs/live.md).

    python -m tests.histories.record_live
"""

from __future__ import annotations

import asyncio

from switchback.bench.harness import bench_stack
from switchback.operate.live import job_events
from switchback.workflows.contract import JobInput, JobResult
from tests.conftest import running_worker
from tests.histories import record
from tests.scripts import bootstrap, call, finish, step, tactical

NAME = "live-stream"


async def record_live() -> None:
    record.TAG = "live"
    async with bench_stack() as b, running_worker(b.client, "record"):
        script = bootstrap("Phase A", 2) + tactical(2) + finish()
        script[0] = {**step(call("list_files"), content="Let me look around. " * 12),
                     "chunk_ms": 40}
        b.model.set_script(NAME, script)
        job = await b.client.start_workflow(
            "AgentJob", JobInput(config={"extends": "creator", "live_token_seconds": 0.3},
                                 instructions="# Recorded job\nx", documents=[]),
            id=NAME, task_queue="record", result_type=JobResult)
        read = [e async for _, e in job_events(b.client, NAME, via="update",
                                               poll_interval=0.2)]
        assert any(e["kind"] == "model.delta" for e in read), read
        assert (await job.result()).status == "completed"
        record.write(NAME, await job.fetch_history())


if __name__ == "__main__":
    asyncio.run(record_live())
