"""`switchback pipeline`: run the DocumentPipeline (a creator job, then a validator job per
requirement) and follow it. Registered under the entry point group `switchback.commands`;
the parser part imports nothing heavy (it runs for every CLI start)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from switchback.apps import Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--id", help="the pipeline's workflow id (default: pipeline-<random>)")
    p.add_argument("--creator-config", default="creator",
                   help="the creator job's config: a name or inline JSON (default creator)")
    p.add_argument("--validator-config", default="validator",
                   help="each validator job's config (default validator)")
    p.add_argument("--max-concurrent", type=int, default=3,
                   help="validator jobs at a time (default 3)")
    p.add_argument("--document", action="append", default=[],
                   help="a source document for the creator (repeat for more; default: the "
                   "creator config's own)")
    p.add_argument("--task-queue", default=os.environ.get("SWITCHBACK_TASK_QUEUE", "switchback"),
                   help="the task queue (default: SWITCHBACK_TASK_QUEUE, else switchback)")


async def run(client: Any, a: argparse.Namespace) -> int:
    import asyncio
    import uuid

    from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

    from switchback.operate import CliError
    from switchback.operate.client import BUCKET, ui_link
    from switchback.operate.commands import check_config, config_arg, document_args
    from switchback.workflows.contract import InputError
    from switchback_documents.pipeline_contract import (
        PIPELINE_TYPE,
        PipelineResult,
        pipeline_input,
    )

    pid = a.id or f"pipeline-{uuid.uuid4().hex[:6]}"
    creator, validator = config_arg(a.creator_config), config_arg(a.validator_config)
    check_config(creator, "--creator-config")
    check_config(validator, "--validator-config")
    try:
        inp = pipeline_input({"creator_config": creator, "validator_config": validator,
                              "max_concurrent": a.max_concurrent,
                              "documents": document_args(a.document)})
    except InputError as e:
        raise CliError(str(e), 2) from None
    handle = await client.start_workflow(PIPELINE_TYPE, inp, id=pid, task_queue=a.task_queue,
                                         result_type=PipelineResult)
    print(f"started pipeline {pid}\n  web UI: {ui_link(client, pid)}", flush=True)
    seen: tuple[str, int] | None = None
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


pipeline = Command(help="run the document pipeline (creator + validators)",
                   add_arguments=add_arguments, run=run)
