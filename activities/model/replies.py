"""What the model endpoint answers is untrusted: checked and normalized here, once.

`assistant_message(body, max_chars)` turns the raw bytes of a 200 response into the
assistant message switchback stores, or raises `ModelBadResponse` (an `ApplicationError`
Temporal retries; after `llm.retry.maximum_attempts` the job fails with `model_call_failed`):

    the body is not JSON, not an object, over MAX_BODY_BYTES, nested too deeply
    `choices` is missing, empty or not a list; the first choice has no `message` object
    `tool_calls` is not a list

Everything else the model may get wrong becomes part of the stored message the model
reads back, never an exception:

    text that is not valid Unicode (lone surrogates)   replaced by U+FFFD
    content over `max_chars`                           cut, with a note saying so
    content as a list of parts                          the text parts, joined
    a tool call without an id, a duplicate or odd id    a generated id (`sb_call_<n>`)
    a function name that is missing or not [A-Za-z0-9_-]{1,64}
                                                        a sanitized name (unknown tools
                                                        are refused by the workflow)
    arguments as an object, missing, not a string       JSON text, or `{}` and an error
    arguments over `max_chars`                          `{}` and an error the model reads
    arguments that are not a JSON object: cut off at    repaired when nothing is lost
      the token limit (`finish_reason: length`),          (trailing text after a whole
      broken, NaN, nested too deeply, a list, ...         object, JSON inside a JSON
                                                          string), else `{}` and an error
    a write of workspace.md or main_plan.md cut off     its whole lines kept, with a last
      at the token limit                                  line saying where it was cut
    calls written as text (fenced JSON, <tool_call>     tool calls, when they name a tool
      tags, a bare JSON answer: text_calls.py)            the model was offered (`known`)
    more than MAX_TOOL_CALLS calls                      the first MAX_TOOL_CALLS
    odd `finish_reason` or `usage`                      dropped / clamped

So every stored call's `arguments` is the JSON text of an object: a server that parses the
history (llama-server answers a broken one with HTTP 500, every time) never sees it again.
Errors about single tool calls go to `_meta.call_errors` (call id -> message): the
workflow refuses those calls with `Error [invalid_arguments]: ...` and never runs them.
`_meta.usage` keeps the prompt tokens the endpoint served from its cache
(`prompt_tokens_details.cached_tokens`), `_meta.timings` llama-server's timings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from temporalio.exceptions import ApplicationError

from switchback.activities.model.text_calls import find_calls
from switchback.activities.tools.registry import decode_arguments

MAX_BODY_BYTES = 64 << 20
MAX_TOOL_CALLS = 64
MAX_USAGE = 100_000_000  # tokens per call; more is a broken endpoint, not a bill
_SURROGATE = re.compile("[\ud800-\udfff]")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_PLAN_WRITE = re.compile(r'\s*\{\s*"path"\s*:\s*"(workspace\.md|main_plan\.md)"\s*,\s*'
                         r'"content"\s*:\s*"')
CUT_NOTE = "(cut off here: the rest of this write went past the token limit, max_tokens)"


def bad_response(what: str) -> ApplicationError:
    return ApplicationError(f"model endpoint answered 200 with {what}", type="ModelBadResponse")


def clean_text(text: str) -> str:
    """`text` with lone surrogates (not encodable as UTF-8) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def snippet(body: bytes, n: int = 120) -> str:
    return repr(body[:n].decode("utf-8", "replace")) + ("..." if len(body) > n else "")


def parse_body(body: bytes) -> dict:
    """The response body as a JSON object, or ModelBadResponse."""
    if len(body) > MAX_BODY_BYTES:
        raise bad_response(f"a body of {len(body):,} bytes (limit {MAX_BODY_BYTES:,})")
    try:
        data = json.loads(body)
    except RecursionError:
        raise bad_response("JSON nested too deeply") from None
    except ValueError:
        raise bad_response(f"a body that is not JSON: {snippet(body)}") from None
    if not isinstance(data, dict):
        raise bad_response(f"JSON that is not an object: {snippet(body)}")
    return data


def first_message(data: dict) -> tuple[dict, dict]:
    """(the first choice, its message) or ModelBadResponse."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise bad_response("no choices" if not choices else "'choices' that is not a list")
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise bad_response("a first choice that has no message object")
    return choice, choice["message"]


def assistant_message(body: bytes, max_chars: int, known: Collection[str] = ()) -> dict:
    """The assistant message to store (usage and call errors in `_meta`); `known`: the tools
    the model was offered (calls written as text are recognised only for these)."""
    data = parse_body(body)
    choice, msg = first_message(data)
    calls = msg.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise bad_response(f"'tool_calls' that is not a list ({type(calls).__name__})")
    finish = _finish_reason(choice.get("finish_reason"))
    content = msg.get("content")
    meta: dict = {"finish_reason": finish}
    written: dict[str, str] = {}  # call id -> problem, for calls written as text
    if not calls and isinstance(content, str) and known:
        found, rest = find_calls(clean_text(content), known, cut_off=finish == "length")
        if found:
            calls = [{"id": f"sb_text_{n}", "type": "function",
                      "function": {"name": c.name, "arguments": c.arguments}}
                     for n, c in enumerate(found, 1)]
            written = {f"sb_text_{n}": c.problem for n, c in enumerate(found, 1) if c.problem}
            content = rest
            meta["text_calls"] = len(found)
    stored: dict = {"role": "assistant", "content": _content(content, max_chars)}
    errors: dict[str, str] = {}
    if calls:
        stored["tool_calls"] = _tool_calls(calls[:MAX_TOOL_CALLS], max_chars, errors,
                                           finish == "length")
        errors.update({k: v for k, v in written.items() if k not in errors})
    usage = _usage(data.get("usage"))
    if usage is not None:
        meta["usage"] = usage
    timings = _timings(data.get("timings"))
    if timings:
        meta["timings"] = timings
    if errors:
        meta["call_errors"] = errors
    if calls and len(calls) > MAX_TOOL_CALLS:
        meta["dropped_calls"] = len(calls) - MAX_TOOL_CALLS
    stored["_meta"] = meta
    return stored


def summary_text(body: bytes) -> tuple[str, dict | None]:
    """The text of a summarization answer ('' when there is none) and its usage."""
    data = parse_body(body)
    _, msg = first_message(data)
    return _content(msg.get("content"), 1 << 20).strip(), _usage(data.get("usage"))


def _content(value: Any, max_chars: int) -> str:
    if isinstance(value, list):  # content parts: keep the text ones
        value = "".join(p if isinstance(p, str) else p["text"] for p in value
                        if isinstance(p, str) or (isinstance(p, dict)
                                                  and isinstance(p.get("text"), str)))
    if not isinstance(value, str):
        return "" if value is None else clean_text(str(value))[:max_chars]
    text = clean_text(value)
    if len(text) > max_chars:
        return (f"{text[:max_chars]}\n\n[... cut by switchback: the answer was {len(text):,} "
                f"characters; at most {max_chars:,} are kept]")
    return text


def _tool_calls(calls: list, max_chars: int, errors: dict[str, str],
                cut_off: bool = False) -> list[dict]:
    out: list[dict] = []
    ids: set[str] = set()
    for n, tc in enumerate(calls, 1):
        tc = tc if isinstance(tc, dict) else {}
        fn: dict = tc["function"] if isinstance(tc.get("function"), dict) else {}
        raw_id = tc.get("id")
        call_id = raw_id if isinstance(raw_id, str) and _ID.fullmatch(raw_id) else ""
        if not call_id or call_id in ids:
            call_id = _new_id(n, ids)
        ids.add(call_id)
        name, problem = _name(fn.get("name"))
        arguments, arg_problem = _arguments(fn.get("arguments"), max_chars, name, cut_off)
        out.append({"id": call_id, "type": "function",
                    "function": {"name": name, "arguments": arguments}})
        if problem or arg_problem:
            errors[call_id] = problem or arg_problem
    return out


def _new_id(n: int, taken: set[str]) -> str:
    k = n
    while f"sb_call_{k}" in taken:
        k += 1000
    return f"sb_call_{k}"


def _name(value: Any) -> tuple[str, str]:
    if isinstance(value, str) and _NAME.fullmatch(value):
        return value, ""
    if not isinstance(value, str) or not value:
        return "unnamed_tool", "the tool call has no function name"
    name = re.sub(r"[^A-Za-z0-9_-]", "_", clean_text(value))[:64]
    return name, f"the tool name is not [A-Za-z0-9_-]{{1,64}} (got {value[:80]!r})"


def _arguments(value: Any, max_chars: int, name: str = "",
               cut_off: bool = False) -> tuple[str, str]:
    """(the JSON text of an object to store, what was wrong with what the model sent)."""
    if value is None or value == "":
        return "{}", ""
    if isinstance(value, dict | list):  # some endpoints send an object, not JSON text
        try:
            value = json.dumps(value, ensure_ascii=False)
        except (ValueError, RecursionError):
            return "{}", "the arguments are nested too deeply"
    if not isinstance(value, str):
        return "{}", ("the arguments must be a JSON object encoded as a string, got "
                      f"{type(value).__name__}")
    if len(value) > max_chars:
        return ("{}", f"the arguments are {len(value):,} characters, over the limit of "
                f"{max_chars:,}; send large content in several smaller calls")
    problem = ""
    if _SURROGATE.search(value):
        value, problem = clean_text(value), ("the arguments contain text that is not valid "
                                             "Unicode (a lone surrogate); send UTF-8 text")
    _, error = decode_arguments(name, value, max_chars)
    if error is None:
        return value, problem
    repaired = _repair(value)
    if repaired is not None:
        return repaired, problem
    kept = _kept_plan(value) if cut_off and name == "write_file" else None
    if kept is not None:
        return kept, problem
    if cut_off:
        error = (f"the arguments of '{name}' were cut off at the token limit (finish_reason "
                 f"'length') after {len(value):,} characters, so the call was not run and "
                 "nothing was changed. Make the call again with less in it: split long "
                 "content over several calls")
    return "{}", problem or error


def _kept_plan(value: str) -> str | None:
    """A write of the job's memory or plan cut off at the token limit, as far as its last
    whole line, then CUT_NOTE (dropped, the same write is made again at the same length):
    None for any other write."""
    m = _PLAN_WRITE.match(value)
    if m is None:
        return None
    body, end, tries = value[m.end():], len(value), 0
    while tries < 200 and (end := body.rfind("\\n", 0, end)) > 0:
        tries += 1
        try:
            text = json.loads(f'"{body[:end]}"')
        except ValueError:  # an escape cut in two, or the string ended before: go back a line
            continue
        if not text.strip():
            return None
        return json.dumps({"path": m.group(1), "content": f"{text}\n{CUT_NOTE}\n"},
                          ensure_ascii=False)
    return None


def _repair(value: str) -> str | None:
    """The arguments as the JSON text of an object if that loses nothing the model meant:
    one whole object followed by stray text, or an object encoded twice (a JSON string)."""
    text = value.strip()
    try:
        data, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(data, str):  # '"{\"path\": ...}"': the object's JSON, encoded again
        try:
            data, end = json.loads(data), len(text)
        except (ValueError, RecursionError):
            return None
    if not isinstance(data, dict) or text[end:].strip(" \n\t}]`") != "":
        return None
    try:
        repaired = json.dumps(data, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None
    ok, _ = decode_arguments("", repaired)
    return repaired if ok is not None else None


def _finish_reason(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= 40 else None


def _usage(value: Any) -> dict | None:
    if not isinstance(value, dict):
        return None
    out = {}
    for k in ("prompt_tokens", "completion_tokens"):
        v = value.get(k) or 0
        if not isinstance(v, int) or isinstance(v, bool):
            return None
        out[k] = min(max(v, 0), MAX_USAGE)
    details = value.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if isinstance(cached, int) and not isinstance(cached, bool) and cached > 0:
        out["cached_tokens"] = min(cached, out["prompt_tokens"])
    return out


_TIMINGS = ("cache_n", "prompt_n", "prompt_ms", "predicted_n", "predicted_ms")


def _timings(value: Any) -> dict:
    """llama-server's `timings` (tokens taken from its prompt cache, processed, generated,
    and the milliseconds each took), the numbers only."""
    if not isinstance(value, dict):
        return {}
    return {k: round(v, 1) if isinstance(v, float) else v for k, v in value.items()
            if k in _TIMINGS and isinstance(v, int | float) and not isinstance(v, bool)
            and 0 <= v < 1e12}
