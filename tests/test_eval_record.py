"""`starter.py eval --record DIR`: the record behind a figure (operate/eval_record.py), with
the scripted model standing in for the local endpoint. Three held-out jobs in one eval: the
follow-up job gets its second turn once the first is done and is checked after it; a job
still running at `--job-timeout` is cancelled and counted as a run that timed out; a job
reads the documents its config gives it. Each run
is a line of `<id>.runs.jsonl` as it ends; `<id>.json` holds the options, the commit and the
tables; started again, the eval runs only what the record lacks and refuses other options or
another engine."""

from __future__ import annotations

import argparse
import json
import re
import subprocess

import pytest

from switchback.operate import CliError, records
from switchback.operate.evaluate import evaluate
from tests.conftest import running_worker
from tests.scripts import call, step

TWO = "buy stamps\ncall the plumber\n"


def todo_turns() -> list[dict]:
    """react on heldout-todo-turns: the two entries, done; the third after them, done."""
    return [step(call("write_file", path="todo.txt", content=TWO)),
            step(call("job_complete", summary="todo.txt started", deliverables=["todo.txt"],
                      confidence=0.9, notes="")),
            step(call("write_file", path="todo.txt", content=TWO + "water the plants\n")),
            step(call("job_complete", summary="added", deliverables=["todo.txt"],
                      confidence=0.9, notes=""))]


def visitors() -> list[dict]:
    """react on heldout-visitors: the logs read where the job was given them, the CSV."""
    return [step(*(call("read_file", path=f"documents/{d}.txt")
                   for d in ("monday", "tuesday", "wednesday"))),
            step(call("write_file", path="visitors/week.csv",
                      content="day,visitors\nMonday,14\nTuesday,9\nWednesday,22\n")),
            step(call("job_complete", summary="week.csv", deliverables=["visitors/week.csv"],
                      confidence=0.9, notes=""))]


CONFIGS = ["heldout-todo-turns", "heldout-bottles", "heldout-visitors"]


def args(tmp_path, prefix: str, task_queue: str, **more) -> argparse.Namespace:
    return argparse.Namespace(**{
        "config": ",".join(CONFIGS), "runs": 1, "strategies": "react",
        "concurrency": 3, "id": prefix, "check": None, "price_in": 0.0, "price_out": 0.0,
        "out": str(tmp_path / "out"), "record": str(tmp_path / "evals"),
        "task_queue": task_queue, "job_timeout": 20.0, "undeclared": False, "profile": None,
        "worker_commit": None, **more})


async def test_a_record_of_two_held_out_jobs_one_timed_out(client, task_queue, s3,
                                                           model_server, monkeypatch,
                                                           tmp_path, capsys):
    monkeypatch.setenv("SWITCHBACK_LOCAL_BASE_URL", model_server.base_url)  # `local` endpoint
    prefix = f"rec-{task_queue}"
    model_server.set_script(f"{prefix}-heldout-todo-turns-react-1", todo_turns())
    hangs = {**step(call("write_file", path="stock/bottles.txt", content="89")),
             "latency_ms": 60_000}
    model_server.set_script(f"{prefix}-heldout-bottles-react-1", [hangs])
    model_server.set_script(f"{prefix}-heldout-visitors-react-1", visitors())
    a = args(tmp_path, prefix, task_queue)
    lines = tmp_path / "evals" / f"{prefix}.runs.jsonl"
    async with running_worker(client, task_queue):
        assert await evaluate(client, a) == 1  # one run timed out
    out = capsys.readouterr().out
    assert f"{prefix}-heldout-todo-turns-react-1: turn 2" in out
    runs = {r["config"]: r for r in map(json.loads, lines.read_text().splitlines())}
    turns, bottles = runs["heldout-todo-turns"], runs["heldout-bottles"]
    assert turns["status"] == "completed" and turns["ended_by"] == "model", turns
    assert turns["checked"] and turns["success"] and turns["turns"] == 2
    # the timed-out run is a run, a failure: in the record and in the denominator
    assert bottles["status"] == "timeout" and not bottles["success"], bottles
    assert bottles["outcome"] == "other" and "stopped after 20 s" in bottles["check"]
    assert bottles["wall_seconds"] < 60
    assert runs["heldout-visitors"]["success"], runs["heldout-visitors"]  # its documents read

    summary = json.loads((tmp_path / "evals" / f"{prefix}.json").read_text())
    here = records.checkout()
    assert summary["runner"] == here and summary["worker"]["commit"] == here["commit"]
    assert {r["commit"] for r in summary["runs"]} == {here["commit"]}
    assert summary["options"] == {"configs": CONFIGS, "undeclared": False, "profile": None,
                                  "check": None, "job_timeout": 20.0}
    assert summary["planned"] == summary["recorded"] == 3
    react = summary["by_strategy"]["react"]
    assert (react["runs"], react["success"], react["completed"], react["checked"]) == (3, 2, 2, 2)
    assert react["ends"] == {"completed": 2, "timeout": 1}
    assert summary["by_config"]["heldout-bottles"]["react"]["success"] == 0
    table = (tmp_path / "evals" / f"{prefix}.md").read_text()
    assert "| heldout-todo-turns | 1/1: 1 completed (model 1 / workflow 0), 1 checked |" \
        in table
    assert "| heldout-bottles | 0/1: 0 completed (model 0 / workflow 0), 0 checked; " \
        "timeout 1 |" in table
    assert "| react | 3 | 2/3 (67%) | 2 | 2 | 2 / 0 | 0 | 0 | 1 | completed 2, timeout 1 |" \
        in table
    assert re.search(rf"runner at {here['commit'][:12]}", table)
    assert (tmp_path / "out" / prefix / f"{prefix}-heldout-todo-turns-react-1" /
            "todo.txt").is_file()  # the run's workspace, kept to read

    # started again: the record has both runs, none runs again
    async with running_worker(client, task_queue):
        assert await evaluate(client, args(tmp_path, prefix, task_queue)) == 1
    assert "3 of 3 recorded in" in capsys.readouterr().out
    assert len(lines.read_text().splitlines()) == 3
    # other options, or code that changed since the record began: refused, nothing run
    with pytest.raises(CliError, match=r"other options \(profile was null\)"):
        await evaluate(client, args(tmp_path, prefix, task_queue, profile="none"))
    monkeypatch.setattr(records, "changed_since", lambda commit: ["workflows/x.py"])
    with pytest.raises(CliError, match=r"the code changed since its record began at .*"
                                       r"workflows/x\.py"):
        await evaluate(client, args(tmp_path, prefix, task_queue))
    assert len(lines.read_text().splitlines()) == 3


def test_the_checkout_and_what_changed_since(tmp_path):
    """The commit a record names is this checkout's; nothing changed since HEAD; a line cut
    short by a kill is left out of the record and the next starts on a line of its own."""
    here = records.checkout()
    if not here["commit"]:
        pytest.skip("not a git checkout")
    assert re.fullmatch(r"[0-9a-f]{40}", here["commit"])
    assert records.changed_since(here["commit"]) == []
    assert records.changed_since("") is None
    path = tmp_path / "x.runs.jsonl"
    records.append_line(path, {"a": 1})
    with path.open("a") as f:
        f.write('{"a": 2, "b"')
    records.append_line(path, {"a": 3})
    assert records.read_lines(path) == [{"a": 1}, {"a": 3}]


def test_the_files_changed_in_the_worktree_are_named_whole(tmp_path):
    """A file changed but not staged (` M path`, first in git's list) keeps its whole name."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)
    git("init", "-q")
    for name in ("bench.py", "zeta.py"):
        (tmp_path / name).write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    (tmp_path / "bench.py").write_text("x = 2\n")
    (tmp_path / "zeta.py").write_text("x = 3\n")
    git("add", "zeta.py")
    assert records.checkout(tmp_path)["dirty"] == ["bench.py", "zeta.py"]
