"""The Temporal web UI, in a real browser (headless Chromium driven by playwright), shows a
job to someone who has nothing else: what it is for, where it is, what each step did, how
it ended - with every worker stopped, after the end - and takes the steering actions.

Skipped only where no browser is installed (tests/browser.py says why); CI installs
Chromium from the Debian packages (.ci/run). Screenshots go to $SWITCHBACK_SCREENSHOTS
(default: the test's tmp dir); docs/ui-*.png in the README come from here.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import quote

import pytest
import pytest_asyncio
import yaml
from temporalio.client import Client, WorkflowFailureError
from temporalio.testing import WorkflowEnvironment

from switchback.activities.storage.payloads import data_converter
from switchback.activities.storage.s3 import S3Store
from switchback.devstack.processes import free_port, venv_bin
from switchback.devstack.temporal_server import temporal_extra_args
from switchback.workflows.contract import JobInput, JobResult, JobState
from tests import browser
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, full_job, step, tactical, transition
from tests.test_approvals import GATED
from tests.waits import wait_for_requests, wait_state

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(browser.skip_reason() is not None,
                                reason=browser.skip_reason() or "")
COLUMNS = ["Status", "Workflow ID", "SwitchbackStatus", "SwitchbackPhase", "SwitchbackTodos",
           "SwitchbackTodo", "SwitchbackTokens", "SwitchbackCostUsd", "SwitchbackLastError"]


class UiServer:
    def __init__(self, env: WorkflowEnvironment, url: str) -> None:
        self.env, self.url = env, url

    @property
    def client(self) -> Client:
        return self.env.client


@pytest_asyncio.fixture(scope="module")
async def ui(s3_server, s3, model_server) -> AsyncIterator[UiServer]:
    """A dev server of its own, with its web UI on a free port (the session's has none)."""
    port = free_port()
    store = S3Store(s3_server.endpoint_url)
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=venv_bin("temporal"), dev_server_extra_args=temporal_extra_args(),
        data_converter=data_converter(store), ui=True, ui_port=port)
    yield UiServer(env, f"http://127.0.0.1:{port}")
    await env.shutdown()
    store.close()


def shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("SWITCHBACK_SCREENSHOTS") or tmp_path)


async def starter(ui: UiServer, *args: str) -> str:
    """starter.py against the UI's server (in a subprocess: the worker shares this loop)."""
    env = {**os.environ, "TEMPORAL_ADDRESS": ui.client.service_client.config.target_host}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "starter.py", *args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 180)
    return out.decode()


async def test_a_finished_job_reads_on_the_page_with_no_worker(ui, model_server, s3, tmp_path):
    tag = uuid.uuid4().hex[:6]
    done, failed, cancelled = f"ui-done-{tag}", f"ui-failed-{tag}", f"ui-cancelled-{tag}"
    model_server.set_script(done, full_job(2))
    model_server.set_script(failed, bootstrap()[:3] + [{"error": {"status": 400}}])
    model_server.set_script(cancelled, bootstrap() + [{**tactical(5)[0], "latency_ms": 30000}])
    task = tmp_path / "task.md"
    task.write_text("# Extract the retention rules\n\nFrom the three documents.\n")
    queue = f"ui-{tag}"
    async with running_worker(ui.client, queue):
        for job in (done, failed):
            await starter(ui, "start", "--config", "creator", "--id", job, "--instructions",
                          str(task), "--task-queue", queue, "--wait")
        handle = await ui.client.start_workflow(
            "AgentJob", JobInput(config="creator", instructions="x", documents=[]),
            id=cancelled, task_queue=queue, result_type=JobResult,
            static_summary="creator: cancel me")
        await wait_for_requests(model_server, cancelled, len(bootstrap()) + 1)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError):
            await handle.result()
    # every worker stopped: what follows comes from the server's records alone
    status = await starter(ui, "status", done)
    assert "no worker answered the `state` query" in status and "### COMPLETED" in status
    out = shots(tmp_path)
    async with browser.browser() as ctx:
        await browser.list_columns(ctx, COLUMNS)
        page = ctx.pages[0] if ctx.pages else await ctx.new_page()
        query = quote(f'WorkflowId IN ("{done}", "{failed}", "{cancelled}")')
        await page.goto(f"{ui.url}/namespaces/default/workflows?query={query}", wait_until="load")
        await browser.wait_for_texts(page, [done, failed, cancelled, "SwitchbackTodos"])
        rows = page.locator('[data-testid="workflows-summary-configurable-table-row"]')
        cells = {}
        for row in await rows.all():
            values = [c.strip() for c in await row.locator("td").all_inner_texts()]
            cells[values[3]] = values[2:]
        assert cells[done][:6] == ["COMPLETED", done, "completed", "strategic", "3/3", ""], cells
        assert float(cells[done][7]) > 0 and int(cells[done][6]) > 0
        assert cells[failed][:5] == ["FAILED", failed, "failed", "strategic", "1/4"]
        assert "model call failed (phase 1 strategic step 4)" in cells[failed][8]
        assert cells[cancelled][:3] == ["CANCELED", cancelled, "cancelled"]
        await browser.screenshot(page, out / "ui-list.png")

        page = await browser.open_workflow(ctx, ui.url, done, "user-metadata")
        text = await browser.wait_for_texts(page, [
            "creator: Extract the retention rules",  # static summary
            "phase_alternation", "gpt-4o-mini", "gobd_retention.md"])  # static details
        assert "COMPLETED" in text
        await browser.screenshot(page, out / "ui-job-metadata.png")
        page = await browser.open_workflow(ctx, ui.url, done, "memo")
        await browser.wait_for_texts(page, [
            "### COMPLETED · phase 5 (strategic)", "**3/3 todos**", "☑ 3. If every deliverable",
            '"status": "completed"', '"todos": "3/3"'])
        page = await browser.open_workflow(ctx, ui.url, done)  # the timeline, newest first
        text = await browser.wait_for_texts(page, [
            "call_model • phase 5 strategic step 3 · todo 3. If every deliverable",
            "call_model • phase 4 tactical step 5 · todo 5. Phase 2 task 5",
            "tool.write_file", "archive_phase", "snapshot_phase",
            "write_output", '"status": "completed"'])
        status = page.locator('[data-testid="execution-status"]:visible').first
        assert (await status.inner_text()).strip() == "COMPLETED"
        await browser.screenshot(page, out / "ui-job-timeline.png")
        await page.get_by_role("button", name="Descending").first.click()  # oldest first
        text = await browser.wait_for_texts(page, [
            # local activities at the start (patch local-start): named by their type alone
            "load_config", "create_workspace", "list_tools",
            "call_model • phase 1 strategic step 1 · todo 1.", "tool.list_files",
            "tool.read_file", "read_memory"])
        assert "run_tool" not in text  # no anonymous tool calls left
        page = await browser.open_workflow(ctx, ui.url, failed)
        await browser.wait_for_texts(page, ["FAILED", "model call failed (phase 1 strategic "
                                            "step 4): ModelRequestRejected"])
        page = await browser.open_workflow(ctx, ui.url, failed, "search-attributes")
        await browser.wait_for_texts(page, ['"SwitchbackStatus": "failed"',
                                            '"SwitchbackLastError": "model call failed'])
        page = await browser.open_workflow(ctx, ui.url, cancelled, "memo")
        await browser.wait_for_texts(page, ["### CANCELLED · phase 2 (tactical)",
                                            "☒ 1. Task 1"])


async def send(page, kind: str, name: str, data: str | None,
               done: Callable[[], Awaitable[bool]]) -> None:
    """More Actions -> Send a Signal / Send an Update: pick `name` (the live worker lists
    them), type `data` (JSON), submit; then wait until the dialog closes or `done()` (the
    job took it: under load the dialog can stay open long after the server answered)."""
    await page.reload(wait_until="load")  # a fresh form: the UI keeps an earlier dialog's state
    more = page.locator("button:visible", has_text="More Actions").first
    await more.wait_for()
    await more.click()
    await page.get_by_role("menuitem", name=f"Send a{'n' if kind == 'Update' else ''} {kind}"
                           ).click()
    dialog = page.locator("[role=dialog]:visible, dialog[open]:visible").first
    await dialog.wait_for()
    picker = dialog.locator("[data-testid$=-select-button]").first
    chosen = dialog.locator("input[id$='-select']").first
    # `rewind` and the `instruct` signal reach the job's catch-all signal handler (so no
    # payload can fail it, see workflows/steering.py): the UI lists no such name, so they
    # are sent as "Custom"
    custom = kind == "Signal" and name in ("rewind", "instruct")
    pick = "Custom" if custom else name
    for _ in range(40):  # the declared names come from the live worker (a query)
        option = page.get_by_role("option", name=re.compile(rf"^{re.escape(pick)}\b")).first
        if not await option.is_visible() and await picker.count():
            await picker.click()  # open the list
            await page.wait_for_timeout(400)
        if await option.is_visible():
            try:
                await option.click(timeout=3000)
            except Exception:  # the list closed (re-rendered) meanwhile: open it again
                continue
            await page.wait_for_timeout(300)
            if custom or await chosen.input_value() == name:
                break
        await page.wait_for_timeout(500)
    else:
        raise AssertionError(f"{pick!r} could not be chosen in the {kind} dialog")
    if custom:  # the free-text name the UI shows for "Custom"
        named = dialog.locator("input#signal-name, input[id*=name]:visible").first
        await named.wait_for()
        await named.fill(name)
    if data is not None:
        await dialog.locator("[contenteditable=true]").first.click()
        await page.keyboard.type(data)
    if kind == "Update":  # UI 2.54.1 sends nothing without an update id ("optional")
        await dialog.get_by_role("button", name="Random UUID").click()
    await dialog.get_by_role("button", name="Submit").click()
    for _ in range(120):
        if not await dialog.is_visible():
            return
        if await done():  # the job has it; the dialog closes (or is closed) before the next
            try:
                await dialog.wait_for(state="hidden", timeout=20000)
            except Exception:
                await page.keyboard.press("Escape")
                await dialog.wait_for(state="hidden")
            return
        await page.wait_for_timeout(500)
    raise AssertionError(f"the {kind} dialog stayed open and the job did not take the {kind}: "
                         f"{await dialog.inner_text()}")


def state_is(handle, ok: Callable[[JobState], bool]) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        try:
            return ok(await handle.query("state", result_type=JobState))
        except Exception:  # the job ended (no worker answers) or is between tasks
            return False
    return check


async def test_steering_from_the_ui(ui, model_server, s3, tmp_path):
    """Pause, a rewind that restores, approve, resume and cancel, each sent from the page.
    The job waits for an approval meanwhile, so nothing depends on how fast the UI is."""
    tag = uuid.uuid4().hex[:6]
    job, doomed = f"ui-steer-{tag}", f"ui-cancel-{tag}"
    model_server.set_script(job, bootstrap() + tactical(1) + [
        step(call("write_file", path="tmp.md", content="x")),
        step(call("delete_file", path="tmp.md"))]  # waits for `approve`
        + transition("Revised", 5, memory="rewound") + tactical(5, "r")
        + full_job(1)[-4:-1] + finish()[-1:])  # its job_complete claims no file it did not write
    model_server.set_script(doomed, bootstrap() + [{**tactical(5)[0], "latency_ms": 30000}])
    queue = f"ui-{tag}"
    async with running_worker(ui.client, queue), browser.browser() as ctx:
        handle = await ui.client.start_workflow(
            "AgentJob", JobInput(config=GATED, instructions="x", documents=[]), id=job,
            task_queue=queue, result_type=JobResult)
        st = await wait_state(handle, lambda s: bool(s.pending_approvals), 120)
        page = await browser.open_workflow(ctx, ui.url, job)
        await send(page, "Signal", "pause", None, state_is(handle, lambda s: s.paused))
        await wait_state(handle, lambda s: s.paused)
        await send(page, "Signal", "rewind", '{"issue": "sent from the web UI", '
                   '"restore_phase": 2}', state_is(handle, lambda s: s.rewinds_waiting == 1))
        await wait_state(handle, lambda s: s.rewinds_waiting == 1)  # at the next boundary
        call_id = st.pending_approvals[0].call_id
        await send(page, "Update", "approve", f'{{"call_id": "{call_id}", "approved": true, '
                   '"note": "ok from the UI"}', state_is(handle, lambda s: not s.pending_approvals))
        await wait_state(handle, lambda s: s.status == "paused")  # the boundary: paused
        assert await s3.get("switchback", f"{job}/work/a_1.md") == b"result a 1\n"
        await send(page, "Signal", "resume", None, state_is(handle, lambda s: not s.paused))
        result = await asyncio.wait_for(handle.result(), 120)
        assert result.status == "completed"
        arch = yaml.safe_load(await s3.get("switchback", f"{job}/archive/phase_2.yaml"))
        assert arch["issue"].startswith("sent from the web UI")
        assert "restored to the start of phase 2" in arch["issue"]
        assert await s3.get("switchback", f"{job}/archive/rewound/2/work/a_1.md") == (
            b"result a 1\n")
        assert await s3.get("switchback", f"{job}/work/a_1.md") is None
        updates = [e.workflow_execution_update_completed_event_attributes.outcome.success
                   for e in (await handle.fetch_history()).events if e.HasField(
                       "workflow_execution_update_completed_event_attributes")]
        assert [u.payloads[0].data for u in updates] == [
            f'"approved delete_file call {call_id}"'.encode()]

        cancel = await ui.client.start_workflow(
            "AgentJob", JobInput(config="creator", instructions="x", documents=[]), id=doomed,
            task_queue=queue, result_type=JobResult)
        await wait_for_requests(model_server, doomed, len(bootstrap()) + 1)
        page = await browser.open_workflow(ctx, ui.url, doomed)
        await page.locator("button:visible", has_text="Request Cancellation").first.click()
        dialog = page.locator("[role=dialog]:visible, dialog[open]:visible").first
        await dialog.wait_for()
        await dialog.get_by_role("button", name="Confirm").click()
        with pytest.raises(WorkflowFailureError):
            await asyncio.wait_for(cancel.result(), 120)
        completion = yaml.safe_load(await s3.get("switchback", f"{doomed}/output/completion.json"))
        assert completion["status"] == "cancelled"
        await browser.screenshot(page, shots(tmp_path) / "ui-cancelled.png")


async def test_a_follow_up_instruction_from_the_ui(ui, model_server, s3, tmp_path):
    """A job that completed its turn says on its page that it waits for the next
    instruction and how to send it; `instruct` sent from the page as an Update is its turn 2,
    as a Signal (Custom) its turn 3."""
    from tests.strategy_scripts import INSTRUCTIONS
    from tests.test_follow_up import FOLLOW_UP, GAMMA, REACT, react_turns
    job = f"ui-follow-up-{uuid.uuid4().hex[:6]}"
    third = "Also write notes/d.md about delta."
    model_server.set_script(job, react_turns() + [
        step(call("write_file", path="notes/d.md", content="delta\n")),
        step(call("job_complete", summary="added notes/d.md", deliverables=["notes/d.md"],
                  confidence=0.9))])
    queue = f"ui-{job}"
    config = {**REACT, "follow_up": {"wait_seconds": 600, "max_turns": 3}}
    async with running_worker(ui.client, queue), browser.browser() as ctx:
        handle = await ui.client.start_workflow(
            "AgentJob", JobInput(config=config, instructions=INSTRUCTIONS, documents=[]),
            id=job, task_queue=queue, result_type=JobResult)
        await wait_state(handle, lambda s: s.status == "waiting_for_instructions", 120)
        page = await browser.open_workflow(ctx, ui.url, job, "memo")
        await browser.wait_for_texts(page, ["### WAITING_FOR_INSTRUCTIONS",
                                            "Turn 1 completed: waiting for the next instruction",
                                            "Send an Update `instruct`"])
        await browser.screenshot(page, shots(tmp_path) / "ui-waiting-for-instructions.png")
        page = await browser.open_workflow(ctx, ui.url, job)
        await send(page, "Update", "instruct", json.dumps(FOLLOW_UP),
                   state_is(handle, lambda s: s.turn == 2))
        await wait_state(handle, lambda s: s.status == "waiting_for_instructions"
                         and s.turn == 2, 120)
        await send(page, "Signal", "instruct", json.dumps(third),
                   state_is(handle, lambda s: s.turn == 3))
        result = await asyncio.wait_for(handle.result(), 120)  # max_turns 3: turn 3 ends it
    assert result.status == "completed" and result.summary == "added notes/d.md"
    assert await s3.get("switchback", f"{job}/notes/c.md") == GAMMA.encode()
    assert await s3.get("switchback", f"{job}/notes/d.md") == b"delta\n"
    text = (await s3.get("switchback", f"{job}/instructions.md")).decode()
    turn2 = text.index(f"\n\n## Follow-up instruction (turn 2)\n\n{FOLLOW_UP}\n")
    assert text.index(f"\n\n## Follow-up instruction (turn 3)\n\n{third}\n") > turn2
