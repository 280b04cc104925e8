"""The second baseline's ceilings, held on the source (docs/versioning.md, docs/profiles.md):

- the engine never names a model profile: every profile's code lives in its own module under
  activities/model/profiles/, registered by entry point, and the workflow, the other
  activities, the worker and the CLI mention none of them;
- code reached only with a profile is at most 400 lines;
- at most 3 live `workflow.patched` ids, each listed in docs/versioning.md with its removal
  condition (today: none);
- no module of workflows/ is over 400 lines;
- engine docstrings and comments state rules and reasons, not the runs that taught them:
  no model sizes, eval rounds, benchmark case ids or commit ids (stories go to
  docs/history.md).
"""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from pathlib import Path

from switchback.activities.model import profiles
from tests.test_committed_histories import patch_ids

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "activities" / "model" / "profiles"
ENGINE = [p for folder in ("workflows", "activities", "switchback", "operate")
          for p in sorted((ROOT / folder).rglob("*.py")) if not p.is_symlink()] \
    + [ROOT / "worker.py", ROOT / "starter.py"]


def profile_modules() -> list[Path]:
    return [p for p in PROFILES.glob("*.py") if p.name != "__init__.py"]


def test_the_engine_never_names_a_profile():
    names = set(profiles.names())
    assert names, "no profile registered (pyproject's switchback.profiles entry points)"
    own = set(profile_modules())
    alt = "|".join(map(re.escape, names))
    pattern = re.compile(rf"""["']({alt})["']|profile\s*[=!]=|\.({alt})\b""")
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in ENGINE if p not in own
             for n, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, found


def test_every_profile_is_a_plug_in_of_its_own():
    for ep in entry_points(group=profiles.GROUP):
        module = ep.value.split(":")[0]
        if module.startswith("activities."):  # ours: a module of its own in the profiles folder
            assert (ROOT / (module.replace(".", "/") + ".py")).parent == PROFILES, ep
        assert isinstance(profiles.get(ep.name), profiles.ModelProfile)


def test_code_reached_only_with_a_profile_is_small():
    lines = sum(len(p.read_text().splitlines()) for p in profile_modules())
    assert lines <= 400, lines


def test_at_most_three_live_patches_each_with_its_removal_condition():
    live = patch_ids()  # the scan tests/test_committed_histories.py holds to its own test
    assert len(live) <= 3, live
    doc = (ROOT / "docs" / "versioning.md").read_text()
    for patch in live:
        row = next((ln for ln in doc.splitlines() if f"`{patch}`" in ln), "")
        assert "remove" in row.lower(), f"patch {patch}: no removal condition in versioning.md"


def test_no_workflow_module_is_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "workflows").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}
    assert not long, long


ANECDOTES = re.compile(
    r"\b\d+(?:\.\d+)?B model|\b\d+(?:\.\d+)?B\b|(?i:eval[ -]round)|\bBFCL\b|\bbfcl-|"
    r"\b(?:base|miss_param)_\d|\beval-(?:files|sum|list|check-ref|two-step)\b|"
    r"\b(?:at|commit) [0-9a-f]{7,40}\b")


def test_engine_docstrings_tell_no_run_stories():
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
             for p in ENGINE if "profiles" not in p.parts and "operate" not in p.parts
             for n, line in enumerate(p.read_text().splitlines(), 1) if ANECDOTES.search(line)]
    assert not found, found


def test_the_anecdote_check_sees_one():
    for story in ("the 1.5B model wrote", "Eval round 13: in 3 of 10", "(bfcl-fix-8-pre)",
                  "under BFCL", "base_1", "the worker at fb03068"):
        assert ANECDOTES.search(story), story
    for rule in ("a model stuck in one conversation", "round 1", "max 2 GB"):
        assert not ANECDOTES.search(rule), rule
