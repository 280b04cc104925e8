"""The hostile-input table (tests/hostile_cases.py), run: every case gets the error text its line
says and leaves the job in the state its line says; and no credential of the worker - the model
keys, the S3 secret, the search key, a password, a secret file - appears in any model request,
history or workspace file of any of these jobs.

All cases share one worker and run at once: the start-time cases each as a job started with
the `temporal` CLI; tool arguments and repaired model answers as the turns of one job, the
unreadable answers (retried) in another, the signals and the updates each sent to one running
job; answers that fail a job in two more.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.common import RawValue
from temporalio.service import RPCError

from switchback.workflows.contract import JobState
from tests import hostile_cases as table
from tests.conftest import running_worker
from tests.forge import forged_job
from tests.hostile_cases import (
    CUT,
    FAILS,
    FAILS_CLEANLY,
    REFUSED,
    REJECTED,
    REPAIRED,
    RETRIED,
    TABLE,
    TOOL_ERROR,
    Case,
    Raw,
)
from tests.leaks import history_places, leaks, places
from tests.recording_server import RecordingServer
from tests.scripts import bootstrap, call, finish, step, tactical, transition
from tests.waits import temporal_cli, wait_for_requests, wait_state

UID = uuid.uuid4().hex[:8]
CREATOR_TOOLS = ["extract_document_text", "chunk_document", "identify_requirement_candidates",
                 "cite_document", "write_requirement", "web_search"]


@dataclass
class World:
    """The worker's environment (its secrets) and what the jobs left behind."""

    client: Client
    queue: str
    model_server: Any
    s3: Any
    secrets: dict[str, str]
    values: dict[str, str]  # placeholder -> value
    tmp: Path
    attacker: Any = None  # a URL no endpoint declares (RecordingServer)
    search: Any = None  # the operator's search provider, a careless one (echoes its key)
    seen: dict[str, Any] = field(default_factory=dict)  # case id -> what it got
    jobs: list[str] = field(default_factory=list)  # every job of the table
    errors: dict[str, BaseException] = field(default_factory=dict)  # a run that broke off

    def fill(self, value: Any) -> Any:
        """`value` with its placeholders ($UID, $ROOT, $OPENAI_API_KEY, ...) filled in."""
        if isinstance(value, str):
            out = value
            for k, v in self.values.items():
                out = out.replace(k, v)
            return Raw(out) if isinstance(value, Raw) else out
        if isinstance(value, dict):
            return {self.fill(k): self.fill(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.fill(v) for v in value)
        return value

    def cli(self, *args: str) -> str:
        return temporal_cli(self.client, *args)


def secrets_environment(tmp, model_url: str, search_url: str) -> tuple[dict, dict, dict]:
    """(environment to set, secrets by name, placeholders): distinctive fake credentials, an
    operator document root with a symlink to a secret file, a second declared endpoint."""
    secrets = {"OPENAI_API_KEY": f"sk-table-OPENAI-{uuid.uuid4().hex}",
               "OTHER_LLM_KEY": f"sk-table-OTHER-{uuid.uuid4().hex}",
               "SWITCHBACK_WEB_SEARCH_KEY": f"search-table-KEY-{uuid.uuid4().hex}",
               "NEO4J_PASSWORD": f"neo4j-table-PASSWORD-{uuid.uuid4().hex}",
               "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"],
               "secret file": f"file-table-SECRET-{uuid.uuid4().hex}"}
    root = tmp / "operator-docs"
    (root / "sub").mkdir(parents=True)
    (root / "big.md").write_text("x" * 2000)
    (tmp / "private.env").write_text(secrets["secret file"])
    (root / "escape.txt").symlink_to(tmp / "private.env")
    endpoints = tmp / "endpoints.yaml"
    endpoints.write_text(yaml.safe_dump({"endpoints": {
        "default": {"base_url_env": "OPENAI_BASE_URL", "api_key_env": "OPENAI_API_KEY"},
        "other": {"base_url": model_url, "api_key_env": "OTHER_LLM_KEY",
                  "models": ["other-*"]}}}))
    env = {k: v for k, v in secrets.items() if k != "secret file"} | {
        "SWITCHBACK_ENDPOINTS_FILE": str(endpoints), "SWITCHBACK_DOCUMENT_ROOTS": str(root),
        "SWITCHBACK_WEB_SEARCH_URL": search_url, "SWITCHBACK_WORKSPACE_BUCKETS": "switchback"}
    values = {"$UID": UID, "$ROOT": str(root), "$OPENAI_API_KEY": secrets["OPENAI_API_KEY"]}
    return env, secrets, values


@pytest.fixture(scope="module")
async def world(client, model_server, s3, tmp_path_factory):
    """Run every case of the table once; the tests below read what each got."""
    with (RecordingServer(echo_auth=True) as search, RecordingServer() as attacker,
          pytest.MonkeyPatch.context() as mp):
        tmp = tmp_path_factory.mktemp("hostile")
        env, secrets, values = secrets_environment(tmp, model_server.base_url, search.url)
        values["$ATTACKER"] = attacker.url
        for k, v in env.items():
            mp.setenv(k, v)
        w = World(client, f"hostile-{UID}", model_server, s3, secrets, values, tmp,
                  attacker=attacker, search=search)
        started = asyncio.get_running_loop().time()
        async with running_worker(client, w.queue):
            runs = {FAILS: refused_at_start, TOOL_ERROR: tool_turns, RETRIED: retried_answers,
                    FAILS_CLEANLY: failing_answers, REJECTED: signals, REFUSED: updates}
            done = await asyncio.gather(*(run(w) for run in runs.values()),
                                        return_exceptions=True)
            w.errors = {then: e for then, e in zip(runs, done, strict=True)
                        if isinstance(e, BaseException)}
            w.seen["leaky control"] = await leaky_control(w)
            print(f"\nhostile table: {len(TABLE)} cases, {len(w.jobs)} jobs, "
                  f"{asyncio.get_running_loop().time() - started:.1f} s")
            yield w  # the worker stays: the `state` query of a finished job replays it


def cases(*thens: str) -> list[Case]:
    return [c for c in TABLE if c.then in thens]


# -- start-time cases: job input, configs, documents --------------------------------------


def start_input(c: Case, w: World) -> str:
    send = w.fill(c.send)
    if c.kind == "job input":
        return send
    if c.kind == "config":
        return json.dumps({"config": {"extends": "creator", **send}, "instructions": "x"})
    item = json.loads(send) if isinstance(send, Raw) else send
    body = json.dumps({"instructions": "x", "documents": [item]})
    if "config" in c.extra:
        body = json.dumps({"config": c.extra["config"], "instructions": "x",
                           "documents": [item]})
    return body.replace(json.dumps(item), send) if isinstance(send, Raw) else body


async def refused_at_start(w: World) -> None:
    gate = asyncio.Semaphore(4)

    done = asyncio.get_running_loop().create_future()

    async def one(c: Case) -> None:
        job_id = w.fill(c.extra.get("job_id", c.job_id(UID)))
        w.jobs.append(job_id)
        if c.extra.get("forge"):  # a hand-made carry, from the snapshot of a finished job
            await forged_job(w.client, w.s3, w.queue, await done, job_id=job_id,
                             **w.fill(c.send))
        else:
            raw = start_input(c, w)
            where = ["--input", raw]
            if len(raw) > 100_000:  # over what one command-line argument may hold
                path = w.tmp / f"{c.name}.json"
                path.write_text(raw)
                where = ["--input-file", str(path)]
            async with gate:
                await asyncio.to_thread(w.cli, "workflow", "start", "--type",
                                        c.extra.get("workflow", "AgentJob"),
                                        "--task-queue", w.queue, "--workflow-id", job_id,
                                        *where)
        handle = w.client.get_workflow_handle(job_id)
        got: dict[str, Any] = {"job_id": job_id}
        try:
            got["result"] = await asyncio.wait_for(handle.result(), 120)
        except WorkflowFailureError as e:
            got["cause"] = e.cause
        except TimeoutError:
            got["cause"] = None
        got["events"] = [e.event_type async for e in handle.fetch_history_events()]
        try:
            got["state"] = (await handle.query("state", result_type=JobState)
                            if "workflow" not in c.extra else None)
        except RPCError as e:  # a workflow task that keeps failing answers no query
            got["state"] = JobState(job_id=job_id, status="?", last_error=f"(no state: {e})")
        got["keys"] = [o.key for o in await w.s3.list("switchback", f"{job_id}/")]
        got["requests"] = len(w.model_server.requests(job_id))
        w.seen[c.id] = got

    async def finished_job() -> None:  # what the forged carries start from
        job_id = f"hostile-forge-source-{UID}"
        w.jobs.append(job_id)
        w.model_server.set_script(job_id, bootstrap() + tactical(5) + finish())
        handle = await w.client.start_workflow(
            "AgentJob", {"config": "creator", "instructions": "x", "documents": []},
            id=job_id, task_queue=w.queue)
        await asyncio.wait_for(handle.result(), 120)
        done.set_result(job_id)

    await asyncio.gather(finished_job(), *(one(c) for c in cases(FAILS)))


def check_refused(c: Case, w: World) -> None:
    got = w.seen[c.id]
    cause = got.get("cause")
    assert cause is not None, f"the job did not fail in 120 s: {got.get('result')}"
    expect = w.fill(c.expect)
    assert cause.type == "SwitchbackJobFailed" and cause.non_retryable
    assert expect in cause.message, cause.message
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED not in got["events"]
    assert got["events"][-1] == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED
    if got["state"] is not None:  # (DocumentPipeline's state is another one)
        assert got["state"].status == "failed" and expect in (got["state"].last_error or "")
    assert got["requests"] == 0  # never got as far as the model
    if c.kind in ("job input", "document") and not c.extra.get("forge"):
        assert got["keys"] == []  # everything is checked before anything is written


# -- tool arguments and repaired answers: the turns of one job ----------------------------


def mark(c: Case) -> str:
    return f"case {c.name}"


def turn(c: Case, w: World) -> dict:
    """The scripted step of a case: its marker in the turn's text."""
    send = w.fill(c.send)
    if c.kind == "tool arguments":
        name, arguments = send
        return {"content": mark(c), "tool_calls": [
            {"name": name, "arguments": arguments, "id": f"t-{c.name}"}]}
    message = {"role": "assistant", "content": mark(c), **send}
    if isinstance(message["content"], str):
        message["content"] = message["content"].replace("$MARK", mark(c))
    elif isinstance(message["content"], list):
        message["content"] = [p.replace("$MARK", mark(c)) if isinstance(p, str) else p
                              for p in message["content"]]
    usage = {"prompt_tokens": 1, "completion_tokens": 1}  # no counting of 10 MB
    return {"raw": {**table.completion(message), "usage": usage}}


def turns_seen(model_server, job_id: str) -> dict[str, list[dict]]:
    """marker -> the turn as the model read it back: its assistant message, the tool messages
    after it and the message after those (a nudge), from the first request that has them."""
    out: dict[str, list[dict]] = {}
    for request in model_server.requests(job_id):
        msgs = request["messages"]
        for i, m in enumerate(msgs):
            text = m.get("content") or ""
            if m["role"] != "assistant" or not text.startswith("case ") or i + 1 >= len(msgs):
                continue
            key = text.split(" ", 2)[1] if " " in text else text
            if key in out:
                continue
            j = i + 1
            while j < len(msgs) and msgs[j]["role"] == "tool":
                j += 1
            out[key] = msgs[i:j + 1]
    return out


async def tool_turns(w: World) -> None:
    job_id = f"hostile-turns-{UID}"
    w.jobs.append(job_id)
    hostile = [turn(c, w) for c in TABLE if c.then in (TOOL_ERROR, REPAIRED)
               and c.kind in ("tool arguments", "model output")]
    w.model_server.set_script(job_id, bootstrap() + hostile + tactical(5) + finish())
    config = {"extends": "creator", "limits": {"max_nudges": 10, "max_file_bytes": 100_000},
              "breakers": {"no_progress_steps": 0},
              "tools": {"workspace": ["read_file", "write_file", "list_files", "search_files",
                                      "delete_file"], "domain": CREATOR_TOOLS}}
    handle = await w.client.start_workflow(
        "AgentJob", {"config": config, "instructions": "# The task\n", "documents": [
            {"name": "blob.bin", "base64": base64.b64encode(b"\x00\xff\x00\xff").decode()}]},
        id=job_id, task_queue=w.queue)
    result = await asyncio.wait_for(handle.result(), 240)
    seen = turns_seen(w.model_server, job_id)
    keys = {o.key.split("/", 1)[1] for o in await w.s3.list("switchback", f"{job_id}/")}
    for c in TABLE:
        if c.then in (TOOL_ERROR, REPAIRED) and c.kind in ("tool arguments", "model output"):
            w.seen[c.id] = {"result": result, "turn": seen.get(c.name), "keys": keys,
                            "job_id": job_id}


def check_turn(c: Case, w: World) -> None:
    got = w.seen[c.id]
    assert got["result"]["status"] == "completed", got["result"]
    assert got["turn"] is not None, "the model never read this turn back"
    shown = json.dumps(got["turn"], ensure_ascii=False)
    expect = w.fill(c.expect).replace("$MARK", mark(c))
    if c.then == TOOL_ERROR:  # the error is the tool message answering the case's call
        [answer] = [m["content"] for m in got["turn"] if m.get("tool_call_id") == f"t-{c.name}"]
        assert expect in answer, answer
    else:
        assert expect in shown, shown[:2000]
    # nothing the model was refused is in the workspace
    refused = ("a.md", "big.md", "gpj", "中", "output/breakers/trip_0001", "subjobs/")
    assert not any(k.startswith(refused)
                   or ".." in k or "passwd" in k for k in got["keys"]), got["keys"]


# -- answers that cannot be read: retried --------------------------------------------------


async def retried_answers(w: World) -> None:
    job_id = f"hostile-answers-{UID}"
    w.jobs.append(job_id)
    bad = cases(RETRIED)
    script = bootstrap()
    for n, c in enumerate(bad):  # each answered once; the retried call gets the next step
        body = w.fill(c.send)
        script += [body if isinstance(body, dict) and "error" in body
                   else {"raw": body, "bind": False},
                   step(call("list_files", path=f"after-{n}"))]
    w.model_server.set_script(job_id, script + tactical(5) + finish())
    handle = await w.client.start_workflow(
        "AgentJob", {"config": {"extends": "creator", "breakers": {"no_progress_steps": 0},
                                "llm": {"retry": {"maximum_interval_seconds": 2}}},
                     "instructions": "x", "documents": []}, id=job_id, task_queue=w.queue)
    try:
        result = await asyncio.wait_for(handle.result(), 180)
    except TimeoutError:
        result = {"status": "did not complete in 180 s"}
    failures = [e.activity_task_started_event_attributes.last_failure
                async for e in handle.fetch_history_events()
                if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
                and e.activity_task_started_event_attributes.attempt > 1]
    for n, c in enumerate(bad):
        w.seen[c.id] = {"result": result, "failure": failures[n] if n < len(failures) else None,
                        "retried": len(failures)}


def check_retried(c: Case, w: World) -> None:
    got = w.seen[c.id]
    assert got["result"]["status"] == "completed", got["result"]
    assert got["retried"] == len(cases(RETRIED))  # each one retried once, nothing else
    failure = got["failure"]
    assert failure.application_failure_info.type in (
        "ModelBadResponse", "ModelUnavailable", "ModelRateLimited")
    assert w.fill(c.expect) in failure.message, failure.message


# -- answers that fail the job -------------------------------------------------------------


async def failing_answers(w: World) -> None:
    async def one(c: Case) -> None:
        job_id = c.job_id(UID)
        w.jobs.append(job_id)
        body = w.fill(c.send)
        w.model_server.set_script(job_id, [body if isinstance(body, dict) and "error" in body
                                           else {"raw": body}])
        handle = await w.client.start_workflow(
            "AgentJob", {"config": {"extends": "creator",
                                    "llm": {"retry": {"maximum_attempts": 2}}},
                         "instructions": "x", "documents": []}, id=job_id, task_queue=w.queue)
        got: dict[str, Any] = {}
        try:
            got["result"] = await asyncio.wait_for(handle.result(), 120)
        except WorkflowFailureError as e:
            got["cause"] = e.cause
        got["state"] = await handle.query("state", result_type=JobState)
        got["error.json"] = await w.s3.get("switchback", f"{job_id}/output/error.json")
        w.seen[c.id] = got

    await asyncio.gather(*(one(c) for c in cases(FAILS_CLEANLY)))


def check_failing(c: Case, w: World) -> None:
    got = w.seen[c.id]
    cause = got.get("cause")
    assert cause is not None, got.get("result")
    assert cause.type == "SwitchbackJobFailed" and cause.details[0] == {
        "code": "model_call_failed"}
    assert w.fill(c.expect) in cause.message, cause.message
    assert got["state"].status == "failed"
    error = json.loads(got["error.json"])
    assert error["code"] == "model_call_failed" and w.fill(c.expect) in error["error"]


# -- signals: sent to one paused job -------------------------------------------------------


async def signals(w: World) -> None:
    job_id = f"hostile-signals-{UID}"
    w.jobs.append(job_id)
    slow = {**tactical(5)[1], "latency_ms": 3000}
    script = (bootstrap() + tactical(1) + [slow] + transition("Revised", 5) + tactical(5, "r")
              + finish())
    w.model_server.set_script(job_id, script)
    handle = await w.client.start_workflow(
        "AgentJob", {"config": "creator", "instructions": "x", "documents": []}, id=job_id,
        task_queue=w.queue)
    await wait_for_requests(w.model_server, job_id, len(bootstrap()) + 2)
    def signal(name: str, raw: str | list[str] | None):
        inputs = [] if raw is None else [raw] if isinstance(raw, str) else raw
        return asyncio.to_thread(w.cli, "workflow", "signal", "--workflow-id", job_id,
                                 "--name", name, *[a for i in inputs for a in ("--input", i)])

    await signal("pause", None)
    await wait_state(handle, lambda s: s.status == "paused")
    rejected = [c for c in cases(REJECTED) if c.name != "rewind-21st"]
    for c in rejected:
        before = (await handle.query("state", result_type=JobState)).rejected
        await signal(c.extra["signal"], w.fill(c.send))
        w.seen[c.id] = {"rejected": await new_rejections(handle, before)}
    [cut] = cases(CUT)
    await signal("rewind", cut.send)  # accepted: the first of 20 waiting rewinds
    for n in range(19):
        await signal("rewind", json.dumps(f"filler {n}"))
    [last] = [c for c in cases(REJECTED) if c.name == "rewind-21st"]
    before = (await handle.query("state", result_type=JobState)).rejected
    await signal("rewind", last.send)
    w.seen[last.id] = {"rejected": await new_rejections(handle, before)}
    await signal("resume", None)
    result = await asyncio.wait_for(handle.result(), 120)
    archive = yaml.safe_load(await w.s3.get("switchback", f"{job_id}/archive/phase_2.yaml"))
    w.seen[cut.id] = {"archive": archive}
    for c in cases(REJECTED, CUT):
        w.seen[c.id]["result"] = result


async def new_rejections(handle, before: list[str], wait: float = 5) -> list[str]:
    """What `state.rejected` gained after a signal (nothing within `wait` s: [])."""
    for _ in range(int(wait * 10)):
        now = (await handle.query("state", result_type=JobState)).rejected
        if now != before:  # one signal at a time: the newest entry is its
            return now[-1:]
        await asyncio.sleep(0.1)
    return []


def check_signal(c: Case, w: World) -> None:
    got = w.seen[c.id]
    assert got["result"]["status"] == "completed"
    if c.then == CUT:
        assert got["archive"]["status"] == "rewound"
        assert got["archive"]["issue"].startswith("scope scope")
        assert w.fill(c.expect) in got["archive"]["issue"]
        assert len(got["archive"]["issue"].split("; filler")[0]) < 2100
    else:
        assert got["rejected"], "not recorded in state.rejected: dropped without a trace"
        [reason] = got["rejected"]
        assert w.fill(c.expect) in reason, reason


# -- updates: sent while a call waits for approval -----------------------------------------


async def updates(w: World) -> None:
    job_id = f"hostile-updates-{UID}"
    w.jobs.append(job_id)
    script = (bootstrap() + [step(call("write_file", path="scratch.md", content="tmp"))]
              + [step(call("delete_file", path="scratch.md"))] + tactical(5) + finish())
    w.model_server.set_script(job_id, script)
    config = {"extends": "creator", "approval_required": ["delete_file"], "tools": {
        "workspace": ["read_file", "write_file", "list_files", "search_files", "delete_file"]}}
    handle = await w.client.start_workflow(
        "AgentJob", {"config": config, "instructions": "x", "documents": []}, id=job_id,
        task_queue=w.queue)
    st = await wait_state(handle, lambda s: bool(s.pending_approvals))
    call_id = st.pending_approvals[0].call_id
    w.values["$CALL"] = call_id
    for c in cases(REFUSED):
        raw = w.fill(c.send)
        payload = RawValue(Payload(metadata={"encoding": b"json/plain"},
                                   data=raw.encode("utf-8", "surrogatepass")))
        got: dict[str, Any] = {}
        try:
            got["answer"] = await handle.execute_update(c.extra["update"], payload)
        except WorkflowUpdateFailedError as e:
            got["refusal"] = str(e.cause)
        except RPCError as e:
            got["refusal"] = str(e)
        after = await handle.query("state", result_type=JobState)
        got["waiting"] = [p.call_id for p in after.pending_approvals]
        w.seen[c.id] = got
    answer = await asyncio.to_thread(
        w.cli, "workflow", "update", "execute", "--workflow-id", job_id, "--name", "approve",
        "--input", json.dumps({"call_id": call_id, "approved": True}))
    result = await asyncio.wait_for(handle.result(), 120)
    for c in cases(REFUSED):
        w.seen[c.id].update(result=result, call_id=call_id, approved=answer)


def check_update(c: Case, w: World) -> None:
    got = w.seen[c.id]
    assert "refusal" in got, f"accepted: {got.get('answer')}"
    assert w.fill(c.expect).lower() in got["refusal"].lower(), got["refusal"]
    assert got["waiting"] == [got["call_id"]]  # the waiting call is untouched
    assert "approved delete_file" in got["approved"]  # and a good answer still goes through
    assert got["result"]["status"] == "completed"


CHECKS: dict[str, Callable[[Case, World], None]] = {
    FAILS: check_refused, TOOL_ERROR: check_turn, REPAIRED: check_turn,
    RETRIED: check_retried, FAILS_CLEANLY: check_failing, REJECTED: check_signal,
    CUT: check_signal, REFUSED: check_update}


RUNS = {REPAIRED: TOOL_ERROR, CUT: REJECTED}  # cases run with others


@pytest.mark.parametrize("case", TABLE, ids=[c.id for c in TABLE])
def test_case(case: Case, world: World) -> None:
    broke = world.errors.get(RUNS.get(case.then, case.then))
    assert case.id in world.seen, f"not run: {broke!r}"[:3000]
    CHECKS[case.then](case, world)


def test_every_case_runs_under_its_own_job_id() -> None:
    # names repeat across kinds ("unknown-key" is a job input, a config and a tool argument case)
    ids = [c.extra.get("job_id", c.job_id(UID)) for c in TABLE]
    assert len(set(ids)) == len(ids)


def test_the_table_covers_every_kind() -> None:
    counts: dict[str, int] = {}
    for c in TABLE:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    assert len(TABLE) >= 60 and len({c.id for c in TABLE}) == len(TABLE)
    assert set(counts) == {"job input", "config", "document", "signal", "update",
                           "model output", "tool arguments"}, counts


# -- secrets --------------------------------------------------------------------------------


async def test_no_secret_reaches_a_request_history_or_workspace(world: World) -> None:
    gate = asyncio.Semaphore(8)

    async def scan(job_id: str) -> dict[str, bytes]:
        async with gate:
            return await places(world.client, world.s3, world.model_server, job_id)

    scans = await asyncio.gather(*(scan(j) for j in world.jobs))
    scanned = sum(len(where) for where in scans)
    found = [(job_id, *leak) for job_id, where in zip(world.jobs, scans, strict=True)
             for leak in leaks(world.secrets, where)]
    assert scanned > 500  # requests, history (and its decoded payloads), state, files
    assert not found, found
    assert world.attacker.seen == []  # no job reached a URL the operator did not declare
    # the search provider got its own key (it answered with it) and no other credential
    heard = b"\n".join(world.search.seen)
    assert world.secrets["SWITCHBACK_WEB_SEARCH_KEY"].encode() in heard
    assert [n for n, v in world.secrets.items() if v.encode() in heard] == [
        "SWITCHBACK_WEB_SEARCH_KEY"]


async def leaky_control(w: World) -> dict[str, list[str]]:
    """A job whose model writes a planted secret into a path and a file (one the worker does
    not hold, so nothing redacts it): the search must find it in the requests, the history
    and the workspace."""
    job_id = f"hostile-leaky-{UID}"
    key = f"planted-SECRET-{uuid.uuid4().hex}"
    w.model_server.set_script(job_id, bootstrap() + [
        step(call("write_file", path=f"leak/{key}.md", content=key))] + tactical(5) + finish())
    handle = await w.client.start_workflow(
        "AgentJob", {"config": "creator", "instructions": "x", "documents": []}, id=job_id,
        task_queue=w.queue)
    await asyncio.wait_for(handle.result(), 120)
    where = await places(w.client, w.s3, w.model_server, job_id)
    found = leaks({**w.secrets, "planted": key}, where)
    return {kind: [p for _, p in found if p.startswith(kind)]
            for kind in ("model request", "history", "s3://")}


def test_the_search_finds_a_planted_secret(world: World) -> None:
    found = world.seen["leaky control"]
    assert found["model request"] and found["history"] and found["s3://"], found
    # a secret inside a payload is base64 in the raw JSON: found decoded
    secret = world.secrets["OPENAI_API_KEY"]
    payload = base64.b64encode(json.dumps({"summary": f"x {secret} y"}).encode()).decode()
    raw = json.dumps({"events": [{"activityTaskCompletedEventAttributes": {"result": {
        "payloads": [{"metadata": {"encoding": "anNvbi9wbGFpbg=="}, "data": payload}]}}}]})
    assert secret not in raw
    assert [n for n, _ in leaks(world.secrets, history_places(raw))] == ["OPENAI_API_KEY"]
    clean = base64.b64encode(json.dumps({"summary": "x y"}).encode()).decode()
    assert leaks(world.secrets, history_places(raw.replace(payload, clean))) == []
