"""Mid-phase compaction end to end: truncation, tool-result clearing, summarization."""

from __future__ import annotations

import json
import re

from switchback.activities.model.prompt import TODO_HEADER
from switchback.workflows.contract.requests import KEEP_RECENT_MESSAGES
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical
from tests.stored import stored_messages

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
    kinds = await cleared_results_point_at_their_content(reqs, s3, handle.id)
    assert kinds["read_file"] > 0 and kinds["tool_outputs"] > 0


async def cleared_results_point_at_their_content(reqs: list[dict], s3, job_id: str
                                                 ) -> dict[str, int]:
    """Every cleared tool result in every prompt names where its content lives, and it is
    there: the file read_file read, or the tool_outputs/ file with a cut result's full text.
    How many of each kind were seen."""
    kinds = {"read_file": 0, "tool_outputs": 0}
    for r in reqs:
        calls = {c["id"]: (c["function"]["name"], json.loads(c["function"]["arguments"]))
                 for m in r["messages"] for c in m.get("tool_calls") or []}
        for m in r["messages"]:
            if m["role"] != "tool" or not m["content"].startswith("[Result of "):
                continue
            name, args = calls[m["tool_call_id"]]
            if "The full text is in " in m["content"]:
                pointer = m["content"].split("The full text is in ")[1].removesuffix(".]")
                full = await s3.get("switchback", f"{job_id}/{pointer}")
                assert full and len(full) > 6000, (pointer, m["content"])
                kinds["tool_outputs"] += 1
            else:
                assert name == "read_file" and m["content"].endswith(
                    f"It is the content of {args['path']}: read_file it again if you need it.]")
                assert await s3.get("switchback", f"{job_id}/{args['path']}")
                kinds["read_file"] += 1
    return kinds


def orphans(request: dict) -> list[str]:
    """Tool results without their call before them, and calls without a result after them."""
    called: list[str] = []
    answered: set[str] = set()
    problems = []
    for m in request["messages"]:
        if m["role"] == "assistant":
            called += [c["id"] for c in m.get("tool_calls") or []]
        elif m["role"] == "tool":
            if m["tool_call_id"] not in called:
                problems.append(f"tool result {m['tool_call_id']} has no call before it")
            answered.add(m["tool_call_id"])
    return problems + [f"call {c} has no result" for c in called if c not in answered]


def docs_read(messages: list[dict]) -> set[int]:
    """The n of each read_file('documents/d<n>.md') call or result among the messages."""
    found = set()
    for m in messages:
        for c in m.get("tool_calls") or []:
            path = json.loads(c["function"]["arguments"]).get("path", "")
            found |= {int(n) for n in re.findall(r"^documents/d(\d)\.md$", path)}
        if m["role"] == "tool":
            found |= {int(n) for n in re.findall(r"^doc (\d)\n|^\[Result of read_file\("
                                                 r"'documents/d(\d)\.md'\)", m["content"])
                      for n in n if n}
    return found


def ids(messages: list[dict]) -> set[str]:
    return {c["id"] for m in messages for c in m.get("tool_calls") or []} | {
        m["tool_call_id"] for m in messages if m["role"] == "tool"}


def docs_folded(transcript: str) -> set[int]:
    """The same, in the transcript a summarization call folds."""
    return {int(n) for n in re.findall(r'read_file\(\{"path": "documents/d(\d)\.md"\}\)',
                                       transcript)}


def same(sent: dict, stored: dict) -> bool:
    """The message as sent is the stored one (a cleared tool result keeps its call id)."""
    ids = [c["id"] for c in sent.get("tool_calls") or []]
    return (sent["role"], sent.get("tool_call_id"), ids) == (
        stored["role"], stored.get("tool_call_id"),
        [c["id"] for c in stored.get("tool_calls") or []]) and (
        sent["role"] == "tool" or sent.get("content") == stored.get("content"))


async def test_summarization_keeps_its_promises(client, task_queue, start_job, model_server,
                                                s3):
    """After each summary the prompt holds the summary instead of the folded messages, the
    last KEEP_RECENT_MESSAGES as they are, no orphaned tool result, placeholders that say
    where each cleared result lives; each summary is recorded in summaries/."""
    docs = [{"name": f"d{i}.md", "text": f"doc {i}\n" + BIG[:3000]} for i in range(8)]
    reads = [step(call("read_file", path=f"documents/d{i}.md")) for i in range(8)]
    summaries = [{"content": f"SUMMARY-{k}: read documents so far; current todo 1.",
                  "for_call": "summary"} for k in range(1, 7)]
    script = (bootstrap() + summaries + reads[:3]
              + [step(call("search_files", query="retention", path="documents"))]
              + reads[3:] + tactical(5) + finish())
    keep = KEEP_RECENT_MESSAGES
    config = {"extends": "creator", "context": {"summarize_at_tokens": 5000,
                                                 "keep_tool_results": 3}}
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions="x",
                                 documents=docs)
        assert (await handle.result()).status == "completed"
    reqs = model_server.requests(handle.id)
    for n, r in enumerate(reqs):  # never an orphaned tool result, in any prompt
        assert not orphans(r), (n, orphans(r))
    conversation = await stored_messages(s3, handle.id, "phase_0002")
    made = [i for i, r in enumerate(reqs) if ".summary" in (r["_call_key"] or "")]
    assert len(made) >= 2, "fewer than two summaries: nothing to check"
    folded: set[int] = set()
    for k, i in enumerate(made, 1):
        fold, after = reqs[i]["messages"][1]["content"], reqs[i + 1]
        assert ".summary" not in (after["_call_key"] or "")
        # the summary replaces the folded messages (and the summary before it)
        assert after["messages"][1]["content"] == (
            "Summary of the earlier part of this phase (the messages it replaces are gone):"
            f"\n\nSUMMARY-{k}: read documents so far; current todo 1.")
        if k > 1:
            assert fold.startswith(f"## Previous summary\n\nSUMMARY-{k - 1}:")
            assert f"SUMMARY-{k - 1}" not in json.dumps(after)
        else:
            assert "Phase 2 (tactical) begins" in fold  # the kickoff was folded ...
        assert "Phase 2 (tactical) begins" not in json.dumps(after)  # ... and is gone
        recent = [m for m in after["messages"][2:]  # the todo block ends a prompt (#17):
                  if not str(m.get("content") or "").startswith(TODO_HEADER)]  # not stored
        now, kept = docs_folded(fold), docs_read(recent)
        assert not now & kept, (now, kept)
        folded |= now
        assert max(folded or {-1}) < min(kept or {8})  # older ones folded, newer ones kept
        # the last messages of the conversation as they are: at most KEEP_RECENT_MESSAGES,
        # fewer only where the cut would have left a tool result without its call
        end = next(j for j, m in enumerate(conversation) if same(recent[-1], m))
        start = end + 1 - len(recent)
        assert all(same(a, b) for a, b in zip(recent, conversation[start:end + 1], strict=True))
        assert 1 <= len(recent) <= keep and recent[0]["role"] != "tool"
        assert all(m["role"] == "tool" for m in conversation[end + 1 - keep:start])
        gone = ids(conversation[:start])  # every call and result before the cut is folded
        assert gone and not gone & ids(after["messages"]), gone & ids(after["messages"])
        record = (await s3.get("switchback", f"{handle.id}/summaries/phase_2_{k:03d}.md")
                  ).decode()
        assert record == (f"# Summary of phase_0002, messages 0-{start - 1}\n\nSUMMARY-{k}: "
                          "read documents so far; current todo 1.\n")
    assert {0, 1} <= folded  # the oldest reads were folded by the end
    kinds = await cleared_results_point_at_their_content(reqs, s3, handle.id)
    assert kinds["read_file"] > 0
