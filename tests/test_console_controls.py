"""The console's controls and event stream over plain HTTP, against the test stack (no
browser): pause, resume and a rewind with its restore phase reach the job as the CLI's do; a
control the job refuses, one with a bad field and one for a job that does not exist are
answered in plain words with their own status codes; a reconnect with `Last-Event-ID` (or
`?after=`) resumes the job's events after that one, none lost, none twice."""

from __future__ import annotations

import json

import httpx
import pytest
from temporalio.client import WorkflowFailureError

from switchback.operate.console.auth import HEADER
from tests.conftest import running_worker
from tests.console_server import console
from tests.scripts import full_job
from tests.test_approvals import GATED
from tests.test_approvals import script as gated_script
from tests.waits import wait_state

CONTROL = {HEADER: "1"}


async def held_at_the_gate(start_job, model_server):
    """A job whose `delete_file` waits for a person's approval, and its state then."""
    handle = await start_job(gated_script(), model_server, config=GATED, instructions="x",
                             documents=[])
    return handle, await wait_state(handle, lambda s: bool(s.pending_approvals))


async def test_pause_resume_and_a_rewind_with_its_restore_phase_reach_the_job(
        client, task_queue, start_job, model_server, s3) -> None:
    async with running_worker(client, task_queue), console(client) as url, \
            httpx.AsyncClient(timeout=30, headers=CONTROL) as http:
        handle, _ = await held_at_the_gate(start_job, model_server)
        api = f"{url}/api/jobs/{handle.id}"
        paused = await http.post(f"{api}/pause", json={})
        assert paused.status_code == 200, paused.text
        assert paused.json()["message"] == f"sent pause to {handle.id}"
        await wait_state(handle, lambda s: s.paused)
        assert (await http.post(f"{api}/resume", json={})).status_code == 200
        await wait_state(handle, lambda s: not s.paused)
        sent = await http.post(f"{api}/rewind", json={"issue": "start over", "restore_phase": 1})
        assert sent.status_code == 200, sent.text
        assert "restore the workspace to the start of phase 1" in sent.json()["message"]
        st = await wait_state(handle, lambda s: s.rewinds_waiting == 1)
        assert not st.rejected, st.rejected
        assert (await http.post(f"{api}/cancel", json={})).status_code == 200
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        view = (await http.get(api)).json()
    assert view["execution"] == "CANCELED"


async def test_refused_and_bad_controls_are_answered_in_plain_words(
        client, task_queue, start_job, model_server, s3) -> None:
    async with running_worker(client, task_queue), console(client) as url, \
            httpx.AsyncClient(timeout=30, headers=CONTROL) as http:
        handle, st = await held_at_the_gate(start_job, model_server)
        api = f"{url}/api/jobs/{handle.id}"
        nope = await http.post(f"{api}/approve", json={"call_id": "call_nope", "approved": True})
        assert nope.status_code == 409 and "call_nope" in nope.json()["error"], nope.text
        bad = await http.post(f"{api}/rewind", json={"issue": "x", "restore_phase": "two"})
        assert bad.status_code == 400, bad.text
        assert bad.json()["error"] == "restore_phase: must be a phase number"
        odd = await http.post(f"{api}/launch", json={})
        assert odd.status_code == 400 and "unknown control 'launch'" in odd.json()["error"]
        gone = await http.post(f"{url}/api/jobs/no-such-job/pause", json={})
        assert gone.status_code == 404 and gone.json()["error"].startswith("Temporal: ")
        for answer in (nope, bad, odd, gone):
            assert "Traceback" not in answer.text
        call = st.pending_approvals[0].call_id
        granted = await http.post(f"{api}/approve", json={"call_id": call, "approved": True})
        assert granted.status_code == 200, granted.text
        await handle.result()
        view = (await http.get(api)).json()
    assert view["execution"] == "COMPLETED" and view["result"]["status"] == "completed"


async def events(http: httpx.AsyncClient, url: str, **headers: str) -> list[tuple[str, str]]:
    """The (id, data) of each event of the job's stream, until the console closes it."""
    found: list[tuple[str, str]] = []
    current: dict[str, str] = {}
    async with http.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith(("id:", "event:", "data:")):
                key, _, value = line.partition(":")
                current[key] = value.strip()
            elif line == "" and current:
                if current.get("event") == "closed":
                    return found
                found.append((current.get("id", ""), current.get("data", "")))
                current = {}
    raise AssertionError(f"the stream ended without `closed` after {len(found)} events")


async def test_a_reconnect_resumes_after_its_last_event(client, task_queue, start_job,
                                                        model_server, s3) -> None:
    async with running_worker(client, task_queue), console(client) as url, \
            httpx.AsyncClient(timeout=60) as http:
        handle = await start_job(full_job(1), model_server, instructions="x", documents=[],
                                 config="creator")
        await handle.result()
        stream = f"{url}/api/jobs/{handle.id}/events"
        everything = await events(http, stream)
        resumed = await events(http, stream, **{"Last-Event-ID": "4"})
        after = await events(http, stream + "?after=4")
    assert [int(i) for i, _ in everything] == list(range(len(everything)))
    assert len(everything) > 6 and json.loads(everything[-1][1])["kind"] == "end"
    assert resumed == everything[5:] and after == everything[5:]
