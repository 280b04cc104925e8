"""starter.py at its boundary: it checks before it starts anything, every user error is one
line without a traceback, exit status 2 for usage and 1 for a failure; `--document` sends
the file's content, never a path the worker would read."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.conftest import running_worker
from tests.scripts import full_job

ROOT = Path(__file__).resolve().parent.parent


def starter(client, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TEMPORAL_ADDRESS": client.service_client.config.target_host}
    env.pop("SWITCHBACK_DEBUG", None)
    return subprocess.run([sys.executable, "starter.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


USAGE = [  # (arguments, exit status, what the one line says)
    (["start", "--config", "{bad"], 2, "start: --config: not valid JSON"),
    (["start", "--config", "[1, 2]"], 2, "--config: an inline config must be a JSON object"),
    (["start", "--config", "nosuch"], 2, "--config: config 'nosuch' not found"),
    (["start", "--config", '{"limits": {"max_nudgez": 1}}'], 2,
     "limits.max_nudgez: Extra inputs are not permitted"),
    (["start", "--config", '{"limits": 5}'], 2, "limits: Input should be a valid dictionary"),
    (["start", "--config", '{"extends": "creator", "strategy": "nope"}'], 2,
     "strategy: unknown strategy 'nope' (known: auto, nested, phase_alternation, "
     "plan_revise_execute, react)"),
    (["start", "--config", '{"extends": "creator", "prompts": {"strategic": "../x.md"}}'], 2,
     "prompts.strategic: '../x.md' must be a relative path inside configs"),
    (["start", "--config", "defaults"], 2, "config 'defaults' has no instructions.md: give "
                                           "--instructions FILE"),
    (["start", "--instructions", "/nonexistent/task.md"], 2,
     "--instructions /nonexistent/task.md: No such file or directory"),
    (["start", "--document", "/nonexistent/a.pdf"], 2,
     "--document /nonexistent/a.pdf: No such file or directory"),
    (["start", "--id", "a/b"], 2, "--id: job id 'a/b' cannot name a workspace"),
    (["replay", "--history", "/nonexistent.json"], 2, "--history /nonexistent.json: No such file"),
    (["replay"], 2, "give a job id or --history FILE"),
]


@pytest.mark.parametrize(("args", "code", "says"), USAGE)
def test_usage_errors_are_one_line(client, args, code, says) -> None:
    out = starter(client, *args)
    assert out.returncode == code, out
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out
    assert out.stderr.startswith(f"starter.py {args[0]}: ") and says in out.stderr, out.stderr


@pytest.mark.parametrize(("args", "says"), [
    (["status", "nosuchjob"], "no job 'nosuchjob'"),
    (["result", "nosuchjob"], "no job 'nosuchjob'"),
    (["rewind", "nosuchjob", "an issue"], "no job 'nosuchjob'"),
    (["approve", "nosuchjob", "call_1"], "no job 'nosuchjob'"),
    (["workspace", "nosuchjob"], "job 'nosuchjob' has no workspace in s3://switchback/"),
    (["cat", "nosuchjob", "a.md"], "job 'nosuchjob' has no file 'a.md'"),
])
def test_failures_are_one_line_with_status_1(client, s3, args, says) -> None:
    out = starter(client, *args)
    assert out.returncode == 1, out
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out
    assert says in out.stderr, out.stderr


def test_binary_instructions(client, tmp_path) -> None:
    bad = tmp_path / "task.md"
    bad.write_bytes(b"\xff\xfe\x00binary")
    out = starter(client, "start", "--instructions", str(bad))
    assert out.returncode == 2 and out.stderr.strip().endswith(f"{bad}: not UTF-8 text")


async def test_a_document_goes_inline(client, task_queue, model_server, s3, tmp_path):
    doc = tmp_path / "contract.md"
    doc.write_text("# Contract\nThe supplier shall keep records.\n")
    task = tmp_path / "task.md"
    task.write_text("# Task\nRead the contract.\n")
    job_id = f"job-{uuid.uuid4().hex[:8]}"
    model_server.set_script(job_id, full_job(1))
    async with running_worker(client, task_queue):
        out = await asyncio.to_thread(
            starter, client, "start", "--config", "creator", "--id", job_id, "--task-queue",
            task_queue, "--instructions", str(task), "--document", str(doc), "--wait")
    assert out.returncode == 0, out
    assert f"{job_id}: COMPLETED" in out.stdout
    assert await s3.get("switchback", f"{job_id}/documents/contract.md") == doc.read_bytes()
    history = await client.get_workflow_handle(job_id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    sent = b"".join(p.data for p in started.input.payloads)
    assert base64.b64encode(doc.read_bytes()) in sent and str(tmp_path).encode() not in sent
