"""`check_path`: the one gate every model-supplied workspace path goes through."""

from __future__ import annotations

import pytest

from activities.storage.paths import MAX_PATH_CHARS, PathError, check_path

INVALID, OUTSIDE, RESERVED = "invalid_path", "path_outside_workspace", "reserved_path"

HOSTILE = [
    (None, INVALID),
    (42, INVALID),
    (b"notes.md", INVALID),
    ("", INVALID),
    ("   ", INVALID),
    (".", INVALID),
    ("./", INVALID),
    (".//.", INVALID),
    ("a\x00b", INVALID),
    ("a\nb.md", INVALID),
    ("notes\t.md", INVALID),
    ("\x1b[31mred.md", INVALID),
    ("a\\b.md", INVALID),
    ("..\\secret", INVALID),
    ("C:\\Windows\\win.ini", INVALID),
    ("x" * (MAX_PATH_CHARS + 1), INVALID),
    ("/etc/passwd", OUTSIDE),
    ("/", OUTSIDE),
    ("//server/share", OUTSIDE),
    ("~", OUTSIDE),
    ("~/.ssh/id_rsa", OUTSIDE),
    ("~root/x", OUTSIDE),
    ("C:x", OUTSIDE),
    ("c:/Windows", OUTSIDE),
    ("http://example.com/a", OUTSIDE),
    ("s3://other-bucket/job-1/a.md", OUTSIDE),
    ("notes/file://x", OUTSIDE),
    ("..", OUTSIDE),
    ("../other-job/todos.yaml", OUTSIDE),
    ("a/../../b", OUTSIDE),
    ("a/..", OUTSIDE),
    ("./../x", OUTSIDE),
    ("a/b/../c", OUTSIDE),
    ("a//..//b", OUTSIDE),
    (".switchback", RESERVED),
    (".switchback/", RESERVED),
    (".switchback/conversations/p1.jsonl", RESERVED),
    ("./.switchback/config.json", RESERVED),
    (".//.switchback/x", RESERVED),
]

GOOD = [
    ("notes.md", "notes.md"),
    ("notes/plan.md", "notes/plan.md"),
    ("a//b/./c", "a/b/c"),
    ("./a", "a"),
    ("a/b/", "a/b"),
    ("  notes.md  ", "notes.md"),
    (".hidden", ".hidden"),
    ("...", "..."),
    ("a..b/c..", "a..b/c.."),
    (".switchbackish/x", ".switchbackish/x"),
    ("a/.switchback/x", "a/.switchback/x"),
    ("a/~b", "a/~b"),
    ("ünïcode/文件.md", "ünïcode/文件.md"),
    ("x" * MAX_PATH_CHARS, "x" * MAX_PATH_CHARS),
]


@pytest.mark.parametrize(("path", "code"), HOSTILE, ids=[repr(p)[:40] for p, _ in HOSTILE])
def test_hostile_paths_are_rejected(path: object, code: str) -> None:
    with pytest.raises(PathError) as info:
        check_path(path)
    assert info.value.code == code
    assert str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(("path", "norm"), GOOD, ids=[p[:40] for p, _ in GOOD])
def test_good_paths_are_normalised(path: str, norm: str) -> None:
    assert check_path(path) == norm
    assert check_path(norm) == norm


@pytest.mark.parametrize("path", ["", ".", "./", ".//.", "  "])
def test_allow_root(path: str) -> None:
    assert check_path(path, allow_root=True) == ""


@pytest.mark.parametrize("path", ["/", "..", ".switchback"])
def test_allow_root_does_not_open_other_doors(path: str) -> None:
    with pytest.raises(PathError):
        check_path(path, allow_root=True)


def test_messages_tell_the_model_what_to_do() -> None:
    with pytest.raises(PathError, match="relative to the workspace"):
        check_path("")
    with pytest.raises(PathError, match="use '/'"):
        check_path("a\\b")
    with pytest.raises(PathError, match=r"contains '\.\.'"):
        check_path("../x")


@pytest.mark.parametrize("path", ["a\x7fb.md", "a\x85b.md", "a\x9bb.md"])
def test_del_and_c1_control_characters_are_rejected(path: str) -> None:
    with pytest.raises(PathError) as info:
        check_path(path)
    assert info.value.code == INVALID
