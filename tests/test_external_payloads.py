"""Nothing large enters history: a 1 MB document input goes to S3 through external storage,
a 1 MB tool result stays in the conversation store, and the job still replays."""

from __future__ import annotations

from temporalio.worker import Replayer

from switchback.activities.storage.payloads import payload_settings
from switchback.workflows.agent_job import AgentJob
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical

MB = 1024 * 1024


async def test_large_payloads_stay_out_of_history(client, task_queue, start_job, model_server,
                                                  s3):
    doc = ("The controller shall erase personal data without undue delay. " * 20_000)[:MB]
    script = bootstrap() + [step(call("read_file", path="documents/big.txt"))] + tactical(5) \
        + finish()
    config = {"extends": "creator", "limits": {"read_max_chars": 2 * MB},
              "context": {"max_tool_result_chars": 2 * MB, "summarize_at_tokens": 10 ** 7,
                          "context_window": 10 ** 7}}
    bucket, threshold = payload_settings()
    before = len(await s3.list(bucket, ""))
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions="x",
                                 documents=[{"name": "big.txt", "text": doc}])
        assert (await handle.result()).status == "completed"
    stored = await s3.get("switchback", f"{handle.id}/documents/big.txt")
    assert stored is not None and len(stored) == MB
    # the model saw the whole 1 MB result; history did not carry it
    results = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
               if m["role"] == "tool" and len(m["content"]) >= MB]
    assert results
    history = await handle.fetch_history()
    assert max(e.ByteSize() for e in history.events) < threshold
    assert sum(e.ByteSize() for e in history.events) < 400_000
    assert len(await s3.list(bucket, "")) > before  # the input went to external storage
    replayer = Replayer(workflows=[AgentJob], data_converter=client.data_converter)
    outcome = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert outcome.replay_failure is None, outcome.replay_failure
