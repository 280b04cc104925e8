"""A large document through the document tools (issue #18, item 3), SeaweedFS only.

A Markdown document of N MB (a '#' heading every ~40 paragraphs of prose) is put under
`documents/`, then, through the tool handlers the tool activity runs (activities/tools/
documents.py via packages.handler, a fresh `WorkspaceFiles` per call as one activity attempt
has):

* `extract_document_text` -> `extracted/<name>.txt` (GET the document, parse in a thread,
  PUT the text);
* `chunk_document` -> `chunks/chunk_NNN.md` + `chunks/manifest.json`, first and again (a
  re-chunk: every chunk is rewritten in place);
* `read_file` of 20,000 characters from the middle of the extracted text (a model reading on).

`max_file_bytes` is raised above the document's size (the default, 5 MB, refuses anything
larger). Peak RSS is the benchmark process's (`ru_maxrss`), sizes run small to large so
each figure is that size's peak.

    python -m switchback.bench.document_growth [--sizes-mb 1,10,100]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time
import uuid
from typing import Any

from switchback.activities.storage.files import WorkspaceFiles
from switchback.activities.storage.s3 import S3Store
from switchback.activities.tools.catalog import HANDLERS
from switchback.activities.tools.file_tools import read_file
from switchback.activities.tools.registry import ReadFileArgs
from switchback.bench.harness import machine_line, seaweed_store
from switchback.workflows.contract import ToolLimits, WorkspaceRef
from switchback_documents.document_tools import DocumentArgs

BUCKET = "switchback"
SENTENCE = "The retention period for invoices is ten years after the end of the year. "
PARAGRAPH = SENTENCE * 6 + "\n\n"


def document(mb: int) -> str:
    parts, size, k = [], 0, 0
    while size < mb << 20:
        k += 1
        part = f"# Section {k}\n\n" + PARAGRAPH * 40
        parts.append(part)
        size += len(part)
    return "".join(parts)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def row(s3: S3Store, mb: int) -> dict[str, Any]:
    ws = WorkspaceRef(bucket=BUCKET, job_id=f"doc-{mb}mb-{uuid.uuid4().hex[:6]}")
    limits = ToolLimits(read_max_chars=20_000, max_file_bytes=(mb + 10) << 20, min_todos=1,
                        max_todos=20)
    text = document(mb)
    await s3.put(BUCKET, f"{ws.job_id}/documents/big.md", text.encode(), "text/markdown")
    del text
    out: dict[str, Any] = {}

    async def run(label: str, name: str, args: Any) -> str:
        t0 = time.perf_counter()
        result = await HANDLERS[name](WorkspaceFiles(s3, ws), args, limits)
        out[label] = (time.perf_counter() - t0) * 1000
        return str(result.text)
    doc = DocumentArgs(path="documents/big.md")
    await run("extract_document_text", "extract_document_text", doc)
    said = await run("chunk_document", "chunk_document", doc)
    out["chunks"] = int(said.split(" into ")[1].split(" ")[0])
    await run("chunk_document again", "chunk_document", doc)
    middle = (mb << 20) // 2
    await run("read_file (20,000 chars)", "read_file", ReadFileArgs(
        path="extracted/big.txt", offset=middle))
    assert HANDLERS["read_file"] is read_file
    out["peak RSS MB"] = rss_mb()
    return out


async def measure(sizes: list[int]) -> dict[int, dict[str, Any]]:
    async with seaweed_store(BUCKET, "switchback-docs-") as s3:
        return {mb: await row(s3, mb) for mb in sizes}


def table(rows: dict[int, dict[str, Any]], rss0: float) -> str:
    ops = list(next(iter(rows.values())))
    lines = [f"a large document through the document tools, SeaweedFS direct - {machine_line()}",
             f"Markdown, ms unless named; peak RSS of the process (idle {rss0:.0f} MB)", "",
             "| operation | " + " | ".join(f"{mb} MB" for mb in rows) + " |",
             "| --- |" + " ---: |" * len(rows)]
    for op in ops:
        lines.append(f"| {op} | " + " | ".join(
            f"{r[op]:,.0f}" if isinstance(r[op], (int, float)) else str(r[op])
            for r in rows.values()) + " |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes-mb", default="1,10,100")
    a = p.parse_args()
    rss0 = rss_mb()
    rows = asyncio.run(measure([int(s) for s in a.sizes_mb.split(",") if s.strip()]))
    print(table(rows, rss0))


if __name__ == "__main__":
    main()
