"""What the task says about one of its files (workflows/task_words.py): the small profile
shows it under a todo that writes the file, as the task wrote it."""

from __future__ import annotations

from pathlib import Path

from workflows import completion, task_words
from workflows.strategies import completion_gate

CONFIGS = Path(__file__).resolve().parent.parent / "configs"

TASK = """# Report

Read `input.csv` first.

## `out/data.json`

The JSON of the rows, one object per row.

## The text files

- `a.txt`: the word alpha
  on one line

  and nothing else
- `b.txt`: the word beta
```
an example of b.txt
```
1. Then write `data.md` with a table.
"""


def test_a_list_item_with_its_continuation_and_code() -> None:
    text = (CONFIGS / "notes" / "instructions.md").read_text(encoding="utf-8")
    assert task_words.about(text, "notes/apples.md") == (
        "1. `notes/apples.md`: two lines. The first line is exactly `# Apples`; the second "
        "line is\n   one sentence about apples. For example:\n\n       # Apples\n"
        "       Apples grow on trees and taste sweet.")
    assert task_words.about(text, "output/summary.md").endswith(
        "- notes/bananas.md: Bananas")


def test_a_paragraph_a_heading_and_a_name_that_is_part_of_another() -> None:
    assert task_words.about(TASK, "input.csv") == "Read `input.csv` first."
    assert task_words.about(TASK, "out/data.json") == (
        "## `out/data.json`\n\nThe JSON of the rows, one object per row.")
    assert task_words.about(TASK, "a.txt") == (
        "- `a.txt`: the word alpha\n  on one line\n\n  and nothing else")
    assert task_words.about(TASK, "b.txt") == (
        "- `b.txt`: the word beta\n```\nan example of b.txt\n```")
    assert task_words.about(TASK, "data.md") == "1. Then write `data.md` with a table."
    assert task_words.about(TASK, "data.json") == ""  # (out/data.json is another file)
    assert task_words.about(TASK, "x.md") == ""


def test_sub_items_indented_code_and_a_heading_with_a_list() -> None:
    nested = "- `a.md` with two lines:\n  - # A\n  - one sentence\n- `b.md`: b"
    assert task_words.about(nested, "a.md") == "- `a.md` with two lines:\n  - # A\n  - one sentence"
    code = "Write `a.md` with exactly:\n\n    # A\n    a line\n\nThen stop."
    assert task_words.about(code, "a.md") == "Write `a.md` with exactly:\n\n    # A\n    a line"
    heading = "## a.md\n\n- first line\n- second line\n\n## b.md\n\n- other"
    assert task_words.about(heading, "a.md") == "## a.md\n\n- first line\n- second line"
    fenced = "Write `f.md`:\n~~~\n```\nnot a fence's end\n~~~\n\nNext `g.md`."
    assert task_words.about(fenced, "f.md") == "Write `f.md`:\n~~~\n```\nnot a fence's end\n~~~"
    assert task_words.about(fenced, "g.md") == "Next `g.md`."


def test_a_long_passage_is_cut() -> None:
    long = "Write `big.md` with " + "many words " * 200
    shown = task_words.about(long, "big.md")
    assert len(shown) <= task_words.MAX_CHARS + 4 and shown.endswith(" ...")
    lines = "\n".join(["- `l.md`: line 0"] + [f"  line {n}" for n in range(1, 30)])
    assert task_words.about(lines, "l.md").count("\n") == task_words.MAX_LINES - 1


def test_the_note_under_a_todo_and_a_follow_up_turn() -> None:
    words = completion.words_of(TASK, ["a.txt", "b.txt", "notes/*.md", "nowhere.md"], {})
    assert sorted(words) == ["a.txt", "b.txt"]  # (a glob and a file the task does not name)
    later = completion.words_of("Now write `a.txt` with the word omega.", ["a.txt"], words)
    assert later == {"b.txt": words["b.txt"], "a.txt": "Now write `a.txt` with the word omega."}
    from activities.config_files import load_config
    cfg = load_config({"extends": "defaults", "llm": {"profile": "small"}}, policy=False)
    assert completion_gate.todo_note(cfg, ["a.txt"], words) == (
        "What the task says about a.txt:\n" + words["a.txt"])
    same = {"c.md": "Write `c.md` and `d.md`.", "d.md": "Write `c.md` and `d.md`."}
    assert completion_gate.todo_note(cfg, ["c.md", "d.md"], same) == (
        "What the task says about c.md and d.md:\nWrite `c.md` and `d.md`.")
    assert completion_gate.todo_note(cfg, ["c.md"], same) == (
        "What the task says about c.md (it names d.md too: those are other todos' files; "
        "this todo writes c.md alone):\nWrite `c.md` and `d.md`.")
    assert completion_gate.todo_note(cfg, ["e.md"], same) == ""


def test_a_name_far_into_a_passage_and_a_cut_inside_code() -> None:
    para = "\n".join([f"Line {n} of the rules." for n in range(15)] + ["Then write `z.md`."])
    assert task_words.about(para, "z.md") == "... Then write `z.md`. ..."
    code = "- `c.md` exactly:\n  ```\n" + "\n".join(f"  row {n}" for n in range(20))
    assert task_words.about(code, "c.md") == (  # the fence the cut leaves open, closed
        "- `c.md` exactly:\n  ```\n" + "\n".join(f"  row {n}" for n in range(10))
        + "\n``` ...")


def test_the_work_stays_bounded() -> None:
    """Inside workflow code: a task of MAX_TASK characters is split once, whatever the
    number of files (at most completion.MAX_WORDS_FILES are looked up)."""
    task = ("- `f0.md`: x\n" + "word " * 80 + "\n\n") * 400
    files = [f"f{n}.md" for n in range(200)]
    words = completion.words_of(task, files, {})
    assert list(words) == ["f0.md"] and len(task) > task_words.MAX_TASK


def test_a_passage_names_other_files_only_by_their_whole_name() -> None:
    from activities.config_files import load_config
    cfg = load_config({"extends": "defaults", "llm": {"profile": "small"}}, policy=False)
    words = {"a.md": "Write `a.md` and `data.md`.", "data.md": "Write `data.md`."}
    assert completion_gate.todo_note(cfg, ["a.md"], words) == (
        "What the task says about a.md:\nWrite `a.md` and `data.md`.".replace(
            "a.md:", "a.md (it names data.md too: those are other todos' files; this todo "
            "writes a.md alone):", 1))
    assert completion_gate.todo_note(cfg, ["data.md"], words) == (
        "What the task says about data.md:\nWrite `data.md`.")  # (a.md is no name in it)
