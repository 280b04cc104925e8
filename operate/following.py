"""Watching a job from the CLI: `follow` (a line per model step until it ends) and
`result` (its outcome in a few lines), for `starter.py start --follow/--wait`, `follow`,
`result` and `rerun --follow`."""

from __future__ import annotations

import asyncio

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError
from temporalio.service import RPCError

from switchback.operate.client import ui_link
from switchback.workflows.contract import JobResult, JobState


async def follow(client: Client, job_id: str, interval: float = 0.3) -> int:
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
                          f"    python starter.py approve {job_id} {ap.call_id} "
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

