"""The live stream across continue-as-new, and its retention: a job that continues as new
every two phases keeps one stream (offsets go on, readers following by query and by update
read every event once, in order); with SWITCHBACK_LIVE_RETAIN the job keeps only the newest
events, carried across runs, and a reader from offset 0 starts at the oldest kept."""

from __future__ import annotations

import asyncio

from switchback.operate.live import job_events
from tests.conftest import running_worker
from tests.scripts import full_job

CONFIG = {"extends": "creator", "continue_as_new": {"every_phases": 2}}


async def read_all(client, job_id: str, via: str) -> list[tuple[int, dict]]:
    return [e async for e in job_events(client, job_id, via=via,  # type: ignore[arg-type]
                                        poll_interval=0.1)]


def timeless(events: list[tuple[int, dict]]) -> list[tuple[int, dict]]:
    return [(o, {k: v for k, v in e.items() if k != "at"}) for o, e in events]


async def test_one_stream_across_runs(client, task_queue, start_job, model_server, s3):
    script = [{**s, "latency_ms": 30} for s in full_job(3)]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, instructions="x",
                                 documents=[])
        by_query, by_update = await asyncio.wait_for(asyncio.gather(
            read_all(client, handle.id, "query"), read_all(client, handle.id, "update")), 120)
        result = await handle.result()
        after = [e async for e in job_events(client, handle.id, follow=False)]
    assert result.status == "completed" and result.phases == 7
    runs = [wf async for wf in client.list_workflows(f'WorkflowId="{handle.id}"')]
    assert len(runs) == 4
    # the same events at the same offsets (`at` aside: a worker that replays the job rebuilds
    # the events it publishes, and its clock in a replayed local activity's activation may
    # differ by milliseconds)
    assert timeless(by_query) == timeless(by_update) == timeless(after)
    assert [o for o, _ in after] == list(range(len(after)))  # no gap, no repeat, from 0
    phases = [e["number"] for _, e in after if e["kind"] == "phase"]
    assert phases == [1, 2, 3, 4, 5, 6, 7]
    assert [e["kind"] for _, e in after].count("end") == 1 and after[-1][1]["kind"] == "end"
    ends = [e for _, e in after if e["kind"] == "model.end"]
    assert len(ends) == result.steps


async def test_retention_keeps_the_newest_events_across_runs(client, task_queue, start_job,
                                                             model_server, s3, monkeypatch):
    monkeypatch.setenv("SWITCHBACK_LIVE_RETAIN", "30")
    async with running_worker(client, task_queue):
        handle = await start_job(full_job(3), model_server, config=CONFIG, instructions="x",
                                 documents=[])
        result = await handle.result()
        kept = [e async for e in job_events(client, handle.id, follow=False)]
        late = [e async for e in job_events(client, handle.id, from_offset=kept[-5][0])]
    assert result.status == "completed"
    offsets = [o for o, _ in kept]
    assert len(kept) <= 30 and offsets[0] > 100  # the oldest were dropped, offsets went on
    assert offsets == list(range(offsets[0], offsets[0] + len(kept)))
    assert kept[-1][1]["kind"] == "end" and late == kept[-5:]
