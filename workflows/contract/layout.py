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

What only switchback touches (never reachable through a model tool):

    .switchback/conversations/<conversation>/{system.md,summary_<n>.md,<n:06d>.json}
    .switchback/snapshots/phase_<n>.json    .switchback/blobs/<etag>
    .switchback/restores/from_<n>.json      what a restoring rewind from phase n did
    .switchback/config.json                 .switchback/rerun.json
    .switchback/owner.json                  .switchback/tools/<tag>.json (the tools the job
                                            may use, as the model sees them)

What the model may read but not write or delete (`WORKFLOW_OWNED`; the workflow's own
writes pass `system=True` to the workspace store):

    instructions.md  archive/**  output/completion.json  output/error.json
    output/breakers/**  .switchback/** (not even readable)

Paths are relative to the workspace; `key(job, path)` makes the S3 key.
"""

from __future__ import annotations

INTERNAL = ".switchback"

INSTRUCTIONS = "instructions.md"
MEMORY = "workspace.md"
PLAN = "main_plan.md"
TODOS = "todos.yaml"
DOCUMENTS = "documents"
ARCHIVE = "archive"
OUTPUT = "output"
COMPLETION = "output/completion.json"
ERROR = "output/error.json"


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


# -- .switchback/: switchback's own files ---------------------------------------------

def conversation_path(conversation: str, name: str) -> str:
    """`name`: system.md, a summary (`summary_name`) or a message file (`message_name`)."""
    return f"{INTERNAL}/conversations/{conversation}/{name}"


def message_name(index: int) -> str:
    return f"{index:06d}.json"


def summary_name(upto: int) -> str:
    """The running summary that folds messages 0..upto-1 (written once, like a message)."""
    return f"summary_{upto:06d}.md"


LEGACY_SUMMARY = "summary.md"  # the running summary of jobs from before #13, rewritten each time


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
    """Written once per job by `list_tools` (`tag`: run and attempt, so a late attempt the
    workflow did not accept never replaces the record it did)."""
    return f"{INTERNAL}/tools/{tag}.json"


CONFIG_RECORD = f"{INTERNAL}/config.json"
RERUN_NOTE = f"{INTERNAL}/rerun.json"
OWNER = f"{INTERNAL}/owner.json"  # which run created the workspace (or which job it reruns)


def is_internal(path: str) -> bool:
    return path == INTERNAL or path.startswith(INTERNAL + "/")


# files and folders (trailing '/') only the workflow writes
WORKFLOW_OWNED = (INSTRUCTIONS, COMPLETION, ERROR, f"{OUTPUT}/breakers/", f"{ARCHIVE}/",
                  f"{INTERNAL}/")


def is_workflow_owned(path: str) -> bool:
    """`path` (normalised, relative) is a file the model may not write or delete."""
    return any(path == p or (p.endswith("/") and (path + "/").startswith(p))
               for p in WORKFLOW_OWNED)
