"""One PUT per model step (#18): the messages the workflow made ride in the next answer's
`_meta.inline` instead of objects of their own, and every reader - a worker with a cold
cache after a crash, a person reading S3 - still gets the whole conversation, old jobs'
conversations (an object per message) included."""

from __future__ import annotations

import json
import uuid

from switchback.activities.storage.conversations import ConversationStore
from switchback.workflows.contract import WorkspaceRef
from tests.conftest import running_worker
from tests.scripts import full_job
from tests.stored import stored_conversations

B = "switchback"


async def test_a_cold_reader_rebuilds_every_conversation_from_fewer_objects(
        client, task_queue, start_job, model_server, s3):
    async with running_worker(client, task_queue):
        handle = await start_job(full_job(1), model_server, config="creator", instructions="x",
                                 documents=[])
        assert (await handle.result()).status == "completed"
    stored = await stored_conversations(s3, handle.id)
    prefix = f"{handle.id}/.switchback/conversations/"
    objects = [o.key for o in await s3.list(B, prefix) if o.key.endswith(".json")]
    messages = sum(len(m) for m in stored.values())
    assert len(objects) < messages * 0.75, (len(objects), messages)  # carried: no object
    ws = WorkspaceRef(bucket=B, job_id=handle.id)
    for conv, found in stored.items():
        cold = ConversationStore(s3)  # a new worker: nothing cached
        assert await cold.messages(ws, conv, len(found)) == [found[i] for i in sorted(found)]
        carried = [i for i in found if f"{prefix}{conv}/{i:06d}.json" not in objects]
        for i in carried:  # one message alone: found in the answer after it
            assert await ConversationStore(s3).get(ws, conv, i) == found[i]


async def test_old_and_new_layouts_read_alike(s3):
    """Messages 0-3 stored as an old job stored them (an object each), 4 carried by 5."""
    ws = WorkspaceRef(bucket=B, job_id=f"conv-{uuid.uuid4().hex[:8]}")
    msgs = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [_call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "ok a"},
            {"role": "assistant", "content": "", "tool_calls": [_call("b")]},
            {"role": "tool", "tool_call_id": "b", "content": "ok b"}]
    answer = {"role": "assistant", "content": "done",
              "_meta": {"inline": {"4": msgs[4]}, "usage": {}}}
    for i, m in enumerate(msgs[:4]):
        await s3.put(B, f"{ws.job_id}/.switchback/conversations/c/{i:06d}.json",
                     json.dumps(m).encode(), "application/json")
    await s3.put(B, f"{ws.job_id}/.switchback/conversations/c/000005.json",
                 json.dumps(answer).encode(), "application/json")
    assert await ConversationStore(s3).messages(ws, "c", 6) == [*msgs, answer]
    assert await ConversationStore(s3).get(ws, "c", 4) == msgs[4]
    # a late tool attempt's long result at 4, which the workflow did not take (it took the
    # retried attempt's short one inline): the carried message is message 4
    await s3.put(B, f"{ws.job_id}/.switchback/conversations/c/000004.json", json.dumps(
        {"role": "tool", "tool_call_id": "b", "content": "late " * 500}).encode(),
        "application/json")
    assert await ConversationStore(s3).messages(ws, "c", 6) == [*msgs, answer]
    assert (await stored_conversations(s3, ws.job_id))["c"][4] == msgs[4]


def _call(call_id: str) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": "list_files", "arguments": "{}"}}
