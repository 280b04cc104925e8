"""Rewind that restores: the workspace put back as it was at the start of an earlier phase.

    rewind signal {"issue": ..., "restore_phase": N}     a person (the UI, the CLI)
    todo_rewind(issue, restore_phase=N)                  the model, when the config allows it:
                                                         `phase_settings.model_may_restore`

Before the rewind phase starts, `restore_workspace` (activities/storage/workspace_restore.py) lays
the phase-N snapshot (`.switchback/snapshots/phase_<N>.json`, taken at every phase start)
over the workspace: files changed or deleted since are written back, files created since
are removed, and every version it replaces is first kept under
`archive/rewound/<the phase left>/`, so nothing is lost. The workflow's own files
(instructions.md, archive/, output/completion.json, error.json, breakers/) are never
touched. The rewind phase's prompt carries the issue with a note of what was restored.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from switchback.workflows.contract import (
        RESTORE_WORKSPACE,
        ResolvedConfig,
        RestoreRequest,
        RestoreResult,
        ToolCallInfo,
        WorkspaceRef,
    )
    from switchback.workflows.failures import StepFailed, cause_of, is_activity_failure
    from switchback.workflows.retry_policies import retry_policy
    from switchback.workflows.visibility import Progress


async def rewind_issue(issue: str, restore_phase: int | None, from_phase: int,
                       cfg: ResolvedConfig, ws: WorkspaceRef, progress: Progress,
                       restored: Callable[[], None] = lambda: None) -> str:
    """The issue the rewind phase sees, after restoring the workspace to the start of
    `restore_phase` (None: the files stay as they are; `restored` is called after a
    restore). Records the rewind in `progress`."""
    note = ""
    if restore_phase is not None:
        note = describe(await restore(cfg, ws, from_phase, restore_phase), restore_phase)
        restored()
        issue = f"{issue}\n\n({note})"
    progress.last_rewind = (f"from phase {from_phase}: {issue.splitlines()[0][:200]}"
                            + (f" - {note}" if note else ""))
    return issue


async def rewind_call(call: ToolCallInfo, from_phase: int, cfg: ResolvedConfig,
                      ws: WorkspaceRef, progress: Progress,
                      restored: Callable[[], None] = lambda: None) -> ToolCallInfo:
    """`todo_rewind` as the strategy will carry it out: restored first when it names a phase
    and the config allows it; its issue says what happened. Other calls pass unchanged."""
    args = call.args or {}
    if call.name != "todo_rewind":
        return call
    phase, issue = args.get("restore_phase"), str(args.get("issue") or "").strip()
    if phase is None:
        progress.last_rewind = f"from phase {from_phase} (todo_rewind): {issue[:200]}"
        return call
    if not cfg.config.phase_settings.model_may_restore:
        issue += (f"\n\n(restore_phase {phase} was not applied: this job's config does not let "
                  "the model restore the workspace - phase_settings.model_may_restore)")
        phase = None
    elif not isinstance(phase, int) or not 1 <= phase <= from_phase:
        issue += f"\n\n(restore_phase {phase} was not applied: it is not a phase that started)"
        phase = None
    issue = await rewind_issue(issue, phase, from_phase, cfg, ws, progress, restored)
    return call.model_copy(update={"args": {**args, "issue": issue}})


async def restore(cfg: ResolvedConfig, ws: WorkspaceRef, from_phase: int,
                  phase: int) -> RestoreResult:
    settings = cfg.config.workspace
    try:
        result: RestoreResult = await workflow.execute_activity(
            RESTORE_WORKSPACE, RestoreRequest(workspace=ws, phase=phase, from_phase=from_phase),
            result_type=RestoreResult, summary=f"restore the workspace to the start of phase "
            f"{phase} (rewind from phase {from_phase})",
            start_to_close_timeout=timedelta(seconds=max(120.0,
                                                         4 * settings.timeout_seconds)),
            retry_policy=retry_policy(settings.retry))
    except Exception as e:
        if not is_activity_failure(e):
            raise
        raise StepFailed(f"restoring the workspace to phase {phase} failed (retried up to "
                         f"{settings.retry.maximum_attempts} times): {cause_of(e)}",
                         "workspace_failed") from e
    return result


def describe(r: RestoreResult, phase: int) -> str:
    if not r.found:
        return f"the workspace was NOT restored: {r.reason}"
    if not (r.restored or r.deleted):
        return f"the workspace was restored to the start of phase {phase}: nothing had changed"
    shown = ", ".join(r.paths[:8]) + (", ..." if len(r.paths) > 8 else "")
    return (f"the workspace was restored to the start of phase {phase}: {r.restored} files "
            f"written back, {r.deleted} removed ({shown}); the {r.archived} versions it "
            f"replaced are in {r.archive_dir}/")
