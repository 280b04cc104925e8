"""`check_path`: the one gate every model-supplied workspace path goes through."""

from __future__ import annotations

import pytest

from switchback.activities.storage.paths import (
    MAX_NAME_BYTES,
    MAX_PATH_BYTES,
    PathError,
    check_path,
)

INVALID, OUTSIDE, RESERVED = "invalid_path", "path_outside_workspace", "reserved_path"
TOO_LONG = "path_too_long"
LONGEST = "/".join(["x" * 127] * 4)  # 511 bytes, names of 127

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
    (LONGEST + "yy", TOO_LONG),
    ("中" * 500, TOO_LONG),  # 500 characters, 1,500 bytes: S3 would refuse the key
    ("a/" + "中" * 86, TOO_LONG),  # a name of 258 bytes
    ("x" * (MAX_NAME_BYTES + 1), TOO_LONG),
    ("a\ud800b.md", INVALID),  # a lone surrogate
    ("a\u2028b.md", INVALID),  # line separator
    ("gpj\u202e.exe", INVALID),  # right-to-left override
    ("a\uffffb", INVALID),
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
    (LONGEST + "y", LONGEST + "y"),
    ("x" * MAX_NAME_BYTES, "x" * MAX_NAME_BYTES),
    ("中" * 85, "中" * 85),  # 255 bytes
    ("a/😀.md", "a/😀.md"),
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


def test_limits_are_bytes_and_the_message_says_so() -> None:
    assert len(LONGEST.encode()) == MAX_PATH_BYTES - 1
    with pytest.raises(PathError, match=r"1500 bytes of UTF-8 \(500 characters\)"):
        check_path("中" * 500)
    with pytest.raises(PathError, match="not valid Unicode"):
        check_path("notes/\ud800.md")
