"""The scripted model server of the side-by-side benchmark, run as its own process.

    python -m switchback.bench.peers.scripted_server [--port 0]
                                            # prints "scripted model server on URL"

devstack's ScriptedModelServer, with three changes for benchmarking:

* A request without `X-Switchback-Job` is routed by the `[job:<id>]` marker in its first
  messages (bench/peers/__init__.py `prompt`), so peers that cannot send the header still get
  one script and one request log per job.
* The request log keeps only the call key and the arrival time (`_t`, epoch seconds), not the
  body: per-step wall times are read from it (`GET /_admin/requests?job_id=...`), and a 200-step
  job that sends its whole conversation every time would otherwise keep ~40 MB of bodies.
* Usage, when a step gives none, is estimated from the prompt's length (4 characters a token)
  instead of tiktoken, which on a 100k-token prompt costs tens of milliseconds of server time
  that would show up as "overhead" at 0 ms latency. Switchback's own estimate is corrected by
  the reported usage, so the estimate keeps its compaction behaviour realistic.

Runs in its own process so that neither its CPU nor its GIL is charged to the floor, which runs
in the harness process.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import signal
import threading
import time
from typing import Any

from switchback.devstack import scripted_model
from switchback.devstack.scripted_model import ScriptedModelServer

_MARKER = re.compile(r"\[job:([A-Za-z0-9_.:-]+)\]")


def job_marker(body: dict[str, Any]) -> str | None:
    for message in (body.get("messages") or [])[:4]:
        found = _MARKER.search(json.dumps(message.get("content"), ensure_ascii=False))
        if found:
            return found.group(1)
    return None


class RoutingScriptedServer(ScriptedModelServer):
    def _complete(self, body: dict[str, Any], job_id: str,
                  call_key: str | None) -> tuple[Any, dict[str, Any]]:
        if job_id == "default":
            job_id = job_marker(body) or job_id
        arrived = time.time()
        try:
            return super()._complete(body, job_id, call_key)
        finally:
            with self._lock:
                job = self._jobs.get(job_id)
                if job is not None and job.requests:
                    job.requests[-1] = {"_call_key": call_key, "_t": arrived}

    @staticmethod
    def _render(binding: Any, request: dict[str, Any]) -> dict[str, Any]:
        step = binding.step
        usage = dict(step["usage"])
        if "prompt_tokens" not in usage:
            chars = len(json.dumps(request.get("messages", []), ensure_ascii=False))
            chars += len(json.dumps(request.get("tools") or [], ensure_ascii=False))
            usage["prompt_tokens"] = chars // 4
        if "completion_tokens" not in usage:
            out = (step["content"] or "") + "".join(c["arguments"] for c in step["tool_calls"])
            usage["completion_tokens"] = max(1, len(out) // 4)
        binding = dataclasses.replace(binding, step={**step, "usage": usage})
        return ScriptedModelServer._render(binding, request)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    # 500 jobs open their connections at once; socketserver's default backlog is 5
    scripted_model._QuietServer.request_queue_size = 1024
    server = RoutingScriptedServer(args.host, args.port).start()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(f"scripted model server on {server.base_url}", flush=True)
    while not stop.wait(1.0):
        pass
    server.stop()


if __name__ == "__main__":
    main()
