"""Smoke test of the side-by-side benchmark (bench/side_by_side.py): it runs at a tiny N
(6 steps) and prints its table. Only the floor and switchback run here, so the test needs
none of the `bench` extras; the peers are covered by the skip path (a contender whose
packages are missing is listed as skipped, not failed). No figure is asserted: benchmarks
print."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.peers import Contender
from bench.side_by_side import parse, table

ROOT = Path(__file__).resolve().parent.parent


def test_side_by_side_prints_its_table_at_tiny_n() -> None:
    args = ["--steps", "6", "--peers", "floor,switchback", "--concurrency", "1,2",
            "--concurrency-steps", "3", "--rounds", "1", "--recovery-steps", "4",
            "--heartbeat", "2", "--max-seconds", "120", "--short", "3", "--short-runs", "1",
            "--workers", "2"]
    run = subprocess.run([sys.executable, "-m", "bench.side_by_side", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=280)
    out = run.stdout
    assert run.returncode == 0, run.stderr[-3000:]
    assert "switchback side by side - " in out and "cores" in out  # machine and date
    header = next(line for line in out.splitlines() if "floor (in-process)" in line)
    assert "switchback AgentJob" in header
    def cells(label: str) -> list[str]:
        row = next(line for line in out.splitlines() if line.startswith(label))
        return row[len(label):].split()

    for label in ("overhead/step median ms", "worker CPU s/step @ 1"):
        assert len(cells(label)) == 2 and "-" not in cells(label), cells(label)
    assert "-" not in cells("jobs/s, calls/s @ 2 concurrent (of ideal)")
    assert "-" not in cells("Temporal+SeaweedFS CPU s/step @ 2")
    # where switchback's step goes (history event times) and its runs
    assert cells("  step median ms: model activity started->completed")[-1] != "-"
    assert cells("  runs (continue-as-new); largest run bytes")[-2] == "1;"
    # the floor has no history and no recovery; switchback has both
    assert cells("history events/call @ step 5")[0] == "-"
    assert cells("history events/call @ step 5")[1].isdigit()
    assert cells("history bytes, 6-step job")[1] != "-"
    assert cells("recovery s: new worker -> next step")[1] != "-"
    assert "notes:" not in out, out  # no contender failed or was skipped
    # short jobs (--short), side by side; switchback on 2 worker processes (--workers)
    assert "2 worker process(es)" in out
    short = next(line for line in out.splitlines()
                 if line.startswith("| 3 | whole-job overhead ms |"))
    assert [c.strip() for c in short.split("|")[3:5]] != ["-", "-"], short
    assert all(c.strip().isdigit() for c in short.split("|")[3:5]), short


class _Absent(Contender):
    key = "absent"
    title = "absent peer"
    needs = ("no_such_module_for_switchback_bench",)


def test_a_peer_without_its_packages_is_listed_as_skipped() -> None:
    peer = _Absent()
    reason = peer.missing()
    assert reason and "no_such_module_for_switchback_bench" in reason
    out = table({"absent": {"skipped": reason}}, {"absent": peer},
                parse(["--concurrency", "1", "--recovery-steps", "0"]))
    assert "absent peer: skipped: no_such_module_for_switchback_bench not installed" in out
    assert "overhead/step median ms" in out
