"""The example package's tools, run the way a switchback worker runs them (`Tool.invoke`),
against an in-memory workspace."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from switchback import Limits, ToolContext, ToolError
from switchback_wordcount import word_count, word_report


class MemoryFiles:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    async def read_text(self, path: str) -> str:
        if path not in self.files:
            raise ToolError("file_not_found", f"'{path}' does not exist")
        return self.files[path]

    async def write_text(self, path: str, text: str, max_bytes: int | None = None) -> str:
        self.files[path] = text
        return path


def context(files: dict[str, str]) -> ToolContext:
    return ToolContext(files=MemoryFiles(files),  # type: ignore[arg-type]
                       limits=Limits(max_file_bytes=1000, read_max_chars=1000,
                                     max_result_chars=1000), job_id="job-1")


def test_schemas_come_from_the_signatures_and_docstrings() -> None:
    schema = word_count.args.model_json_schema()
    assert word_count.description == ("Count the words of a workspace text file and list the "
                                       "most common ones.")
    assert schema["required"] == ["path"]
    assert schema["properties"]["top"]["maximum"] == 50
    assert "relative to the workspace" in schema["properties"]["path"]["description"]
    assert word_report.args.model_json_schema()["required"] == ["paths"]


async def test_word_count() -> None:
    ctx = context({"a.md": "the cat and the hat and the bat"})
    out = await word_count.invoke(ctx, word_count.args(path="a.md", top=2))
    assert out.text == "a.md: 8 words, 5 distinct; most common: the (3), and (2)"
    with pytest.raises(ToolError) as e:
        await word_count.invoke(context({"e.md": " . "}), word_count.args(path="e.md"))
    assert e.value.code == "no_words"


async def test_word_report_writes_the_workspace() -> None:
    files = {"a.md": "one two", "b.md": "three"}
    out = await word_report.invoke(context(files), word_report.args(paths=["a.md", "b.md"]))
    assert out.text == "Wrote the word counts of 2 files to reports/word_counts.json."
    assert json.loads(files["reports/word_counts.json"]) == {"words": {"a.md": 2, "b.md": 1}}


def test_the_entry_point_is_declared() -> None:
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["switchback.tools"] == {
        "wordcount": "switchback_wordcount"}
