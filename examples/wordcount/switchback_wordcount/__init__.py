"""Word statistics of workspace files: an example switchback tool package.

Two tools, one in each style the API takes: `word_count` with annotated parameters,
`word_report` with a pydantic model. Registered by pyproject.toml's entry point.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Annotated

from pydantic import BaseModel, Field

from switchback import ToolContext, ToolError, ToolResult, tool

WORD = re.compile(r"\w+")


@tool
async def word_count(ctx: ToolContext, path: str,
                     top: Annotated[int, Field(ge=1, le=50)] = 5) -> str:
    """Count the words of a workspace text file and list the most common ones.

    Args:
        path: the file, relative to the workspace, e.g. 'documents/report.md'
        top: how many of the most common words to list (1-50)
    """
    words = WORD.findall((await ctx.files.read_text(path)).lower())
    if not words:
        raise ToolError("no_words", f"'{path}' contains no words")
    common = ", ".join(f"{w} ({n})" for w, n in Counter(words).most_common(top))
    return f"{path}: {len(words)} words, {len(set(words))} distinct; most common: {common}"


class ReportArgs(BaseModel):
    paths: list[str] = Field(min_length=1, description="Workspace files to count")
    out: str = Field("reports/word_counts.json", description="Where to write the report")


@tool
async def word_report(ctx: ToolContext, args: ReportArgs) -> ToolResult:
    """Write the word counts of several workspace files to a JSON report."""
    counts = {p: len(WORD.findall(await ctx.files.read_text(p))) for p in args.paths}
    path = await ctx.files.write_text(args.out, json.dumps({"words": counts}, indent=1))
    return ToolResult(f"Wrote the word counts of {len(counts)} files to {path}.")
