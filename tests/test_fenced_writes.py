"""Fenced writes: an activity attempt that stalls past its timeout and writes late ("zombie")
never changes the job's state.

The zombies are faithful: S3Wire's PUT runs in S3Store's thread pool, so a PUT held in that
thread (here: until the accepted attempt - or a later step - has written the same key) stalls
the attempt past its timeout; Temporal retries; then the held PUT goes out. Without the fence
the late PUT overwrote the accepted one (the assistant message of a model call: `tool call ...
not found`, issue 13; a workspace file: a later step's content lost).
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid

import pytest
import yaml

from switchback.activities import attempts
from switchback.activities.storage.conversations import ConversationStore
from switchback.activities.storage.files import WorkspaceChanged, WorkspaceFiles
from switchback.activities.storage.s3_wire import S3Error, S3Wire
from switchback.activities.storage.snapshots import SnapshotActivities
from switchback.activities.storage.workspace import WorkspaceActivities
from switchback.workflows.contract import SnapshotRequest, WorkspaceRef
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical
from tests.stored import stored_messages

B = "switchback"


class HeldPut:
    """Holds the first PUT that `first(key, body)` picks, in its thread, until a PUT that
    `then(key, body)` picks has completed; then lets it go out."""

    def __init__(self, monkeypatch, first, then) -> None:
        self.first, self.then = first, then
        self.held = False
        self.released = threading.Event()
        self.late: list[str] = []  # what the held PUT got: "written" or the error
        original = S3Wire.put

        def put(wire, bucket, key, data, headers):
            if not self.held and self.first(key, data):
                self.held = True
                assert self.released.wait(90), "the accepted attempt never wrote"
                try:
                    result = original(wire, bucket, key, data, headers)
                    self.late.append("written")
                    return result
                except S3Error as e:  # S3's answer, e.g. PreconditionFailed
                    self.late.append(e.code)
                    raise
            result = original(wire, bucket, key, data, headers)
            if self.held and self.then(key, data):
                self.released.set()
            return result
        monkeypatch.setattr(S3Wire, "put", put)


async def conversation(s3, job_id: str, key: str) -> list[dict]:
    return await stored_messages(s3, job_id, key, B)


def orphans(messages: list[dict]) -> list[str]:
    """Tool messages whose call is not in the assistant message before them."""
    out, ids = [], set()
    for m in messages:
        if m["role"] == "assistant":
            ids = {c["id"] for c in m.get("tool_calls") or []}
        elif m["role"] == "tool" and m["tool_call_id"] not in ids:
            out.append(m["tool_call_id"])
    return out


async def test_a_late_model_attempt_cannot_overwrite_the_accepted_answer(
        client, task_queue, start_job, model_server, s3, monkeypatch):
    zombie = {"tool_calls": [{"name": "write_file", "id": "call_zombie",
                              "arguments": {"path": "work/zombie.md", "content": "z"}}],
              "bind": False}  # a retry of this call gets the next step: another answer
    live = step(call("write_file", path="work/live.md", content="l"))
    live["tool_calls"][0]["id"] = "call_live"
    script = bootstrap() + [zombie, live] + tactical(5) + finish()
    held = HeldPut(monkeypatch, lambda key, body: b"call_zombie" in body,
                   lambda key, body: b"call_live" in body)
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[], config={
            "extends": "creator", "llm": {"heartbeat_timeout_seconds": 1}})
        result = await handle.result()
    assert result.status == "completed"
    assert held.late == ["PreconditionFailed"]  # the zombie's PUT went out, and was refused
    messages = await conversation(s3, handle.id, "phase_0002")
    answers = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    assert "call_live" in answers and "call_zombie" not in answers
    assert orphans(messages) == []
    assert await s3.get(B, f"{handle.id}/work/zombie.md") is None


@pytest.mark.parametrize("local", [True, False], ids=["local", "activity"])
async def test_a_late_tool_attempt_cannot_overwrite_a_later_steps_file(
        client, task_queue, start_job, model_server, s3, monkeypatch, local):
    """The tool's first write of work/a.md (a create: it was missing) is held past the
    attempt's timeout until the next step has written the file. A local activity's zombie is
    cancelled by the worker; a regular activity's (no heartbeat) never hears of its timeout
    and goes on: its create is refused, and being past its deadline it does not look the file
    up to replace it (activities/attempts.py)."""
    script = bootstrap() + [
        step(call("write_file", path="work/a.md", content="v1"), call("todo_complete")),
        step(call("write_file", path="work/a.md", content="v2"), call("todo_complete")),
    ] + tactical(3, tag="b") + finish()
    held = HeldPut(monkeypatch, lambda key, body: key.endswith("/work/a.md") and body == b"v1",
                   lambda key, body: key.endswith("/work/a.md") and body == b"v2")
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[], config={
            "extends": "creator", "tools": {
                "timeout_seconds": 1, "retry": {"initial_interval_seconds": 0.1},
                **({} if local else {"local": []})}})
        result = await handle.result()
    assert result.status == "completed"
    assert held.late == ["PreconditionFailed"]
    assert await s3.get(B, f"{handle.id}/work/a.md") == b"v2"
    archive = yaml.safe_load(await s3.get(B, f"{handle.id}/archive/phase_2.yaml"))
    assert [t["status"] for t in archive["todos"]] == ["completed"] * 5


def ws() -> WorkspaceRef:
    return WorkspaceRef(bucket=B, job_id=f"fence-{uuid.uuid4().hex[:8]}")


async def test_workspace_writes_need_the_version_the_attempt_saw(s3) -> None:
    w = ws()
    zombie, accepted = WorkspaceFiles(s3, w), WorkspaceFiles(s3, w)
    assert await zombie.read_optional("a.md") is None  # the zombie saw: missing
    await accepted.write_text("a.md", "v1", 100)
    await WorkspaceFiles(s3, w).write_text("a.md", "v2", 100)  # a later step
    with pytest.raises(WorkspaceChanged):
        await zombie.write_text("a.md", "v1", 100)
    with pytest.raises(WorkspaceChanged):
        await accepted.delete("a.md")  # it saw v1
    assert await s3.get(B, f"{w.job_id}/a.md") == b"v2"
    same = WorkspaceFiles(s3, w)
    assert await same.read_text("a.md") == "v2"
    await WorkspaceFiles(s3, w).write_text("a.md", "v3", 100)
    await same.write_text("a.md", "v3", 100)  # the very bytes that are there: no harm done


class Requests:
    """Counts the S3Store requests a block of code makes, by kind."""

    def __init__(self, s3, monkeypatch) -> None:
        self.kinds: list[str] = []
        for name in ("put", "head", "get_object"):
            real = getattr(s3, name)

            async def counted(*args, _real=real, _name=name, **kw):
                self.kinds.append(_name + ("(if-none-match)" if kw.get("if_none_match") else
                                           "(if-match)" if kw.get("if_match") else ""))
                return await _real(*args, **kw)
            monkeypatch.setattr(s3, name, counted)


async def test_a_first_write_creates_and_looks_the_file_up_only_when_it_exists(
        s3, monkeypatch) -> None:
    w = ws()
    await s3.put(B, f"{w.job_id}/old.md", b"v1")
    seen = Requests(s3, monkeypatch)
    attempt = WorkspaceFiles(s3, w)
    await attempt.write_text("new.md", "n1", 100)  # missing: one create, no HEAD
    assert seen.kinds == ["put(if-none-match)"]
    seen.kinds.clear()
    await attempt.write_text("new.md", "n2", 100)  # seen now: replaced over its version
    assert seen.kinds == ["put(if-match)"]
    seen.kinds.clear()
    await attempt.write_text("old.md", "v2", 100)  # there, unseen: the create is refused,
    assert seen.kinds == ["put(if-none-match)", "head", "put(if-match)"]  # then replaced
    assert await s3.get(B, f"{w.job_id}/old.md") == b"v2"
    assert await s3.get(B, f"{w.job_id}/new.md") == b"n2"


async def test_an_expired_attempt_never_replaces_a_file_it_did_not_see(s3) -> None:
    """A zombie whose create goes out after its deadline finds a file a later step wrote:
    it is not looked up and replaced (the HEAD would name the later step's version)."""
    w = ws()
    await s3.put(B, f"{w.job_id}/a.md", b"a later step's")

    async def zombie() -> None:
        attempts.begin(0)  # this task's attempt: its deadline has passed
        with pytest.raises(WorkspaceChanged):
            await WorkspaceFiles(s3, w).write_text("a.md", "late", 100)
        await WorkspaceFiles(s3, w).write_text("a.md", "a later step's", 100)  # same bytes
        await WorkspaceFiles(s3, w).write_text("b.md", "still missing", 100)  # as a HEAD
    await asyncio.create_task(zombie())  # (its own context: the deadline stays in there)
    assert await s3.get(B, f"{w.job_id}/a.md") == b"a later step's"
    assert await s3.get(B, f"{w.job_id}/b.md") == b"still missing"

    async def live() -> None:
        attempts.begin(60)
        await WorkspaceFiles(s3, w).write_text("a.md", "replaced", 100)
    await asyncio.create_task(live())
    assert await s3.get(B, f"{w.job_id}/a.md") == b"replaced"


async def test_activity_results_are_written_once_and_adopted(s3) -> None:
    w, store = ws(), ConversationStore(s3)
    first, ours = await store.put_once(w, "phase_0001", 3, {"role": "assistant", "content": "a"})
    assert ours and first["content"] == "a"
    again, ours = await ConversationStore(s3).put_once(w, "phase_0001", 3,
                                                       {"role": "assistant", "content": "b"})
    assert not ours and again["content"] == "a"
    assert await ConversationStore(s3).get(w, "phase_0001", 3) == first
    assert await store.put_text_once(w, "phase_0001", "summary_000004.md", "s1") == "s1"
    assert await store.put_text_once(w, "phase_0001", "summary_000004.md", "s2") == "s1"
    assert await WorkspaceFiles(s3, w).write_once("tool_outputs/x.txt", "t1") == "t1"
    assert await WorkspaceFiles(s3, w).write_once("tool_outputs/x.txt", "t2") == "t1"


async def test_a_late_snapshot_never_replaces_the_phase_start_record(s3) -> None:
    w = ws()
    await s3.put(B, f"{w.job_id}/a.md", b"at the phase start")
    snap = SnapshotActivities(s3)
    assert await snap.snapshot_phase(SnapshotRequest(workspace=w, phase=3, state={"n": 1})) == 1
    await s3.put(B, f"{w.job_id}/b.md", b"written in phase 3")
    late = SnapshotRequest(workspace=w, phase=3, state={"n": 2})
    assert await snap.snapshot_phase(late) == 1  # adopted: the record of the first attempt
    record = json.loads(await s3.get(B, f"{w.job_id}/.switchback/snapshots/phase_3.json"))
    assert set(record["files"]) == {"a.md"} and record["state"] == {"n": 1}


async def test_the_workflows_records_are_its_own(s3) -> None:
    w, acts = ws(), WorkspaceActivities(s3)
    key = f"{w.job_id}/output/completion.json"
    await s3.put(B, key, b'{"status": "completed", "forged": true}')  # not the workflow's
    from switchback.workflows.contract import WriteOutputRequest
    req = WriteOutputRequest(workspace=w, path="output/completion.json",
                             data={"status": "failed"})
    assert await acts.write_output(req) == "output/completion.json"
    assert json.loads(await s3.get(B, key)) == {"status": "failed"}
    assert await acts.write_output(req) == "output/completion.json"  # a retry: the same bytes
