"""The job report: a real job over a continue-as-new chain, then its chart and summary."""

from __future__ import annotations

import json
import re

import pytest
from PIL import Image
from temporalio.client import WorkflowFailureError

from switchback.operate.report import build_report
from tests.conftest import running_worker
from tests.scripts import bootstrap, full_job


@pytest.mark.parametrize("llm", [{}, {"local_calls_in_a_row": 3}], ids=["server", "local"])
async def test_report_of_a_continued_job(client, task_queue, start_job, model_server, s3,
                                         tmp_path, llm):
    """(`local`: the job's fast model calls run as local activities: their markers count.)"""
    config = {"extends": "creator", "continue_as_new": {"every_phases": 2}, "llm": llm}
    async with running_worker(client, task_queue):
        handle = await start_job(full_job(2), model_server, config=config, instructions="x",
                                 documents=[])
        result = await handle.result()
    assert result.status == "completed" and result.phases == 5
    png, md = await build_report(client, s3, None, handle.id, tmp_path / "reports")

    assert png.exists() and md.exists()
    with Image.open(png) as img:
        img.verify()
    with Image.open(png) as img:
        assert img.format == "PNG"
        assert img.size[0] >= 600 and img.size[1] >= 400, img.size
    assert png.stat().st_size > 10_000

    text = md.read_text()
    assert f"# Job report: {handle.id}" in text and f"]({png.name})" in text
    assert "**completed**" in text and "all phases done" in text
    rows = re.findall(r"^\| Phase (\d+) \| (\w+) \|.*\| (archive|history) \|$", text, re.M)
    assert [(int(n), kind, src) for n, kind, src in rows] == [
        (1, "strategic", "history"), (2, "tactical", "archive"), (3, "strategic", "history"),
        (4, "tactical", "archive"), (5, "strategic", "history")]
    # strategic numbers from history + tactical ones from the archive add up to the job's totals
    completion = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    cells = [line.split("|") for line in text.splitlines() if line.startswith("| Phase ")]
    steps = sum(int(c[5]) for c in cells)
    calls = sum(int(c[6]) for c in cells)
    tokens_in = sum(int(c[7].replace(",", "")) for c in cells)
    tokens_out = sum(int(c[8].replace(",", "")) for c in cells)
    assert (steps, calls, tokens_in, tokens_out) == (
        completion["steps"], completion["tool_calls"], completion["tokens_in"],
        completion["tokens_out"])
    assert f"{completion['tokens_in']:,} in" in text and "estimated cost | $" in text
    assert "| 3 (continue-as-new chain) |" in text
    assert text.count("continued as new") == 2
    assert "| call_model |" in text and "| write_file |" in text
    assert "No breaker tripped." in text


async def test_report_of_a_failed_job_shows_retries_and_failures(
        client, task_queue, start_job, model_server, s3, tmp_path):
    script = bootstrap()[:2] + [{"error": {"status": 500, "message": "boom"}},
                                {"error": {"status": 400, "message": "context too long"}}]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        with pytest.raises(WorkflowFailureError):
            await handle.result()
    png, md = await build_report(client, s3, "switchback", handle.id, tmp_path)
    text = md.read_text()
    assert png.exists() and "**failed**" in text and "(model_call_failed)" in text
    assert re.search(r"^\| call_model \| 3 \| 2 \| 1 \| 0 \| 0 \| 1 \|$", text, re.M), text
    step3 = r"^- call_model \(phase 1 strategic step 3 · todo 1\. .*\): "  # + the todo
    assert re.search(step3 + r"attempt 1: .*HTTP 500", text, re.M), text
    assert re.search(step3 + r".*HTTP 400.*context too long", text, re.M)
    assert re.search(r"^\| Phase 1 \| strategic \| Bootstrap: explore and plan \| failed \| 2 \|",
                     text, re.M)
    assert re.search(r"^\| `[0-9a-f-]+` \| failed: .*HTTP 400", text, re.M)

    with pytest.raises(LookupError, match="no workflow with id 'no-such-job'"):
        await build_report(client, s3, "switchback", "no-such-job", tmp_path)
