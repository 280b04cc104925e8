"""Contenders of the side-by-side benchmark (bench/side_by_side.py) and what they share.

Every contender runs the same task: an agent that makes N `write_file` calls of ~2 KB
over N model steps, then answers "done", against the scripted model server. The tool
is the same code for all of them: switchback's own `WorkspaceFiles.write_text` into the
job's workspace prefix in S3 (SeaweedFS here).

The peers do not send switchback's `X-Switchback-Job` header; their prompt carries a
`[job:<id>]` marker instead, which bench/peers/scripted_server.py routes by, so every
job (of every contender) has its own script and its own request log.

A Temporal contender runs its worker as a separate process (`python -m
bench.peers.worker <key> <task queue>`, or switchback's own worker.py), so its CPU can be
measured and it can be SIGKILLed; the floor runs in the harness process.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import random
import signal
import sys
from pathlib import Path
from typing import Any

# the checkout (this is switchback.bench.peers, linked into switchback/ from the checkout's
# bench/peers); no resolve(): the workflow sandbox imports this package
ROOT = Path(__file__).parents[3]
BUCKET = "switchback"
SYSTEM = ("You are a technical writer. Write each requested report section to its own file "
          "with write_file, one call per step; when all are written, answer 'done'.")
_WORDS = ("retention audit voucher ledger record invoice erasure consent controller processor "
          "archive period statute evidence journal booking receipt backup policy review "
          "requirement obligation deadline transfer register access request purpose").split()


def content(i: int, size: int = 2000) -> str:
    """~2 KB of varied prose for section `i` (deterministic, different per section)."""
    rng = random.Random(i)
    words: list[str] = [f"Section {i}."]
    while sum(len(w) + 1 for w in words) < size:
        words.append(rng.choice(_WORDS) + ("." if rng.random() < 0.08 else ""))
    return " ".join(words)[:size]


def path(i: int) -> str:
    return f"work/part_{i:03d}.md"


def prompt(job_id: str, n: int) -> str:
    return (f"[job:{job_id}] Write {n} report sections, work/part_001.md to "
            f"work/part_{n:03d}.md, with write_file, one per step; then answer 'done'.")


def write_step(i: int, latency_ms: int, *extra: dict) -> dict:
    calls = [{"name": "write_file", "arguments": {"path": path(i), "content": content(i)}}]
    return {"tool_calls": calls + list(extra), "latency_ms": latency_ms}


def peer_script(n: int, latency_ms: int) -> list[dict]:
    """N write steps and a final answer: N + 1 model calls."""
    return ([write_step(i, latency_ms) for i in range(1, n + 1)]
            + [{"content": "done", "latency_ms": latency_ms}])


TOOL_SCHEMA = {"type": "function", "function": {
    "name": "write_file", "description": "Write a text file into the job's workspace.",
    "parameters": {"type": "object", "additionalProperties": False,
                   "required": ["path", "content"],
                   "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}

_store: Any = None


async def write_file(job_id: str, file_path: str, text: str) -> str:
    """The tool every contender runs: switchback's workspace write (S3, one object)."""
    global _store
    from switchback.activities.storage.files import WorkspaceFiles
    from switchback.activities.storage.s3 import S3Store
    from switchback.workflows.contract import WorkspaceRef

    if _store is None:
        _store = S3Store()
    files = WorkspaceFiles(_store, WorkspaceRef(bucket=BUCKET, job_id=job_id))
    written = await files.write_text(file_path, text, 5_000_000)
    return f"Wrote {len(text.encode())} bytes to {written}."


class Contender:
    """One contender; subclasses fill in how to run a job and read its history."""

    key = ""
    title = ""
    needs: tuple[str, ...] = ()  # importable modules (benchmark extras)
    temporal = True
    timeouts = ""  # what decides recovery time (printed in the notes)

    def missing(self) -> str | None:
        for mod in self.needs:
            try:
                found = importlib.util.find_spec(mod) is not None
            except ModuleNotFoundError:
                found = False
            if not found:
                return f"{mod} not installed (pip install -e '.[bench]')"
        return None

    def script(self, n: int, latency_ms: int) -> list[dict]:
        return peer_script(n, latency_ms)

    def model_calls(self, n: int) -> int:
        return n + 1

    def worker_argv(self, task_queue: str) -> list[str]:
        return [sys.executable, "-m", "switchback.bench.peers.worker", self.key, task_queue]

    def worker_env(self, task_queue: str, max_activities: int, heartbeat: float | None) -> dict:
        return {"BENCH_MAX_ACTIVITIES": str(max_activities),
                "BENCH_HEARTBEAT_SECONDS": str(heartbeat or "")}

    async def connect(self, address: str, default_client: Any) -> Any:
        raise NotImplementedError

    async def run_job(self, client: Any, task_queue: str, job_id: str, n: int,
                      heartbeat: float | None = None) -> None:
        raise NotImplementedError

    def model_call_step(self, event: Any, nth: int) -> int | None:
        """The step number of a model call's ActivityTaskScheduled event (or its marker, for
        a call run as a local activity; `nth`: its number among the model calls so far), 0
        for a model call that is not a counted step, None when the event is not a model
        call. A step's history runs to the next model call."""
        raise NotImplementedError

    def serve(self, task_queue: str) -> None:  # worker process entry (Temporal peers)
        raise NotImplementedError


def run_loop(coro) -> None:
    """A peer worker's event loop: asyncio (its SDK's default), uvloop with BENCH_UVLOOP=1."""
    if os.environ.get("BENCH_UVLOOP") == "1":
        import uvloop
        uvloop.run(coro)
    else:
        import asyncio
        asyncio.run(coro)


def heartbeat_from_env() -> float | None:
    value = os.environ.get("BENCH_HEARTBEAT_SECONDS")
    return float(value) if value else None


async def serve_worker(title: str, task_queue: str, plugins: list, workflows: list,
                       activities: list) -> None:
    """Connect with `plugins`, run one worker until SIGTERM; prints '<title> worker started'."""
    from temporalio.client import Client
    from temporalio.worker import Worker

    client = await Client.connect(os.environ["TEMPORAL_ADDRESS"], plugins=plugins)
    limit = int(os.environ.get("BENCH_MAX_ACTIVITIES") or 100)
    worker = Worker(client, task_queue=task_queue, workflows=workflows, activities=activities,
                    max_concurrent_activities=limit)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with worker:
        print(f"{title} worker started on {task_queue}", flush=True)
        await stop.wait()


def contenders() -> dict[str, Contender]:
    from switchback.bench.peers.floor import Floor
    from switchback.bench.peers.openai_agents_temporal import OpenAIAgentsTemporal
    from switchback.bench.peers.pydantic_ai_temporal import PydanticAITemporal
    from switchback.bench.peers.switchback_job import (
        SwitchbackBefore,
        SwitchbackJob,
        SwitchbackLocal,
        SwitchbackReact,
        SwitchbackReactLocal,
    )

    return {c.key: c for c in (Floor(), SwitchbackJob(), SwitchbackBefore(), SwitchbackReact(),
                               SwitchbackLocal(),
                               SwitchbackReactLocal(), OpenAIAgentsTemporal(),
                               PydanticAITemporal())}
