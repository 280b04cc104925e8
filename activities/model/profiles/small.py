"""`small`: the profile of small local models (the `local` llama-server endpoint names it).

It holds no rule: a rule enters it only when the held-out ablation (docs/profiles.md, "The
rule for a rule") shows a gain beyond noise, and none has (the figures and their records are
in docs/profiles.md). The name stays so that an endpoint or a job that names it keeps
loading, and a measured rule has its place.
"""

from __future__ import annotations

from switchback.activities.model.profiles import ModelProfile


class Small(ModelProfile):
    name = "small"
