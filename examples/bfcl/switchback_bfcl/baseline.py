"""The plain baseline: BFCL's multi-turn function-calling loop, run in the calling process.

BFCL's own loop (`BaseHandler.inference_multi_turn_FC`) needs bfcl-eval's full install (its
model handlers import torch, tree-sitter and a dozen SDKs); this is the same loop, kept as
plain, against the same OpenAI-compatible endpoint a switchback job of the config uses:

    for each user turn: add its messages (miss_func: BFCL's "I have updated some more
      functions" prompt, the withheld functions added to the tools from that turn on)
      loop: call the model with the turn's tools (BFCL's schemas, `tools.openai_tools`);
        no tool call -> the turn ends; a call whose arguments are not JSON -> the turn ends
        (BFCL: "failed to decode"); else run every call with the package's executor
        (`state.execute`, BFCL's `execute_multi_turn_func_call`), feed the results back;
        a turn not ended within the call budget (`calls_per_turn` model calls, the answer
        included; by default 21, BFCL's MAXIMUM_STEP_LIMIT of 20 steps with calls plus the
        answer, so the default loop is BFCL's) -> the case stops there, status
        `over_budget`: the turn is not done (budget.py; every contender gets the same budget)

No system prompt (BFCL sends none to a function-calling model); the config's temperature
and max_tokens, the endpoint's request shape. The calls are recorded per turn as the tools
record them and scored with the same checker. Each request carries `X-Switchback-Job:
<run id>` (what the scripted test model keys its scripts by; a real endpoint ignores it).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from switchback_bfcl import cases, check, state
from switchback_bfcl.budget import DEFAULT_CALLS_PER_TURN, OVER_BUDGET
from switchback_bfcl.tools import openai_tools

MAXIMUM_STEP_LIMIT = 20  # bfcl_eval.constants.default_prompts (tests/test_bfcl_runner.py)
assert DEFAULT_CALLS_PER_TURN == MAXIMUM_STEP_LIMIT + 1  # the default budget is BFCL's loop
RETRIES = 6  # attempts of a model call on 429, 5xx, timeouts and connection errors


class BaselineError(RuntimeError):
    """The endpoint refused or kept failing: the case stops where it is."""


@dataclass
class Endpoint:
    """Where and how the baseline calls the model: the job config's llm settings resolved
    as the worker resolves them (configs/endpoints.yaml, the environment's keys)."""

    base_url: str
    api_key: str
    model: str
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 300.0
    headers: dict[str, str] = field(default_factory=dict)
    shape: Any = None  # activities.model.endpoints.RequestShape (None: the plain one)
    slow: Any = None  # the endpoint's SlowEndpoint: a call's timeout scales with its size

    def body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
             ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        if self.shape is not None:
            return dict(self.shape.apply(body, self.temperature, self.max_tokens))
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def call_timeout(self, body: dict[str, Any]) -> float:
        if self.slow is None:
            return self.timeout
        s, prompt = self.slow, len(json.dumps(body)) / 4
        return float(min(self.timeout, s.first_token_seconds + prompt / s.prompt_tokens_per_second
                         + (self.max_tokens or 1024) / s.completion_tokens_per_second))


def endpoint_of(config: str | dict[str, Any]) -> Endpoint:
    """The endpoint a job with `config` (a name or an inline object) calls, resolved here
    from this process's environment and configs/ (run the CLI where the worker's
    OPENAI_BASE_URL / SWITCHBACK_LOCAL_BASE_URL and keys are set)."""
    from switchback.activities.config_files import load_config
    from switchback.activities.model.endpoints import target

    llm = load_config(config).config.llm
    t = target(llm)
    return Endpoint(base_url=t.base_url, api_key=t.api_key, model=llm.model,
                    temperature=llm.temperature, max_tokens=llm.max_tokens, timeout=t.timeout,
                    headers=dict(t.headers), shape=t.shape, slow=t.slow)


@dataclass
class BaselineRun:
    turns: list[list[str]] = field(default_factory=list)  # the calls per turn reached
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    status: str = "completed"  # completed | over_budget | timeout | error
    error: str = ""
    wall_seconds: float = 0.0
    result: check.CheckResult | None = None
    turn_calls: list[int] = field(default_factory=list)  # model calls per turn reached
    # per turn reached: model calls before its first BFCL call (None: it made none)
    first_domain_call: list[int | None] = field(default_factory=list)


async def ask(http: httpx.AsyncClient, ep: Endpoint, body: dict[str, Any],
              run_id: str) -> dict[str, Any]:
    """One chat completion; retried on 429, 5xx and transport errors."""
    headers = {"Authorization": f"Bearer {ep.api_key}", "X-Switchback-Job": run_id,
               **ep.headers}
    url = ep.base_url.rstrip("/") + "/chat/completions"
    why = ""
    for attempt in range(RETRIES):
        if attempt:
            await asyncio.sleep(min(60.0, 2.0 ** attempt))
        try:
            r = await http.post(url, json=body, headers=headers, timeout=ep.call_timeout(body))
        except httpx.TransportError as e:
            why = f"{type(e).__name__}: {e}"
            continue
        if r.status_code == 429 or r.status_code >= 500:
            why = f"HTTP {r.status_code}: {r.text[:300]}"
            continue
        if r.status_code != 200:
            raise BaselineError(f"HTTP {r.status_code}: {r.text[:300]}")
        try:
            data = r.json()
            data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise BaselineError(f"not a chat completion: {r.text[:300]}") from e
        return dict(data)
    raise BaselineError(f"{RETRIES} attempts failed, the last: {why}")


def _decode(tool_calls: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]] | None:
    """(id, name, arguments) of each call, or None when one is not decodable (BFCL then
    ends the turn)."""
    out = []
    for tc in tool_calls:
        try:
            fn = tc["function"]
            args = json.loads(fn.get("arguments") or "{}")
        except (KeyError, TypeError, ValueError):
            return None
        if not isinstance(args, dict) or not isinstance(fn.get("name"), str):
            return None
        out.append((str(tc.get("id") or ""), fn["name"], args))
    return out


async def run_case(http: httpx.AsyncClient, ep: Endpoint, case: dict[str, Any],
                   run_id: str, timeout: float | None = None,
                   calls_per_turn: int = DEFAULT_CALLS_PER_TURN) -> BaselineRun:
    """Run one case with the plain loop and score it with BFCL's checker. A turn may take
    `calls_per_turn` model calls (status `over_budget` past them); after `timeout` seconds
    the loop stops where it is (status `timeout`), the safety stop a job of the same
    comparison gets (runner.Options.job_timeout); either way the turns not ended fail."""
    started = time.monotonic()
    run = BaselineRun()
    try:
        async with asyncio.timeout(timeout):
            await _loop(http, ep, case, run_id, run, calls_per_turn)
    except TimeoutError:
        run.status = "timeout"
    except BaselineError as e:
        run.status, run.error = "error", str(e)
    run.wall_seconds = round(time.monotonic() - started, 1)
    run.result = await asyncio.to_thread(check.check_calls, case["id"], run.turns)
    return run


async def _loop(http: httpx.AsyncClient, ep: Endpoint, case: dict[str, Any], run_id: str,
                run: BaselineRun, calls_per_turn: int) -> None:
    messages: list[dict[str, Any]] = []
    executed: list[str] = []
    for turn in range(len(case["question"])):
        tools = openai_tools(cases.functions(case, turn))
        messages += [dict(m) for m in cases.turn_messages(case, turn)]
        run.turns.append([])
        run.turn_calls.append(0)
        run.first_domain_call.append(None)
        while True:
            reply = await ask(http, ep, ep.body(messages, tools), run_id)
            run.model_calls += 1
            run.turn_calls[turn] += 1
            usage = reply.get("usage") or {}
            run.tokens_in += int(usage.get("prompt_tokens") or 0)
            run.tokens_out += int(usage.get("completion_tokens") or 0)
            message = reply["choices"][0]["message"]
            tool_calls = list(message.get("tool_calls") or [])
            assistant: dict[str, Any] = {"role": "assistant",
                                         "content": message.get("content")}
            if tool_calls:
                assistant["tool_calls"] = tool_calls
            messages.append(assistant)
            if not tool_calls:
                break
            decoded = _decode(tool_calls)
            if decoded is None:  # answered, so the conversation stays a valid one
                messages += [{"role": "tool", "tool_call_id": tc.get("id", ""),
                              "content": "Error: the arguments are not valid JSON"}
                             for tc in tool_calls]
                break
            for call_id, name, args in decoded:
                try:
                    text = state.call_string(name, args)
                except state.StateError as e:  # not a BFCL function, a bad argument name
                    result = f"Error during execution: {e}"
                else:
                    results = await asyncio.to_thread(state.execute, case,
                                                      [*executed, text])
                    result = results[-1]
                    executed.append(text)
                    run.turns[turn].append(text)
                    if run.first_domain_call[turn] is None:
                        run.first_domain_call[turn] = run.turn_calls[turn] - 1
                messages.append({"role": "tool", "tool_call_id": call_id,
                                 "content": result})
            if run.turn_calls[turn] >= calls_per_turn:  # its last call did not end the turn
                run.status = OVER_BUDGET
                break
        if run.status == OVER_BUDGET:
            break


__all__ = ["MAXIMUM_STEP_LIMIT", "BaselineError", "BaselineRun", "Endpoint", "ask",
           "endpoint_of", "run_case"]
