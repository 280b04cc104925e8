"""The job commands of starter.py: start, status, list, steer (follow and result: following.py).

Each takes a connected client and the parsed arguments and returns the exit status:
0 when the job completed (or the request was taken), 1 when it ended otherwise.
User errors raise `operate.CliError`, which starter.py prints as one line.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from temporalio.client import (
    Client,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError

from switchback.operate import CliError, metadata, steering
from switchback.operate.client import ui_link
from switchback.operate.following import follow, result
from switchback.operate.job_views import job_rows
from switchback.workflows.contract import (
    WORKFLOW_TYPE,
    InputError,
    JobInput,
    JobResult,
    JobState,
    inputs,
)


def config_arg(value: str) -> str | dict[str, Any]:
    """A config name, or an inline JSON object."""
    if not value.strip().startswith(("{", "[", '"')):
        return value
    try:
        data = json.loads(value)
    except json.JSONDecodeError as e:
        raise CliError(f"--config: not valid JSON ({e.msg} at char {e.pos})", 2) from None
    if not isinstance(data, dict):
        raise CliError("--config: an inline config must be a JSON object", 2)
    return data


def read_file_arg(flag: str, path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise CliError(f"{flag} {path}: {e.strerror or e}", 2) from None
    except UnicodeDecodeError:
        raise CliError(f"{flag} {path}: not UTF-8 text", 2) from None


def document_args(paths: list[str], max_bytes: int | None = None) -> list[dict] | None:
    """Each --document FILE as inline content: the worker reads no path a client names
    (large inputs go to S3 through the data converter's external storage)."""
    docs = []
    for d in paths:
        p = Path(d)
        if p.name.startswith(".") or not p.name:
            raise CliError(f"--document {d}: a document's file name may not start with '.'", 2)
        try:
            data = p.read_bytes()
        except OSError as e:
            raise CliError(f"--document {d}: {e.strerror or e}", 2) from None
        if max_bytes is not None and len(data) > max_bytes:
            raise CliError(f"--document {d}: {len(data)} bytes, more than the config's "
                           f"limits.max_file_bytes ({max_bytes})", 2)
        docs.append({"name": p.name, "base64": base64.b64encode(data).decode("ascii")})
    return docs or None


def check_config(config: str | dict[str, Any], flag: str = "--config"):
    """What the worker would refuse, said before anything starts: the schema, config
    names, paths in configs/, the strategy - against the configs here (./configs or
    SWITCHBACK_CONFIG_DIR over the packaged ones, as a worker started here would read them);
    what only the worker's environment decides (endpoints, buckets) the worker checks. With
    no configs folder of its own here, a name the package does not ship may be one of a
    remote worker's: not checked (None), the worker says."""
    from switchback.activities.config_files import ConfigError, load_config
    from switchback.activities.config_roots import PACKAGED, configs_dir
    from switchback.workflows.strategies import strategy_class

    if isinstance(config, str) and configs_dir() == PACKAGED and config != "defaults" \
            and not (PACKAGED / config / "config.yaml").is_file():
        return None
    try:
        cfg = load_config(config, policy=False)
        strategy_class(cfg.config.strategy)
    except ConfigError as e:
        raise CliError(f"{flag}: {e}", 2) from None
    except KeyError as e:
        raise CliError(f"{flag}: config '{cfg.name}': {e.args[0]}", 2) from None
    return cfg


def job_input(a: argparse.Namespace) -> JobInput:
    """The job `start` would send, checked like the workflow checks it (the same
    functions): one line per problem, before anything starts."""
    config = config_arg(a.config)
    cfg = check_config(config)
    raw: dict[str, Any] = {"config": config}
    if a.instructions:
        raw["instructions"] = read_file_arg("--instructions", a.instructions)
    docs = document_args(a.document, cfg.config.limits.max_file_bytes if cfg else None)
    if docs is not None:
        raw["documents"] = docs
    try:
        job = inputs.job_input(raw)
    except InputError as e:
        raise CliError(str(e), 2) from None
    bad_id = inputs.job_id_problem(a.id) if a.id else None
    if bad_id:
        raise CliError(f"--id: {bad_id}", 2)
    if cfg is not None and not (job.instructions or cfg.instructions):
        raise CliError(f"config '{cfg.name}' has no instructions.md: give --instructions FILE",
                       2)
    return job


async def start(client: Client, a: argparse.Namespace, job: JobInput) -> int:
    job_id = a.id or f"job-{uuid.uuid4().hex[:8]}"
    cfg = check_config(job.config)  # what the web UI's summary and details say
    await client.start_workflow(WORKFLOW_TYPE, job, id=job_id, task_queue=a.task_queue,
                                result_type=JobResult,
                                static_summary=metadata.static_summary(job, cfg),
                                static_details=metadata.static_details(job, cfg))
    print(f"started {job_id}\n  web UI: {ui_link(client, job_id)}", flush=True)
    if a.follow:
        return await follow(client, job_id, from_start=True)
    if not a.wait:
        return 0
    status = await result(client, job_id)
    if a.show_workspace:
        from switchback.operate.inspect import workspace

        await workspace(client, job_id)
    return status


async def status(client: Client, job_id: str, wait: float = 5.0) -> int:
    """The live state (the `state` query); with no worker to answer it, what the job
    persisted (its memo, the same text as the web UI's Memo tab)."""
    handle = client.get_workflow_handle(job_id)
    try:
        st = await asyncio.wait_for(handle.query("state", result_type=JobState), wait)
    except (TimeoutError, RPCError, WorkflowQueryFailedError) as e:
        desc = await handle.describe()
        found = await metadata.persisted(desc)
        if found is None:
            raise CliError(f"no worker answered the `state` query of {job_id} "
                           f"({' '.join(str(e).split())[:160] or 'timed out'}) and it "
                           "persisted no progress") from None
        progress, details = found
        print(f"{job_id}: {desc.status.name if desc.status else '?'} - no worker answered "
              f"the `state` query; persisted progress as of {progress.get('as_of')}:\n")
        print(details)
        return 0
    print(st.model_dump_json(indent=2))
    return 0


async def list_jobs(client: Client, query: str) -> int:
    print(f"{'job id':<26} {'status':<16} {'phase':<13} {'todos':>6} {'tokens':>9} {'cost':>8}"
          "  current todo / last error")
    for r in await job_rows(client, query, limit=10_000):
        phase = f"{r['phase'] or '-'} #{r['phase_number'] or '-'}"
        cost = r["cost"]
        note = r["last_error"] if r["status"] == "failed" else r["todo"]
        print(f"{r['id']:<26} {r['status']:<16} {phase:<13} {r['todos'] or '-':>6} "
              f"{r['tokens']:>9} {f'${cost:.4f}' if cost is not None else '-':>8}  "
              f"{(note or '')[:60]}")
    return 0


async def rewind(client: Client, job_id: str, issue: str, restore_phase: int | None) -> int:
    try:
        print(await steering.rewind(client, job_id, issue, restore_phase))
    except InputError as e:
        raise CliError(str(e), 2) from None
    return 0


async def signal(client: Client, job_id: str, name: str) -> int:
    print(await steering.pause(client, job_id, resume=name == "resume"))
    return 0


async def approve(client: Client, a: argparse.Namespace) -> int:
    try:
        print(await steering.approve(client, a.job_id, a.call_id, not a.deny, a.note or ""))
    except steering.Refused as e:
        print(f"rejected: {e}", file=sys.stderr)
        return 1
    return 0


async def instruct(client: Client, a: argparse.Namespace) -> int:
    """The job's next instruction (a follow-up turn), through the `instruct` update: the
    job says whether it took it."""
    if (a.instruction is None) == (a.file is None):
        raise CliError("instruct: give the instruction as an argument or with --file", 2)
    text = a.instruction if a.file is None else read_file_arg("--file", a.file)
    try:
        answer = await steering.instruct(client, a.job_id, text)
    except InputError as e:
        raise CliError(str(e), 2) from None
    except steering.Refused as e:
        print(f"refused: {e}", file=sys.stderr)
        return 1
    print(f"{a.job_id}: {answer}")
    return 0


async def cancel(client: Client, job_id: str) -> int:
    print(await steering.cancel(client, job_id))
    return 0
