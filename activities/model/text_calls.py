"""Tool calls a model wrote as text instead of the API's `tool_calls`.

Small models and servers whose chat template does not parse calls answer with the call in
`content` (seen with llama-server and the Qwen2.5 GGUF's own template: a ```json fence
holding `{"name": ..., "arguments": {...}}`, see tests/fixtures/llama_server/g_*). Recognised
here, in the forms real models write:

    ```json {"name": "read_file", "arguments": {"path": "a.md"}} ```   (fence, any language tag)
    <tool_call>{"name": "read_file", "arguments": {...}}</tool_call>  (Qwen / Hermes tags)
    <tool_response>{"name": "read_file", "arguments": {...}}</tool_response>
                                         (the wrong tag, as small models write it)
    {"name": "read_file", "arguments": {...}}                           (the whole answer)

`arguments` may also be `parameters`, `args` or `input`, or the call wrapped as
`{"function": {"name", "arguments"}}`; a list of calls in one block is several calls. A block
counts only if it names a tool the model was offered, so JSON data in a text answer is left
alone. A block that names an offered tool but is not valid JSON (cut off at the token limit,
or broken) becomes a call without arguments and a `problem` the model reads, with the exact
format that works.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*([A-Za-z_]*)[ \t]*\n?(.*?)(?:```|\Z)", re.S)
_TAG = re.compile(r"<(tool_call|tool_response)>\s*(.*?)\s*(?:</\1>|\Z)", re.S)
_NAME = re.compile(r'"name"\s*:\s*"([A-Za-z0-9_.-]{1,64})"')
_ARG_KEYS = ("arguments", "parameters", "args", "input")
MAX_TEXT = 1_000_000  # longer answers are not searched


@dataclass
class TextCall:
    name: str
    arguments: str  # JSON text of an object; "{}" when `problem` is set
    problem: str = ""  # why the call cannot run as written


def expected_format(name: str) -> str:
    return (f'```json\n{{"name": "{name}", "arguments": {{...the arguments as a JSON '
            'object...}}}\n```')


def find_calls(content: str, known: Collection[str], cut_off: bool = False
               ) -> tuple[list[TextCall], str]:
    """(the tool calls written in `content` that name a tool in `known`, the rest of the
    text). `cut_off`: the answer ended at the token limit."""
    if not content or len(content) > MAX_TEXT or not known:
        return [], content
    blocks = [(m.start(), m.end(), m.group(2)) for m in _TAG.finditer(content)]
    if not blocks:
        blocks = [(m.start(), m.end(), m.group(2)) for m in _FENCE.finditer(content)]
    if not blocks and content.lstrip()[:1] in "{[":
        blocks = [(0, len(content), content)]
    calls: list[TextCall] = []
    used: list[tuple[int, int]] = []
    for start, end, inner in blocks:
        found = _block_calls(inner.strip(), known, cut_off or not _closed(content, end))
        if found:
            calls += found
            used.append((start, end))
    if not calls:
        return [], content
    rest, last = [], 0
    for start, end in used:
        rest.append(content[last:start])
        last = end
    rest.append(content[last:])
    return calls, "".join(rest).strip()


def _closed(content: str, end: int) -> bool:
    tail = content[:end].rstrip()
    return tail.endswith(("```", "</tool_call>", "</tool_response>")) or end < len(content)


def _block_calls(text: str, known: Collection[str], cut_off: bool) -> list[TextCall]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        m = _NAME.search(text)
        if m is None or m.group(1) not in known:
            return []
        name = m.group(1)
        why = ("was cut off at the token limit" if cut_off else "is not valid JSON")
        return [TextCall(name, "{}", (
            f"your call of '{name}' written as text {why}, so it was not run. Make the call "
            "again with less in it (e.g. split long content over several calls), as a tool "
            f"call, or written exactly like this:\n{expected_format(name)}"))]
    items = data if isinstance(data, list) else [data]
    calls = []
    for item in items:
        call = _one_call(item, known)
        if call is not None:
            calls.append(call)
    return calls


def _one_call(item: object, known: Collection[str]) -> TextCall | None:
    if not isinstance(item, dict):
        return None
    inner = item.get("function")
    if isinstance(inner, dict):
        item = inner
    name = item.get("name")
    if not isinstance(name, str) or name not in known:
        return None
    args: object = next((item[k] for k in _ARG_KEYS if k in item), {})
    if isinstance(args, str):  # arguments as JSON text, as the API sends them
        try:
            args = json.loads(args or "{}")
        except ValueError:
            return TextCall(name, "{}", f"the arguments of your call of '{name}' are not valid "
                            f"JSON, so it was not run; write it like this:\n"
                            f"{expected_format(name)}")
    if not isinstance(args, dict):
        return TextCall(name, "{}", f"the arguments of your call of '{name}' must be a JSON "
                        f"object; write it like this:\n{expected_format(name)}")
    return TextCall(name, json.dumps(args, ensure_ascii=False))
