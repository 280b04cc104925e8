"""Token estimates (activities/model/tokens.py): the same numbers tiktoken gives, remembered by
hash and length so a long phase does not encode its short messages again on every call, and
without holding the texts (tool output up to 200 KB each) alive in the worker."""

from __future__ import annotations

import gc
import json
import tracemalloc

import pytest

from switchback.activities.model import tokens


@pytest.fixture(autouse=True)
def empty_counts():
    tokens._counts.clear()
    yield
    tokens._counts.clear()


def test_counts_are_tiktokens_and_remembered(monkeypatch) -> None:
    texts = ["", "ok", "wrote notes/a.md (2,048 bytes)", "word " * 5000]
    expected = [len(tokens.encoding_for("").encode(t, disallowed_special=())) for t in texts]
    assert [tokens.count_text(t) for t in texts] == expected
    encoded: list[str] = []

    def encode(text: str, model: str) -> int:
        encoded.append(text)
        return 0
    monkeypatch.setattr(tokens, "_encode_len", encode)
    # asked again (equal strings, other objects): nothing is encoded a second time
    assert [tokens.count_text("".join(list(t))) for t in texts] == expected
    assert encoded == []
    assert tokens.count_text("ok", "other-model") == 0 and encoded == ["ok"]  # per model


def test_a_phase_encodes_each_message_once(monkeypatch) -> None:
    calls: list[int] = []
    real = tokens._encode_len

    def encode(text: str, model: str) -> int:
        calls.append(len(text))
        return real(text, model)
    monkeypatch.setattr(tokens, "_encode_len", encode)
    messages: list[dict] = [{"role": "system", "content": "You are an agent."}]
    for step in range(50):
        args = json.dumps({"path": f"s/{step}.md", "content": "x " * 500})
        messages += [{"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{step}", "function": {"name": "write_file", "arguments": args}}]},
            {"role": "tool", "content": f"wrote s/{step}.md (1,000 bytes)"}]
        before = len(calls)
        tokens.count_messages(messages)
        # only this step's new texts, its arguments and its short result (the system prompt
        # and the tool name once), not the phase so far: short results were encoded anew on
        # every call
        assert len(calls) - before == (4 if step == 0 else 2)


def test_no_text_is_kept_alive() -> None:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(40):
            tokens.count_text(f"{i} " + "tool output " * 20_000)  # ~240 KB each
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert kept < 1_000_000, kept  # the texts were ~9.6 MB; the counts are numbers


def test_counts_kept_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(tokens._counts, "kept", 100)
    for i in range(250):
        tokens.count_text(f"text {i}")
    assert len(tokens._counts.answers) == 100
    tokens.count_text("text 150")  # used again: kept over older ones
    tokens.count_text("text new")
    assert (hash("text 150"), len("text 150"), "") in tokens._counts.answers
    assert (hash("text 151"), len("text 151"), "") not in tokens._counts.answers  # the oldest
    assert (hash("text 0"), len("text 0"), "") not in tokens._counts.answers


def test_argument_checks_hold_no_arguments_alive() -> None:
    from switchback.activities.model import prompt
    prompt._decodes_to_object.clear()
    big = json.dumps({"path": "a.md", "content": "x" * 500_000})
    assert prompt._json_object(big) and not prompt._json_object(big[:-1])
    assert all(not isinstance(part, str) or len(part) < 100
               for key in prompt._decodes_to_object.answers for part in key)
