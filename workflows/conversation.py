"""The current conversation as the workflow tracks it: a reference, never the messages.

Messages live in the workspace store (activities/storage/conversations.py). The
workflow knows the conversation's key, how many messages it has, where the last
assistant message is, how much of it is folded into the running summary, and the
few messages it made itself (`inline`: kickoff, nudges, control-tool results, short
tool results), which the next model call stores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from switchback.workflows.contract import InlineMessage


@dataclass
class Conversation:
    key: str = ""
    length: int = 0  # messages stored (or to be stored with the next call)
    inline: list[InlineMessage] = field(default_factory=list)
    last_assistant: int = -1
    summary_upto: int = 0  # messages folded into the running summary
    summaries: int = 0  # summaries made in this run
    token_ratio: float = 1.0  # reported / estimated prompt tokens of the last call
    last_call_ms: int = -1  # how long the last model call took (-1: none in this run)
    local_in_a_row: int = 0  # model calls run as local activities since the last through the server

    def start(self, key: str) -> tuple[list[InlineMessage], str]:
        """Begin a new, empty conversation; return the old one's unsent messages and key."""
        closing = (self.inline, self.key)
        self.key, self.length, self.inline, self.summary_upto = key, 0, [], 0
        return closing

    def add(self, role: Literal["user", "tool"], content: str, call_id: str | None = None) -> None:
        """A message the workflow made, at the next index."""
        self.inline.append(InlineMessage(index=self.length, role=role, content=content,
                                         tool_call_id=call_id))
        self.length += 1

    def reserve(self) -> int:
        """The index of a tool message a tool activity stores itself."""
        self.length += 1
        return self.length - 1
