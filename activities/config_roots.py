"""Where a worker's configs come from: the operator's folder laid over the packaged one.

The wheel ships the defaults, the prompts, the schemas and the sample job configs under
`switchback/configs`. An operator's own folder comes first: `SWITCHBACK_CONFIG_DIR`, else
`./configs` where the worker (or the CLI) runs, if there is one. A name is looked up in each
folder in turn and the first match wins, whole: a job config's folder (its `config.yaml`,
`instructions.md`, documents and check script) comes from one place; `defaults.yaml`, a
prompt file, `endpoints.yaml` and `mcp.yaml` are files of their own. So an operator's
`configs/` may hold only the jobs it adds and the files it changes.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGED = Path(__file__).parent.parent / "configs"  # (no I/O at import: sandbox-safe)


def configs_dir() -> Path:
    """The operator's folder (the first looked in): SWITCHBACK_CONFIG_DIR, else ./configs if
    present, else the packaged configs."""
    named = os.environ.get("SWITCHBACK_CONFIG_DIR")
    if named:
        return Path(named)
    here = Path("configs")
    return here.absolute() if here.is_dir() else PACKAGED


def config_roots() -> list[Path]:
    """The folders a name is looked up in, first match wins."""
    first = configs_dir()
    same = first.is_dir() and PACKAGED.is_dir() and first.resolve() == PACKAGED.resolve()
    return [first] if same else [first, PACKAGED]


def config_path(rel: str) -> Path:
    """`rel` (e.g. `prompts/strategic.md`, `creator/requirement.schema.json`) in the first
    folder that has it; in the operator's folder when none does (so an error names it)."""
    roots = config_roots()
    return next((r / rel for r in roots if (r / rel).exists()), roots[0] / rel)
