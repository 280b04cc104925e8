"""A full job: bootstrap -> 3 tactical phases with transitions -> job_complete."""

from __future__ import annotations

import json

import yaml

from switchback.workflows.contract import JobResult
from tests.conftest import running_worker
from tests.scripts import full_job
from tests.stored import stored_conversations


async def test_full_job_three_tactical_phases(client, task_queue, start_job, model_server, s3):
    async with running_worker(client, task_queue):
        handle = await start_job(full_job(3), model_server, config="creator",
                                 instructions="# Test\nDo the thing.\n", documents=[])
        result: JobResult = await handle.result()
    assert result.status == "completed"
    assert result.phases == 7  # bootstrap, (tactical, strategic) x 3
    job = handle.id
    keys = {o.key[len(job) + 1:] for o in await s3.list("switchback", f"{job}/")}
    for path in ("instructions.md", "workspace.md", "main_plan.md", "todos.yaml",
                 "output/completion.json", "archive/phase_2.yaml", "archive/phase_4.yaml",
                 "archive/phase_6.yaml", "work/p3_5.md"):
        assert path in keys, path
    assert not any(k.startswith("archive/") and k not in
                   {"archive/phase_2.yaml", "archive/phase_4.yaml", "archive/phase_6.yaml"}
                   for k in keys)
    archive = yaml.safe_load(await s3.get("switchback", f"{job}/archive/phase_4.yaml"))
    assert archive["status"] == "completed"
    assert [t["status"] for t in archive["todos"]] == ["completed"] * 5
    assert archive["todos"][0]["notes"] == "did p2 1"
    completion = json.loads(await s3.get("switchback", f"{job}/output/completion.json"))
    assert completion["status"] == "completed"
    assert completion["summary"] == "all phases done"
    assert "all phases done" in (await s3.get("switchback", f"{job}/workspace.md")).decode()

    # every phase started with an empty conversation: system + kickoff only
    reqs = model_server.requests(job)
    firsts = [r for r in reqs if len(r["messages"]) == 3]
    assert len(firsts) == 7
    for r in firsts:
        assert r["messages"][0]["role"] == "system"
        assert r["messages"][1]["role"] == "user" and "begins" in r["messages"][1]["content"]
    # the todo block is on every call, last (what changes comes after the stable prefix)
    assert all("ACTIVE TODO LIST" in r["messages"][-1]["content"] for r in reqs)
    assert not any("ACTIVE TODO LIST" in r["messages"][0]["content"] for r in reqs)
    # and the task is in the system prompt, without a read_file
    assert all("# Test\nDo the thing." in r["messages"][0]["content"] for r in firsts)
    # workspace.md is injected in the system prompt of the phase after it was written
    assert "explored" in firsts[1]["messages"][0]["content"]

    await assert_conversations_whole(s3, job, phases=7)


async def assert_conversations_whole(s3, job: str, phases: int) -> None:
    """Each phase's conversation is stored whole, with no gap: short tool results ride with
    the next model call, and those of the turn that ended a phase with the next phase's
    first call, across continue-as-new too (tool messages answer every tool call of the
    assistant before them); the job's last turn (job_complete) has no next call: its record
    is output/completion.json. (A short tool result is carried by the answer after it,
    `_meta.inline`: one object per step.)"""
    stored = await stored_conversations(s3, job)
    assert len(stored) == phases
    for conv, messages in stored.items():
        assert set(messages) == set(range(len(messages))), conv
        last = messages[max(messages)]
        final = conv == f"phase_{phases:04d}"
        assert last["role"] == ("assistant" if final else "tool"), (conv, last)
