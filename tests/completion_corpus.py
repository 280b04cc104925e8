"""A corpus of small jobs for verified completion (docs/completion.md), each with a scripted
model under react and under phase_alternation, and what must come of it.

A job is its work as todos (text + the calls that do it), its declared deliverables, and
how its model behaves at the end: `claims` (job_complete with `claimed`), `early` (claims
before doing the work, then does it), `never` (does the work, never calls job_complete),
`echo` (first answers with its prompt echoed as text), `blind` (claims in the same answer as
a read that fails, twice: the first claim is refused, once, the second taken), `together`
(claims in the answer that also marks the todo done: the workflow's refusal of that
todo_complete is no failure of the work, the claim is taken), `repeated` (before the work,
one answer claims four times: the first claim is refused, the others not run, so the
refusals are not used up in one answer). `expect` is
the end status, and `delivered` the files the result must list as verified ([]: none).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from tests.scripts import call, step

ECHO = "Attempt 1 begins. The task (instructions.md) is in the system message."


@dataclass
class Job:
    name: str
    work: list[tuple[str, list[dict]]]  # (todo text, the calls that do it)
    deliverables: list[str] = field(default_factory=list)  # the config's
    input_deliverables: list[str] = field(default_factory=list)  # the job input's
    plan_deliverables: list[str] = field(default_factory=list)  # todo_write's (pa)
    claimed: list[str] = field(default_factory=list)  # job_complete's
    ending: str = "claims"  # claims | early | never | echo | blind | together | repeated
    phases: int = 1  # tactical phases the work is split into (pa)
    expect: str = "completed"
    delivered: list[str] = field(default_factory=list)
    answer_only: bool = False
    mcp: bool = False  # its tool is an MCP server's (mcp-server-time)


def write(path: str, text: str) -> dict:
    return call("write_file", path=path, content=text)


NOTE = "# Note\nA line that says something.\n"
JOBS = [
    Job("answer-only", [("Work out 12 + 7 + 30 + 51", [call("list_files")])],
        answer_only=True),
    Job("files", [("Write notes/a.md", [write("notes/a.md", NOTE)]),
                  ("Write notes/b.md", [write("notes/b.md", NOTE)])],
        deliverables=["notes/a.md", "notes/b.md"], claimed=["notes/a.md", "notes/b.md"],
        delivered=["notes/a.md", "notes/b.md"]),
    Job("read-then-write", [("Write notes/a.md", [write("notes/a.md", NOTE)]),
                            ("Write notes/b.md", [write("notes/b.md", NOTE)]),
                            ("Read the notes", [call("read_file", path="notes/a.md")]),
                            ("Write out/joined.md from them", [write("out/joined.md", NOTE)])],
        deliverables=["notes/*.md", "out/joined.md"], phases=2,
        delivered=["notes/a.md", "notes/b.md", "out/joined.md"]),
    Job("read-expected-to-fail", [
        ("Check whether secret.md exists (it should not)", [
            call("read_file", path="secret.md")]),
        ("Write report.md saying whether it exists", [write("report.md", "no secret.md\n")])],
        deliverables=["report.md"], delivered=["report.md"]),
    Job("similar-todos", [
        ('Mcp notes/alpha.md [write {"entry": "alpha"}]', [write("notes/alpha.md", NOTE)]),
        ('Mcp notes/gamma.md [write {"entry": "gamma"}]', [write("notes/gamma.md", NOTE)])],
        deliverables=["notes/alpha.md", "notes/gamma.md"], phases=2,
        delivered=["notes/alpha.md", "notes/gamma.md"]),
    Job("tool-only-todo", [("Count the words of instructions.md with word_count", [
        call("word_count", path="instructions.md")]),
        ("Write count.txt", [write("count.txt", "some words\n")])],
        deliverables=["count.txt"], delivered=["count.txt"]),
    Job("mcp-tool-todo", [("Get the current time in UTC with the time tool", [
        call("time__get_current_time", timezone="UTC")]),
        ("Write now.txt saying the time was read", [write("now.txt", "time read\n")])],
        deliverables=["now.txt"], delivered=["now.txt"], mcp=True),
    Job("echoes-its-prompt", [("Write out.md", [write("out.md", NOTE)])],
        deliverables=["out.md"], ending="echo", delivered=["out.md"]),
    Job("claims-early", [("Write result.md", [write("result.md", NOTE)])],
        deliverables=["result.md"], claimed=["result.md"], ending="early",
        delivered=["result.md"]),
    Job("never-claims", [("Write a.md", [write("a.md", NOTE)]),
                         ("Write b.md", [write("b.md", NOTE)])],
        deliverables=["a.md", "b.md"], ending="never", delivered=["a.md", "b.md"]),
    Job("claims-a-missing-file", [("Add the numbers", [call("list_files")])],
        claimed=["output/total.txt"], expect="stuck"),
    Job("declared-never-written", [("Write report.md", [call("list_files")])],
        deliverables=["report.md"], plan_deliverables=["report.md"], expect="stuck"),
    Job("deliverable-from-input", [("Write result.txt", [write("result.txt", "42\n")])],
        input_deliverables=["result.txt"], delivered=["result.txt"]),
    Job("empty-deliverable", [("Write out.txt", [write("out.txt", "")])],
        deliverables=["out.txt"], expect="stuck"),
    Job("claims-beside-a-failed-read", [
        ("Write report.md saying whether secret.md exists", [
            call("read_file", path="secret.md"), write("report.md", "secret.md: absent\n")])],
        deliverables=["report.md"], claimed=["report.md"], ending="blind",
        delivered=["report.md"]),
    Job("claims-with-its-todo-done", [("Write done.md", [write("done.md", NOTE)])],
        deliverables=["done.md"], claimed=["done.md"], ending="together",
        delivered=["done.md"]),
    Job("model-declares-in-plan", [("Write plan-out.md", [write("plan-out.md", NOTE)])],
        plan_deliverables=["plan-out.md"], claimed=["plan-out.md"],
        delivered=["plan-out.md"]),
    # the 1.5B model named files of its own beside the one its task asked for
    Job("plan-names-files-of-its-own", [("Write summary.md", [write("summary.md", NOTE)])],
        deliverables=["summary.md"], plan_deliverables=["summary.md", "phase1-todos.md"],
        claimed=["summary.md"], delivered=["summary.md"]),
    # the 1.5B model claimed six times in one answer (BFCL base_3 under react)
    Job("claims-four-times-at-once", [("Write result.md", [write("result.md", NOTE)])],
        deliverables=["result.md"], claimed=["result.md"], ending="repeated",
        delivered=["result.md"]),
]


def finish(job: Job) -> dict:
    return step(call("job_complete", summary=f"{job.name} done", deliverables=job.claimed,
                     confidence=0.8))


def early(job: Job) -> list[dict]:
    """The claims before the work (refused: nothing is written yet)."""
    if job.ending == "repeated":
        return [step(*finish(job)["tool_calls"] * 4)]
    return [finish(job)] if job.ending == "early" else []


def closing(job: Job) -> list[dict]:
    """The answers that end the job (`never` aside)."""
    if job.ending == "blind":
        return [step(call("read_file", path="secret.md"), *finish(job)["tool_calls"])] * 2
    if job.ending == "together":
        return [step(call("todo_complete", notes="done"), *finish(job)["tool_calls"])]
    if job.expect == "stuck":  # refused each time (completion.max_refusals = 3), then let through
        return [finish(job)] * 4
    return [finish(job)]


def text(content: str) -> dict:
    return step(content=content)


def react(job: Job, max_nudges: int = 3) -> list[dict]:
    """One conversation: the work, then the ending."""
    steps: list[dict] = [text(ECHO)] if job.ending == "echo" else []
    steps += early(job)
    steps += [step(*calls) for _, calls in job.work]
    if job.ending == "never":
        return steps + [text("All done.")] * (max_nudges + 1)
    return steps + closing(job)


def phase_alternation(job: Job, max_nudges: int = 3) -> list[dict]:
    """Bootstrap, the work in `job.phases` tactical phases (a transition between), the
    closing transition."""
    chunks = [job.work[i::job.phases] for i in range(job.phases)] if job.phases > 1 \
        else [job.work]
    chunks = [sorted(c, key=job.work.index) for c in chunks]

    def plan(n: int) -> dict:
        todos = [{"id": i, "content": t} for i, (t, _) in enumerate(chunks[n], 1)]
        return step(call("todo_write", phase=f"Work {n + 1}", todos=todos,
                         deliverables=job.plan_deliverables), call("todo_complete"))

    def memory(tag: str) -> list[dict]:
        return [step(write("workspace.md", f"# Workspace\n{tag}\n"), call("todo_complete")),
                step(write("main_plan.md", f"# Plan\n{tag}\n"), call("todo_complete"))]

    steps: list[dict] = [text(ECHO)] if job.ending == "echo" else []
    steps += memory("bootstrap") + [step(call("todo_complete"))]
    steps += early(job)
    steps.append(plan(0))
    for n, chunk in enumerate(chunks):
        steps += [step(*calls, call("todo_complete")) for _, calls in chunk]
        steps += memory(f"after phase {n + 1}")
        if n + 1 < len(chunks):
            steps.append(plan(n + 1))
    if job.ending == "never":
        return steps + [text("All done.")] * (max_nudges + 1)
    return steps + closing(job)


def plan_revise_execute(job: Job, max_nudges: int = 3) -> list[dict]:
    """A plan of the work, its evaluation, then each step and its result; the last step's
    result names the files the model claims. (No job_complete: the plan's end completes.)"""
    plan = [{"id": i, "name": t[:200], "detail": t} for i, (t, _) in enumerate(job.work, 1)]
    steps: list[dict] = [text(ECHO)] if job.ending == "echo" else []
    steps += [step(call("submit_plan", steps=plan, rationale="as the task says")),
              step(call("submit_evaluation", score=0.9, reasons="it covers the task"))]
    written: dict[str, str] = {}  # the files the work wrote so far, with their text
    for n, (t, calls) in enumerate(job.work, 1):
        files = [c["arguments"]["path"] for c in calls if c["name"] == "write_file"]
        for c in calls:
            if c["name"] == "write_file":
                written[c["arguments"]["path"]] = c["arguments"]["content"]
            elif c["name"] == "delete_file":
                written.pop(c["arguments"]["path"], None)
        if n == len(job.work):
            files += [p for p in job.claimed if p not in files]
        result = step(call("step_result", status="done", summary=t, files=files))
        absent = [p for p in files if not any(
            fnmatch.fnmatchcase(w, p) for w, text in written.items() if text)]
        # a step_result naming a file not there is refused (3 times), then taken
        steps += [step(*calls)] + [result] * (4 if absent else 1)
    return steps


def auto(job: Job, max_nudges: int = 3) -> list[dict]:
    """auto, routed to react."""
    return [step(call("classify_task", complexity="C", reasons="a short task"))] + react(job)
