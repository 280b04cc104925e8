"""A bounded memo of a function of long texts, keyed by each text's hash and length instead of
the text: the worker keeps the answers (numbers, flags), never the texts (tool output and
tool-call arguments, up to hundreds of KB each), alive. Python keeps a str's hash, so asking
about the conversation cache's own strings again costs a dict lookup. Two texts of one length
with one 64-bit hash would share an answer: among 32,768 texts kept the odds are about 3 in
10^11, and the answers kept here are estimates (token counts) or a check whose wrong answer
an endpoint would refuse (is a tool call's arguments a JSON object)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class TextMemo(Generic[T]):
    def __init__(self, fn: Callable[[str, str], T], kept: int) -> None:
        self.fn = fn
        self.kept = kept  # answers remembered, least recently used dropped first
        self.answers: OrderedDict[tuple[int, int, str], T] = OrderedDict()
        self._lock = threading.Lock()  # (large prompts are counted in threads)

    def __call__(self, text: str, extra: str = "") -> T:
        key = (hash(text), len(text), extra)
        with self._lock:
            if key in self.answers:
                self.answers.move_to_end(key)
                return self.answers[key]
        answer = self.fn(text, extra)
        with self._lock:
            self.answers[key] = answer
            while len(self.answers) > self.kept:
                self.answers.popitem(last=False)
        return answer

    def clear(self) -> None:
        with self._lock:
            self.answers.clear()
