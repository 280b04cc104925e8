"""Checks this eval job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right)."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def text(root: Path, path: str) -> str | None:
    f = root / path
    return f.read_text(errors="replace") if f.is_file() else None


# fruits a list may name (an item names one of them, at a word's start: "Apples", "- kiwi")
FRUITS = (
    "apple", "apricot", "avocado", "banana", "blackberr", "blackcurrant", "blueberr",
    "cantaloupe", "cherr", "clementine", "coconut", "cranberr", "date", "dragon fruit",
    "dragonfruit", "durian", "elderberr", "fig", "gooseberr", "grape", "guava", "honeydew",
    "jackfruit", "kiwi", "kumquat", "lemon", "lime", "lychee", "mandarin", "mango",
    "melon", "mulberr", "nectarine", "orange", "papaya", "passion fruit", "passionfruit",
    "peach", "pear", "persimmon", "pineapple", "plum", "pomegranate", "quince", "raspberr",
    "strawberr", "tangerine", "watermelon")


def fruit(item: str) -> str | None:
    """The fruit a list item names (the longest match: "pineapple", not "apple")."""
    found = [f for f in FRUITS if re.search(rf"\b{f}", item.lower())]
    return max(found, key=len) if found else None


def problems(root: Path) -> list[str]:
    out: list[str] = []
    t = text(root, "shopping.md")
    items = [ln for ln in (t or "").splitlines() if ln.startswith("- ") and ln[2:].strip()]
    fruits = {fruit(i) for i in items} - {None}
    if t is None:
        out.append("shopping.md is missing")
    elif len(items) != 5 or len(fruits) != 5:
        # (bread, milk, eggs... passed before: only five different items were counted)
        out.append(f"shopping.md has {len(items)} list items naming {len(fruits)} different "
                   "fruits, not five")
    return out


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
