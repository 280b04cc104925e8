"""`starter.py replay` and `starter.py rerun --from-phase N`, on real jobs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.client import WorkflowFailureError

from switchback.activities.tools import file_tools as workspace_tools
from switchback.activities.tools import run as tools
from switchback.activities.tools.registry import ToolResult
from switchback.operate.rerun import rerun
from tests.conftest import running_worker
from tests.scripts import full_job

ROOT = Path(__file__).resolve().parent.parent


def starter(client, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TEMPORAL_ADDRESS": client.service_client.config.target_host}
    return subprocess.run([sys.executable, "starter.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


async def finished_job(client, task_queue, start_job, model_server):
    async with running_worker(client, task_queue):
        handle = await start_job(full_job(2), model_server, config="creator",
                                 instructions="x", documents=[])
        await handle.result()
    return handle


async def test_rerun_replays_recorded_answers(client, task_queue, start_job, model_server, s3):
    old = await finished_job(client, task_queue, start_job, model_server)
    new_id = f"{old.id}-rerun"
    async with running_worker(client, task_queue):
        handle = await rerun(client, s3, "switchback", old.id, new_id, 3, task_queue, True)
        result = await handle.result()
    assert result.status == "completed" and result.phases == 5
    assert model_server.requests(new_id) == []  # every answer came from the recording
    assert await s3.get("switchback", f"{new_id}/.switchback/rerun.json") is None
    old_files = {o.key.split("/", 1)[1] for o in await s3.list("switchback", f"{old.id}/")
                 if "/.switchback/" not in o.key}
    new_files = {o.key.split("/", 1)[1] for o in await s3.list("switchback", f"{new_id}/")
                 if "/.switchback/" not in o.key}
    assert new_files == old_files


async def test_rerun_after_a_tool_fix_stops_where_it_diverges(client, task_queue, start_job,
                                                             model_server, s3, monkeypatch):
    old = await finished_job(client, task_queue, start_job, model_server)

    async def fixed_list_files(files, args, limits):
        result = await workspace_tools.list_files(files, args, limits)
        return ToolResult("(listing v2)\n" + result.text, result.changed)

    monkeypatch.setitem(tools.HANDLERS, "list_files", fixed_list_files)
    new_id = f"{old.id}-fixed"
    async with running_worker(client, task_queue):
        handle = await rerun(client, s3, "switchback", old.id, new_id, 3, task_queue, True)
        with pytest.raises(WorkflowFailureError) as info:
            await handle.result()
    assert "rerun diverged" in str(info.value.cause)
    note = json.loads(await s3.get("switchback", f"{new_id}/.switchback/rerun.json"))
    assert note["diverged_at"] == {"conversation": "phase_0003", "message": 3}
    assert model_server.requests(new_id) == []


async def test_replay_cli_reports_ok_and_nondeterminism(client, task_queue, start_job,
                                                       model_server, s3, tmp_path):
    old = await finished_job(client, task_queue, start_job, model_server)
    out = await asyncio.to_thread(starter, client, "replay", old.id)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{old.id} run" in out.stdout and "OK" in out.stdout
    # a history whose recorded commands no longer match the code: swap an activity type
    history = json.loads((await old.fetch_history()).to_json())
    for e in history["events"]:
        attrs = e.get("activityTaskScheduledEventAttributes")
        if attrs and attrs["activityType"]["name"] == "call_model":
            attrs["activityType"]["name"] = "run_tool"
            break
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(history))
    out = await asyncio.to_thread(starter, client, "replay", "--history", str(path))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "NONDETERMINISM" in out.stdout and "workflow.patched" in out.stdout
