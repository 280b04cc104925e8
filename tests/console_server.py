"""The console (operate/console/) served in the test's own event loop on a free port:
`console(client)` yields its URL and stops it on exit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from temporalio.client import Client

from switchback.devstack.processes import free_port
from switchback.operate.console.app import make_app


@asynccontextmanager
async def console(client: Client, token: str | None = None) -> AsyncIterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(make_app(client, token), host="127.0.0.1",
                                           port=port, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # raises why it did not start
        await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
