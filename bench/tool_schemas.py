"""Schema tokens the creator job's tactical phase sends, with and without deferred tools.

    python -m switchback.bench.tool_schemas
"""

from __future__ import annotations

import json

from switchback.activities.config_files import load_config
from switchback.activities.model.tokens import count_text
from switchback.activities.tools import catalog  # noqa: F401 - registers the domain tools
from switchback.activities.tools.registry import openai_tool


def schema_tokens(names: list[str]) -> int:
    return count_text(json.dumps([openai_tool(n) for n in names]))


def main() -> None:
    tools = load_config("creator").config.tools
    loaded = tools.for_phase("tactical")
    deferred = tools.model_copy(update={"deferred": list(tools.domain)}).for_phase("tactical")
    a, b = schema_tokens(loaded), schema_tokens(deferred)
    print("creator, tactical phase: tool schema tokens per model call (cl100k_base)")
    print(f"  all domain tools sent:   {a:>5}  ({', '.join(loaded)})")
    print(f"  domain tools deferred:   {b:>5}  ({', '.join(deferred)})")
    print(f"  saved per call: {a - b} tokens ({(a - b) / a:.0%}); a tool_search call "
          "loads the tools a phase needs")


if __name__ == "__main__":
    main()
