"""plan_revise_execute's plan, its checks, its prompt parts and its records - pure functions.

The plan as the strategy keeps it (`PlanStep`), the check of a submitted plan (ids unique,
dependencies on earlier steps, the size bounds), what a step's or a revision's prompt says
about the plan, and the markdown a person reads in the workspace: `archive/plan_r<k>.md`
(each submitted plan), `archive/evaluation_r<k>.md`, `archive/steps/step_<id>.md` and
`archive/plan.md` (the plan as it stands, with results).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from switchback.workflows.contract import Todo

StepStatus = Literal["pending", "done", "failed", "dropped", "cancelled"]
MARKS = {"pending": "[ ]", "done": "[x]", "failed": "[!]", "dropped": "[-]", "cancelled": "[-]"}


class PlanStep(BaseModel):
    id: int
    title: str
    detail: str = ""
    after: list[int] | None = None  # None: every earlier step
    status: StepStatus = "pending"
    result: str = ""  # done: what it produced; failed: why
    files: list[str] = []


class Round(BaseModel):
    """One submitted plan: the first, a revision after an evaluation, or a replan."""

    round: int
    kind: Literal["plan", "revision", "replan"]
    steps: list[PlanStep]
    rationale: str = ""
    score: float | None = None  # set once evaluated (replans are not)
    reasons: str = ""


def parse_plan(args: dict[str, Any], taken: set[int], min_steps: int,
               max_steps: int) -> tuple[list[PlanStep], str]:
    """The steps of a `submit_plan` call (already schema-checked), or a reason the model
    reads. `taken`: ids of steps that stay (a replan's done and failed ones)."""
    raw = args.get("steps") or []
    if not min_steps <= len(raw) <= max_steps:
        return [], (f"the plan has {len(raw)} steps; it needs {min_steps}-{max_steps} "
                    "(plan_revise_execute.min_steps / max_steps)")
    steps: list[PlanStep] = []
    seen = set(taken)
    for s in raw:
        sid = int(s["id"])
        if sid in seen:
            used = sorted(seen)
            return [], (f"step id {sid} is used twice" if sid not in taken else
                        f"step id {sid} is taken by a step that stays; use ids above "
                        f"{used[-1]}")
        bad = [a for a in (s.get("after") or []) if a not in seen]
        if bad:
            return [], (f"step {sid}: 'after' names {bad}, which are not earlier steps")
        seen.add(sid)
        steps.append(PlanStep(id=sid, title=str(s["name"]), detail=str(s.get("detail") or ""),
                              after=s.get("after")))
    return steps, ""


def predecessors(plan: list[PlanStep], step: PlanStep) -> list[PlanStep]:
    """The done steps whose results `step` builds on."""
    before = [p for p in plan[:plan.index(step)] if p.status == "done"]
    if step.after is None:
        return before
    return [p for p in before if p.id in step.after]


def predecessors_text(plan: list[PlanStep], step: PlanStep, cap: int) -> str:
    """The results `step` builds on, as its prompt shows them."""
    return "\n\n".join(
        f"### Step {q.id}: {q.title}\n{q.result[:cap]}"
        + (f"\nFiles: {', '.join(q.files)}" if q.files else "")
        for q in predecessors(plan, step)) or "(none: this step starts from scratch)"


def revision_text(plan: list[PlanStep], rounds: list[Round], threshold: float,
                  issue: str) -> str:
    """What the planner must take into account: a failed step (the plan runs), the last
    evaluation (still planning), an operator's issue; empty for a first plan."""
    why = f"\n## Why you plan again\n\n{issue}\n" if issue else ""
    if plan:
        top = max(p.id for p in plan)
        return (f"{why}\n## Revise the rest of the plan\n\nThe plan so far ([x] done, [!] "
                f"failed, [ ] not done yet: dropped unless you plan it again):\n\n"
                f"{plan_text(plan, results=True)}\n\nSubmit only the steps still to do, with "
                f"ids above {top}; they may build on done steps ('after').\n")
    if rounds:
        last = rounds[-1]
        verdict = (f"scored {last.score:.2f} (needed {threshold:.2f}). The evaluator's "
                   f"reasons:\n\n> {last.reasons}" if last.score is not None
                   else "was not evaluated.")
        return (f"{why}\n## Revise the plan\n\nThe plan of round {last.round} {verdict}"
                f"\n\nThat plan:\n\n{plan_text(last.steps)}\n\nSubmit a better plan.\n")
    return why


def plan_detail(plan: list[PlanStep], rounds: list[Round]) -> dict[str, Any]:
    """The plan and its rounds for `state.strategy_detail` (capped)."""
    return {"rounds": [{"round": r.round, "kind": r.kind, "steps": len(r.steps),
                        "score": r.score, "reasons": r.reasons[:300]} for r in rounds[-10:]],
            "plan": [{"id": p.id, "title": p.title, "status": p.status, "result": p.result[:200]}
                     for p in plan if p.status != "dropped"]}


def todos(plan: list[PlanStep]) -> list[Todo]:
    """The plan as the `state` query's todo list (dropped steps left out)."""
    return [Todo(id=p.id, content=p.title, status=_todo_status(p.status), notes=p.result[:300])
            for p in plan if p.status != "dropped"]


def _todo_status(s: StepStatus) -> Literal["pending", "completed", "cancelled"]:
    return "completed" if s == "done" else "pending" if s == "pending" else "cancelled"


def plan_text(steps: list[PlanStep], results: bool = False, cap: int = 300) -> str:
    lines = []
    for p in steps:
        mark = f"{MARKS[p.status]} " if results else ""
        after = "" if p.after is None else f" (after {', '.join(map(str, p.after)) or 'none'})"
        lines.append(f"{mark}{p.id}. {p.title}{after}")
        if p.detail:
            lines.append(f"   {p.detail}")
        if results and p.result:
            lines.append(f"   -> {p.result[:cap]}")
    return "\n".join(lines)


def round_record(r: Round, reason: str) -> str:
    head = {"plan": "Plan", "revision": "Revised plan", "replan": "Revised rest of the plan"}
    text = f"# {head[r.kind]} (round {r.round})\n\n"
    if reason:
        text += f"{reason}\n\n"
    if r.rationale:
        text += f"## Rationale\n\n{r.rationale}\n\n"
    return text + "## Steps\n\n" + plan_text(r.steps) + "\n"


def evaluation_record(r: Round, threshold: float, verdict: str) -> str:
    score = "none" if r.score is None else f"{r.score:.2f}"
    return (f"# Evaluation of the plan of round {r.round}\n\nScore: {score} "
            f"(threshold {threshold:.2f}): {verdict}\n\n## Reasons\n\n{r.reasons}\n")


def step_record(p: PlanStep) -> str:
    files = "".join(f"- {f}\n" for f in p.files) or "(none)\n"
    return (f"# Step {p.id}: {p.title}\n\nStatus: {p.status}\n\n## What it was to do\n\n"
            f"{p.detail or '(as the title says)'}\n\n## Result\n\n{p.result or '(none)'}\n\n"
            f"## Files\n\n{files}")


def current_record(plan: list[PlanStep], rounds: list[Round], note: str) -> str:
    scored = [r for r in rounds if r.score is not None]
    lines = ["# The plan as it stands", ""]
    if note:
        lines += [note, ""]
    if scored:
        lines += ["Evaluations: " + ", ".join(f"round {r.round}: {r.score:.2f}"
                                              for r in scored), ""]
    lines += ["[x] done  [ ] to do  [!] failed  [-] dropped or cancelled", "",
              plan_text(plan, results=True, cap=2000)]
    return "\n".join(lines) + "\n"
