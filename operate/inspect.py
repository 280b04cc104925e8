"""The inspecting commands of starter.py: a job's workspace and files, replay of its
histories, a rerun from a phase, and its report. Exit status as in commands.py."""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path

from temporalio.client import Client, WorkflowHistory

from switchback.operate import CliError, command_name
from switchback.operate.client import job_workspace, ui_link
from switchback.workflows.contract import layout


async def workspace(client: Client | None, job_id: str) -> int:
    from switchback.activities.storage.s3 import S3Store

    bucket, prefix = await job_workspace(client, job_id)
    s3 = S3Store()
    try:
        objs = await s3.list(bucket, f"{prefix}/")
    finally:
        s3.close()
    if not objs:
        raise CliError(f"job '{job_id}' has no workspace in s3://{bucket}/{prefix}/")
    print(f"workspace s3://{bucket}/{prefix}/")
    for o in objs:
        rel = o.key[len(prefix) + 1:]
        if not layout.is_internal(rel):
            print(f"  {rel:<40} {o.size:>8} bytes")
    return 0


async def cat(client: Client | None, job_id: str, path: str) -> int:
    from switchback.activities.storage.s3 import S3Store

    bucket, prefix = await job_workspace(client, job_id)
    s3 = S3Store()
    try:
        data = await s3.get(bucket, f"{prefix}/{path}")
    finally:
        s3.close()
    if data is None:
        raise CliError(f"job '{job_id}' has no file '{path}' in s3://{bucket}/{prefix}/ "
                       f"({command_name()} workspace {job_id} lists its files)")
    sys.stdout.write(data.decode("utf-8", errors="replace"))
    return 0


async def replay(client: Client, a: argparse.Namespace) -> int:
    from switchback.operate.replay import chain, replay

    if a.history:
        try:
            text = Path(a.history).read_text()
        except OSError as e:
            raise CliError(f"--history {a.history}: {e.strerror or e}", 2) from None
        histories = [WorkflowHistory.from_json(a.job_id or Path(a.history).stem, text)]
    elif a.job_id:
        histories = await chain(client, a.job_id)
    else:
        raise CliError("give a job id or --history FILE", 2)
    reports = await replay(histories, client.data_converter)
    for r in reports:
        verdict = "OK" if r.ok else "FAILED"
        print(f"{r.workflow_id} run {r.run_id or '?'}: {verdict} ({r.events} events)")
        if r.detail:
            print(f"  {r.detail}")
    return 0 if all(r.ok for r in reports) else 1


async def rerun(client: Client, a: argparse.Namespace) -> int:
    from switchback.activities.storage.s3 import S3Store
    from switchback.operate.following import follow
    from switchback.operate.rerun import rerun

    new_id = a.id or f"{a.job_id}-rerun-{uuid.uuid4().hex[:6]}"
    bucket, _ = await job_workspace(client, a.job_id)
    s3 = S3Store()
    try:
        await rerun(client, s3, bucket, a.job_id, new_id, a.from_phase, a.task_queue,
                    a.stop_at_divergence)
    except LookupError as e:
        raise CliError(f"cannot rerun: {e}", 2) from None
    finally:
        s3.close()
    print(f"started {new_id} from phase {a.from_phase} of {a.job_id}\n"
          f"  web UI: {ui_link(client, new_id)}", flush=True)
    return await follow(client, new_id, from_start=True) if a.follow else 0


async def report(client: Client, a: argparse.Namespace) -> int:
    from switchback.activities.storage.s3 import S3Store
    from switchback.operate.report import build_report  # matplotlib loads for this command only

    s3 = S3Store()
    try:
        png, md = await build_report(client, s3, None, a.job_id, a.out)
    except LookupError as e:
        raise CliError(str(e)) from None
    finally:
        s3.close()
    print(f"report: {md}\nchart:  {png}")
    return 0
