"""`starter.py eval` on the real job's config (configs/notes), with the scripted model standing
in for the local endpoint: two strategies, two runs each, two at a time, every run an ordinary
job checked by configs/notes/check.py; the table, the runs, the chart; started again with the
same id it takes up the jobs instead of running them again."""

from __future__ import annotations

import argparse
import json
import uuid

import pytest

from switchback.operate import eval_report
from switchback.operate.evaluate import download, evaluate
from tests.conftest import running_worker
from tests.scripts import call, step

APPLES = "# Apples\n\nApples grow on trees.\n"
BANANAS = "# Bananas\n\nBananas are yellow.\n"
SUMMARY = "# Summary\n\n- notes/apples.md: Apples\n- notes/bananas.md: Bananas\n"


def phase_alternation(summary: str, tries: int = 1,
                      third: str = "Write output/summary.md") -> list[dict]:
    """The notes job in 10 model calls: the bootstrap, a tactical phase that writes the three
    files, a transition that claims completion (`tries` job_complete calls, for a job whose
    claim is refused)."""
    todos = [{"id": 1, "content": "Write notes/apples.md"},
             {"id": 2, "content": "Write notes/bananas.md"},
             {"id": 3, "content": third}]
    return [
        step(call("write_file", path="workspace.md", content="# Workspace\n\nthree notes\n"),
             call("todo_complete", notes="overview")),
        step(call("write_file", path="main_plan.md", content="# Plan\n\n1. notes 2. summary\n"),
             call("todo_complete", notes="plan")),
        step(call("todo_complete", notes="one phase")),
        step(call("todo_write", phase="Notes", description="d", todos=todos),
             call("todo_complete", notes="todos")),
        step(call("write_file", path="notes/apples.md", content=APPLES),
             call("todo_complete", notes="apples")),
        step(call("write_file", path="notes/bananas.md", content=BANANAS),
             call("todo_complete", notes="bananas")),
        step(call("write_file", path="output/summary.md", content=summary),
             call("todo_complete", notes="summary")),
        step(call("write_file", path="workspace.md", content="# Workspace\n\ndone\n"),
             call("todo_complete", notes="memory")),
        step(call("write_file", path="main_plan.md", content="# Plan\n\ndone\n"),
             call("todo_complete", notes="plan")),
    ] + [step(call("job_complete", summary="three notes", deliverables=["output/summary.md"],
                   confidence=0.9, notes=""))] * tries


def react() -> list[dict]:
    return [
        step(call("write_file", path="notes/apples.md", content=APPLES),
             call("write_file", path="notes/bananas.md", content=BANANAS)),
        step(call("write_file", path="output/summary.md", content=SUMMARY)),
        step(call("job_complete", summary="three notes", deliverables=["output/summary.md"],
                  confidence=0.9, notes="")),
    ]


async def test_eval_compares_strategies_on_the_real_jobs_config(client, task_queue, s3,
                                                               model_server, monkeypatch,
                                                               tmp_path, capsys):
    monkeypatch.setenv("SWITCHBACK_LOCAL_BASE_URL", model_server.base_url)  # `local` endpoint
    prefix = f"eval-{task_queue}"
    scripts = {f"{prefix}-phase-alternation-1": phase_alternation(SUMMARY),
               f"{prefix}-phase-alternation-2": phase_alternation("# Summary\n\n- apples\n", 4,
                                                                       "Write the summary"),
               f"{prefix}-react-1": react(), f"{prefix}-react-2": react()}
    for job_id, script in scripts.items():
        model_server.set_script(job_id, script)
    args = argparse.Namespace(config="notes", runs=2, strategies="phase_alternation,react",
                              concurrency=2, id=prefix, check=None, price_in=0.15,
                              price_out=0.6, out=str(tmp_path), task_queue=task_queue)
    lines = tmp_path / f"{prefix}.runs.jsonl"
    async with running_worker(client, task_queue):
        assert await evaluate(client, args) == 1  # one run failed its check
        first = json.loads((tmp_path / f"{prefix}.json").read_text())["runs"]
        assert await evaluate(client, args) == 1  # again: every run recorded, none runs
        kept = lines.read_text().splitlines()
        lines.write_text("\n".join(kept[:2]) + "\n")  # a record that lost two runs
        assert await evaluate(client, args) == 1  # their jobs exist: taken up, not started
    out = capsys.readouterr().out
    assert out.count("taking up ") == 2 and out.count("started ") == 4
    assert "4 of 4 recorded in" in out and "2 of 4 recorded in" in out
    assert sorted(lines.read_text().splitlines()) == sorted(kept)  # the same runs again
    runs = {r["job_id"]: r for r in first}
    assert set(runs) == set(scripts)
    bad = runs[f"{prefix}-phase-alternation-2"]  # its files are there, one of them wrong
    assert not bad["success"] and "lacks the line '- notes/apples.md: Apples'" in bad["check"]
    assert bad["outcome"] == "false completion"
    for job_id in (f"{prefix}-phase-alternation-1", f"{prefix}-react-1", f"{prefix}-react-2"):
        assert runs[job_id]["success"] and runs[job_id]["status"] == "completed"
    assert runs[f"{prefix}-react-1"]["model_calls"] == 3
    assert runs[f"{prefix}-react-1"]["ended_by"] == "model"
    assert runs[f"{prefix}-phase-alternation-1"]["model_calls"] == 10
    assert runs[f"{prefix}-phase-alternation-1"]["ended_by"] == "model"
    assert runs[f"{prefix}-react-1"]["outcome"] == "success"
    # no content check (only the eval's checker reads the lines): completed, a false one
    assert bad["model_calls"] == 10 and bad["status"] == "completed"
    assert all(r["prompt_tokens"] > 0 and r["cost_usd"] > 0 and r["wall_seconds"] > 0
               for r in first)
    table = (tmp_path / f"{prefix}.md").read_text()
    # runs, success, completed, checked, ended by model / workflow, false / missed / other
    assert "| phase_alternation | 2 | 1/2 (50%) | 2 | 1 | 2 / 0 | 1 | 0 | 0 | completed 2 | 10 |" \
        in table
    assert "| model | yes | success |" in table
    assert "| model | no | false completion |" in table
    assert "| react | 2 | 2/2 (100%) | 2 | 2 | 2 / 0 | 0 | 0 | 0 | completed 2 | 3 |" in table
    assert (tmp_path / f"{prefix}.png").stat().st_size > 10_000


async def test_a_file_named_as_a_folder_of_others_is_kept(s3, tmp_path):
    """S3 holds both `notes` and `notes/a.md` (the 1.5B model wrote a file named as its
    notes' folder): the eval keeps the run's workspace on disk, that file as `notes~file`
    (it crashed with FileExistsError, losing the run's report)."""
    job = f"dl-{uuid.uuid4().hex[:8]}"
    await s3.ensure_bucket("switchback")
    for key, body in (("notes", b"all three\n"), ("notes/a.md", b"# A\n"),
                      ("notes~file", b"the model's own\n"), ("x/y", b"y\n"),
                      ("x/y/z/w.md", b"w\n"), ("m/", b"a folder marker"),
                      ("m/b.md", b"b\n")):
        await s3.put("switchback", f"{job}/{key}", body)
    await download(s3, ("switchback", job), tmp_path)
    saved = {str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*")
             if p.is_file()}
    assert saved["notes/a.md"] == b"# A\n" and saved["x/y/z/w.md"] == b"w\n"
    assert saved["x/y~file"] == b"y\n" and saved["m/b.md"] == b"b\n"
    assert sorted(v for k, v in saved.items() if k.startswith("notes~")) == [
        b"all three\n", b"the model's own\n"]  # both kept, neither over the other


def test_several_evals_in_one_table(tmp_path, capsys):
    """`python -m switchback.operate.eval_report JOB=a.json,b.json ...`: a row per job over its
    evals (rounds: records, or an older eval's list of runs), per strategy the successes
    of all runs, the completed ones and who ended them, the checked ones and the other
    ends, a total row; a bad argument is an error that names it, not a traceback."""
    def runs(*outcomes: tuple[str, str]) -> list[dict]:
        return [{"strategy": s, "outcome": o, "success": o == "success",
                 "ended_by": "workflow" if o == "false completion" else "model",
                 "status": "stuck" if o in ("missed completion", "other") else "completed"}
                for s, o in outcomes]
    (tmp_path / "r1.json").write_text(json.dumps(  # an older eval's .json: no `checked`
        runs(("pa", "success"), ("react", "false completion"))))
    (tmp_path / "r2.json").write_text(json.dumps(
        {"id": "r2", "runs": runs(("pa", "other"), ("react", "success"))}))
    (tmp_path / "s.json").write_text(json.dumps(
        {"runs": [{**r, "checked": True} for r in runs(("pa", "missed completion"))]}))
    assert eval_report.main([f"files={tmp_path / 'r1.json'},{tmp_path / 'r2.json'}",
                             f"sum={tmp_path / 's.json'}"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "| job | pa: success/runs | react: success/runs |", "|---|---|---|",
        "| files | 1/2: 1 completed (model 1 / workflow 0), 1 checked; stuck 1 | "
        "1/2: 2 completed (model 1 / workflow 1), 1 checked |",
        "| sum | 0/1: 0 completed (model 0 / workflow 0), 1 checked; stuck 1 | - |",
        "| **all** | **1/3: 1 completed (model 1 / workflow 0), 2 checked; stuck 2** | "
        "**1/2: 2 completed (model 1 / workflow 1), 1 checked** |"]
    for bad, said in ((["files"], "'files': expected JOB=REPORT.json"),
                      ([f"files={tmp_path / 'none.json'}"], "none.json")):
        with pytest.raises(SystemExit) as e:
            eval_report.main(bad)
        assert e.value.code == 2 and said in capsys.readouterr().err
