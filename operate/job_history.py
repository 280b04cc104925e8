"""What a job's Temporal history says about it, for `operate/report.py`.

`read_job(client, job_id)` walks the job's continue-as-new chain back from its latest
run (`continued_execution_run_id`: strongly consistent, unlike the visibility store)
and reads each run's history, decoding payloads with the client's data converter
(codec, external storage). Per phase it sums, from the `call_model` activity results
(`ModelReply`: `usage`, `tool_calls`; the phase comes from the scheduled event's
summary "phase 3 strategic step 2"), the model steps, tokens and tool calls by name;
from `summarize_conversation` ("summarize phase 3") the summaries' tokens; from
`run_tool` results (`ToolOutcome`) the tool errors. Per activity type it counts
scheduled / completed / failed / timed out / cancelled, retries (started attempts
above 1) and keeps the failure messages. Strategic phases are not archived, so this
is where their numbers come from.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from temporalio.api.common.v1 import Payload, Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.service import RPCError, RPCStatusCode

STEP_LABEL = re.compile(r"phase (\d+) (\w+) step (\d+)")
SUMMARY_LABEL = re.compile(r"summarize phase (\d+)")
PHASE_KEY = re.compile(r"phase_(\d+)")
LOCAL_ACTIVITY_MARKER = "core_local_activity"
MAX_FAILURES = 20

CLOSE_EVENTS = {
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: "completed",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED: "failed",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED: "cancelled",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: "terminated",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT: "timed out",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW: "continued as new",
}


@dataclass
class PhaseFacts:
    number: int
    kind: str = ""
    title: str = ""  # from the phase-start snapshot (snapshot_phase's input)
    variant: str = ""  # bootstrap | transition | rewind | wrap_up | work
    steps: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tools: Counter = field(default_factory=Counter)  # tool name -> calls the model made
    tool_errors: Counter = field(default_factory=Counter)  # error code -> run_tool results


@dataclass
class ActivityFacts:
    scheduled: int = 0
    completed: int = 0
    failed: int = 0
    timed_out: int = 0
    cancelled: int = 0
    retries: int = 0


@dataclass
class RunFacts:
    run_id: str
    status: str  # completed | failed | continued as new | ... | running
    events: int
    started: datetime | None
    closed: datetime | None
    failure: str = ""


@dataclass
class JobHistory:
    job_id: str
    runs: list[RunFacts] = field(default_factory=list)  # oldest first
    phases: dict[int, PhaseFacts] = field(default_factory=dict)
    activities: dict[str, ActivityFacts] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)  # "<activity> (<summary>): message"
    config: dict[str, Any] = field(default_factory=dict)  # the job's resolved config

    @property
    def llm(self) -> dict[str, Any]:
        return self.config.get("llm") or {}

    @property
    def bucket(self) -> str | None:
        return (self.config.get("workspace") or {}).get("bucket")

    def phase(self, n: int) -> PhaseFacts:
        return self.phases.setdefault(n, PhaseFacts(n))


async def fetch_chain(client: Client, job_id: str) -> list[WorkflowHistory]:
    """Every run of the job's continue-as-new chain, oldest first."""
    histories: list[WorkflowHistory] = []
    run_id: str | None = None
    while True:
        try:
            h = await client.get_workflow_handle(job_id, run_id=run_id).fetch_history()
        except RPCError as e:
            if e.status == RPCStatusCode.NOT_FOUND and not histories:
                raise LookupError(f"no workflow with id '{job_id}'") from e
            raise
        histories.append(h)
        if not h.events:
            break
        started = h.events[0].workflow_execution_started_event_attributes
        run_id = started.continued_execution_run_id
        if not run_id or len(histories) > 10_000:
            break
    return histories[::-1]


async def read_job(client: Client, job_id: str) -> JobHistory:
    job = JobHistory(job_id)
    for h in await fetch_chain(client, job_id):
        await _read_run(client, job, h)
    return job


async def _decode(client: Client, payloads: Payloads | None) -> Any:
    if payloads is None or not payloads.payloads:
        return None
    try:
        values = await client.data_converter.decode_wrapper(payloads)
    except Exception:  # noqa: BLE001 - an undecodable payload only loses detail
        return None
    return values[0] if values else None


async def _summary(client: Client, event) -> str:
    if not event.HasField("user_metadata") or not event.user_metadata.HasField("summary"):
        return ""
    p: Payload = event.user_metadata.summary
    value = await _decode(client, Payloads(payloads=[p]))
    return value if isinstance(value, str) else ""


def _failure_text(failure) -> str:
    parts: list[str] = []
    f = failure
    while f is not None and f.message and len(parts) < 4:
        parts.append(f.message)
        f = f.cause if f.HasField("cause") else None
    return " ".join(": ".join(parts).split())[:400]


async def _read_run(client: Client, job: JobHistory, h: WorkflowHistory) -> None:
    events = h.events
    run = RunFacts(run_id="", status="running", events=len(events), started=None, closed=None)
    scheduled: dict[int, tuple[str, str, Any]] = {}  # event id -> (type, summary, input)
    current = ""  # "phase_0003": the phase of the latest model call (for local tool calls)
    for ev in events:
        t = ev.event_type
        if t == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
            began = ev.workflow_execution_started_event_attributes
            run.run_id = began.original_execution_run_id
            run.started = ev.event_time.ToDatetime()
            if not job.config:  # a continued run carries the config in its input
                inp = await _decode(client, began.input)
                carry = (inp.get("carry") or {}) if isinstance(inp, dict) else {}
                job.config = (carry.get("cfg") or {}).get("config") or {}
        elif t in CLOSE_EVENTS:
            run.status, run.closed = CLOSE_EVENTS[t], ev.event_time.ToDatetime()
            if t == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
                run.failure = _failure_text(ev.workflow_execution_failed_event_attributes.failure)
        elif t == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            sched = ev.activity_task_scheduled_event_attributes
            name, summary = sched.activity_type.name, await _summary(client, ev)
            inp = await _decode(client, sched.input) if name in ("run_tool", "snapshot_phase") \
                else None
            if name == "snapshot_phase":
                phase_start(job, inp)
                inp = None
            if name == "call_model" and (m := STEP_LABEL.search(summary)):
                current = f"phase_{int(m.group(1)):04d}"
            scheduled[ev.event_id] = (name, summary, inp)
            job.activities.setdefault(name, ActivityFacts()).scheduled += 1
        elif t == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            start = ev.activity_task_started_event_attributes
            name, summary, _ = scheduled.get(start.scheduled_event_id, ("?", "", None))
            if start.attempt > 1:
                job.activities.setdefault(name, ActivityFacts()).retries += start.attempt - 1
                if start.HasField("last_failure"):
                    _add_failure(job, name, summary, f"attempt {start.attempt - 1}: "
                                 + _failure_text(start.last_failure))
        elif t == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = ev.activity_task_completed_event_attributes
            name, summary, inp = scheduled.get(done.scheduled_event_id, ("?", "", None))
            job.activities.setdefault(name, ActivityFacts()).completed += 1
            if name in ("call_model", "summarize_conversation", "run_tool", "load_config"):
                await _completed(job, name, summary, inp, await _decode(client, done.result))
        elif t in (EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
                   EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT):
            failed = t == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED
            bad = (ev.activity_task_failed_event_attributes if failed
                   else ev.activity_task_timed_out_event_attributes)
            name, summary, _ = scheduled.get(bad.scheduled_event_id, ("?", "", None))
            facts = job.activities.setdefault(name, ActivityFacts())
            facts.failed += failed
            facts.timed_out += not failed
            _add_failure(job, name, summary, _failure_text(bad.failure))
        elif (t == EventType.EVENT_TYPE_MARKER_RECORDED
              and ev.marker_recorded_event_attributes.marker_name == LOCAL_ACTIVITY_MARKER):
            current = await _local_activity(client, job, ev, current)
        elif t == EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
            cancel = ev.activity_task_canceled_event_attributes
            name = scheduled.get(cancel.scheduled_event_id, ("?", "", None))[0]
            job.activities.setdefault(name, ActivityFacts()).cancelled += 1
    job.runs.append(run)


async def _local_activity(client: Client, job: JobHistory, ev, phase_key: str) -> str:
    """A local activity's marker: its type and attempt, its result or failure (its input
    is not in history: a local tool call counts for the phase of the latest model call - a
    model call run locally, `llm.local_calls_in_a_row`, is one too). The phase key now."""
    m = ev.marker_recorded_event_attributes
    data = await _decode(client, m.details["data"]) if "data" in m.details else None
    if not isinstance(data, dict):
        return phase_key
    name, summary = str(data.get("activity_type") or "?"), await _summary(client, ev)
    if name == "call_model" and (label := STEP_LABEL.search(summary)):
        phase_key = f"phase_{int(label.group(1)):04d}"
    facts = job.activities.setdefault(name, ActivityFacts())
    facts.scheduled += 1
    attempt = int(data.get("attempt") or 1)
    if attempt > 1:
        facts.retries += attempt - 1
    if m.HasField("failure"):
        facts.failed += 1
        _add_failure(job, name, summary, _failure_text(m.failure))
        return phase_key
    facts.completed += 1
    if name in ("run_tool", "call_model") and "result" in m.details:
        await _completed(job, name, summary, {"conversation": phase_key},
                         await _decode(client, m.details["result"]))
    return phase_key


def phase_start(job: JobHistory, req: Any) -> None:
    """Title, kind and variant of a phase, from the snapshot taken at its start."""
    state = (req or {}).get("state") if isinstance(req, dict) else None
    phase = ((state or {}).get("strategy") or {}).get("phase") or {}
    if isinstance(phase.get("number"), int):
        ph = job.phase(phase["number"])
        ph.kind = str(phase.get("kind") or ph.kind)
        ph.title, ph.variant = str(phase.get("title") or ""), str(phase.get("variant") or "")
    cfg = (req or {}).get("config") if isinstance(req, dict) else None
    if cfg and not job.config:
        job.config = cfg.get("config") or {}


def _add_failure(job: JobHistory, name: str, summary: str, text: str) -> None:
    if len(job.failures) < MAX_FAILURES:
        job.failures.append(f"{name} ({summary or 'no summary'}): {text}")


async def _completed(job: JobHistory, name: str, summary: str, inp: Any, result: Any) -> None:
    if not isinstance(result, dict):
        return
    if name == "load_config":
        job.config = job.config or result.get("config") or {}
        return
    if name == "call_model":
        m = STEP_LABEL.search(summary)
        if m is None or result.get("needs_compaction"):
            return  # no label to place it, or no request was sent (summarize first)
        ph = job.phase(int(m.group(1)))
        ph.kind = m.group(2)
        ph.steps += 1
        usage = result.get("usage") or {}
        ph.tokens_in += int(usage.get("prompt_tokens") or 0)
        ph.tokens_out += int(usage.get("completion_tokens") or 0)
        calls = result.get("tool_calls") or []
        ph.tool_calls += len(calls)
        ph.tools.update(str(c.get("name", "?")) for c in calls)
    elif name == "summarize_conversation":
        m = SUMMARY_LABEL.search(summary)
        if m is not None:
            usage = result.get("usage") or {}
            ph = job.phase(int(m.group(1)))
            ph.tokens_in += int(usage.get("prompt_tokens") or 0)
            ph.tokens_out += int(usage.get("completion_tokens") or 0)
    elif name == "run_tool" and not result.get("ok", True):
        m = PHASE_KEY.search(str((inp or {}).get("conversation", "")) if isinstance(inp, dict)
                             else "")
        if m is not None:
            job.phase(int(m.group(1))).tool_errors[str(result.get("code") or "error")] += 1
