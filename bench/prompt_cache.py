"""How much of each prompt llama-server takes from its prompt cache, with the todo block in the
system message (switchback before #17) and at the end of the prompt (since).

    python -m switchback.bench.prompt_cache [--url http://127.0.0.1:8410/v1] [--job JOB_ID]
        [--steps N]

Replays one phase's model calls, as switchback assembles them (activities/model/prompt.py),
against llama-server in both orders, and reads what it reports for each request
(`timings.cache_n`: prompt tokens taken from the cache, `prompt_n`: tokens processed,
`prompt_ms`). The answers are the phase's own (stored in its conversation), so both orders
see the same conversation; each request asks for one token only: what is measured is the
prompt processing, which decides the speed of a job on a local model. The phase: `--job` reads
every conversation of a job from S3 (AWS_* variables) and replays its longest phase; without
it, a tactical phase of the `notes` job (three files, a todo_complete after each, the todo
block changing with every todo_complete, as a 1.5B model did it). Without `--url` a
llama-server is started on a free port (the local model, `make real-model`) and stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

import httpx

from switchback.activities.model.prompt import _public, assemble
from switchback.activities.tools.registry import openai_tool
from switchback.workflows.contract import Todo
from switchback.workflows.contract.config import ContextPolicy
from switchback.workflows.todos import todo_block

SYSTEM = ("You are in TACTICAL MODE: you execute the current phase's todos with the tools you "
          "have.\n\n" + "Write results to workspace files as you go. " * 40)
TOOLS = ["read_file", "write_file", "list_files", "search_files", "todo_complete",
         "todo_rewind"]


def synthetic() -> tuple[str, list[dict], list[list[Todo]]]:
    """(system prompt, messages, the todos before each call) of a tactical phase."""
    tasks = ["Write notes/apples.md with '# Apples' and one sentence",
             "Write notes/bananas.md with '# Bananas' and one sentence",
             "Write output/summary.md with '# Summary' and a line per note"]
    todos = [Todo(id=i, content=t) for i, t in enumerate(tasks, 1)]
    msgs: list[dict] = [{"role": "user", "content": "Phase 2 (tactical) begins: Notes."}]
    states: list[list[Todo]] = []
    n = 0
    for i, (path, text) in enumerate((("notes/apples.md", "# Apples\n\nApples are crisp."),
                                      ("notes/bananas.md", "# Bananas\n\nBananas are sweet."),
                                      ("output/summary.md", "# Summary\n\n- notes/apples.md: "
                                       "Apples\n- notes/bananas.md: Bananas"))):
        steps: list[tuple[str, dict, str]] = [
            ("read_file", {"path": "instructions.md"}, "# Three notes\n" + "x " * 150),
            ("write_file", {"path": path, "content": text}, f"Wrote {len(text)} bytes."),
            ("todo_complete", {"notes": f"wrote {path}"}, "")]
        for name, args, result in steps:
            states.append([t.model_copy() for t in todos])
            n += 1
            msgs.append({"role": "assistant", "content": "", "tool_calls": [{
                "id": f"c{n}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}]})
            if name == "todo_complete":
                todos[i].status = "completed"
                result = f"Todo {i + 1} done."
            msgs.append({"role": "tool", "tool_call_id": f"c{n}", "content": result})
    return SYSTEM, msgs, states


async def from_job(job: str) -> tuple[str, list[dict], list[list[Todo]]]:
    """The longest phase of a job (its stored conversation; the todo block is rebuilt from
    the todo_complete calls that succeeded)."""
    from switchback.activities.storage.s3 import S3Store

    s3 = S3Store()
    try:
        prefix = f"{job}/.switchback/conversations/"
        by_conv: dict[str, list[str]] = {}
        for o in await s3.list("switchback", prefix):
            by_conv.setdefault(o.key[len(prefix):].split("/")[0], []).append(o.key)
        conv = max(by_conv, key=lambda c: len(by_conv[c]))
        system = (await s3.get("switchback", f"{prefix}{conv}/system.md") or b"").decode()
        msgs = [json.loads(await s3.get("switchback", k) or b"{}")
                for k in sorted(by_conv[conv]) if k.endswith(".json")]
    finally:
        s3.close()
    todos = [Todo(id=i, content=f"todo {i}") for i in range(1, 6)]
    states, done = [], 0
    for m in msgs:
        if m.get("role") == "assistant":
            states.append([t.model_copy() for t in todos])
        if m.get("role") == "tool" and str(m.get("content", "")).startswith("Todo ") and \
                " done." in str(m.get("content")):
            if done < len(todos):
                todos[done].status = "completed"
                done += 1
    return system, [_public(m) for m in msgs], states


def prompts(system: str, msgs: list[dict], states: list[list[Todo]], order: str) -> list[list]:
    """Each model call's messages: the conversation up to that assistant message."""
    out, policy = [], ContextPolicy()
    cuts = [i for i, m in enumerate(msgs) if m.get("role") == "assistant"]
    for cut, todos in zip(cuts, states, strict=False):
        block = todo_block("Phase 2", "tactical", 2, todos)
        if order == "end":  # since #17
            out.append(assemble(system, block, None, msgs[:cut], 0, policy))
        else:  # before #17: layers 1 and 2 in one system message
            out.append([{"role": "system", "content": f"{system}\n\n{block}"}] + msgs[:cut])
    return out


def replay(url: str, calls: list[list], label: str) -> dict:
    tools = [openai_tool(t) for t in TOOLS]
    total = cached = processed = 0
    ms = 0.0
    with httpx.Client(timeout=1800) as http:
        # a different first request, so neither order starts from the other's cache
        http.post(f"{url}/chat/completions", json={"model": "m", "max_tokens": 1, "messages": [
            {"role": "user", "content": f"reset {label} {time.time()}"}]})
        for n, messages in enumerate(calls, 1):
            r = http.post(f"{url}/chat/completions", json={
                "model": "m", "messages": messages, "tools": tools, "max_tokens": 1,
                "temperature": 0}).json()
            t = r.get("timings", {})
            total += r["usage"]["prompt_tokens"]
            cached += t.get("cache_n", 0)
            processed += t.get("prompt_n", 0)
            ms += t.get("prompt_ms", 0.0)
            print(f"  {label} call {n:2d}: {r['usage']['prompt_tokens']:5d} prompt tokens, "
                  f"{t.get('cache_n', 0):5d} from the cache, {t.get('prompt_n', 0):5d} "
                  f"processed, {t.get('prompt_ms', 0) / 1000:6.1f} s", flush=True)
    return {"order": label, "calls": len(calls), "prompt_tokens": total, "cached": cached,
            "processed": processed, "hit_rate": round(cached / total, 3) if total else 0,
            "prompt_seconds": round(ms / 1000, 1)}


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m switchback.bench.prompt_cache", description=__doc__)
    p.add_argument("--url", help="llama-server's /v1 URL (default: start one)")
    p.add_argument("--job", help="replay this job's longest phase (from S3)")
    p.add_argument("--steps", type=int, default=0, help="at most this many calls")
    p.add_argument("--out", help="write the figures as JSON here")
    a = p.parse_args()
    system, msgs, states = asyncio.run(from_job(a.job)) if a.job else synthetic()
    if a.steps:
        states = states[:a.steps]
    server = None
    url = a.url
    if not url:
        from switchback.devstack.local_model_spec import (
            DEFAULT_MODEL,
            MODELS,
            Layout,
            LlamaServer,
            cache_dir,
        )
        from switchback.devstack.real_stack import llama_port

        server = LlamaServer(Layout(cache_dir()), MODELS[DEFAULT_MODEL], llama_port(),
                             Path("/tmp/bench-prompt-cache-llama.log")).__enter__()
        url = server.base_url
    try:
        print(f"{time.strftime('%Y-%m-%d %H:%M')}: {len(states)} model calls of "
              f"{'job ' + a.job if a.job else 'a synthetic tactical phase'} against {url}")
        results = [replay(url, prompts(system, msgs, states, order), order)
                   for order in ("system", "end")]
    finally:
        if server is not None:
            server.__exit__()
    print("\n| todo block | calls | prompt tokens | from the cache | processed | hit rate | "
          "prompt processing |\n|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        where = "in the system message (before)" if r["order"] == "system" else "at the end"
        print(f"| {where} | {r['calls']} | {r['prompt_tokens']:,} | {r['cached']:,} | "
              f"{r['processed']:,} | {r['hit_rate']:.0%} | {r['prompt_seconds']:,.0f} s |")
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
