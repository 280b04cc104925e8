"""switchback CLI: start jobs, wait for them, look at their workspace.

    python starter.py start [--config creator] [--instructions FILE] [--document PATH ...]
                            [--id JOB_ID] [--wait [--show-workspace]]
    python starter.py result JOB_ID          wait for the job and print its outcome
    python starter.py workspace JOB_ID       list the job's workspace files (S3)
    python starter.py cat JOB_ID PATH        print one workspace file

Connects with Temporal's standard client configuration (TEMPORAL_ADDRESS, ...)
and S3's (AWS_ENDPOINT_URL_S3, ...), like the worker. Exit status: 0 when the job
completed, 1 when it failed, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from pathlib import Path

from temporalio.client import Client, WorkflowFailureError

from activities.s3_store import S3Store
from worker import connect
from workflows.types import TASK_QUEUE, WORKFLOW_TYPE, JobInput, JobResult

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
    if not a.wait:
        return 0
    status = await result(client, job_id)
    if a.show_workspace:
        await workspace(job_id)
    return status


async def result(client: Client, job_id: str) -> int:
    handle = client.get_workflow_handle(job_id, result_type=JobResult)
    try:
        res: JobResult = await handle.result()
    except WorkflowFailureError as e:
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
    s.add_argument("--show-workspace", action="store_true",
                   help="with --wait: list the workspace at the end")
    r = sub.add_parser("result", help="wait for a job and print its outcome")
    r.add_argument("job_id")
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
    client = await connect()
    if a.cmd == "start":
        return await start(client, a)
    return await result(client, a.job_id)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
