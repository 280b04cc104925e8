"""switchback CLI: start, follow, steer and inspect jobs.

    python starter.py start [--config creator] [--instructions FILE] [--document PATH ...]
                            [--id JOB_ID] [--follow | --wait [--show-workspace]]
    python starter.py follow JOB_ID          live line per step, todo progress bar, exit status
    python starter.py status JOB_ID          the live state (the `state` query)
    python starter.py list [--query Q]       jobs with phase, status and tokens
    python starter.py rewind JOB_ID "ISSUE"  signal: archive the todos, re-plan around ISSUE
    python starter.py pause JOB_ID | resume JOB_ID
    python starter.py approve JOB_ID CALL_ID [--deny] [--note TEXT]
    python starter.py cancel JOB_ID
    python starter.py pipeline [--id ID] [--max-concurrent N] [--creator-config C]
                               [--validator-config V]   creator + a validator per requirement
    python starter.py replay JOB_ID | --history FILE   replay against the current code
    python starter.py rerun JOB_ID [--from-phase N] [--id NEW] [--stop-at-divergence]
    python starter.py result JOB_ID          wait for the job and print its outcome
    python starter.py workspace JOB_ID       list the job's workspace files (S3)
    python starter.py cat JOB_ID PATH        print one workspace file
    python starter.py report JOB_ID [--out DIR]   chart (PNG) + summary (markdown) of a job

Connects with Temporal's standard client configuration (TEMPORAL_ADDRESS, ...)
and S3's (AWS_ENDPOINT_URL_S3, ...), like the worker. Exit status: 0 when the job
completed, 1 when it ended otherwise (failed, cancelled, stuck, budget exhausted),
2 on a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from pathlib import Path

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
)
from temporalio.service import RPCError

import telemetry
from activities.storage.s3 import S3Store
from worker import connect
from workflows.contract import (
    PIPELINE_TYPE,
    SA_PHASE,
    SA_PHASE_NUMBER,
    SA_STATUS,
    SA_TOKENS,
    TASK_QUEUE,
    WORKFLOW_TYPE,
    ApproveRequest,
    JobInput,
    JobResult,
    JobState,
    PipelineInput,
    PipelineResult,
)

UI = os.environ.get("SWITCHBACK_UI_URL", "http://127.0.0.1:8233")
BUCKET = os.environ.get("SWITCHBACK_BUCKET", "switchback")


def ui_link(client: Client, job_id: str) -> str:
    return f"{UI}/namespaces/{client.namespace}/workflows/{job_id}"


async def start(client: Client, a: argparse.Namespace) -> int:
    config: str | dict = a.config
    if a.config.strip().startswith("{"):
        config = json.loads(a.config)
    job = JobInput(config=config,
                   instructions=Path(a.instructions).read_text() if a.instructions else None,
                   documents=[str(Path(d).resolve()) for d in a.document] or None)
    job_id = a.id or f"job-{uuid.uuid4().hex[:8]}"
    await client.start_workflow(WORKFLOW_TYPE, job, id=job_id,
                                task_queue=a.task_queue, result_type=JobResult)
    print(f"started {job_id}\n  web UI: {ui_link(client, job_id)}", flush=True)
    if a.follow:
        return await follow(client, job_id)
    if not a.wait:
        return 0
    status = await result(client, job_id)
    if a.show_workspace:
        await workspace(job_id)
    return status


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


async def status(client: Client, job_id: str) -> int:
    st = await client.get_workflow_handle(job_id).query("state", result_type=JobState)
    print(st.model_dump_json(indent=2))
    return 0


async def list_jobs(client: Client, query: str) -> int:
    print(f"{'job id':<28} {'status':<16} {'phase':<14} {'tokens':>9}  started")
    async for wf in client.list_workflows(query):
        sa = wf.typed_search_attributes
        phase = f"{sa.get(SA_PHASE) or '-'} #{sa.get(SA_PHASE_NUMBER) or '-'}"
        state = sa.get(SA_STATUS) or (wf.status.name.lower() if wf.status else "-")
        print(f"{wf.id:<28} {state:<16} {phase:<14} {sa.get(SA_TOKENS) or 0:>9}  "
              f"{wf.start_time:%F %T}")
    return 0


async def signal(client: Client, job_id: str, name: str, *args: str) -> int:
    await client.get_workflow_handle(job_id).signal(name, *args)
    print(f"sent {name} to {job_id}")
    return 0


async def approve(client: Client, a: argparse.Namespace) -> int:
    req = ApproveRequest(call_id=a.call_id, approved=not a.deny, note=a.note or "")
    try:
        answer = await client.get_workflow_handle(a.job_id).execute_update(
            "approve", req, result_type=str)
    except WorkflowUpdateFailedError as e:
        print(f"rejected: {e.cause}", file=sys.stderr)
        return 1
    print(answer)
    return 0


async def pipeline(client: Client, a: argparse.Namespace) -> int:
    pid = a.id or f"pipeline-{uuid.uuid4().hex[:6]}"
    inp = PipelineInput(creator_config=_config_arg(a.creator_config),
                        validator_config=_config_arg(a.validator_config),
                        max_concurrent=a.max_concurrent,
                        documents=[str(Path(d).resolve()) for d in a.document] or None)
    handle = await client.start_workflow(PIPELINE_TYPE, inp, id=pid, task_queue=a.task_queue,
                                         result_type=PipelineResult)
    print(f"started pipeline {pid}\n  web UI: {ui_link(client, pid)}", flush=True)
    seen: tuple = ()
    while (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
        st = await handle.query("state")
        if (st["stage"], st["done"]) != seen:
            seen = (st["stage"], st["done"])
            print(f"  {st['stage']:<10} {st['done']}/{st['requirements']} requirements "
                  f"validated, running: {', '.join(st['running']) or '-'}", flush=True)
        await asyncio.sleep(1.0)
    try:
        res = await handle.result()
    except WorkflowFailureError as e:
        print(f"{pid}: FAILED - {e.cause}")
        return 1
    print(f"{pid}: {res.status.upper()}: {res.requirements} requirements from "
          f"{res.creator_job}; decisions {res.decisions}; failed {res.failed or 'none'}")
    print(f"  s3://{BUCKET}/{pid}/output/pipeline.json")
    return 0 if res.status == "completed" else 1


def _config_arg(value: str) -> str | dict:
    return json.loads(value) if value.strip().startswith("{") else value


async def replay_cmd(client: Client, a: argparse.Namespace) -> int:
    from temporalio.client import WorkflowHistory

    from operate.replay import chain, replay

    if a.history:
        text = Path(a.history).read_text()
        histories = [WorkflowHistory.from_json(a.job_id or Path(a.history).stem, text)]
    elif a.job_id:
        histories = await chain(client, a.job_id)
    else:
        print("give a job id or --history FILE", file=sys.stderr)
        return 2
    reports = await replay(histories, client.data_converter)
    for r in reports:
        verdict = "OK" if r.ok else "FAILED"
        print(f"{r.workflow_id} run {r.run_id or '?'}: {verdict} ({r.events} events)")
        if r.detail:
            print(f"  {r.detail}")
    return 0 if all(r.ok for r in reports) else 1


async def rerun_cmd(client: Client, a: argparse.Namespace) -> int:
    from operate.rerun import rerun

    new_id = a.id or f"{a.job_id}-rerun-{uuid.uuid4().hex[:6]}"
    s3 = S3Store()
    try:
        await rerun(client, s3, BUCKET, a.job_id, new_id, a.from_phase, a.task_queue,
                    a.stop_at_divergence)
    except LookupError as e:
        print(f"cannot rerun: {e}", file=sys.stderr)
        return 2
    finally:
        s3.close()
    print(f"started {new_id} from phase {a.from_phase} of {a.job_id}\n"
          f"  web UI: {ui_link(client, new_id)}", flush=True)
    return await follow(client, new_id) if a.follow else 0


async def cancel(client: Client, job_id: str) -> int:
    await client.get_workflow_handle(job_id).cancel()
    print(f"cancel requested for {job_id}")
    return 0


async def result(client: Client, job_id: str) -> int:
    handle = client.get_workflow_handle(job_id, result_type=JobResult)
    try:
        res: JobResult = await handle.result()
    except WorkflowFailureError as e:
        if desc_status := (await handle.describe()).status:
            if desc_status == WorkflowExecutionStatus.CANCELED:
                print(f"{job_id}: CANCELLED\n  web UI: {ui_link(client, job_id)}")
                return 1
        cause = e.cause
        while getattr(cause, "cause", None) is not None:
            cause = cause.cause
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


async def workspace(job_id: str) -> int:
    s3 = S3Store()
    try:
        objs = await s3.list(BUCKET, f"{job_id}/")
    finally:
        s3.close()
    print(f"workspace s3://{BUCKET}/{job_id}/")
    for o in objs:
        rel = o.key[len(job_id) + 1:]
        if not rel.startswith(".switchback/"):
            print(f"  {rel:<40} {o.size:>8} bytes")
    return 0


async def cat(job_id: str, path: str) -> int:
    s3 = S3Store()
    try:
        data = await s3.get(BUCKET, f"{job_id}/{path}")
    finally:
        s3.close()
    if data is None:
        print(f"no such file: {path}", file=sys.stderr)
        return 1
    sys.stdout.write(data.decode("utf-8", errors="replace"))
    return 0


async def report_cmd(client: Client, a: argparse.Namespace) -> int:
    from operate.report import build_report  # matplotlib loads for this command only

    s3 = S3Store()
    try:
        png, md = await build_report(client, s3, None, a.job_id, a.out)
    except LookupError as e:
        print(e, file=sys.stderr)
        return 1
    finally:
        s3.close()
    print(f"report: {md}\nchart:  {png}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="starter.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start", help="start a job")
    s.add_argument("--config", default="creator", help="config name or inline JSON object")
    s.add_argument("--instructions", help="markdown file with the job's instructions")
    s.add_argument("--document", action="append", default=[], help="file for documents/")
    s.add_argument("--id", help="job id (default: job-<random>)")
    s.add_argument("--task-queue", default=os.environ.get("SWITCHBACK_TASK_QUEUE", TASK_QUEUE))
    s.add_argument("--wait", action="store_true", help="wait for the outcome")
    s.add_argument("--follow", action="store_true", help="follow the job live until it ends")
    s.add_argument("--show-workspace", action="store_true",
                   help="with --wait: list the workspace at the end")
    for name, text in (("result", "wait for a job and print its outcome"),
                       ("follow", "follow a job live until it ends"),
                       ("status", "print the live state of a job"), ("pause", "pause a job"),
                       ("resume", "resume a paused job"), ("cancel", "cancel a job")):
        sub.add_parser(name, help=text).add_argument("job_id")
    rw = sub.add_parser("rewind", help="make a job re-plan around an issue")
    rw.add_argument("job_id")
    rw.add_argument("issue")
    ap = sub.add_parser("approve", help="approve (or --deny) a tool call waiting for approval")
    ap.add_argument("job_id")
    ap.add_argument("call_id")
    ap.add_argument("--deny", action="store_true")
    ap.add_argument("--note", default="")
    pl = sub.add_parser("pipeline", help="run the document pipeline (creator + validators)")
    pl.add_argument("--id")
    pl.add_argument("--creator-config", default="creator")
    pl.add_argument("--validator-config", default="validator")
    pl.add_argument("--max-concurrent", type=int, default=3)
    pl.add_argument("--document", action="append", default=[])
    pl.add_argument("--task-queue", default=os.environ.get("SWITCHBACK_TASK_QUEUE", TASK_QUEUE))
    rp = sub.add_parser("replay", help="replay a job's histories against the current code")
    rp.add_argument("job_id", nargs="?")
    rp.add_argument("--history", help="a file from `temporal workflow show --output json`")
    rr = sub.add_parser("rerun", help="re-run a job from a phase, replaying its model answers")
    rr.add_argument("job_id")
    rr.add_argument("--from-phase", type=int, default=1)
    rr.add_argument("--id", help="new job id")
    rr.add_argument("--task-queue", default=os.environ.get("SWITCHBACK_TASK_QUEUE", TASK_QUEUE))
    rr.add_argument("--stop-at-divergence", action="store_true",
                    help="stop instead of calling the live endpoint once prompts differ")
    rr.add_argument("--follow", action="store_true")
    rpt = sub.add_parser("report", help="write a job's chart (PNG) and summary (markdown)")
    rpt.add_argument("job_id")
    rpt.add_argument("--out", default="reports", help="directory for <job>.png and <job>.md")
    ls = sub.add_parser("list", help="list jobs")
    ls.add_argument("--query", default=f'WorkflowType="{WORKFLOW_TYPE}"')
    w = sub.add_parser("workspace", help="list a job's workspace")
    w.add_argument("job_id")
    c = sub.add_parser("cat", help="print a workspace file")
    c.add_argument("job_id")
    c.add_argument("path")
    return p


async def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    if a.cmd == "workspace":
        return await workspace(a.job_id)
    if a.cmd == "cat":
        return await cat(a.job_id, a.path)
    client = await connect(S3Store())
    if a.cmd == "start":
        return await start(client, a)
    if a.cmd in ("pause", "resume"):
        return await signal(client, a.job_id, a.cmd)
    if a.cmd == "rewind":
        return await signal(client, a.job_id, "rewind", a.issue)
    if a.cmd == "approve":
        return await approve(client, a)
    if a.cmd == "list":
        return await list_jobs(client, a.query)
    if a.cmd == "pipeline":
        return await pipeline(client, a)
    if a.cmd == "replay":
        return await replay_cmd(client, a)
    if a.cmd == "rerun":
        return await rerun_cmd(client, a)
    if a.cmd == "report":
        return await report_cmd(client, a)
    handlers = {"follow": follow, "status": status, "cancel": cancel, "result": result}
    return await handlers[a.cmd](client, a.job_id)


if __name__ == "__main__":
    code = asyncio.run(main())
    telemetry.shutdown()  # flush spans: os._exit below skips atexit
    sys.stdout.flush()
    # Skip interpreter finalisation: the Temporal client's core runtime threads can race
    # it ("PyGILState_Release ... finalizing") and turn a clean exit into an abort.
    os._exit(code)
