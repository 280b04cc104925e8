"""`completion.check`: the config folder's script judges the deliverables' content. A
job_complete whose files are all there but wrong is refused in the script's words; a script
outside the config's folder is refused when the config loads."""

from __future__ import annotations

import uuid

import pytest

from switchback.activities.config_files import ConfigError, load_config
from switchback.activities.storage.completion_check import script
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.test_bad_model_input import tool_messages

APPLES = "# Apples\nApples grow on trees.\n"
BANANAS = "# Bananas\nBananas are yellow.\n"
SUMMARY = "# Summary\n- notes/apples.md: Apples\n- notes/bananas.md: Bananas\n"
CONFIG = {"extends": "notes", "strategy": "react",
          "llm": {"endpoint": "default", "profile": "none", "heartbeat_timeout_seconds": 2},
          "completion": {"check": {"command": "check.py", "timeout_seconds": 60}}}


def finish() -> dict:
    return step(call("job_complete", summary="three notes", confidence=0.9,
                     deliverables=["notes/apples.md", "notes/bananas.md", "output/summary.md"]))


def notes(apples: str, *more: dict) -> dict:
    """One turn that writes the three files (`more`: calls before them)."""
    return step(*more, call("write_file", path="notes/apples.md", content=apples),
                call("write_file", path="notes/bananas.md", content=BANANAS),
                call("write_file", path="output/summary.md", content=SUMMARY))


async def run(client, task_queue, start_job, model_server, script_: list[dict]):
    async with running_worker(client, task_queue):
        handle = await start_job(script_, model_server, config=CONFIG, instructions="x",
                                 documents=[])
        return handle, await handle.result()


async def test_a_wrong_file_is_refused_in_the_checks_words(client, task_queue, start_job,
                                                           model_server, s3):
    handle, result = await run(client, task_queue, start_job, model_server, [
        notes("Apples grow on trees.\n"),
        finish(),  # every file there, apples.md without its heading: refused by check.py
        step(call("write_file", path="notes/apples.md", content=APPLES)),
        finish()])
    assert result.status == "completed" and result.completed_by == "model", result
    refused = [m for m in tool_messages(model_server, handle.id) if "job_incomplete" in m]
    assert len(refused) == 1
    assert ("the check (check.py) failed: notes/apples.md does not start with '# Apples'"
            in refused[0])


async def test_a_check_that_never_passes_ends_the_job_stuck(client, task_queue, start_job,
                                                           model_server):
    _, result = await run(client, task_queue, start_job, model_server,
                          [notes("no heading\n")] + [finish()] * 4)
    assert result.status == "stuck"
    assert result.missing and result.missing[0].startswith("the check (check.py) failed")


def test_the_check_is_a_file_of_the_config_folder():
    assert script("notes", "check.py").name == "check.py"
    for bad in ("../creator/config.yaml", "/etc/passwd", "missing.py"):
        with pytest.raises(ValueError, match="is not a file of the config folder"):
            script("notes", bad)
    with pytest.raises(ConfigError, match="completion.check"):
        load_config({**CONFIG, "completion": {"check": {"command": "nope.py"}}}, policy=False)
    with pytest.raises(ConfigError, match="completion.check"):
        load_config({"extends": "notes", "completion": {"check": {
            "command": "../creator/config.yaml"}}}, policy=False)


MODEL_CHECK = {"extends": "creator", "strategy": "react", "deliverables": ["report.md"],
               "llm": {"heartbeat_timeout_seconds": 2},
               "completion": {"check": {"model": True}}}


async def test_a_verification_call_refuses_a_wrong_file(client, task_queue, start_job,
                                                        model_server):
    """`completion.check: {model: true}`: one call with the task and the files; its FAIL and
    reasons reach the model as the refusal, its PASS lets the job complete."""
    script_ = [
        step(call("write_file", path="report.md", content="# Report\nalpha\n")),
        step(call("job_complete", summary="done", deliverables=["report.md"], confidence=0.9)),
        step(call("write_file", path="report.md", content="# Report\nalpha and beta\n")),
        step(call("job_complete", summary="done", deliverables=["report.md"], confidence=0.9)),
        {"for_call": "verify:1", "content": "FAIL\nreport.md: beta is missing"},
        {"for_call": "verify:2", "content": "PASS"}]
    async with running_worker(client, task_queue):
        handle = await start_job(script_, model_server, config=MODEL_CHECK,
                                 instructions="Write report.md about alpha and beta.",
                                 documents=[])
        result = await handle.result()
    assert result.status == "completed", result
    refused = [m for m in tool_messages(model_server, handle.id) if "job_incomplete" in m]
    assert len(refused) == 1
    assert "the check (a verification call) failed: report.md: beta is missing" in refused[0]
    asked = [r for r in model_server.requests(handle.id) if "verify" in r.get("_call_key", "")]
    assert len(asked) == 2
    shown = asked[0]["messages"][1]["content"]
    assert "Write report.md about alpha and beta." in shown and "alpha\n" in shown
    assert asked[0]["messages"][0]["content"].startswith("You check whether a finished job")


def test_a_verdict_that_is_neither_pass_nor_fail_fails():
    from switchback.activities.model.verify_call import verdict
    assert verdict("PASS") == (True, "")
    assert verdict("**PASS**\n") == (True, "")
    assert verdict("FAIL\na.md: empty\nb.md: wrong") == (False, "a.md: empty b.md: wrong")
    assert verdict("FAIL: a.md is empty") == (False, "a.md is empty")
    ok, said = verdict("Looks good to me")
    assert not ok and "neither PASS nor FAIL" in said
    with pytest.raises(ConfigError, match="either `command` or `model: true`"):
        load_config({"extends": "notes", "completion": {"check": {}}}, policy=False)


async def test_a_missing_deliverable_names_a_file_of_its_name_elsewhere(s3):
    """The deliverables check (every job's completion): a file of the same name at another
    path is named in the problem, so the model learns where its file went."""
    from switchback.activities.storage import deliverables
    from switchback.workflows.contract import WorkspaceRef

    ws = WorkspaceRef(bucket="switchback", job_id=f"misplaced-{uuid.uuid4().hex[:8]}")
    await s3.ensure_bucket(ws.bucket)
    await s3.put(ws.bucket, f"{ws.job_id}/workspace/report.md", b"secret.md: absent\n")
    await s3.put(ws.bucket, f"{ws.job_id}/notes.md", b"x\n")
    await s3.put(ws.bucket, f"{ws.job_id}/parts", b"alpha\nbeta\n")  # a folder's path
    delivered, problems = await deliverables.check(s3, ws, ["report.md", "notes/*.md",
                                                            "summary.md", "parts/a.txt"])
    assert delivered == []
    assert problems == ["report.md does not exist (workspace/report.md does: the deliverable "
                        "is report.md, at that path)", "no file matches notes/*.md",
                        "summary.md does not exist", "parts/a.txt does not exist (parts is a "
                        "file: it is the folder of parts/a.txt; write each file at its own "
                        "path)"]


async def test_a_file_named_as_a_folder_does_not_break_the_check(client, task_queue,
                                                                 start_job, model_server):
    """S3 holds `notes` beside `notes/apples.md` (the 1.5B model wrote a file named as its
    notes' folder): the check's copy of the workspace leaves that file out and the check
    runs (the copy failed with FileExistsError, and the job with it)."""
    _, result = await run(client, task_queue, start_job, model_server, [
        notes(APPLES, call("write_file", path="notes", content="all the notes in one file\n")),
        finish()])
    assert result.status == "completed" and result.completed_by == "model", result
