"""bench/record.py: a benchmark's output becomes a record with the commit, the command and
the exit code; a failed run is recorded as failed; an id is written once; bad ids and a
missing command are refused in one line."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

from switchback.bench import record

PRINT = [sys.executable, "-c",
         "import sys; print('| figure | 1.00 |'); print('warn', file=sys.stderr)"]


def test_a_run_is_recorded_with_its_commit_command_and_output(tmp_path) -> None:
    meta = record.record(tmp_path, "demo-1", PRINT, echo=False)
    md = (tmp_path / "demo-1.md").read_text()
    assert meta["exit_code"] == 0 and meta["commit"] and "dirty" in meta
    assert "| figure | 1.00 |\nwarn\n```" in md and meta["commit"] in md
    assert json.loads((tmp_path / "demo-1.json").read_text())["command"] == shlex.join(PRINT)
    again = subprocess.run([sys.executable, "-m", "switchback.bench.record", "--id", "demo-1",
                            "--out", str(tmp_path), "--", *PRINT], capture_output=True,
                           text=True)
    assert again.returncode == 2 and "a record is written once" in again.stderr
    assert (tmp_path / "demo-1.md").read_text() == md


def test_a_failed_run_is_recorded_as_failed(tmp_path) -> None:
    out = subprocess.run([sys.executable, "-m", "switchback.bench.record", "--id", "bad-1",
                          "--out", str(tmp_path), "--", sys.executable, "-c",
                          "print('half'); raise SystemExit(3)"], capture_output=True, text=True)
    assert out.returncode == 3 and out.stdout.startswith("half")
    assert "exit code 3 (failed or stopped" in (tmp_path / "bad-1.md").read_text()
    assert json.loads((tmp_path / "bad-1.json").read_text())["exit_code"] == 3


def test_bad_ids_and_a_missing_command_are_refused(tmp_path) -> None:
    for argv, said in ((["--id", "../x", "--out", str(tmp_path), "--", "true"], "--id '../x'"),
                       (["--id", "x", "--out", str(tmp_path), "--"], "no command after --"),
                       (["--id", "x"], "usage:")):
        out = subprocess.run([sys.executable, "-m", "switchback.bench.record", *argv],
                             capture_output=True, text=True)
        assert out.returncode == 2 and said in out.stderr, (argv, out.stderr)
        assert "Traceback" not in out.stderr
    assert list(tmp_path.iterdir()) == []
