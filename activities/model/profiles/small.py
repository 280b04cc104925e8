"""`small`: the profile of small local models (the `local` llama-server endpoint names it).

It holds no rule. A rule enters it only when the held-out ablation (docs/profiles.md, "The
rule for a rule") shows a gain beyond noise; the two candidates it held, a `workspace/` path
prefix read as the root and a refusal of a `write_file` that copies the prompt, showed none
and left (docs/profiles.md has the figures and their records). The name stays so that an
endpoint or a job that names it keeps loading, and a measured rule has its place.
"""

from __future__ import annotations

from switchback.activities.model.profiles import ModelProfile


class Small(ModelProfile):
    name = "small"
