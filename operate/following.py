"""Watching a job from the CLI: `follow` (the job's live stream until it ends) and `result`
(its outcome in a few lines), for `starter.py start --follow/--wait`, `follow`, `result` and
`rerun --follow`.

`follow` prints the live stream (docs/live.md): the model's text as it arrives, a line per
tool call and result, phase and todo changes, refusals, breakers, approvals waiting, the end
(operate/live_printer.py). It reads from the job's current offset, or with `--from-start`
from the oldest event the job retains; a lost connection or a worker restart is resumed from
the last event read. A job from before the live stream is followed as before: a line per
model step from the `state` query (`follow_steps`).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowQueryFailedError,
)
from temporalio.contrib.workflow_streams import WorkflowStreamClient
from temporalio.service import RPCError, RPCStatusCode

from switchback.operate import command_name
from switchback.operate.client import ui_link
from switchback.operate.live import StreamUnreadable, job_events
from switchback.operate.live_printer import LivePrinter
from switchback.workflows.contract import JobResult, JobState


async def follow(client: Client, job_id: str, from_start: bool = False,
                 out: TextIO | None = None) -> int:
    """The job's live stream until it ends, then its outcome; exit status 0 if completed."""
    out = out or sys.stdout
    try:
        start = 0 if from_start else await WorkflowStreamClient.create(
            client, job_id).get_offset()
    except WorkflowQueryFailedError:  # no stream: a job on a worker from before it
        return await follow_steps(client, job_id)
    except RPCError as e:  # no worker answers now: from the oldest event kept, once one does
        if e.status == RPCStatusCode.NOT_FOUND:
            raise
        print(f"  (no worker answers yet: {e.message}; waiting for one)", file=out, flush=True)
        start = 0
    printer = LivePrinter(out, job_id)
    try:
        async for _, ev in job_events(client, job_id, from_offset=start):
            printer.add(ev)
    except StreamUnreadable as e:
        printer.close()
        print(f"  (the live stream stops here: {e})", file=out, flush=True)
    printer.close()
    return await result(client, job_id)


async def follow_steps(client: Client, job_id: str, interval: float = 0.3) -> int:
    """A line per model step with the phase's todo progress bar, until the job ends."""
    handle = client.get_workflow_handle(job_id)
    last_step, last_status = 0, ""
    shown_approvals: set[str] = set()
    while True:
        desc = await handle.describe()
        try:
            st = await handle.query("state", result_type=JobState)
        except RPCError:
            st = None
        if st is not None:
            if st.recent and st.recent[0].step > last_step + 1:
                print(f"  ... {st.recent[0].step - last_step - 1} earlier steps", flush=True)
            for line in st.recent:
                if line.step > last_step:
                    last_step = line.step
                    print(f"[phase {line.phase} {line.kind:<9}] step {line.step:>4} {line.bar} "
                          f"{line.progress:>5}  tokens {line.tokens:>8}  {line.calls[:70]}",
                          flush=True)
            if st.status != last_status:
                last_status = st.status
                print(f"  status: {st.status}", flush=True)
            for ap in st.pending_approvals:
                if ap.call_id not in shown_approvals:
                    shown_approvals.add(ap.call_id)
                    print(f"  waiting for approval: {ap.tool} {ap.arguments[:120]}\n"
                          f"    {command_name()} approve {job_id} {ap.call_id} "
                          "[--deny] [--note ...]", flush=True)
        if desc.status != WorkflowExecutionStatus.RUNNING:
            return await result(client, job_id)
        await asyncio.sleep(interval)


async def result(client: Client, job_id: str) -> int:
    handle = client.get_workflow_handle(job_id, result_type=JobResult)
    try:
        res: JobResult = await handle.result()
    except WorkflowFailureError as e:
        if (await handle.describe()).status == WorkflowExecutionStatus.CANCELED:
            print(f"{job_id}: CANCELLED\n  web UI: {ui_link(client, job_id)}")
            return 1
        cause: BaseException | None = e.cause
        while cause is not None and getattr(cause, "cause", None) is not None:
            cause = cause.cause  # type: ignore[attr-defined]
        print(f"{job_id}: FAILED - {cause}")
        print(f"  web UI: {ui_link(client, job_id)}")
        return 1
    print(f"{job_id}: {res.status.upper()} after {res.phases} phases, {res.steps} model steps, "
          f"{res.tool_calls} tool calls, {res.tokens_in} tokens in / {res.tokens_out} out")
    print(f"  summary: {res.summary}")
    if res.deliverables:
        print(f"  deliverables: {', '.join(res.deliverables)}")
    if res.confidence is not None:
        print(f"  confidence: {res.confidence}")
    print(f"  web UI: {ui_link(client, job_id)}")
    return 0 if res.status == "completed" else 1

