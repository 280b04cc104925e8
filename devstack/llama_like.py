"""What the scripted model can do the way llama.cpp's llama-server does it (recorded in
tests/fixtures/llama_server/), so that tests reproduce a real server's exact shapes:

- a ``replay`` step answers with a recorded response as it is: ``{"status": 200, "body":
  {...}}`` for an answer (tool calls with random 32-character ids and ``content: ""``, several
  calls in one turn, ``finish_reason: "length"`` with cut-off arguments, fenced JSON in
  ``content``, ``timings`` and ``usage.prompt_tokens_details.cached_tokens``) or any other
  status for an error (the 500 on a broken history, the 400 context error), body verbatim;
- per-job server checks (``set_script(job, steps, server={...})``), applied to every request
  before a step is taken, as llama-server applies them before it renders a prompt:

  ``reject_bad_arguments: {status, body}``  a request whose history holds a tool call whose
      ``arguments`` are not a JSON object gets this answer (llama-server: HTTP 500 "Failed to
      parse tool call arguments as JSON"), and every later identical request too;
  ``n_ctx: 1024`` (+ ``context_error: {status, body}``)  a request whose prompt has more
      tokens than this gets the context error; in the body's ``message`` the strings
      ``{n_prompt_tokens}`` and ``{n_ctx}`` are filled in, and the fields of those names set.

Such an answer consumes no step: the script goes on where it was once the request is fixed.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from switchback.devstack.model_script import count_tokens, validate_response

SERVER_KEYS = {"reject_bad_arguments", "n_ctx", "context_error"}
DEFAULT_CONTEXT_ERROR: dict[str, Any] = {"status": 400, "body": {"error": {
    "code": 400, "type": "exceed_context_size_error",
    "message": "request ({n_prompt_tokens} tokens) exceeds the available context size "
               "({n_ctx} tokens), try increasing it"}}}


def validate_server(options: Any) -> dict[str, Any]:
    """The per-job server checks, normalized; ValueError naming what is wrong."""
    if options is None:
        return {}
    if not isinstance(options, dict) or set(options) - SERVER_KEYS:
        raise ValueError(f"server checks must be a mapping with keys from {sorted(SERVER_KEYS)}")
    out = dict(options)
    for key in ("reject_bad_arguments", "context_error"):
        if key in out:
            out[key] = validate_response(out[key], key)
    if "n_ctx" in out:
        if not isinstance(out["n_ctx"], int) or out["n_ctx"] < 1:
            raise ValueError("n_ctx must be a positive integer")
        out.setdefault("context_error", DEFAULT_CONTEXT_ERROR)
    return out


def check_request(server: dict[str, Any], request: dict[str, Any]) -> dict[str, Any] | None:
    """The recorded answer a real server would give this request before any generation
    (a broken history, a prompt over the context), or None."""
    if "reject_bad_arguments" in server and bad_arguments(request):
        return server["reject_bad_arguments"]
    if "n_ctx" in server:
        n = prompt_tokens(request)
        if n > server["n_ctx"]:
            answer = copy.deepcopy(server["context_error"])
            error = answer["body"].get("error") if isinstance(answer["body"], dict) else None
            if isinstance(error, dict):
                error["message"] = str(error.get("message", "")).replace(
                    "{n_prompt_tokens}", str(n)).replace("{n_ctx}", str(server["n_ctx"]))
                error["n_prompt_tokens"], error["n_ctx"] = n, server["n_ctx"]
            return answer
    return None


def bad_arguments(request: dict[str, Any]) -> str | None:
    """The first history tool call whose arguments are not a JSON object, as llama-server
    checks them (a template taking arguments as objects parses each one)."""
    for m in request.get("messages") or []:
        if not isinstance(m, dict):
            continue
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") if isinstance(tc, dict) else None
            raw = fn.get("arguments") if isinstance(fn, dict) else None
            if isinstance(raw, dict):
                continue
            try:
                parsed = json.loads(raw) if isinstance(raw, str) else None
            except ValueError:
                return str(raw)
            if not isinstance(parsed, dict):
                return str(raw)
    return None


def prompt_tokens(request: dict[str, Any]) -> int:
    """Roughly what the server counts: the messages' text and the tool schemas."""
    parts = []
    for m in request.get("messages") or []:
        if isinstance(m, dict):
            parts.append(str(m.get("content") or ""))
            parts += [json.dumps(tc, ensure_ascii=False) for tc in m.get("tool_calls") or []]
    if request.get("tools"):
        parts.append(json.dumps(request["tools"], ensure_ascii=False))
    return count_tokens("\n".join(parts)) + 4 * len(request.get("messages") or [])
