"""`tool_search(query)`: BM25 over the deferred tools' names and descriptions.

Deferred domain tools (config `tools.deferred`) are not sent to the model, which
keeps their schemas out of every prompt. A search loads the best 3 matches
(`ToolLimits.search_results`: SEARCH_RESULTS in the contract) for the rest of the phase
(the workflow adds them to the phase's tool set). No vector store: the corpus is a few
dozen short descriptions, where BM25 on words is exact, cheap and explainable.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from switchback.activities.storage.files import ToolError, WorkspaceFiles
from switchback.activities.tools.registry import TOOLS, ToolResult, ToolSearchArgs
from switchback.workflows.contract import ToolLimits

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    out = []
    for w in _WORD.findall(text.lower().replace("_", " ")):
        out.append(w[:-1] if len(w) > 3 and w.endswith("s") else w)  # plural-insensitive
    return out


def bm25(query: str, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> list[tuple]:
    """[(score, name)] best first, scores > 0 only."""
    tokens = {name: words(f"{name} {name} {text}") for name, text in docs.items()}
    avg = sum(len(t) for t in tokens.values()) / max(1, len(tokens))
    df = Counter(w for t in tokens.values() for w in set(t))
    n = len(tokens)
    scores = []
    for name, toks in tokens.items():
        tf = Counter(toks)
        score = 0.0
        for q in set(words(query)):
            if q not in tf:
                continue
            idf = math.log(1 + (n - df[q] + 0.5) / (df[q] + 0.5))
            score += idf * tf[q] * (k1 + 1) / (tf[q] + k1 * (1 - b + b * len(toks) / avg))
        if score > 0:
            scores.append((round(score, 4), name))
    return sorted(scores, key=lambda s: (-s[0], s[1]))


async def tool_search(files: WorkspaceFiles, a: ToolSearchArgs, limits: ToolLimits,
                      descriptions: dict[str, str] | None = None) -> ToolResult:
    """`descriptions`: the job's recorded tools (MCP tools among them), else the registry's."""
    known = descriptions if descriptions is not None else {n: s.description
                                                            for n, s in TOOLS.items()}
    docs = {n: known[n] for n in limits.deferred if n in known}
    if not docs:
        raise ToolError("no_deferred_tools", "there are no further tools to search")
    hits = bm25(a.query, docs)[:limits.search_results]
    if not hits:
        return ToolResult(f"No tool matches '{a.query}'. Searchable tools: "
                          f"{', '.join(sorted(docs))}")
    lines = [f"- {name}: {docs[name]}" for _, name in hits]
    return ToolResult("Loaded these tools; you can call them from your next turn on:\n"
                      + "\n".join(lines), tools_added=[name for _, name in hits])
