"""The job's tools, resolved once at its start.

A config names tools by name or glob: Python tools (`cite_document`, `word_count`) and MCP
tools (`time.get_current_time`, `git.*`). The `list_tools` activity, on the tools queue
where the MCP servers are, resolves every entry to the names the model calls
(`time__get_current_time`) and writes the job's tool record (the schemas the model will
see) to the workspace. This module asks for it and puts the answer in the resolved config:
every tool list, `approval_required` and `breakers.exempt_tools` then hold wire names, and
`tool_record` the record's key, which model and tool activities read. The config is
carried across continue-as-new and into reruns, so the job never lists again.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from switchback.workflows import job_start
    from switchback.workflows.contract import (
        CONTROL_TOOLS,
        LIST_TOOLS,
        ListToolsRequest,
        ResolvedConfig,
        ToolListing,
        WorkspaceRef,
    )
    from switchback.workflows.contract.config import STRATEGIC_TOOLS, TACTICAL_TOOLS, JobConfig
    from switchback.workflows.failures import StepFailed, cause_of
    from switchback.workflows.retry_policies import retry_policy
    from switchback.workflows.steering import Steering

# tool_search: offered whenever a config defers tools; the control tools: whichever
# strategy the job runs (or auto picks) may offer its own
ALWAYS = ["tool_search", *sorted(CONTROL_TOOLS)]


def entries(c: JobConfig) -> list[str]:
    """Every tool name and glob the config uses, in order."""
    t = c.tools
    return list(dict.fromkeys([*t.workspace, *STRATEGIC_TOOLS, *TACTICAL_TOOLS, *t.domain,
                               *t.deferred, *ALWAYS, *c.approval_required,
                               *c.breakers.exempt_tools]))


def apply(cfg: ResolvedConfig, listing: ToolListing) -> ResolvedConfig:
    """`cfg` with each entry replaced by the wire names it resolved to."""
    def names(entries: list[str]) -> list[str]:
        return list(dict.fromkeys(w for e in entries for w in listing.names.get(e, [e])))
    c = cfg.config
    tools = c.tools.model_copy(update={k: names(getattr(c.tools, k)) for k in (
        "workspace", "domain", "deferred")})
    ps = c.phase_settings
    phases = ps if ps.tactical_workspace is None else ps.model_copy(
        update={"tactical_workspace": names(ps.tactical_workspace)})
    config = c.model_copy(update={
        "tools": tools, "phase_settings": phases, "approval_required": names(c.approval_required),
        "breakers": c.breakers.model_copy(update={"exempt_tools": names(c.breakers.exempt_tools)})})
    return cfg.model_copy(update={"config": config, "tool_record": listing.record})


async def resolve(cfg: ResolvedConfig, ws: WorkspaceRef) -> ResolvedConfig:
    """The config with its tools resolved and recorded. Raises StepFailed when a name
    resolves to nothing or a server does not start (after the tool retry rules)."""
    listed = entries(cfg.config)
    listing = await _list(cfg, ListToolsRequest(workspace=ws, entries=listed), "list tools")
    return apply(cfg, listing).model_copy(update={"tool_entries": listed})


async def add(cfg: ResolvedConfig, ws: WorkspaceRef, names: list[str],
              turn: int) -> ResolvedConfig:
    """`cfg` (resolved) with `names` (names or globs, as `tools.domain` takes them) added to
    its domain tools: listed again with the entries the job started with, in a new record
    (the one in use is never written over). Raises StepFailed like `resolve`."""
    base = cfg.tool_entries or entries(cfg.config)
    listing = await _list(cfg, ListToolsRequest(workspace=ws, entries=base + names, turn=turn),
                          f"list tools with {', '.join(names)[:80]} (turn {turn})")
    # (a glob such as "*" matches the control tools too: each strategy offers its own)
    wire = [w for n in names for w in listing.names.get(n, []) if w not in CONTROL_TOOLS]
    tools = cfg.config.tools.model_copy(update={
        "domain": list(dict.fromkeys(cfg.config.tools.domain + wire))})
    return cfg.model_copy(update={"config": cfg.config.model_copy(update={"tools": tools}),
                                  "tool_record": listing.record,
                                  "tool_entries": list(dict.fromkeys(base + names))})


async def add_for_turn(cfg: ResolvedConfig, ws: WorkspaceRef, turn: int,
                       steering: Steering) -> None:
    """The tools the instruction of `turn` adds (`instruct` "tools"), listed with the job's
    own, in place: the strategy reads the same resolved config. Names that resolve to
    nothing leave the tools as they were, and `rejected` says why."""
    names = steering.instruction_tools.pop(turn, [])
    if not names:
        return
    try:
        more = await add(cfg, ws, names, turn)
    except StepFailed as e:
        steering.reject(f"instruct: turn {turn} runs without the tools it asked for "
                        f"({', '.join(names)[:300]}): {e.what}")
        return
    cfg.config.tools, cfg.tool_record = more.config.tools, more.tool_record
    cfg.tool_entries = more.tool_entries


async def _list(cfg: ResolvedConfig, req: ListToolsRequest, summary: str) -> ToolListing:
    c = cfg.config
    try:
        listing: ToolListing = await job_start.execute(  # local unless on its own queue
            LIST_TOOLS, req, ToolListing, task_queue=c.task_queues.tools, summary=summary,
            start_to_close_timeout=timedelta(seconds=c.tools.timeout_seconds),
            retry_policy=retry_policy(c.tools.retry))
    except Exception as e:
        if not job_start.failed(e):
            raise
        raise StepFailed(f"config '{cfg.name}': tools: {cause_of(e)}", "tools_unavailable") \
            from e
    return listing
