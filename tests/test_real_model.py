"""A real model completes a real job: the `notes` job (configs/notes/) on the local 1.5B model
under llama-server, with the default strategy, end to end, checked by the job's own checker.

Marked `realmodel`: it runs with `pytest -m realmodel` when `make real-model` has installed
the model (10-40 minutes on 2 cores), and is skipped otherwise, so `make test` and CI stay fast.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import pytest

from switchback.devstack.local_model_spec import (
    DEFAULT_MODEL,
    MODELS,
    InstallError,
    Layout,
    LlamaServer,
    cache_dir,
    check_installed,
)
from switchback.devstack.real_stack import llama_port
from switchback.operate.evaluate import CONFIGS, Run, checker_for, download, measure, run_checker
from switchback.workflows.contract import JobInput, JobResult
from tests.conftest import running_worker

pytestmark = pytest.mark.realmodel


def installed() -> str | None:
    try:
        check_installed(Layout(cache_dir()), MODELS[DEFAULT_MODEL])
    except InstallError as e:
        return str(e)
    return None


@pytest.fixture
def wanted(request) -> None:
    """Skips (before any server starts) unless asked for with -m realmodel and installed."""
    if "realmodel" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("a real-model job takes 10-40 minutes: run it with `pytest -m realmodel`")
    missing = installed()
    if missing:
        pytest.skip(missing)


@pytest.mark.timeout(4 * 3600)
async def test_the_notes_job_completes_on_the_local_model(wanted, client, task_queue, s3,
                                                          monkeypatch, tmp_path):
    with LlamaServer(Layout(cache_dir()), MODELS[DEFAULT_MODEL], llama_port(),
                     tmp_path / "llama-server.log") as llama:
        monkeypatch.setenv("SWITCHBACK_LOCAL_BASE_URL", llama.base_url)
        t0 = time.monotonic()
        async with running_worker(client, task_queue):
            handle = await client.start_workflow(
                "AgentJob", JobInput(config="notes"), id=f"real-notes-{int(time.time())}",
                task_queue=task_queue, result_type=JobResult)
            result = await asyncio.wait_for(handle.result(), 4 * 3600 - 600)
        wall = time.monotonic() - t0
    run = Run(strategy="phase_alternation", n=1, job_id=handle.id, status=result.status,
              phases=result.phases, tool_calls=result.tool_calls, wall_seconds=round(wall))
    with tempfile.TemporaryDirectory() as tmp:
        measure(run, await download(s3, ("switchback", handle.id), Path(tmp)), (0.0, 0.0))
        run.success, run.check = run_checker(checker_for("notes", None), Path(tmp))
    print(f"\n{run}")
    assert result.status == "completed", result.summary
    assert run.success, run.check
    assert (CONFIGS / "notes" / "check.py").is_file()
