"""What the web UI shows of a job that the job itself cannot set: its static summary and
details (given when it starts), and how the CLI reads back what the job persisted.

    static_summary(job, cfg)    one line: the job kind and the first line of the instructions
    static_details(job, cfg)    markdown: config, strategy, model, documents, tools, limits
    persisted(description)      the job's memo: its progress and details as of its last
                                upsert - readable with no worker running and after the end

Temporal sets a workflow's static summary and details only when it starts (the UI shows them
on the job page's "User Metadata" tab, as markdown), so the client that starts the job sets
them: `starter.py start` does, and `temporal workflow start --static-summary ...
--static-details ...` can (docs/cli.md).
"""

from __future__ import annotations

from typing import Any

from temporalio.client import WorkflowExecutionDescription

from switchback.workflows.contract import DocumentSpec, JobInput, ResolvedConfig

MAX_SUMMARY = 200


def job_kind(job: JobInput, cfg: ResolvedConfig | None) -> str:
    if isinstance(job.config, str):
        return job.config
    base = job.config.get("extends")
    return f"{base} (inline)" if isinstance(base, str) else "inline config"


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()
    return ""


def static_summary(job: JobInput, cfg: ResolvedConfig | None) -> str:
    """`creator: Extract the GoBD and GDPR requirements` (the UI's summary is one line)."""
    instructions = job.instructions or (cfg.instructions if cfg else None) or ""
    line = f"{job_kind(job, cfg)}: {first_line(instructions) or '(no instructions)'}"
    return line if len(line) <= MAX_SUMMARY else line[:MAX_SUMMARY - 3].rstrip() + "..."


def static_details(job: JobInput, cfg: ResolvedConfig | None) -> str:
    """Markdown the UI renders: what the job was started with."""
    rows: list[tuple[str, str]] = [("config", f"`{job_kind(job, cfg)}`")]
    docs = _documents(job, cfg)
    if cfg is not None:
        c = cfg.config
        rows += [("strategy", f"`{c.strategy}`"),
                 ("model", f"`{c.llm.model}` (endpoint `{c.llm.endpoint}`)"),
                 ("domain tools", ", ".join(f"`{t}`" for t in c.tools.domain) or "none")]
        budget = [f"{c.budget.max_tokens:,} tokens" if c.budget.max_tokens else "",
                  f"${c.budget.max_cost_usd:g}" if c.budget.max_cost_usd else ""]
        rows += [("budget", " / ".join(b for b in budget if b) or "none"),
                 ("limits", f"{c.limits.max_phases} phases, {c.limits.max_steps_per_phase} "
                  f"steps per phase, todos {c.phase_settings.min_todos}-"
                  f"{c.phase_settings.max_todos}"),
                 ("approval required", ", ".join(f"`{t}`" for t in c.approval_required)
                  or "none")]
    rows.append(("documents", ", ".join(f"`{d}`" for d in docs[:20])
                 + (f" and {len(docs) - 20} more" if len(docs) > 20 else "") or "none"))
    lines = ["| | |", "| --- | --- |", *(f"| **{k}** | {v} |" for k, v in rows)]
    instructions = job.instructions or (cfg.instructions if cfg else None) or ""
    if instructions.strip():
        shown = instructions.strip()
        if len(shown) > 1500:
            shown = shown[:1500].rstrip() + "\n\n*(instructions cut here; the whole text is " \
                "the workspace's instructions.md)*"
        lines += ["", "**Instructions**", "", *(f"> {_unheaded(line)}"
                                                  for line in shown.splitlines())]
    return "\n".join(lines)


def _unheaded(line: str) -> str:
    """A markdown heading as bold text (the instructions are quoted, not the page's title)."""
    stripped = line.lstrip()
    if stripped.startswith("#") and stripped.lstrip("#").startswith(" "):
        return f"**{stripped.lstrip('#').strip()}**"
    return line


def _documents(job: JobInput, cfg: ResolvedConfig | None) -> list[str]:
    if job.documents is None:
        return [d.rsplit("/", 1)[-1] for d in (cfg.documents if cfg else [])]
    return [d.rsplit("/", 1)[-1] if isinstance(d, str) else _doc_name(d) for d in job.documents]


def _doc_name(d: DocumentSpec) -> str:
    return d.name or (d.path or "").rsplit("/", 1)[-1] or "?"


async def persisted(desc: WorkflowExecutionDescription) -> tuple[dict[str, Any], str] | None:
    """(progress, details markdown) from the job's memo, or None (an older job without a memo)."""
    memo = await desc.memo()
    if "progress" not in memo:
        return None
    details = memo.get("details") or []
    text = "\n".join(map(str, details)) if isinstance(details, list) else str(details)
    return dict(memo["progress"]), text
