"""`switchback console` in a real browser (headless Chromium, tests/browser.py), against the
test stack: a job's answer grows on its page as the scripted model streams it; the worker is
SIGKILLed mid-reply and the page, reloaded meanwhile, shows the retried attempt's text once;
a gated tool is approved from the page, a follow-up instruction typed on it starts a turn,
and cancel from the page ends the job as the CLI's cancel does. Screenshots go to
$SWITCHBACK_SCREENSHOTS (docs/ui-console.png comes from here)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest

from tests import browser
from tests.conftest import running_worker
from tests.console_server import console
from tests.scripts import call, step
from tests.test_durability import wait_started, worker_process
from tests.test_live_stream import SAID, WORDS, start_streaming_job
from tests.waits import wait_state

pytestmark = pytest.mark.skipif(browser.skip_reason() is not None,
                                reason=browser.skip_reason() or "")


def shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("SWITCHBACK_SCREENSHOTS") or tmp_path)


async def stream_text(page) -> str:
    return await page.inner_text("#stream")


async def wait_stream(page, text: str, timeout: float = 60) -> str:
    deadline = asyncio.get_running_loop().time() + timeout
    while text not in (found := await stream_text(page)):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{text!r} not in the page's stream:\n{found[-1500:]}")
        await asyncio.sleep(0.1)
    return found


async def test_the_answer_grows_on_the_page_once_across_a_kill_and_a_reload(
        client, task_queue, start_job, model_server, s3, tmp_path):
    first = worker_process(client, task_queue, tmp_path / "w1.log")
    second = None
    try:
        await wait_started(tmp_path / "w1.log")
        handle = await start_streaming_job(start_job, model_server)
        async with console(client) as url, browser.browser() as ctx:
            page = await ctx.new_page()
            page.set_default_timeout(30_000)
            await page.goto(f"{url}/jobs/{handle.id}", wait_until="load")
            shown = await wait_stream(page, "Let me look around first.")
            await asyncio.sleep(0.8)
            grown = await stream_text(page)
            assert len(grown) > len(shown) and WORDS not in shown  # growing, not done
            os.killpg(first.pid, signal.SIGKILL)  # mid-reply
            first.wait(10)
            second = worker_process(client, task_queue, tmp_path / "w2.log")
            await page.reload(wait_until="load")  # mid-job: the page starts again
            text = await wait_stream(page, "== end: completed", 120)
            await page.wait_for_function(
                "document.getElementById('job-status').textContent === 'completed'")
            await browser.wait_for_texts(page, ["verified:"])  # the result's panel
            await browser.screenshot(page, shots(tmp_path) / "ui-console.png")
            await page.goto(url, wait_until="load")  # the job list
            listed = await browser.wait_for_texts(page, [handle.id, "completed"])
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    assert (await handle.result()).status == "completed"
    assert text.count("Let me look around first.") == 1, text
    assert text.count(WORDS) == 1 and SAID in text, text
    assert "-> list_files" in text and "<- list_files" in text
    assert "job" in listed


GATED = {"extends": "creator", "strategy": "react", "approval_required": ["delete_file"],
         "tools": {"workspace": ["read_file", "write_file", "list_files", "search_files",
                                 "delete_file"]},
         "follow_up": {"wait_seconds": 600}, "live_token_seconds": 0.2,
         "llm": {"heartbeat_timeout_seconds": 2}}
FOLLOW_UP = "Also write notes/c.md about gamma."


def gated_turns() -> list[dict]:
    return [step(call("write_file", path="notes/a.md", content="alpha\n"),
                 call("write_file", path="scratch.md", content="tmp")),
            step(call("delete_file", path="scratch.md")),
            step(call("job_complete", summary="wrote notes/a.md", deliverables=["notes/a.md"],
                      confidence=0.9)),
            {**step(call("write_file", path="notes/c.md", content="gamma\n"),
                    content="Gamma next. " + WORDS), "chunk_ms": 150},
            step(call("job_complete", summary="added notes/c.md", deliverables=["notes/c.md"],
                      confidence=0.9))]


async def test_approve_instruct_and_cancel_from_the_page(client, task_queue, start_job,
                                                         model_server, s3, tmp_path):
    async with running_worker(client, task_queue):
        handle = await start_job(gated_turns(), model_server, config=GATED, documents=[],
                                 instructions="Write notes/a.md.")
        async with console(client) as url, browser.browser() as ctx:
            page = await ctx.new_page()
            page.set_default_timeout(30_000)
            page.on("dialog", lambda d: asyncio.ensure_future(d.accept()))
            await page.goto(f"{url}/jobs/{handle.id}", wait_until="load")
            await page.get_by_role("button", name="Approve").click()  # waits for it
            await wait_stream(page, "approved: delete_file")
            await wait_state(handle, lambda s: s.status == "waiting_for_instructions")
            await page.fill("#instruction", FOLLOW_UP)
            await page.click("#instruct")
            await wait_stream(page, "== turn 2")
            await wait_stream(page, "Gamma next.")  # turn 2's answer, being written
            await page.click("#cancel")
            text = await wait_stream(page, "== end: cancelled", 60)
            await browser.wait_for_texts(page, ["cancel requested for " + handle.id])
        outcome = await handle.describe()
    assert outcome.status is not None and outcome.status.name == "CANCELED"
    done = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert done["status"] == "cancelled"
    assert await s3.get("switchback", f"{handle.id}/scratch.md") is None  # approved: ran
    assert "waiting for approval: delete_file" in text
