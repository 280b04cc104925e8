"""Smoke test of the side-by-side benchmark (bench/side_by_side.py): it runs at a tiny N
(6 steps) and prints its table, switchback beside the floor, and the Temporal peers
(openai-agents, pydantic-ai) at 3 steps. The peers' packages are the `bench` extra, which
`make test` installs (Makefile): a declared contender whose packages are missing, or that
fails to run, fails here; only a hand-run of the benchmark lists it as skipped. No figure
is asserted: benchmarks print."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from switchback.bench.peers import Contender, contenders
from switchback.bench.side_by_side import parse, table

ROOT = Path(__file__).resolve().parent.parent
PEERS = ("openai_agents", "pydantic_ai")  # the Temporal agent integrations it is compared to


def side_by_side(*args: str) -> str:
    run = subprocess.run([sys.executable, "-m", "switchback.bench.side_by_side", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=280)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def test_every_declared_contender_is_installed() -> None:
    """The contenders of the default table (`--peers`) and every one that needs packages
    have them: the `bench` extra installs them all."""
    every = contenders()
    declared = {k: c for k, c in every.items() if k in parse([]).peers or c.needs}
    assert set(PEERS) <= set(declared) <= set(every)
    missing = {key: c.missing() for key, c in declared.items() if c.missing()}
    assert not missing, f"install the bench extra (pip install -e '.[dev,bench]'): {missing}"


def test_the_peers_run_side_by_side() -> None:
    """openai-agents and pydantic-ai on Temporal, on the openai switchback installs with,
    each run a 3-step job to the end: their columns have figures, no note says one failed."""
    out = side_by_side("--steps", "3", "--peers", ",".join(PEERS), "--concurrency", "",
                       "--recovery-steps", "0", "--max-seconds", "120")
    header = next(line for line in out.splitlines() if "openai-agents on Temporal" in line)
    assert "pydantic-ai on Temporal" in header

    def cells(label: str) -> list[str]:
        row = next(line for line in out.splitlines() if line.startswith(label))
        return row[len(label):].split()

    assert cells("model calls in the N-step job") == ["4", "4"]
    for label in ("overhead/step median ms", "history events, 3-step job"):
        assert len(cells(label)) == 2 and "-" not in cells(label), cells(label)
    assert "notes:" not in out, out  # no contender failed or was skipped


def test_side_by_side_prints_its_table_at_tiny_n() -> None:
    args = ["--steps", "6", "--peers", "floor,switchback", "--concurrency", "1,2",
            "--concurrency-steps", "3", "--rounds", "1", "--recovery-steps", "4",
            "--heartbeat", "2", "--max-seconds", "120", "--short", "3", "--short-runs", "1",
            "--workers", "2"]
    out = side_by_side(*args)
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
    """By hand, without the bench extra, the benchmark still prints the others' figures."""
    peer = _Absent()
    reason = peer.missing()
    assert reason and "no_such_module_for_switchback_bench" in reason
    out = table({"absent": {"skipped": reason}}, {"absent": peer},
                parse(["--concurrency", "1", "--recovery-steps", "0"]))
    assert "absent peer: skipped: no_such_module_for_switchback_bench not installed" in out
    assert "overhead/step median ms" in out
