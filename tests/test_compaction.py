"""Mid-phase compaction end to end: truncation, tool-result clearing, summarization."""

from __future__ import annotations

from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical

BIG = "".join(f"line {i}: the retention period for invoices, ledgers and vouchers is ten years "
              f"and for business letters six years, counted from the end of the year.\n"
              for i in range(300))


def tool_texts(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_truncation_and_clearing(client, task_queue, start_job, model_server, s3):
    reads = [step(call("read_file", path=f"docs/d{i}.md")) for i in range(7)]
    script = (bootstrap()
              + [step(*[call("write_file", path=f"docs/d{i}.md", content=f"doc {i}\n" + BIG[:4000])
                        for i in range(7)])]
              + [step(call("write_file", path="big.md", content=BIG))]
              + [step(call("read_file", path="big.md"))]
              + [step(call("search_files", query="retention"))]
              + reads + tactical(5) + finish())
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        assert (await handle.result()).status == "completed"
    reqs = model_server.requests(handle.id)
    texts = [t for r in reqs for t in tool_texts(r)]
    read_big = next(t for t in texts if t.startswith("line 0:"))
    assert len(read_big) < 6300 and "cut at 6000 of" in read_big
    assert "read_file(path='big.md', offset=6000)" in read_big
    search = next(t for t in texts if t.startswith("big.md:1:"))
    pointer = search.rsplit("The full result is in ", 1)[1].split(";")[0]
    full = (await s3.get("switchback", f"{handle.id}/{pointer}")).decode()
    assert full.count("\n") >= 49 and len(full) > len(search) - 200  # the whole result is kept
    # the last call of the reading streak: only the newest 5 tool results are intact
    last = tool_texts(reqs[len(bootstrap()) + 3 + 7 - 1])
    cleared = [t for t in last if t.startswith("[Result of ")]
    assert "[Result of read_file('big.md') cleared" in " ".join(cleared)
    assert "read_file it again" in " ".join(cleared)
    assert sum(t.startswith("doc ") for t in last) == 5


async def test_summarization_folds_older_turns(client, task_queue, start_job, model_server, s3):
    reads = [step(call("read_file", path=f"docs/d{i}.md")) for i in range(8)]
    summaries = [{"content": f"SUMMARY-{k}: read docs so far; current todo 1.",
                  "for_call": "summary"} for k in range(1, 6)]
    script = (bootstrap() + summaries
              + [step(*[call("write_file", path=f"docs/d{i}.md", content=f"doc {i}\n" + BIG[:3000])
                        for i in range(8)])]
              + reads + tactical(5) + finish())
    config = {"extends": "creator", "context": {"summarize_at_tokens": 5000,
                                                 "keep_recent_messages": 4,
                                                 "keep_tool_results": 3}}
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions="x",
                                 documents=[])
        result = await handle.result()
    assert result.status == "completed"
    reqs = model_server.requests(handle.id)
    calls = [r for r in reqs if ".summary" in (r["_call_key"] or "")]
    assert calls, "no summarization happened"
    first = calls[0]
    assert first["messages"][0]["content"].startswith("You compact the working memory")
    assert "Conversation to fold into the summary" in first["messages"][1]["content"]
    assert "begins" in first["messages"][1]["content"]  # the phase's kickoff was folded
    i = reqs.index(first)
    after = reqs[i + 1]
    assert after["messages"][1]["content"].startswith("Summary of the earlier part")
    assert "SUMMARY-1" in after["messages"][1]["content"]
    assert not any("begins" in (m.get("content") or "") for m in after["messages"][2:])
    record = await s3.get("switchback", f"{handle.id}/summaries/phase_2_001.md")
    assert record is not None and b"SUMMARY-1" in record
    # every model call after the first summary stayed near the threshold
    sizes = [r["messages"] for r in reqs[i + 1:] if ".summary" not in (r["_call_key"] or "")]
    assert sizes
