"""The held-out jobs (configs/heldout-*, docs/evals.md) and their checkers, without Temporal:
each checker, run the way `starter.py eval` runs it (`check.py WORKSPACE_FOLDER`), passes a
hand-made right workspace and fails wrong ones - a file missing, wrong content, and the
content that passed a lax checker before (every file holding every answer). None passes an
empty workspace or one whose files hold the task's own words. The jobs load as configs, and
no engine code names them (a rule is never designed on them). The fixed development-set
checkers are held to the same."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from switchback.activities.config_files import load_config
from switchback.operate.evaluate import CONFIGS, checker_for, follow_ups, run_checker
from switchback.workflows.contract import layout

ROOT = CONFIGS.parent
Files = dict[str, str]

GLOSSARY = {
    "glossary/latency.txt": "LATENCY\nThe delay between sending a request and getting the "
                            "first answer back.\n",
    "glossary/throughput.txt": "THROUGHPUT\nThe amount of work or data handled per "
                               "second.\n",
    "glossary/jitter.txt": "JITTER\nHow much the latency varies from one packet to the "
                           "next.\n",
}
INVITE = (CONFIGS / "heldout-invite" / "invite.md").read_text()
MOVED = INVITE.replace("Room 4B, second floor", "Garden Terrace, ground floor")
DAYS = "\n".join(f"{n}. {d}" for n, d in enumerate(
    ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"], 1))
SECOND_TURN = f"{layout.FOLLOW_UP_HEADING}2)\n\nadd water the plants\n"


def answer(summary: str) -> Files:
    return {"output/completion.json": json.dumps({"status": "completed", "summary": summary,
                                                  "deliverables": []})}


def every_file_holds_all(right: Files) -> Files:
    """Each file of a right workspace holding every file's text (what eval-files' checker
    passed at 259ee64)."""
    joined = "\n".join(right.values())
    return {path: joined for path in right}


# job -> (a right workspace, [(why, a wrong workspace), ...]); the documents the job is
# given are added to each (as the workflow places them)
CASES: dict[str, tuple[Files, list[tuple[str, Files]]]] = {
    "heldout-glossary": (GLOSSARY, [
        ("a term missing", {k: v for k, v in GLOSSARY.items() if "jitter" not in k}),
        ("every entry in every file", every_file_holds_all(GLOSSARY)),
        ("the term not in capitals", {**GLOSSARY, "glossary/jitter.txt":
                                      "Jitter\nHow much the latency varies.\n"}),
        ("one definition copied into all", {k: f"{k[9:-4].upper()}\nA measure of network "
                                            "time.\n" for k in GLOSSARY}),
        ("a definition of something else", {**GLOSSARY, "glossary/throughput.txt":
                                            "THROUGHPUT\nA word from the glossary.\n"}),
        ("no definition", {**GLOSSARY, "glossary/latency.txt": "LATENCY\n"}),
    ]),
    "heldout-bottles": ({"stock/bottles.txt": "89\n"}, [
        ("missing", {}),
        ("7 * 12 alone", {"stock/bottles.txt": "84\n"}),
        ("the working, not the number alone", {"stock/bottles.txt": "7 * 12 + 5 = 89\n"}),
        ("the numbers of the task", {"stock/bottles.txt": "7\n12\n5\n"}),
    ]),
    "heldout-visitors": ({"visitors/week.csv": "day,visitors\nMonday,14\nTuesday,9\n"
                                               "Wednesday,22\n"}, [
        ("missing", {}),
        ("the coffee refills counted", {"visitors/week.csv": "day,visitors\nMonday,6\n"
                                                             "Tuesday,11\nWednesday,4\n"}),
        ("no header", {"visitors/week.csv": "Monday,14\nTuesday,9\nWednesday,22\n"}),
        ("the days out of order", {"visitors/week.csv": "day,visitors\nWednesday,22\n"
                                                        "Monday,14\nTuesday,9\n"}),
        ("the three logs pasted", {"visitors/week.csv": "\n".join(
            (CONFIGS / "heldout-visitors" / "logs" / f"{d}.txt").read_text()
            for d in ("monday", "tuesday", "wednesday"))}),
    ]),
    "heldout-missing-ini": ({"findings.txt": "limits.ini: no such file\n"}, [
        ("missing", {}),
        ("a guessed value", {"findings.txt": "max_users=100\n"}),
        ("present", {"findings.txt": "limits.ini: present\n"}),
        ("both answers", {"findings.txt": "limits.ini: no such file\nmax_users=50\n"}),
        ("the file made up", {"findings.txt": "limits.ini: no such file\n",
                              "settings/limits.ini": "[limits]\nmax_users=10\n"}),
    ]),
    "heldout-capital": (answer("The capital of Australia is Canberra."), [
        ("no completion", {}),
        ("the wrong city", answer("The capital of Australia is Sydney.")),
        ("every city", answer("Sydney, Melbourne or Canberra.")),
        ("the answer in a file only", {**answer("Done: see answer.txt"),
                                       "answer.txt": "Canberra\n"}),
        ("not JSON", {"output/completion.json": "Canberra"}),
    ]),
    "heldout-invite": ({"documents/invite.md": MOVED}, [
        ("unchanged", {}),
        ("deleted", {"documents/invite.md": None}),  # type: ignore[dict-item]
        ("the old place kept beside the new", {"documents/invite.md": INVITE.replace(
            "Room 4B, second floor", "Garden Terrace, ground floor (was Room 4B)")}),
        ("another line changed too", {"documents/invite.md": MOVED.replace("12:30",
                                                                           "13:00")}),
        ("a line added", {"documents/invite.md": MOVED + "\nRSVP by Wednesday\n"}),
        ("the note rewritten", {"documents/invite.md": "Lunch moved to the Garden "
                                                      "Terrace, ground floor.\n"}),
    ]),
    "heldout-weekdays": ({"calendar/days.md": f"# Days of the week\n\n{DAYS}\n"}, [
        ("missing", {}),
        ("a bullet list", {"calendar/days.md": DAYS.replace(". ", "").translate(
            str.maketrans("1234567", "-------")).replace("-", "- ")}),
        ("from Sunday", {"calendar/days.md": "1. Sunday\n" + "\n".join(
            f"{n + 1}. {d.split('. ')[1]}" for n, d in enumerate(DAYS.splitlines()[:6], 1))}),
        ("twice", {"calendar/days.md": f"{DAYS}\n{DAYS}\n"}),
        ("six days", {"calendar/days.md": "\n".join(DAYS.splitlines()[:6])}),
    ]),
    "heldout-todo-turns": (
        {"todo.txt": "buy stamps\ncall the plumber\nwater the plants\n",
         "instructions.md": "Please start a to-do file\n\n" + SECOND_TURN}, [
            ("missing", {"instructions.md": SECOND_TURN}),
            ("only the first turn's", {"todo.txt": "buy stamps\ncall the plumber\n",
                                       "instructions.md": SECOND_TURN}),
            ("the new entry first", {"todo.txt": "water the plants\nbuy stamps\n"
                                                 "call the plumber\n",
                                     "instructions.md": SECOND_TURN}),
            ("the second turn never given", {"todo.txt": "buy stamps\ncall the plumber\n"
                                                         "water the plants\n",
                                             "instructions.md": "Please start a to-do\n"}),
            ("an entry twice", {"todo.txt": "buy stamps\ncall the plumber\nwater the "
                                            "plants\nwater the plants\n",
                                "instructions.md": SECOND_TURN}),
        ]),
}
HELDOUT = sorted(d.name for d in CONFIGS.iterdir() if d.name.startswith("heldout-"))


def given(job: str) -> Files:
    """The documents the job is given, where the workflow places them."""
    cfg = load_config(job, CONFIGS, policy=False)
    return {f"{layout.DOCUMENTS}/{Path(d).name}": Path(d).read_text() for d in cfg.documents}


def check(job: str, files: Files, root: Path) -> tuple[bool, str]:
    root.mkdir(parents=True)
    for path, text in {**given(job), "instructions.md": "(the task)\n", **files}.items():
        if text is None:
            continue
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return run_checker(checker_for(job, None), root)


def test_the_held_out_set_is_what_the_cases_cover():
    assert HELDOUT == sorted(CASES) and len(HELDOUT) >= 8


@pytest.mark.parametrize("job", sorted(CASES))
def test_right_passes_and_wrong_fails(job: str, tmp_path: Path):
    right, wrongs = CASES[job]
    ok, said = check(job, right, tmp_path / "right")
    assert ok, said
    assert len(wrongs) >= 2
    for n, (why, files) in enumerate(wrongs):
        ok, said = check(job, files, tmp_path / f"wrong{n}")
        assert not ok, f"{job}: {why} passed ({said})"
        assert said and said != "ok"


# right answers in other forms a user would take (a checker strict on form only would
# measure the model's formatting, not the task)
ALSO_RIGHT: list[tuple[str, Files]] = [
    ("heldout-glossary", {**GLOSSARY, "glossary/latency.txt": "# LATENCY\n\nLatency is the "
                          "time a message takes to arrive.\n",
                          "glossary/jitter.txt": "**JITTER:**\nJitter is the variation in "
                          "latency between packets. It makes calls choppy.\n"}),
    ("heldout-bottles", {"stock/bottles.txt": "89"}),
    ("heldout-visitors", {"visitors/week.csv": "day, visitors\nmonday, 14\n\"Tuesday\",9\n"
                                               "Wednesday,22"}),
    ("heldout-missing-ini", {"findings.txt": "No such file: settings/limits.ini was not "
                                             "found.\n"}),
    ("heldout-capital", answer("Canberra")),
    ("heldout-invite", {"documents/invite.md": INVITE.replace(
        "Room 4B, second floor", "the Garden Terrace (ground floor)")}),
    ("heldout-weekdays", {"calendar/days.md": DAYS.replace(". ", ") ") + "\n"}),
    ("heldout-todo-turns", {"todo.txt": "- buy stamps\n- call the plumber\n- water the "
                                        "plants\n", "instructions.md": SECOND_TURN}),
]


@pytest.mark.parametrize("job,files", ALSO_RIGHT, ids=[j for j, _ in ALSO_RIGHT])
def test_right_in_another_form_passes(job: str, files: Files, tmp_path: Path):
    ok, said = check(job, files, tmp_path / "right")
    assert ok, said


@pytest.mark.parametrize("job", sorted(CASES))
def test_nothing_trivial_passes(job: str, tmp_path: Path):
    """An empty workspace (the documents aside), and each file of the right workspace
    holding the task's own words, fail."""
    task = (CONFIGS / job / "instructions.md").read_text()
    assert not check(job, {}, tmp_path / "empty")[0]
    right, _ = CASES[job]
    echoed = {p: (json.dumps({"summary": task}) if p.endswith(".json") else task)
              for p in right if p != "instructions.md"}
    assert not check(job, echoed, tmp_path / "echo")[0]


@pytest.mark.parametrize("job", HELDOUT)
def test_a_held_out_job_is_written_as_a_user_would(job: str):
    """It loads, names no deliverables (its task says what it wants), has its checker, and
    is worded unlike the development set (no sentence of an eval-*/notes task)."""
    cfg = load_config(job, CONFIGS, policy=False)
    assert cfg.config.deliverables == [] and cfg.instructions
    assert (CONFIGS / job / "check.py").is_file()
    dev = " ".join((d / "instructions.md").read_text() for d in CONFIGS.iterdir()
                   if d.name.startswith("eval-") or d.name == "notes")
    for sentence in re.split(r"(?<=[.?!])\s+", " ".join(cfg.instructions.split())):
        assert len(sentence) < 25 or sentence not in " ".join(dev.split()), sentence


def test_the_follow_up_job_has_its_second_turn():
    cfg = load_config("heldout-todo-turns", CONFIGS, policy=False)
    assert cfg.config.follow_up.wait_seconds > 0 and cfg.config.follow_up.max_turns == 2
    assert list(follow_ups("heldout-todo-turns")) == [2]
    assert "water the plants" in follow_ups("heldout-todo-turns")[2]
    assert all(not follow_ups(j) for j in HELDOUT if j != "heldout-todo-turns")


def test_no_engine_code_names_a_held_out_job():
    for folder in ("workflows", "activities", "switchback"):
        for f in (ROOT / folder).rglob("*.py"):  # (switchback/'s links: their own folders)
            assert f.is_symlink() or "heldout" not in f.read_text(errors="replace"), f
    for f in (CONFIGS / "prompts").rglob("*"):
        assert not f.is_file() or "heldout" not in f.read_text(errors="replace"), f


NOTES = {"notes/apples.md": "# Apples\nApples grow on trees.\n",
         "notes/bananas.md": "# Bananas\nBananas are yellow.\n",
         "output/summary.md": "# Summary\n- notes/apples.md: Apples\n"
                              "- notes/bananas.md: Bananas\n"}
ANIMALS = {f"notes/{a}.md": f"# {a.capitalize()}\n{a.capitalize()} are kept as pets.\n"
           for a in ("cats", "dogs", "birds")}
PARTS = {"parts/a.txt": "alpha\n", "parts/b.txt": "beta\n", "parts/c.txt": "gamma\n",
         "joined.txt": "alpha\nbeta\ngamma\n"}
FRUITS = {"shopping.md": "- apples\n- pears\n- kiwis\n- mangoes\n- plums\n"}
DEVELOPMENT: dict[str, tuple[Files, Callable[[Files], list[Files]]]] = {
    "notes": (NOTES, lambda r: [every_file_holds_all(
        {k: v for k, v in r.items() if k.startswith("notes/")}) | {
        "output/summary.md": r["output/summary.md"]},
        {**r, "output/summary.md": r["output/summary.md"] + "- notes/cherries.md: Cherries\n"}]),
    "eval-files": (ANIMALS, lambda r: [every_file_holds_all(r)]),
    "eval-two-step": (PARTS, lambda r: [{**r, "parts/a.txt": "alpha\nbeta\ngamma\n"}]),
    "eval-list": (FRUITS, lambda r: [
        {"shopping.md": "- bread\n- milk\n- eggs\n- cheese\n- apples\n"},
        {"shopping.md": "- apples\n- Apples\n- apple\n- pears\n- plums\n"},
        {"shopping.md": FRUITS["shopping.md"] + "- figs\n"}]),
}


@pytest.mark.parametrize("job", sorted(DEVELOPMENT))
def test_development_checkers_fail_wrong_content(job: str, tmp_path: Path):
    """The development set's checkers that passed wrong content (eval-files: each note
    holding all three notes, 259ee64; eval-list: bread and milk as fruits) fail it now and
    still pass the right files."""
    right, wrongs = DEVELOPMENT[job]
    ok, said = check(job, right, tmp_path / "right")
    assert ok, said
    for n, files in enumerate(wrongs(right)):
        ok, said = check(job, files, tmp_path / f"wrong{n}")
        assert not ok, f"{job}: {files} passed ({said})"
