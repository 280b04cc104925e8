"""The console's web app (Starlette): pages, a JSON view of jobs, each job's live stream as
Server-Sent Events, and the controls. Stateless: every request reads Temporal (visibility,
the `state` query, the job's Workflow Stream) and sends the same signals and updates as the
CLI (operate/steering.py); nothing is stored here, so any number of consoles can run."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from switchback.operate import steering
from switchback.operate.console.auth import Guard
from switchback.operate.job_views import job_rows, job_view
from switchback.operate.live import job_events
from switchback.workflows.contract.inputs import InputError

STATIC = Path(__file__).parent / "static"


def make_app(client: Client, token: str | None = None, loopback: bool = True) -> Starlette:
    async def page(request: Request) -> Response:
        name = "job.html" if "job_id" in request.path_params else "index.html"
        return FileResponse(STATIC / name, headers={"cache-control": "no-store"})

    async def jobs(request: Request) -> Response:
        return JSONResponse(await job_rows(client, limit=200))

    async def job(request: Request) -> Response:
        return JSONResponse(await job_view(client, request.path_params["job_id"]))

    async def events(request: Request) -> Response:
        from sse_starlette.sse import EventSourceResponse

        job_id = request.path_params["job_id"]
        last = request.headers.get("last-event-id") or request.query_params.get("after")
        start = int(last) + 1 if last and last.lstrip("-").isdigit() else 0

        async def stream() -> AsyncIterator[dict[str, Any]]:
            async for offset, event in job_events(client, job_id, from_offset=max(start, 0)):
                yield {"id": str(offset), "data": json.dumps(event)}
            yield {"event": "closed", "data": "{}"}

        return EventSourceResponse(stream(), ping=15, headers={"cache-control": "no-store"})

    async def control(request: Request) -> Response:
        job_id, action = request.path_params["job_id"], request.path_params["action"]
        try:
            body = await request.json() if await request.body() else {}
            if not isinstance(body, dict):
                raise InputError("the request body must be a JSON object")
            message = await _act(client, job_id, action, body)
        except (InputError, ValueError) as e:
            return JSONResponse({"error": str(e)}, 400)
        except steering.Refused as e:
            return JSONResponse({"error": f"the job refused: {e}"}, 409)
        return JSONResponse({"message": message})

    async def not_found(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "not found"}, 404)

    async def rpc_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RPCError)
        code = 404 if exc.status == RPCStatusCode.NOT_FOUND else 502
        return JSONResponse({"error": f"Temporal: {' '.join(exc.message.split())[:300]}"}, code)

    guard = Guard(token, loopback)
    return Starlette(
        routes=[Route("/", page), Route("/jobs/{job_id}", page),
                Route("/api/jobs", jobs), Route("/api/jobs/{job_id}", job),
                Route("/api/jobs/{job_id}/events", events),
                Route("/api/jobs/{job_id}/{action}", control, methods=["POST"]),
                Mount("/static", StaticFiles(directory=STATIC), name="static")],
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=guard.dispatch)],
        exception_handlers={404: not_found, RPCError: rpc_error})


async def _act(client: Client, job_id: str, action: str, body: dict[str, Any]) -> str:
    """One control, with the body's fields checked as the CLI checks its arguments."""
    def text(key: str) -> str:
        value = body.get(key, "")
        if not isinstance(value, str):
            raise InputError(f"{key}: must be text")
        return value

    if action == "approve":
        if not isinstance(body.get("approved"), bool):
            raise InputError("approved: must be true or false")
        return await steering.approve(client, job_id, text("call_id"), body["approved"],
                                      text("note"))
    if action == "instruct":
        return await steering.instruct(client, job_id, text("text"))
    if action == "rewind":
        phase = body.get("restore_phase")
        if phase is not None and (not isinstance(phase, int) or isinstance(phase, bool)):
            raise InputError("restore_phase: must be a phase number")
        return await steering.rewind(client, job_id, text("issue"), phase)
    if action in ("pause", "resume"):
        return await steering.pause(client, job_id, resume=action == "resume")
    if action == "cancel":
        return await steering.cancel(client, job_id)
    raise InputError(f"unknown control {action!r} (approve, instruct, rewind, pause, resume, "
                     "cancel)")
