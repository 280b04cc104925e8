"""Scripted model: a real HTTP server speaking the OpenAI Chat Completions API that replays scripts.

Contract:

* ``POST /v1/chat/completions`` answers with the next step of the calling job's script as a
  standard ``chat.completion`` object; ``GET /v1/models`` lists one model, ``scripted``.
* The job is the ``X-Switchback-Job`` header (missing -> ``"default"``). A job uses the script set
  for it (``set_script`` / ``POST /_admin/script``), else its own cursor over the server's default
  script. No script -> HTTP 400; script exhausted -> HTTP 400 naming the job and step count.
* ``X-Switchback-Call`` is an idempotency key: the first request with a key binds the job's next
  step and later requests of that job with the same key get the identical response (same ids)
  without consuming a step (``reanswer=True``, ``--reanswer``: the same step again, but with new
  tool-call ids ``<id>r<n>``, as a real model asked again would answer). An ``error`` step (and a
  step with ``bind: false``) is answered once and not bound, so a retry with the same key
  advances to the following step. Requests without
  a key always consume a step.
* A step is a dict with ``tool_calls`` (list of ``{name, arguments, id?}``; dict/list arguments
  are JSON-encoded, a string is sent verbatim), ``content``, ``error`` (``{status,
  retry_after?, message?, type?, code?}``) or ``raw`` (a 200 body as it is: a string verbatim,
  a mapping or list JSON-encoded) or ``replay`` (a recorded response ``{status, body}``, any
  status, body verbatim: llama-server's shapes from tests/fixtures/llama_server/), plus optional
  ``latency_ms``, ``chunk_ms``, ``usage``, ``finish_reason`` and ``bind``. Steps are checked
  when set; problems raise ``ValueError`` naming the step.
  A step with ``for_call: <text>`` is reserved: only a request whose call key contains that text
  takes it (e.g. ``for_call: summary`` answers summarization calls wherever they happen), and
  the plain sequence skips it. ``script_map`` (``--script-map``) gives jobs whose id ends with
  a suffix their own script (the pipeline demo's children).
* ``{{last_tool_result}}`` in a step's (JSON-encoded) arguments is replaced by the content of
  the request's last ``tool`` message, JSON-escaped: a script can write what a tool returned
  (an MCP server's answer, say) without knowing it in advance.
* A job's script may come with server checks (``set_script(job, steps, server={...})``) that
  answer before any step as llama-server does: a history with tool-call arguments that are not
  JSON (its HTTP 500), a prompt over ``n_ctx`` tokens (its 400); see devstack/llama_like.py.
* Admin: ``POST /_admin/script`` ``{"job_id", "steps", "server"?}``, ``GET
  /_admin/requests?job_id=X`` (the recorded request bodies plus ``_call_key``), ``POST
  /_admin/reset`` (forget all jobs).
* Latency: server-wide ``latency_ms`` plus per-step ``latency_ms``, slept in the handler thread.
* ``stream: true``: the answer as server-sent events (devstack/streamed_reply.py).
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from switchback.devstack.llama_like import check_request, validate_server
from switchback.devstack.model_script import (
    _ERROR_TYPES,
    count_tokens,
    fill,
    load_script,
    validate_script,
)
from switchback.devstack.streamed_reply import write_stream

__all__ = ["ScriptedModelServer", "load_script", "validate_script", "count_tokens"]

@dataclass
class _Binding:
    step: dict[str, Any]
    completion_id: str
    created: int
    call_ids: list[str]
    body: Any = None  # rendered once, then replayed verbatim
    repeats: int = 0  # requests after the first with the same call key


@dataclass
class _Job:
    steps: list[dict[str, Any]] | None
    cursor: int = 0
    used: set[int] = field(default_factory=set)
    bindings: dict[str, _Binding] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    server: dict[str, Any] = field(default_factory=dict)  # llama-like checks (llama_like.py)


class _HTTPError(Exception):
    def __init__(self, status: int, message: str, err_type: str | None = None,
                 code: str | None = None, headers: dict[str, str] | None = None,
                 latency_ms: float = 0, raw: Any = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}
        self.latency_ms = latency_ms
        self.err_type = err_type or _ERROR_TYPES.get(status, "server_error")
        self.code = code
        self.raw = raw  # a recorded body, sent as it is

    @classmethod
    def recorded(cls, answer: dict[str, Any], latency_ms: float = 0) -> _HTTPError:
        return cls(answer["status"], "recorded", headers=answer.get("headers"),
                   latency_ms=latency_ms, raw=answer["body"])

    def body(self) -> Any:
        if self.raw is not None:
            return self.raw
        return {"error": {"message": self.message, "type": self.err_type, "code": self.code}}


class ScriptedModelServer:
    """Serve scripted chat completions over HTTP from a daemon thread."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0,
                 default_script: list[dict] | None = None, latency_ms: int = 0,
                 script_map: dict[str, list[dict]] | None = None,
                 reanswer: bool = False) -> None:
        self.host, self.port = host, port
        self._default = validate_script(default_script) if default_script is not None else None
        # job-id suffix -> script, for jobs nobody set a script for (e.g. pipeline children)
        self._by_suffix = {k: validate_script(v) for k, v in (script_map or {}).items()}
        self._latency_ms = latency_ms
        self._reanswer = reanswer
        self._lock = threading.Lock()
        self._jobs: dict[str, _Job] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ScriptedModelServer:
        handler = type("Handler", (_Handler,), {"model": self})
        self._httpd = _QuietServer((self.host, self.port), handler)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("scripted model server is not started")
        return f"http://{self.host}:{self.port}/v1"

    def set_script(self, job_id: str, steps: list[dict],
                   server: dict[str, Any] | None = None) -> None:
        """`server`: checks answered before any step, as llama-server does (llama_like.py)."""
        normalized, checks = validate_script(steps), validate_server(server)
        with self._lock:
            self._jobs[job_id] = _Job(steps=normalized, server=checks)

    def requests(self, job_id: str) -> list[dict]:
        with self._lock:
            job = self._jobs.get(job_id)
            return [dict(r) for r in job.requests] if job else []

    def set_latency(self, ms: int) -> None:
        self._latency_ms = ms

    @property
    def latency_ms(self) -> int:
        return self._latency_ms

    def reset(self) -> None:
        with self._lock:
            self._jobs.clear()

    def _complete(self, body: dict[str, Any], job_id: str,
                 call_key: str | None) -> tuple[Any, dict[str, Any]]:
        """Answer one chat completion: (response body, its step) or raise _HTTPError."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                steps = next((v for k, v in self._by_suffix.items() if job_id.endswith(k)),
                             self._default)
                job = self._jobs[job_id] = _Job(steps=steps)
            job.requests.append({**body, "_call_key": call_key})
            refused = check_request(job.server, body) if job.server else None
            if refused is not None:  # what the real server answers before generating
                raise _HTTPError.recorded(refused)
            binding = job.bindings.get(call_key) if call_key is not None else None
            if binding is None:
                if job.steps is None:
                    raise _HTTPError(400, f"scripted model: no script for job '{job_id}' (set "
                                          "one with POST /_admin/script or a default script)")
                index = self._next_step(job, call_key)
                if index is None:
                    raise _HTTPError(400, f"scripted model: script for job '{job_id}' exhausted "
                                          f"after {len(job.steps)} steps",
                                     code="script_exhausted", headers={"x-should-retry": "false"})
                job.used.add(index)
                step = job.steps[index]
                if "error" in step:
                    raise self._step_error(step)
                if "replay" in step and step["replay"]["status"] != 200:
                    raise _HTTPError.recorded(step["replay"], step["latency_ms"])
                binding = _Binding(step, f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()),
                                   [c["id"] or f"call_{uuid.uuid4().hex[:24]}"
                                    for c in step.get("tool_calls", [])])
                if call_key is not None and step.get("bind", True):
                    job.bindings[call_key] = binding
            elif self._reanswer:  # asked again: the same step, with new call ids
                binding.repeats += 1
                binding = _Binding(binding.step, binding.completion_id, binding.created,
                                   [f"{c}r{binding.repeats}" for c in binding.call_ids])
            if binding.body is not None:
                return binding.body, binding.step
        rendered = self._render(binding, body)  # token counting happens outside the lock
        with self._lock:
            if binding.body is None:
                binding.body = rendered
            return binding.body, binding.step

    @staticmethod
    def _next_step(job: _Job, call_key: str | None) -> int | None:
        """A reserved step (`for_call` in the call key) if one waits, else the next plain one."""
        steps = job.steps or []
        if call_key:
            for i, st in enumerate(steps):
                if i not in job.used and st.get("for_call") and st["for_call"] in call_key:
                    return i
        while job.cursor < len(steps) and (job.cursor in job.used
                                           or steps[job.cursor].get("for_call")):
            job.cursor += 1
        return job.cursor if job.cursor < len(steps) else None

    @staticmethod
    def _step_error(step: dict[str, Any]) -> _HTTPError:
        err = step["error"]
        headers = {"Retry-After": str(err["retry_after"])} if "retry_after" in err else {}
        return _HTTPError(err["status"], err.get("message") or f"scripted error {err['status']}",
                          err.get("type"), err.get("code"), headers, step["latency_ms"])

    @staticmethod
    def _render(binding: _Binding, request: dict[str, Any]) -> Any:
        step = binding.step
        if "raw" in step:
            return step["raw"]
        if "replay" in step:
            return step["replay"]["body"]
        message: dict[str, Any] = {"role": "assistant", "content": step["content"]}
        if step["tool_calls"]:
            message["tool_calls"] = [
                {"id": cid, "type": "function",
                 "function": {"name": c["name"], "arguments": fill(c["arguments"], request)}}
                for cid, c in zip(binding.call_ids, step["tool_calls"], strict=True)]
        usage = dict(step["usage"])
        if "prompt_tokens" not in usage:
            prompt = json.dumps(request.get("messages", []), ensure_ascii=False)
            if request.get("tools"):
                prompt += json.dumps(request["tools"], ensure_ascii=False)
            usage["prompt_tokens"] = count_tokens(prompt)
        if "completion_tokens" not in usage:
            usage["completion_tokens"] = count_tokens(
                (step["content"] or "") + "".join(c["arguments"] for c in step["tool_calls"]))
        usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        return {"id": binding.completion_id, "object": "chat.completion",
                "created": binding.created, "model": request.get("model") or "scripted",
                "choices": [{"index": 0, "finish_reason": step["finish_reason"],
                             "message": message, "logprobs": None}],
                "usage": usage}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # client disconnects are routine in tests; stay quiet


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes
    model: ScriptedModelServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        if isinstance(payload, str):  # a raw body, as it is (lone surrogates: invalid UTF-8)
            data = payload.encode("utf-8", "surrogatepass")
        else:  # lone surrogates as \ud800 escapes, as a JSON encoder would write them
            text = json.dumps(payload, ensure_ascii=False)
            try:
                data = text.encode()
            except UnicodeEncodeError:
                data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _json_body(self) -> Any:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            return json.loads(raw or b"{}")
        except ValueError as exc:
            raise _HTTPError(400, f"request body is not valid JSON: {exc}") from None

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        srv = self.model
        try:
            body = self._json_body() if method == "POST" else None
            route = (method, url.path.rstrip("/"))
            if route == ("POST", "/v1/chat/completions"):
                if not isinstance(body, dict):
                    raise _HTTPError(400, "request body must be a JSON object")
                job_id = self.headers.get("X-Switchback-Job") or "default"
                try:
                    sent = {k.lower(): v for k, v in self.headers.items()
                            if k.lower().startswith("openai-")}  # recorded with the body
                    payload, step = srv._complete(
                        {**body, "_headers": sent} if sent else body, job_id,
                        self.headers.get("X-Switchback-Call"))
                except _HTTPError as exc:
                    time.sleep((srv.latency_ms + exc.latency_ms) / 1000)
                    raise
                time.sleep((srv.latency_ms + step["latency_ms"]) / 1000)
                if not write_stream(self, payload, body, step.get("chunk_ms", 0)):
                    self._send(200, payload)
            elif route == ("GET", "/v1/models"):
                self._send(200, {"object": "list", "data": [
                    {"id": "scripted", "object": "model", "owned_by": "switchback"}]})
            elif route == ("POST", "/_admin/script"):
                if not isinstance(body, dict) or not isinstance(body.get("job_id"), str):
                    raise _HTTPError(400, "expected {\"job_id\": str, \"steps\": [...]}")
                try:
                    srv.set_script(body["job_id"], body.get("steps"),  # type: ignore[arg-type]
                                   body.get("server"))
                except ValueError as exc:
                    raise _HTTPError(400, str(exc)) from None
                self._send(200, {"ok": True, "job_id": body["job_id"],
                                 "steps": len(body["steps"])})
            elif route == ("GET", "/_admin/requests"):
                job_id = parse_qs(url.query).get("job_id", ["default"])[0]
                self._send(200, srv.requests(job_id))
            elif route == ("POST", "/_admin/reset"):
                srv.reset()
                self._send(200, {"ok": True})
            else:
                raise _HTTPError(404, f"no route for {method} {url.path}", code="not_found")
        except _HTTPError as exc:
            self._send(exc.status, exc.body(), exc.headers)
        except Exception as exc:  # a bug here must surface as a 500, not a dropped connection
            self._send(500, _HTTPError(500, f"scripted model internal error: {exc!r}").body())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="OpenAI-compatible scripted model server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8400)
    parser.add_argument("--script", help="YAML script used as the default script of every job")
    parser.add_argument("--latency-ms", type=int, default=0)
    parser.add_argument("--reanswer", action="store_true", help="a repeated call key gets the "
                        "same step with new tool-call ids (as a real model asked again)")
    parser.add_argument("--script-map", help="YAML mapping of job-id suffix -> script "
                        "(steps), for jobs without a script of their own")
    args = parser.parse_args(argv)
    script = load_script(args.script) if args.script else None
    script_map = None
    if args.script_map:
        with open(args.script_map, encoding="utf-8") as f:
            script_map = yaml.safe_load(f)
    server = ScriptedModelServer(args.host, args.port, script, args.latency_ms,
                                 script_map, args.reanswer).start()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(f"scripted model server on http://{args.host}:{server.port}/v1", flush=True)
    while not stop.wait(1.0):
        pass
    server.stop()


if __name__ == "__main__":
    main()
