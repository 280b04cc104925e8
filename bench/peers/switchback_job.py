"""Contender 2: switchback's AgentJob, run by switchback's own worker.py in its own process.

A job is a whole AgentJob: the bootstrap strategic phase (7 model steps: explore, plan,
todos.yaml), one tactical phase that does the N writes (the todos are completed along the
way, in the same steps as writes, so progress breakers see progress as they would in a real
job), and the closing strategic phase (4 steps, `job_complete`). Figures are per model step
over the whole job, phase transitions included; the history figures at step k are those of
tactical step k (`phase 2 tactical step k`), where the conversation is k steps long.

The config is `defaults` with `limits.max_steps_per_phase` raised above N (its default, 150,
would force a rewind in a 200-step phase). Context management stays on: a long phase may be
summarized, so the script carries a few answers for summarization calls (`for_call: summary`).
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

from switchback.bench.peers import ROOT, Contender, write_step
from tests.markers import local_activity_data
from tests.scripts import bootstrap, call, finish

BOOTSTRAP, FINISH = 7, 4
LOCAL_TIMEOUTS = ("a call through the server: its heartbeat, 3 s; mid-chain of local calls: "
                  "the workflow task timeout, 10 s")


def todo_count(n: int) -> int:
    return max(5, min(20, n // 10))


def tactical_steps(n: int, latency_ms: int) -> list[dict]:
    """N write steps; todo_complete rides along every ceil(N/T) writes, the rest (at least the
    last one) in steps of their own after them, so that step N is not the phase's last."""
    t = todo_count(n)
    every = max(1, math.ceil(n / t))
    done, steps = 0, []
    for i in range(1, n + 1):
        extra = []
        if i % every == 0 and done < t - 1:
            done += 1
            extra = [call("todo_complete", notes=f"todo {done}")]
        steps.append(write_step(i, latency_ms, *extra))
    steps += [{"tool_calls": [call("todo_complete", notes=f"todo {k}")], "latency_ms": latency_ms}
              for k in range(done + 1, t + 1)]
    return steps


class SwitchbackJob(Contender):
    key = "switchback"
    title = "switchback AgentJob"
    timeouts = "model activity heartbeat 3 s (llm.heartbeat_timeout_seconds)"

    def script(self, n: int, latency_ms: int) -> list[dict]:
        steps = bootstrap("Write the sections", todo_count(n)) + tactical_steps(n, latency_ms)
        steps += finish("all sections written", ["work/part_001.md"])
        steps = [{**s, "latency_ms": latency_ms} for s in steps]
        return steps + [{"content": f"Summary {k}: sections so far are in work/.",
                         "for_call": "summary", "latency_ms": latency_ms} for k in range(20)]

    def model_calls(self, n: int) -> int:
        return BOOTSTRAP + len(tactical_steps(n, 0)) + FINISH

    def worker_argv(self, task_queue: str) -> list[str]:
        return [sys.executable, str(ROOT / "worker.py")]

    def worker_env(self, task_queue: str, max_activities: int, heartbeat: float | None) -> dict:
        return {"SWITCHBACK_TASK_QUEUE": task_queue,
                "SWITCHBACK_MAX_CONCURRENT_ACTIVITIES": str(max_activities),
                "SWITCHBACK_LOG_LEVEL": "WARNING",
                "TEMPORAL_NAMESPACE": os.environ.get("TEMPORAL_NAMESPACE", "default")}

    async def connect(self, address: str, default_client: Any) -> Any:
        return default_client  # the harness client: switchback's converter (S3 payloads)

    async def run_job(self, client: Any, task_queue: str, job_id: str, n: int,
                      heartbeat: float | None = None) -> None:
        from switchback.workflows.contract import JobResult

        config = self.config(n)
        if heartbeat:
            config["llm"] = {**config.get("llm", {}), "heartbeat_timeout_seconds": heartbeat}
        # the input as JSON, with the keys every version takes (switchback_before too)
        job = {"config": config, "instructions": f"Write {n} report sections.", "documents": []}
        handle = await client.start_workflow("AgentJob", job, id=job_id, task_queue=task_queue,
                                             result_type=JobResult)
        result = await handle.result()
        if result.status != "completed":
            raise RuntimeError(f"switchback job {job_id} ended {result.status}")

    def config(self, n: int) -> dict:
        return {"extends": "defaults",
                "limits": {"max_steps_per_phase": n + 50}}

    def model_call_step(self, event: Any, nth: int) -> int | None:
        if not is_model_call(event):
            return None
        label = event.user_metadata.summary.data.decode().strip('"')
        if label.startswith("phase 2 tactical step "):
            return int(label.rsplit(" ", 1)[1])
        return 0  # a model call of another phase: it ends the step before it


class SwitchbackBefore(SwitchbackJob):
    """The same job on switchback as another commit has it: the worker.py of the checkout
    that BENCH_SWITCHBACK_BEFORE names (`git worktree add /tmp/before <commit>`), its
    modules first on the path, the same venv. Beside `switchback` in one run, the before and
    after of a change (docs/benchmarks.md, "Before and after the 0.x baseline")."""

    key = "switchback_before"
    title = "switchback AgentJob (before)"

    def checkout(self) -> Path | None:
        raw = os.environ.get("BENCH_SWITCHBACK_BEFORE", "")
        return Path(raw).resolve() if raw and (Path(raw) / "worker.py").is_file() else None

    def missing(self) -> str | None:
        return None if self.checkout() else (
            "BENCH_SWITCHBACK_BEFORE=<a checkout of the commit to compare> not set")

    def worker_argv(self, task_queue: str) -> list[str]:
        return [sys.executable, str(self.checkout() / "worker.py")]  # type: ignore[operator]

    def worker_env(self, task_queue: str, max_activities: int, heartbeat: float | None) -> dict:
        return {**super().worker_env(task_queue, max_activities, heartbeat),
                "PYTHONPATH": str(self.checkout())}


class SwitchbackReact(SwitchbackJob):
    """switchback's AgentJob with `strategy: react` (workflows/strategies/react.py): one
    conversation, no todo ritual, so N + 1 model calls like the peers (N writes, then
    `job_complete`). The same worker and orchestration as `switchback`: the difference
    between the two columns is what the phase ritual costs a short job."""

    key = "switchback_react"
    title = "switchback react"

    def script(self, n: int, latency_ms: int) -> list[dict]:
        done = call("job_complete", summary="all sections written",
                    deliverables=["work/part_001.md"], confidence=0.9)
        return ([write_step(i, latency_ms) for i in range(1, n + 1)]
                + [{"tool_calls": [done], "latency_ms": latency_ms}])

    def model_calls(self, n: int) -> int:
        return n + 1

    def config(self, n: int) -> dict:
        return {**super().config(n), "strategy": "react"}

    def model_call_step(self, event: Any, nth: int) -> int | None:
        return nth if is_model_call(event) else None



class SwitchbackLocal(SwitchbackJob):
    """switchback's AgentJob, the same job, opted in to a fast endpoint's model calls run as
    local activities (`llm.local_calls_in_a_row: 3`, workflows/model_steps.py): three calls
    in four run in the workflow task that asked for them, the fourth through the server."""

    key = "switchback_local"
    title = "switchback local calls"
    timeouts = LOCAL_TIMEOUTS

    def config(self, n: int) -> dict:
        return {**super().config(n), "llm": {"local_calls_in_a_row": 3}}


class SwitchbackReactLocal(SwitchbackReact):
    """The react job opted in to local model calls, as `SwitchbackLocal`."""

    key = "switchback_react_local"
    title = "switchback react local calls"
    timeouts = LOCAL_TIMEOUTS

    def config(self, n: int) -> dict:
        return {**super().config(n), "llm": {"local_calls_in_a_row": 3}}


def is_model_call(event: Any) -> bool:
    """Is `event` a model call: `call_model` scheduled, or a local activity's marker of it (a
    fast endpoint's calls run locally, workflows/model_steps.py)?"""
    if event.HasField("activity_task_scheduled_event_attributes"):
        return event.activity_task_scheduled_event_attributes.activity_type.name == "call_model"
    data = local_activity_data(event)
    return data is not None and data.get("activity_type") == "call_model"
