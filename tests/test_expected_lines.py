"""What a deliverable lacks of its expected lines, and the file mended (the write a refusal
shows the model to copy): activities/storage/expected_lines.py."""

from __future__ import annotations

import pytest

from activities.storage.expected_lines import MAX_MENDED_CHARS, lacks, mended
from workflows.contract.config import LinePattern

SENTENCE = LinePattern(glob="[A-Za-z]* [a-z]*", describe="a sentence about apples")
SUMMARY = ["# Summary", "- notes/apples.md: Apples", "- notes/bananas.md: Bananas"]


def test_what_a_file_lacks_is_named_line_by_line() -> None:
    assert lacks(None, "a.md", ["# A"]) == ["a.md does not exist"]
    assert lacks("Apples grow on trees.", "a.md", ["# Apples", SENTENCE]) == [
        "a.md lacks the line '# Apples'"]
    assert lacks("# Apples", "a.md", ["# Apples", SENTENCE]) == [
        "a.md lacks a line that is a sentence about apples"]
    assert lacks("  # Apples  \nApples are red.\n", "a.md", ["# Apples", SENTENCE]) == []


@pytest.mark.parametrize(("text", "want", "expected"), [
    # eval round 11: the sentence without its heading, written 5 to 10 times in a row
    ("Apples grow on trees and taste sweet.", ["# Apples", SENTENCE],
     "# Apples\nApples grow on trees and taste sweet.\n"),
    # a near-copy of an expected line ("Summary" for "# Summary") is replaced, not kept
    ("Summary\n- notes/apples.md: Apples\n", SUMMARY, "\n".join(SUMMARY) + "\n"),
    # the expected lines come first, in their order; the file's other lines follow
    ("Apples are red.\n\nMore about apples.\n# Apples", ["# Apples", SENTENCE],
     "# Apples\nApples are red.\nMore about apples.\n"),
])
def test_a_file_is_mended_with_its_own_lines_kept(text, want, expected) -> None:
    assert mended(text, want) == expected
    assert lacks(expected, "f.md", want) == []  # what is shown passes the check


def test_nothing_is_shown_that_would_not_pass() -> None:
    assert mended("# Apples", ["# Apples", SENTENCE]) is None  # no sentence of its own to take
    assert mended("x" * MAX_MENDED_CHARS, ["# A"]) is None  # too long to show back
