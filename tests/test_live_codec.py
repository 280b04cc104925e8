"""The live stream under payload encryption: the events - the model's streamed text (signals
from the model activity), tool calls and results - are in the job's history only as
ciphertext, and a reader with the codec reads them whole."""

from __future__ import annotations

import uuid

from temporalio.api.enums.v1 import EventType

from switchback.activities.storage.s3 import S3Store
from switchback.codec import ENV_KEYS, codec_from_env
from switchback.codec.aes_gcm import ENCODING
from switchback.operate.live import job_events
from switchback.worker import build_worker
from switchback.workflows.contract import JobInput, JobResult
from tests.scripts import call, full_job, step
from tests.test_codec import encrypted_client, new_key


async def test_stream_events_pass_the_codec(client, task_queue, model_server, s3):
    said = f"OKAPI-{uuid.uuid4().hex}"  # what the model writes, streamed
    path = f"notes/ZEBRA-{uuid.uuid4().hex[:12]}.md"  # a tool call's argument
    codec = codec_from_env({ENV_KEYS: f"k1:{new_key()}"})
    enc = await encrypted_client(client, codec)
    script = full_job(1)
    script[0] = {**step(call("list_files"), content=f"Looking around. {said} " + "x" * 200),
                 "chunk_ms": 40}
    script[1] = step(call("write_file", path=path, content="secret notes\n"))
    job_id = f"job-{uuid.uuid4().hex[:10]}"
    model_server.set_script(job_id, script)
    store = S3Store()
    worker, closers = build_worker(enc, task_queue, store)
    try:
        async with worker:
            handle = await enc.start_workflow(
                "AgentJob", JobInput(config={"extends": "creator", "live_token_seconds": 0.2},
                                     instructions="x", documents=[]),
                id=job_id, task_queue=task_queue, result_type=JobResult)
            assert (await handle.result()).status in ("completed", "stuck")
            events = [e async for _, e in job_events(enc, job_id, follow=False)]
    finally:
        for c in closers:
            await c.close()
        store.close()
    deltas = "".join(e["text"] for e in events if e["kind"] == "model.delta")
    assert said in deltas  # streamed, and read back through the codec
    assert any(e["kind"] == "tool.call" and path in e["arguments"] for e in events)
    history = await client.get_workflow_handle(job_id).fetch_history()
    signals = [e for e in history.events
               if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED]
    assert signals  # the token batches are in the history ...
    raw = b"".join(e.SerializeToString() for e in history.events)
    assert said.encode() not in raw and path.encode() not in raw  # ... as ciphertext only
    for e in signals:
        for p in e.workflow_execution_signaled_event_attributes.input.payloads:
            assert p.metadata["encoding"] == ENCODING
