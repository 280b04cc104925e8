"""The apps installed next to this worker (entry point group `switchback.apps`, see
switchback/apps.py), loaded once per process. An entry point that does not load or names
no `App` is left out and recorded in `load_errors()` (the worker prints them at start)."""

from __future__ import annotations

import functools
from importlib.metadata import entry_points

from switchback.apps import APPS_GROUP, App


@functools.cache
def _load() -> tuple[tuple[App, ...], tuple[str, ...]]:
    found: list[App] = []
    errors: list[str] = []
    for ep in sorted(entry_points(group=APPS_GROUP), key=lambda ep: ep.name):
        where = f"app entry point '{ep.name} = {ep.value}'"
        try:
            app = ep.load()
        except Exception as e:  # a broken package must not stop the worker
            errors.append(f"{where} does not load: {type(e).__name__}: {e}")
            continue
        if not isinstance(app, App):
            errors.append(f"{where} names a {type(app).__name__}, not a switchback.apps.App")
            continue
        found.append(app)
    return tuple(found), tuple(errors)


def installed_apps() -> tuple[App, ...]:
    return _load()[0]


def coordinator_types() -> frozenset[str]:
    """Workflow types that may read the workspaces of their child jobs (`<id>-...`)."""
    return frozenset(t for app in installed_apps() for t in app.coordinators)


def load_errors() -> tuple[str, ...]:
    return _load()[1]
