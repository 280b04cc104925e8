"""Model profiles: what one model family needs, as a plug-in a job or an endpoint opts into.

The engine asks a profile at four fixed points of a model call, all inside the model
activity (activities/model/calls.py), so a profile changes what the model is shown and how
its reply is read, never the workflow:

    instructions()             text added to the end of every system prompt
    shape_tools(schemas)       the tool schemas the endpoint is sent
    repair(name, arguments)    a tool call's raw JSON arguments, mended before anything
                               reads or stores them (the conversation keeps the mended call)
    refuse(name, arguments,    a reply guard: why a call is not run (the model reads it as
           prompt)             the call's error), or None

A profile is a class registered under the entry-point group `switchback.profiles` (the name
a config's `llm.profile` or an endpoint's `profile:` gives). The null profile answers every
hook with "no change". A rule enters a profile only with an ablation on the held-out jobs
(docs/evals.md); docs/profiles.md lists what each profile does.
"""

from __future__ import annotations

import functools
from importlib.metadata import entry_points
from typing import Any

GROUP = "switchback.profiles"
OFF = ("", "none")  # no profile: the endpoint's own, or none at all


class ModelProfile:
    """The null profile; a family's profile overrides the hooks it needs."""

    name = ""

    def instructions(self) -> str:
        return ""

    def shape_tools(self, schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return schemas

    def repair(self, name: str, arguments: str) -> str:
        return arguments

    def refuse(self, name: str, arguments: str, prompt: str) -> str | None:
        return None


NULL = ModelProfile()


@functools.cache
def _registered() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def names() -> list[str]:
    """The profiles this worker has (installed entry points)."""
    return sorted(_registered())


def problem(name: str) -> str | None:
    """Why `name` is not a profile a config may name, or None."""
    if name in OFF or name in _registered():
        return None
    known = ", ".join(names()) or "none installed"
    return f"unknown model profile {name!r} (this worker has: {known}; or \"none\")"


@functools.cache
def get(name: str) -> ModelProfile:
    """The profile named `name` (the null profile for "" and "none"). A name that was
    valid at the job's start and is gone from this worker is an operator's error: the
    call fails with it rather than run without the profile the job was started with."""
    if name in OFF:
        return NULL
    ep = _registered().get(name)
    if ep is None:
        raise LookupError(problem(name))
    profile = ep.load()()
    if not isinstance(profile, ModelProfile):
        raise LookupError(f"model profile {name!r} ({ep.value}) is not a ModelProfile")
    return profile
