"""Polling helpers for tests that act on a job while it runs."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable

from switchback.devstack.processes import venv_bin
from switchback.workflows.contract import JobState


async def wait_for_requests(model_server, job_id: str, n: int, timeout: float = 60) -> None:
    for _ in range(int(timeout * 20)):
        if len(model_server.requests(job_id)) >= n:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} made fewer than {n} model calls in {timeout}s")


async def wait_state(handle, ok: Callable[[JobState], bool], timeout: float = 60) -> JobState:
    st = None
    for _ in range(int(timeout * 10)):
        st = await handle.query("state", result_type=JobState)
        if ok(st):
            return st
        await asyncio.sleep(0.1)
    raise AssertionError(f"state never matched; last: {st}")


def temporal_cli(client, *args: str) -> str:
    """Run the `temporal` CLI binary against the test server; return stdout."""
    out = subprocess.run([venv_bin("temporal"), *args, "--address",
                          client.service_client.config.target_host], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout
