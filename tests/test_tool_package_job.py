"""A job uses tools of an installed package (examples/wordcount, entry point group
`switchback.tools`) named in its config, like any built-in tool."""

from __future__ import annotations

import json

from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step


async def test_a_job_calls_a_package_tool(client, task_queue, start_job, model_server, s3):
    script = bootstrap() + [
        step(call("word_count", path="documents/a.md", top=2)),
        step(call("write_file", path="counts.txt", content="{{last_tool_result}}")),
        step(call("word_count", path="documents/a.md", top=99)),  # refused by its schema
        step(call("word_report", paths=["documents/a.md"])),
    ] + [step(call("todo_complete", notes=f"t{i}")) for i in range(5)] + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config={
            "tools": {"domain": ["word_*"]}}, instructions="x",
            documents=[{"name": "a.md", "text": "the cat and the hat and the bat"}])
        assert (await handle.result()).status == "completed"
    counts = await s3.get("switchback", f"{handle.id}/counts.txt")
    assert counts == b"documents/a.md: 8 words, 5 distinct; most common: the (3), and (2)"
    report = await s3.get("switchback", f"{handle.id}/reports/word_counts.json")
    assert report is not None and json.loads(report) == {"words": {"documents/a.md": 8}}
    texts = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
             if m["role"] == "tool"]
    assert any("[invalid_arguments]" in t and "top: Input should be less than or equal to 50"
               in t for t in texts)
    [rec] = await s3.list("switchback", f"{handle.id}/.switchback/tools/")
    record = json.loads(await s3.get("switchback", rec.key) or b"{}")["tools"]
    assert record["word_count"]["source"] == "package switchback-wordcount"
