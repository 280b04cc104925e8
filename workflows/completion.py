"""Verified completion: a job ends `completed` only when its deliverables are there, for
every strategy (docs/completion.md).

Deliverables are declared by the job (`deliverables:` in its config or input), else by
the model when it plans (`todo_write(..., deliverables=[...])`, recorded here), and a
`job_complete` adds the ones it names. Each must match a file that exists, is not empty
and was written by this job (activities/storage/deliverables.py); with the small model
profile the files of `small.expect_lines` must also hold their lines.

The orchestrator asks here at four points:

    job_complete called        refused with what is missing (completion.max_refusals
                               times), the model goes on; then it is let through ...
    the strategy completes     ... and verified: missing deliverables make the job
                               `stuck` with the list, never `completed`
    the job would stop stuck   (a breaker, the ritual's loops, the nudges or phases run
    or fail a model's way      out): with every declared deliverable there the workflow
                               completes it instead and says so
    `state`                    what is declared, by whom

A job that declares none and whose model names none is an answer-only job: its result
says so. With the small model profile, a claim of that kind before any work was done (a
file of the work written, a tool of the task called) is first refused like a missing
deliverable (`NOTHING_DONE`), at most `completion.max_refusals` times: the 1.5B model
claimed completion with the task's files unwritten. In a job with tools of the task, a
job whose last turn still did no work ends `stuck` (`NO_WORK`, patch `claim-needs-work`),
never `completed` as answer-only. Pure decisions plus one activity call (check_files).
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from workflows import task_files, task_words
from workflows.contract import (
    CheckCompletionResult,
    CheckFilesRequest,
    CheckFilesResult,
    JobResult,
    ResolvedConfig,
    ToolCallInfo,
    ToolOutcome,
    WorkspaceRef,
    layout,
)
from workflows.strategies import completion_gate
from workflows.strategies.base import (
    ChildOutcome,
    DeliverablesChecked,
    declares_workspace_folder,
)
from workflows.strategies.ritual import small_profile as small

BY_WORKFLOW = "Completed by the workflow"  # how the summary of a job it completed starts
# failures the model caused that end a job: with the deliverables there it is completed
UPGRADABLE = frozenset({"no_tool_call", "phase_limit"})
SHOWN = 20  # problems listed in a refusal or a result
UNKNOWN_OUTCOME = "unknown_outcome"  # a tool outcome's code (activities/tools/delivery.py)
# the small profile's problem with a claim that names no file in a job that declares none,
# before any work was done: the 1.5B model claimed completion with the task's files unwritten
NOTHING_DONE = ("no deliverable is named and no work is done yet (no file of the work written, "
                "no tool of the task called): if the task asks for files, write them and name "
                "them in job_complete's `deliverables`; if it asks only for an answer, give it "
                "in `summary`")
# the same claim in a job with tools of the task: they are named (under BFCL react claimed
# turns done before any call of the case's functions)
NOTHING_DONE_WITH_TOOLS = (
    "no deliverable is named and no work is done yet (no tool of the task called, no file of "
    "the work written): if the task asks for actions, do them with its tools ({tools}){files}; "
    "if it asks only for an answer, give it in `summary`")
FILES_TOO = "; if it asks for files, write them and name them in job_complete's `deliverables`"
# why a job whose last turn completed with no work done ends `stuck`
NO_WORK = ("no work was done in the last turn: no tool of the task ({tools}) was called and no "
           "file of the work written")
# workspace tools that do no work of the task (reads, and a delete: no file is made)
NOT_WORK = frozenset({"read_file", "list_files", "search_files", "tool_search", "delete_file"})


def with_unknown(result: JobResult, state: CompletionState) -> JobResult:
    """`result` with the tool calls whose effect is unknown in its notes."""
    if not state.unknown_outcomes:
        return result
    note = ("Tool calls whose outcome is unknown (started, not finished, not run again: "
            f"check whether they took effect): {', '.join(state.unknown_outcomes)}")
    return result.model_copy(update={"notes": f"{result.notes}\n{note}".strip()})


class CompletionState(BaseModel):
    """Carried across continue-as-new."""

    by_model: list[str] = []  # deliverables the model named when it planned
    # with the small profile, the files the task's words ask for (task_files.named): this
    # turn's instruction's
    by_task: list[str] = []
    refusals: int = 0  # job_complete calls refused
    checks: int = 0  # verification model calls made (completion.check model)
    # tool calls whose effect is unknown (an at-most-once call an earlier attempt started
    # and did not finish: activities/tools/delivery.py), "<tool> (<call id>)": the result's
    # notes list them
    unknown_outcomes: list[str] = []
    turn: int = 1  # the job's turn (follow-up instructions)
    # a follow-up turn's files: what its tool calls wrote (turn 2 on; the newest at most
    # MAX_TURN_WRITTEN): a job_complete of that turn names only these
    turn_written: list[str] = []
    # this turn did work of the task: a file of the work written (not memory, not the
    # workflow's), a tool of the task called, a child job run. None: not known (state kept
    # before this was recorded, a restore): taken as done
    worked: bool | None = None
    # a job_complete of this turn was refused because a call of the same answer failed
    # (unseen_failures): refused so once per turn
    unseen_refused: bool = False
    delegated: bool = False  # child jobs do the work (auto routed to nested): no by_task
    # the task's files, when its words name any, are the deliverables, and the model's only
    # when they name none (patch TASK_FILES_FIRST); False: a job started before, both
    task_first: bool = False
    # the small profile: what the task says about each of its files (task_words.about), shown
    # under a todo that writes one; a follow-up turn's words replace a file's earlier ones
    task_words: dict[str, str] = {}


MAX_TURN_WRITTEN = 500


# the task's files first: the 1.5B model named "deliverables.txt", "phase1-todos.md" and
# more in its plan beside the report.md its task asked for, and wrote each with one line
# to satisfy the check (eval-check-ref, 2026-11-27)
TASK_FILES_FIRST = "task-files-first"


def declared(cfg: ResolvedConfig, state: CompletionState) -> list[str]:
    """The job's deliverables (with the small profile, expect_lines' files too), else the
    ones its task names (the small profile), else the model's (before TASK_FILES_FIRST: the
    task's and the model's)."""
    if state.task_first and state.by_task:
        return by_job(cfg) or list(state.by_task)
    return by_job(cfg) or list(dict.fromkeys(state.by_task + state.by_model))


def by_job(cfg: ResolvedConfig) -> list[str]:
    """The job's own deliverables: the config's and the input's, with the small profile
    expect_lines' files too."""
    return list(dict.fromkeys(cfg.config.deliverables + (
        sorted(cfg.config.small.expect_lines) if small(cfg) else [])))


def begin(cfg: ResolvedConfig, state: CompletionState, task: str,
          patched: Callable[[str], bool]) -> None:
    """A job's start: the files its task names (task_named), held to before the model's
    with the small profile (`patched`: workflow.patched; a job started before, both)."""
    state.task_first = small(cfg) and patched(TASK_FILES_FIRST)
    task_named(cfg, state, task)


def task_named(cfg: ResolvedConfig, state: CompletionState, task: str) -> None:
    """A turn's task (the instructions, a follow-up instruction): with the small profile, the
    files its words ask for are the turn's deliverables in a job that declares none
    (task_files.named; the 1.5B model claimed completion with them unwritten). Not for a
    nested job's child (its task quotes its parent's) nor a job whose child jobs do the work
    (nested; auto once routed to nested: `delegated`)."""
    c = cfg.config
    state.by_task = task_files.named(task) if small(cfg) and not c.nested.within_parent \
        and c.strategy != "nested" and not state.delegated else []
    if small(cfg):
        state.task_words = words_of(task, by_job(cfg) + task_files.named(task),
                                    state.task_words)


MAX_WORDS_FILES = 20  # files whose words a job keeps


def words_of(task: str, paths: list[str], earlier: dict[str, str]) -> dict[str, str]:
    """`earlier` with what `task` says about each of `paths` (globs aside), the newest
    MAX_WORDS_FILES."""
    files = [p for p in dict.fromkeys(paths) if not set("*?[") & set(p)][:MAX_WORDS_FILES]
    new = task_words.about_all(task, files)
    merged = {**{p: w for p, w in earlier.items() if p not in new}, **new}
    return dict(list(merged.items())[-MAX_WORDS_FILES:])


def delegated(state: CompletionState) -> None:
    """The job's child jobs do its work (auto routed to nested): no task files of its own."""
    state.delegated, state.by_task = True, []


def task_files_this_turn(cfg: ResolvedConfig, state: CompletionState,
                         found: DeliverablesChecked) -> DeliverablesChecked:
    """In a follow-up turn, the files its instruction names count only once written in it
    (a file of turn 1 that turn 2 asks to write again is there from the start)."""
    if state.turn < 2 or not state.by_task or by_job(cfg):
        return found
    return written_this_turn(found, state.by_task, state)


def valid(paths: Any) -> tuple[list[str], list[str]]:
    """(the paths among a model's `paths` that can be deliverables, why the others cannot)."""
    if not isinstance(paths, list):
        return [], []
    good, bad = [], []
    for p in paths[:layout.MAX_DELIVERABLES]:
        path = str(p).strip().removeprefix("./")
        problem = layout.deliverable_problem(path)
        if problem:
            bad.append(f"{problem}: not a deliverable")
        elif path not in good:
            good.append(path)
    return good, bad


def record_outcome(state: CompletionState, call: ToolCallInfo, outcome: ToolOutcome) -> None:
    """A tool call that ran: the files it wrote (a follow-up turn's own); a todo_write's
    deliverables join the model's; a call whose outcome is unknown is remembered for the
    result's notes."""
    if outcome.code == UNKNOWN_OUTCOME:
        state.unknown_outcomes = (state.unknown_outcomes + [f"{call.name} ({call.id})"])[-50:]
        return
    if outcome.ok and call.name not in NOT_WORK and (
            not outcome.changed or any(map(task_files.work_file, outcome.changed))):
        state.worked = True
    _written(state, outcome.changed)
    if call.name != "todo_write" or not outcome.ok or not call.args:
        return
    good, _ = valid(call.args.get("deliverables"))  # the memory files aside: the 1.5B model
    good = [p for p in good if p not in layout.MEMORY_FILES]  # planned workspace.md as one
    state.by_model = list(dict.fromkeys(state.by_model + good))[:layout.MAX_DELIVERABLES]


def record_children(state: CompletionState, outcomes: list[ChildOutcome]) -> None:
    """A nested job's children: in a follow-up turn, their files are this turn's work."""
    state.worked = state.worked or bool(outcomes)
    _written(state, [f"{o.folder}/{d}" for o in outcomes for d in o.deliverables])


def _written(state: CompletionState, paths: list[str]) -> None:
    """Files the job wrote: in a follow-up turn, the turn's own (the newest MAX_TURN_WRITTEN)."""
    if state.turn > 1 and paths:
        state.turn_written = list(dict.fromkeys(state.turn_written + paths))[-MAX_TURN_WRITTEN:]


def nothing_done(cfg: ResolvedConfig, state: CompletionState) -> bool:
    """The small profile's check of an answer-only claim: no work done in this turn (a
    nested job's child is exempt: its parent asked it for an answer)."""
    return small(cfg) and state.worked is False and not cfg.config.nested.within_parent


def nothing_done_problem(cfg: ResolvedConfig) -> str:
    """What a claim with nothing done is refused with: in a job with tools of the task, they
    are the way (such a claim is never taken as an answer: `empty_handed`)."""
    tools = cfg.config.tools.domain
    if not tools:
        return NOTHING_DONE
    return NOTHING_DONE_WITH_TOOLS.format(
        tools=_named(tools), files=FILES_TOO if cfg.config.tools.writes_files() else "")


def empty_handed(cfg: ResolvedConfig, state: CompletionState) -> bool:
    """An answer-only completion the small profile does not end a job `completed` with: no
    work done in the turn, in a job with tools of the task (a claim let through after its
    refusals, react's last text answer). react under BFCL ended a job `completed` without
    one of the case's calls; a job with no tool of the task may be a question whose answer
    is the work, and a turn followed by another may have asked the user something."""
    return bool(cfg.config.tools.domain) and nothing_done(cfg, state)


def no_work(cfg: ResolvedConfig, state: CompletionState) -> DeliverablesChecked:
    """The verification of such a completion: no work there."""
    refused = (f"; its claim of completion was refused {state.refusals} times, then taken as "
               "an answer" if state.refusals else "")
    return DeliverablesChecked(declared=[], delivered=[], problems=[NO_WORK.format(
        tools=_named(cfg.config.tools.domain)) + refused])


def _named(tools: list[str], shown: int = 6) -> str:
    return ", ".join(tools[:shown]) + (", ..." if len(tools) > shown else "")


def new_turn(cfg: ResolvedConfig, state: CompletionState, turn: int, task: str) -> None:
    """A follow-up turn begins: its job_complete is refused afresh, and names its own files;
    its instruction `task` names its own deliverables (task_named)."""
    state.turn, state.turn_written, state.refusals, state.worked = turn, [], 0, False
    state.unseen_refused = False
    if state.task_first:  # an earlier turn's plan names no file this instruction asks for
        state.by_model = []
    task_named(cfg, state, task)


def restored(state: CompletionState) -> None:
    """A restore put files back: this turn's writes count again only once made again (what
    work the restored files hold is not known)."""
    state.turn_written, state.worked = [], None


def not_this_turns(claimed: list[str], state: CompletionState,
                   delivered: list[str] | None = None) -> list[str]:
    """In a follow-up turn, the paths or globs of `claimed` that match no file this turn
    wrote (among `delivered`, the files found there, when given: a deleted one does not
    count): the files of the turns before do not show this turn's work. [] in turn 1."""
    if state.turn < 2:
        return []
    written = [w for w in state.turn_written if delivered is None or w in delivered]
    return [p for p in claimed if not any(fnmatch.fnmatchcase(w, p) for w in written)]


def written_this_turn(found: DeliverablesChecked, claimed: list[str],
                      state: CompletionState) -> DeliverablesChecked:
    """`found` with a problem for each claimed file this turn did not write (a job_complete
    of a follow-up turn names only the files of its own work)."""
    stale = not_this_turns(claimed, state, found.delivered if not found.problems else None)
    if not stale:
        return found
    return dataclasses.replace(found, problems=found.problems + stale_problems(stale, state))


def stale_problems(stale: list[str], state: CompletionState) -> list[str]:
    return [f"{p} was not written in this turn (turn {state.turn}): name in `deliverables` "
            "only files this turn wrote" for p in stale]


def this_turns(result: JobResult, state: CompletionState) -> JobResult:
    """A follow-up turn's result lists as its deliverables only the files the turn wrote
    (a strategy's own list, e.g. plan_revise_execute's steps, spans the turns before)."""
    claimed, _ = valid(result.deliverables)
    stale = set(not_this_turns(claimed, state))
    if not stale:
        return result
    return result.model_copy(update={"deliverables": [
        p for p in result.deliverables if p not in stale]})


def request(cfg: ResolvedConfig, ws: WorkspaceRef, paths: list[str]
            ) -> CheckFilesRequest | None:
    """What check_files is asked (None: nothing to check)."""
    lines = cfg.config.small.expect_lines if small(cfg) else {}
    if not paths and not lines:
        return None
    return CheckFilesRequest(workspace=ws, phase=0, paths=[], lines=lines, deliverables=paths,
                             mend_workspace_folder=small(cfg)
                             and not declares_workspace_folder(cfg))


def checked(paths: list[str], result: CheckFilesResult | None,
            bad: list[str] | None = None) -> DeliverablesChecked:
    if result is None:
        return DeliverablesChecked(declared=paths, delivered=[], problems=bad or [])
    return DeliverablesChecked(declared=paths, delivered=result.delivered, problems=list(
        dict.fromkeys((bad or []) + result.undelivered + result.problems)))


def content_checked(found: DeliverablesChecked, command: str,
                    verdict: CheckCompletionResult) -> DeliverablesChecked:
    """`found` (every deliverable there) with completion.check's verdict: a failed check is
    a problem the model is told, in the script's words."""
    if verdict.ok:
        return found
    said = verdict.output or "no output"
    return DeliverablesChecked(declared=found.declared, delivered=found.delivered,
                               problems=[f"the check ({command}) failed: {said}"])


def listed(problems: list[str]) -> str:
    return "; ".join(problems[:SHOWN]) + ("; ..." if len(problems) > SHOWN else "")


def refusal(found: DeliverablesChecked, refusals: int, cfg: ResolvedConfig,
            turn: int = 1) -> ToolOutcome:
    """What the model reads when its job_complete is refused. A job that has no write_file
    and declares no deliverable is told that its deliverables can only be files its tools
    wrote (under BFCL, react named `tmp`, a folder of the API's world, and was shown a
    write_file it did not have)."""
    whose = "the job" if turn < 2 else f"this turn (turn {turn})"
    then = ("You have no tool that writes workspace files, so a deliverable can only be a "
            "file your tools wrote: when the task's work is done with the tools, call "
            "job_complete again with no deliverables." if cfg.config.acts_only() else
            f"Do the work that makes them so with the tools."
            f"{completion_gate.fix_example(cfg, found.problems)} Then call job_complete again "
            f"(name in `deliverables` the files {whose} wrote).")
    return ToolOutcome(ok=False, code="job_incomplete", summary=(
        f"Error [job_incomplete]: job_complete refused ({refusals} of "
        f"{cfg.config.completion.max_refusals}): the deliverables are not there: "
        f"{listed(found.problems)}. {then}"))


def unseen_failures(failed: list[str]) -> ToolOutcome:
    """A job_complete made in the same answer as calls that failed: the model claimed the
    job done before it read those results (react answered read_file of a missing file,
    write_file of the report "present" and job_complete at once). Refused once per turn;
    not counted against completion.max_refusals."""
    return ToolOutcome(ok=False, code="job_incomplete", summary=(
        "Error [job_incomplete]: job_complete not taken: in the same answer, "
        f"{'; '.join(failed[:3])}. The completion came before those results were read: read "
        "them, make the deliverables right if they change anything, then call job_complete "
        "again."))


def unverified(result: JobResult, found: DeliverablesChecked,
               lead: str = "the deliverables are not there") -> JobResult:
    """A completion whose deliverables are not all there (or whose work is not done, `lead`
    says which): `stuck`, with what is missing."""
    note = f"Not completed: {lead}: {listed(found.problems)}"
    return result.model_copy(update={
        "status": "stuck", "missing": found.problems[:SHOWN], "verified": found.delivered,
        "completed_by": "", "answer_only": False, "notes": f"{result.notes}\n{note}".strip()})


def verified(result: JobResult, found: DeliverablesChecked) -> JobResult:
    return result.model_copy(update={
        "verified": found.delivered, "missing": [], "answer_only": not found.declared,
        "completed_by": result.completed_by or "model",
        "deliverables": result.deliverables or found.delivered})


def by_workflow(result: JobResult, found: DeliverablesChecked, why: str) -> JobResult:
    """A job that would have ended `why` (stuck, failed), its deliverables all there."""
    return result.model_copy(update={
        "status": "completed", "completed_by": "workflow", "verified": found.delivered,
        "missing": [], "deliverables": found.delivered,
        "summary": f"{BY_WORKFLOW}: every declared deliverable is there "
                   f"({', '.join(found.delivered)[:500]}); the job had stopped: {why[:500]}",
        "notes": f"{result.notes}\nThe model had not completed the job itself.".strip()})
