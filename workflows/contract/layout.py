"""The workspace layout: every path and S3 key switchback itself reads or writes.

A job's workspace is the prefix `<job id>/` in its bucket. What the model sees:

    instructions.md  workspace.md  main_plan.md  todos.yaml     memory and plan
    documents/                                                  the job's documents
    archive/phase_<n>.yaml                                      finished phases' todos
    archive/rewound/<n>/<path>                                  files a restoring rewind
                                                                from phase n replaced
    output/completion.json  output/error.json                   how the job ended
    output/breakers/trip_<n>.json                               circuit-breaker trips
    summaries/phase_<n>_<k>.md                                  readable compaction records
    tool_outputs/<conversation>/<n>.txt                         full text of cut results
    archive/plan_r<k>.md  archive/evaluation_r<k>.md            plan_revise_execute's records:
    archive/plan.md  archive/steps/step_<id>.md                 plans, evaluations, step results
    archive/classification.json                                 auto: the complexity class
    subjobs/<child job id>/                                     nested: each child job's own
                                                                workspace (same layout)

What only switchback touches (never reachable through a model tool):

    .switchback/conversations/<conversation>/{system.md,summary_<n>.md,<n:06d>.json}
    .switchback/snapshots/phase_<n>.json    .switchback/blobs/<etag>
    .switchback/restores/from_<n>.json      what a restoring rewind from phase n did
    .switchback/config.json                 .switchback/rerun.json
    .switchback/owner.json                  .switchback/tools/<tag>.json (the tools the job
                                            may use, as the model sees them)
    .switchback/todos_written.json          the conversation whose todo_write wrote todos.yaml

What the model may read but not write or delete (`WORKFLOW_OWNED`; the workflow's own
writes pass `system=True` to the workspace store):

    instructions.md  archive/**  output/completion.json  output/error.json
    output/breakers/**  subjobs/** (the children write their own)
    .switchback/** and subjobs/<child>/.switchback/** (not even readable)

A child of a `nested` job works under its parent's prefix: its workspace is
`<parent id>/subjobs/<child id>/` (`subjob_prefix`), and `WorkspaceRef.job_id` holds that
prefix. The worker's guard lets only a real child of the parent job use it
(activities/storage/buckets.py).

Paths are relative to the workspace; `key(job, path)` makes the S3 key.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

INTERNAL = ".switchback"

INSTRUCTIONS = "instructions.md"
# a follow-up instruction appended to instructions.md starts with this heading (turn N)
FOLLOW_UP_HEADING = "## Follow-up instruction (turn "
MEMORY = "workspace.md"
PLAN = "main_plan.md"
TODOS = "todos.yaml"
MEMORY_FILES = frozenset({MEMORY, PLAN, TODOS})  # the model's memory: no work of the task
DOCUMENTS = "documents"
ARCHIVE = "archive"
OUTPUT = "output"
COMPLETION = "output/completion.json"
ERROR = "output/error.json"
SUBJOBS = "subjobs"  # nested: the children's workspaces
CLASSIFICATION = "archive/classification.json"  # auto: the complexity class and its reasons
CURRENT_PLAN = "archive/plan.md"  # plan_revise_execute: the plan as it stands, with results


def key(job_id: str, path: str) -> str:
    """The S3 key of a workspace path."""
    return f"{job_id}/{path}"


def prefix(job_id: str) -> str:
    return f"{job_id}/"


def archive_path(phase: int) -> str:
    return f"{ARCHIVE}/phase_{phase}.yaml"


def rewound_path(phase: int, path: str) -> str:
    """Where a rewind from `phase` that restored the workspace keeps a file it replaced."""
    return f"{ARCHIVE}/rewound/{phase}/{path}"


def trip_path(number: int) -> str:
    return f"{OUTPUT}/breakers/trip_{number:04d}.json"


def summary_path(phase: int, k: int) -> str:
    return f"summaries/phase_{phase}_{k:03d}.md"


def tool_output_path(conversation: str, index: int) -> str:
    return f"tool_outputs/{conversation}/{index:06d}.txt"


def document_path(name: str) -> str:
    return f"{DOCUMENTS}/{name}"


def plan_path(round_: int) -> str:
    return f"{ARCHIVE}/plan_r{round_}.md"


def evaluation_path(round_: int) -> str:
    return f"{ARCHIVE}/evaluation_r{round_}.md"


def step_path(step_id: int) -> str:
    return f"{ARCHIVE}/steps/step_{step_id:02d}.md"


# -- nested jobs ------------------------------------------------------------------------

def subjob_folder(child_id: str) -> str:
    """The child's folder as its parent's model sees it."""
    return f"{SUBJOBS}/{child_id}"


def subjob_prefix(parent_id: str, child_id: str) -> str:
    """The child's workspace prefix (its `WorkspaceRef.job_id`)."""
    return f"{parent_id}/{SUBJOBS}/{child_id}"


def job_of(prefix: str) -> str:
    """The job id a workspace prefix belongs to (a child's own id, not its path)."""
    nested = split_subjob(prefix)
    return nested[1] if nested else prefix


def split_subjob(prefix: str) -> tuple[str, str] | None:
    """(parent id, child id) of a child's workspace prefix; None for a job's own prefix."""
    parent, sep, rest = prefix.partition("/")
    folder, sep2, child = rest.partition("/")
    if not sep or not sep2 or folder != SUBJOBS or not parent or not child or "/" in child:
        return None
    return parent, child


# -- .switchback/: switchback's own files ---------------------------------------------

def conversation_path(conversation: str, name: str) -> str:
    """`name`: system.md, a summary (`summary_name`) or a message file (`message_name`)."""
    return f"{INTERNAL}/conversations/{conversation}/{name}"


def message_name(index: int) -> str:
    return f"{index:06d}.json"


def summary_name(upto: int) -> str:
    """The running summary that folds messages 0..upto-1 (written once, like a message)."""
    return f"summary_{upto:06d}.md"


LEGACY_SUMMARY = "summary.md"  # the running summary of older jobs (one file, rewritten each time)


def snapshots_dir() -> str:
    return f"{INTERNAL}/snapshots/"


def snapshot_path(phase: int) -> str:
    return f"{INTERNAL}/snapshots/phase_{phase}.json"


def blobs_dir() -> str:
    return f"{INTERNAL}/blobs/"


def blob_path(etag: str) -> str:
    return f"{INTERNAL}/blobs/{etag}"


def restore_record_path(from_phase: int) -> str:
    """The plan of the restore made by a rewind from `from_phase` (written once: a retried
    attempt carries out the same plan)."""
    return f"{INTERNAL}/restores/from_{from_phase}.json"


def tool_record_path(tag: str) -> str:
    """Written by `list_tools` at the job's start, and again for a follow-up turn that adds
    tools (`tag`: run, turn and attempt, so a late attempt the workflow did not accept never
    replaces the record it did)."""
    return f"{INTERNAL}/tools/{tag}.json"


CONFIG_RECORD = f"{INTERNAL}/config.json"
TODOS_WRITTEN = f"{INTERNAL}/todos_written.json"  # which phase's todo_write wrote todos.yaml
RERUN_NOTE = f"{INTERNAL}/rerun.json"
OWNER = f"{INTERNAL}/owner.json"  # which run created the workspace (or which job it reruns)


def is_internal(path: str) -> bool:
    """switchback's own files: `.switchback/`, and a nested job's children's."""
    return path == INTERNAL or path.startswith(INTERNAL + "/") or (
        path.startswith(SUBJOBS + "/") and INTERNAL in path.split("/"))


# files and folders (trailing '/') only the workflow writes
WORKFLOW_OWNED = (INSTRUCTIONS, COMPLETION, ERROR, f"{OUTPUT}/breakers/", f"{ARCHIVE}/",
                  f"{SUBJOBS}/", f"{INTERNAL}/")


def is_workspace_path(path: str, max_len: int = 300) -> bool:
    """`path` names a file in a job's own folder: relative, without an empty, `.` or `..`
    part or a backslash, outside the job's records (`.switchback/`), at most `max_len`
    characters. For paths from config or model text that the workflow looks up itself."""
    parts = path.split("/")
    return (0 < len(path) <= max_len and "\\" not in path and parts[0] != INTERNAL
            and not any(x in ("", ".", "..") for x in parts))


MAX_DELIVERABLES = 50


def deliverable_problem(path: object) -> str | None:
    """Why `path` cannot be a deliverable (a workspace path or glob the job writes), or None."""
    if not isinstance(path, str) or not is_workspace_path(path):
        return f"{str(path)[:100]!r} is not a relative path in the job's workspace"
    if is_workflow_owned(path) or path.startswith(f"{DOCUMENTS}/"):
        return f"{path!r} is not written by the job (the workflow or the job's input owns it)"
    return None


def deliverables_problem(paths: object) -> str | None:
    """Why a list of deliverables is not one, or None."""
    if not isinstance(paths, list) or len(paths) > MAX_DELIVERABLES:
        return f"a list of at most {MAX_DELIVERABLES} paths or globs"
    return next((p for p in map(deliverable_problem, paths) if p), None)


def is_workflow_owned(path: str) -> bool:
    """`path` (normalised, relative) is a file the model may not write or delete."""
    return any(path == p or (p.endswith("/") and (path + "/").startswith(p))
               for p in WORKFLOW_OWNED)


def named_alike(path: str, paths: Iterable[str]) -> list[str]:
    """The files among `paths` with `path`'s file name at another path (a model that wrote
    workspace/report.md for report.md is told where its file went; exact names only)."""
    name = posixpath.basename(path)
    return sorted(p for p in paths if p != path and posixpath.basename(p) == name)


def folders_of(paths: Iterable[str]) -> set[str]:
    """Every folder of `paths` ("a/b/c.md": "a", "a/b"). Storage keys are no file system: a
    key may also be the folder of others (`notes` beside `notes/a.md`)."""
    return {"/".join(parts[:i]) for parts in (p.split("/") for p in paths)
            for i in range(1, len(parts))}
