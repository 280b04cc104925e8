"""The job report: a chart and a markdown summary of one job, from history and workspace.

    build_report(client, s3, bucket, job_id, out_dir) -> (png_path, md_path)
    (bucket None: the job config's workspace.bucket)

writes `<out_dir>/<job_id>.png` (tokens in/out and tool calls per phase, matplotlib
without a display) and `<out_dir>/<job_id>.md` (status, totals, estimated cost, one row
per phase, tools, breaker trips, activity counts and failures, runs) and returns both
paths. Works on a running job too (it reports what happened so far).

Sources: the job's histories (operate/job_history.py: every run of its continue-as-new
chain) and its workspace: `archive/phase_<n>.yaml` (tactical phases, and phases an
interrupt ended: title, status, todos, steps, tool_calls, tokens_in/out - taken as
they are), `output/completion.json` (status and totals), `output/breakers/trip_*.json`,
`output/error.json`. Phases that are not archived (strategic ones) get their numbers
from history. Cost uses the job config's `llm.price_in_per_mtok` / `price_out_per_mtok`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from temporalio.client import Client

from switchback.activities.storage.s3 import S3Store
from switchback.operate.job_history import JobHistory, phase_start, read_job

DEFAULT_BUCKET = "switchback"


@dataclass
class PhaseRow:
    number: int
    kind: str = "?"
    title: str = ""
    status: str = ""
    steps: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    todos: str = ""  # "4/5" when archived
    source: str = "history"  # archive | history


@dataclass
class Workspace:
    archives: dict[int, dict] = field(default_factory=dict)
    completion: dict | None = None
    error: dict | None = None
    trips: list[dict] = field(default_factory=list)
    snapshots: dict[int, dict] = field(default_factory=dict)  # phase -> state at its start


async def read_workspace(s3: S3Store, bucket: str, job_id: str) -> Workspace:
    ws = Workspace()
    for obj in await s3.list(bucket, f"{job_id}/archive/"):
        name = obj.key.rsplit("/", 1)[-1]
        if name.startswith("phase_") and name.endswith(".yaml"):
            data = yaml.safe_load((await s3.get(bucket, obj.key)) or b"") or {}
            if isinstance(data, dict):
                ws.archives[int(data.get("phase") or name[6:-5])] = data
    for attr, path in (("completion", "output/completion.json"), ("error", "output/error.json")):
        raw = await s3.get(bucket, f"{job_id}/{path}")
        if raw:
            setattr(ws, attr, json.loads(raw))
    for obj in await s3.list(bucket, f"{job_id}/.switchback/snapshots/"):
        raw = await s3.get(bucket, obj.key)
        snap = json.loads(raw) if raw else {}
        if isinstance(snap, dict) and isinstance(snap.get("phase"), int):
            ws.snapshots[snap["phase"]] = snap
    trips = sorted(await s3.list(bucket, f"{job_id}/output/breakers/"), key=lambda o: o.key)
    for obj in trips:
        raw = await s3.get(bucket, obj.key)
        if raw:
            ws.trips.append({"file": obj.key.rsplit("/", 1)[-1], **json.loads(raw)})
    return ws


def phase_rows(job: JobHistory, ws: Workspace, final_status: str) -> list[PhaseRow]:
    """One row per phase: archived numbers where there is an archive, else history's."""
    rows = []
    numbers = sorted(set(job.phases) | set(ws.archives))
    for n in numbers:
        h, a = job.phases.get(n), ws.archives.get(n)
        row = PhaseRow(n, kind=(h.kind if h and h.kind else "?"))
        if h:
            row.title = h.title + (f" ({h.variant})" if h.variant and h.kind == "strategic"
                                   and h.variant not in h.title.lower() else "")
            row.status = "completed" if n != numbers[-1] else final_status
            row.steps, row.tool_calls = h.steps, h.tool_calls
            row.tokens_in, row.tokens_out = h.tokens_in, h.tokens_out
        if a:
            todos = a.get("todos") or []
            row.title = str(a.get("title", "")) or row.title
            row.status, row.source = str(a.get("status", "")), "archive"
            row.todos = f"{a.get('completed', 0)}/{len(todos)}"
            row.steps, row.tool_calls = int(a.get("steps", 0)), int(a.get("tool_calls", 0))
            row.tokens_in, row.tokens_out = int(a.get("tokens_in", 0)), int(a.get("tokens_out", 0))
        rows.append(row)
    return rows


def final_status(job: JobHistory, ws: Workspace) -> str:
    if ws.completion and ws.completion.get("status"):
        return str(ws.completion["status"])
    if ws.error:
        return "failed"
    return job.runs[-1].status if job.runs else "unknown"


def _cost(llm: dict, tokens_in: int, tokens_out: int) -> float | None:
    if "price_in_per_mtok" not in llm:
        return None
    return (tokens_in * float(llm["price_in_per_mtok"])
            + tokens_out * float(llm.get("price_out_per_mtok", 0))) / 1e6


KIND_COLORS = {"strategic": "#4c72b0", "tactical": "#dd8452"}


def chart(rows: list[PhaseRow], job_id: str, path: Path) -> None:
    """Tokens in, tokens out and tool calls per phase, one panel each, coloured by kind."""
    try:
        from matplotlib.figure import Figure  # no pyplot: no global state, no display needed
        from matplotlib.patches import Patch
    except ImportError:
        from switchback.operate import CliError
        raise CliError("the chart needs matplotlib: pip install 'switchback[charts]'") from None

    fig = Figure(figsize=(10, 8), dpi=100, layout="constrained")
    panels = fig.subplots(3, 1, sharex=True)
    xs = list(range(len(rows)))
    colors = [KIND_COLORS.get(r.kind, "#8c8c8c") for r in rows]
    series = (("tokens in", [r.tokens_in for r in rows]),
              ("tokens out", [r.tokens_out for r in rows]),
              ("tool calls", [r.tool_calls for r in rows]))
    for ax, (name, values) in zip(panels, series, strict=True):
        bars = ax.bar(xs, values, color=colors)
        ax.bar_label(bars, labels=[f"{v:,}" for v in values], fontsize=8, padding=2)
        ax.set_ylabel(name)
        ax.margins(y=0.18)
        ax.grid(axis="y", alpha=0.3)
    panels[0].set_title(f"{job_id}: per phase")
    panels[0].legend(handles=[Patch(color=c, label=k) for k, c in KIND_COLORS.items()],
                     loc="upper right", fontsize=8)
    panels[-1].set_xticks(xs, [f"{r.number}\n{r.kind}" for r in rows])
    panels[-1].set_xlabel("phase")
    fig.savefig(path, format="png")


def markdown(job: JobHistory, ws: Workspace, rows: list[PhaseRow], png_name: str) -> str:
    comp = ws.completion or {}
    last = job.runs[-1] if job.runs else None
    status = final_status(job, ws)
    t_in = int(comp.get("tokens_in", sum(r.tokens_in for r in rows)))
    t_out = int(comp.get("tokens_out", sum(r.tokens_out for r in rows)))
    cost = _cost(job.llm, t_in, t_out)
    started = job.runs[0].started if job.runs else None
    closed = last.closed if last else None
    out = [f"# Job report: {job.job_id}", "", f"![tokens and tool calls per phase]({png_name})",
           "", "| | |", "| --- | --- |", f"| status | **{status}** |"]
    if comp.get("summary"):
        out.append(f"| summary | {_cell(comp['summary'])} |")
    if ws.error:
        out.append(f"| error | {_cell(ws.error.get('error', ''))} ({ws.error.get('code')}) |")
    out += [f"| phases | {comp.get('phases', len(rows))} |",
            f"| model steps | {comp.get('steps', sum(r.steps for r in rows))} |",
            f"| tool calls | {comp.get('tool_calls', sum(r.tool_calls for r in rows))} |",
            f"| tokens | {t_in:,} in / {t_out:,} out |",
            "| estimated cost | " + (f"${cost:.4f} (at ${job.llm['price_in_per_mtok']}/"
                                     f"${job.llm.get('price_out_per_mtok', 0)} per million "
                                     "tokens in/out)" if cost is not None else "unknown")
            + " |",
            f"| runs | {len(job.runs)} (continue-as-new chain) |"]
    if started:
        end = f" - {closed:%Y-%m-%d %H:%M:%S} UTC ({(closed - started).total_seconds():.1f} s)" \
            if closed else " - (running)"
        out.append(f"| time | {started:%Y-%m-%d %H:%M:%S}{end} |")
    out += ["", "## Phases", "",
            "| phase | kind | title | status | steps | tool calls | tokens in | tokens out "
            "| todos done | from |", "| ---: | --- | --- | --- | ---: | ---: | ---: | ---: "
            "| --- | --- |"]
    out += [f"| Phase {r.number} | {r.kind} | {_cell(r.title)} | {r.status} | {r.steps} | "
            f"{r.tool_calls} | {r.tokens_in:,} | {r.tokens_out:,} | {r.todos} | {r.source} |"
            for r in rows]
    out += _tools(job) + _trips(ws) + _activities(job) + _runs(job)
    return "\n".join(out) + "\n"


def _tools(job: JobHistory) -> list[str]:
    calls: dict[str, int] = {}
    errors: dict[str, int] = {}
    for ph in job.phases.values():
        for name, n in ph.tools.items():
            calls[name] = calls.get(name, 0) + n
        for code, n in ph.tool_errors.items():
            errors[code] = errors.get(code, 0) + n
    out = ["", "## Tools", "", "Calls the model made (from the model steps in history):", "",
           "| tool | calls |", "| --- | ---: |"]
    out += [f"| {name} | {n} |" for name, n in sorted(calls.items(), key=lambda x: -x[1])]
    if errors:
        out += ["", "Tool errors returned to the model: "
                + ", ".join(f"{code} x{n}" for code, n in sorted(errors.items()))]
    return out


def _trips(ws: Workspace) -> list[str]:
    out = ["", "## Circuit breakers", ""]
    if not ws.trips:
        return out + ["No breaker tripped."]
    return out + [f"- `{t['file']}`: **{t.get('breaker')}** -> {t.get('action')} "
                  f"(phase {t.get('phase')}, step {t.get('step')}): {_cell(t.get('message', ''))}"
                  for t in ws.trips]


def _activities(job: JobHistory) -> list[str]:
    out = ["", "## Activities", "",
           "| activity | scheduled | completed | failed | timed out | cancelled | retries |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    out += [f"| {name} | {a.scheduled} | {a.completed} | {a.failed} | {a.timed_out} | "
            f"{a.cancelled} | {a.retries} |" for name, a in sorted(job.activities.items())]
    if job.failures:
        out += ["", "Failures (final, and attempts that were retried):", ""]
        out += [f"- {_cell(f)}" for f in job.failures]
    return out


def _runs(job: JobHistory) -> list[str]:
    out = ["", "## Runs", "", "| run | status | events | started |", "| --- | --- | ---: | --- |"]
    for r in job.runs:
        started = f"{r.started:%Y-%m-%d %H:%M:%S}" if r.started else ""
        status = r.status + (f": {_cell(r.failure)}" if r.failure else "")
        out.append(f"| `{r.run_id}` | {status} | {r.events} | {started} |")
    return out


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")[:300]


async def build_report(client: Client, s3: S3Store, bucket: str | None, job_id: str,
                       out_dir: str | Path) -> tuple[Path, Path]:
    """Write `<job_id>.png` and `<job_id>.md` into `out_dir` (created); return their paths.

    `bucket` None: the job config's `workspace.bucket`. LookupError: no such job.
    """
    job = await read_job(client, job_id)
    ws = await read_workspace(s3, bucket or job.bucket or DEFAULT_BUCKET, job_id)
    for snap in ws.snapshots.values():  # phase titles (local snapshot activities: not in history)
        phase_start(job, snap)
    rows = phase_rows(job, ws, final_status(job, ws))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png, md = out / f"{job_id}.png", out / f"{job_id}.md"
    chart(rows, job_id, png)
    md.write_text(markdown(job, ws, rows, png.name), encoding="utf-8")
    return png, md
