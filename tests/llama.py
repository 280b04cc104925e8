"""llama-server's recorded answers (tests/fixtures/llama_server/) as scripted-model steps.

`replay(case)` answers with the recorded response as it is (status and body); `answer(case,
**changes)` is a recorded 200 body with its first message changed (other tool calls, the
same shape: random 32-character ids, `content: ""`, `timings`, cached tokens); the server
checks make the scripted model refuse a request the way llama-server does.
"""

from __future__ import annotations

import copy
import json
import random
import string
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "llama_server"


@cache
def _load(case: str) -> dict:
    return json.loads((FIXTURES / f"{case}.json").read_text())


def fixture(case: str) -> dict:
    return copy.deepcopy(_load(case))


def response(case: str) -> dict:
    return fixture(case)["response"]


def replay(case: str, **step: Any) -> dict:
    """A step answering with the recorded response of `case`, as llama-server sent it."""
    r = response(case)
    return {"replay": {"status": r["status"], "body": r["body"]}, **step}


def llama_id(rng: random.Random) -> str:
    """A tool-call id as llama-server makes them: 32 random letters and digits."""
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(32))


def answer(calls: list[tuple[str, dict | str]] | None = None, content: str = "",
           finish_reason: str | None = None, seed: int = 0, case: str = "a_tool_call"
           ) -> dict:
    """A replay step shaped like the recorded 200 of `case`, with these tool calls (name,
    arguments as an object or verbatim JSON text) or this content instead."""
    rng = random.Random(seed)
    body = response(case)["body"]
    msg = body["choices"][0]["message"]
    msg["content"] = content
    if calls:
        msg["tool_calls"] = [{"type": "function", "function": {
            "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            "id": llama_id(rng)} for name, args in calls]
    else:
        msg.pop("tool_calls", None)
    body["choices"][0]["finish_reason"] = finish_reason or ("tool_calls" if calls else "stop")
    body["id"] = f"chatcmpl-{llama_id(rng)}"
    return {"replay": {"status": 200, "body": body}}


def reject_bad_arguments() -> dict:
    """Server checks: a history with arguments that are not JSON gets llama-server's 500."""
    r = response("e_history_with_truncated_arguments")
    return {"reject_bad_arguments": {"status": r["status"], "body": r["body"]}}


def context_limit(n_ctx: int) -> dict:
    """Server checks: a prompt over `n_ctx` tokens gets llama-server's 400, its numbers
    filled in for the request."""
    r = response("f_context_exceeded")
    err = r["body"]["error"]
    err["message"] = (err["message"].replace(str(err["n_prompt_tokens"]), "{n_prompt_tokens}")
                      .replace(str(err["n_ctx"]), "{n_ctx}"))
    return {"n_ctx": n_ctx, "context_error": {"status": r["status"], "body": r["body"]}}
