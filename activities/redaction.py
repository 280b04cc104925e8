"""The worker's credentials never come back in what an outside party answers.

A model endpoint, a search provider or an MCP server may echo the key it was sent - in an
error message (`Incorrect API key provided: sk-...`; proxies and gateways often send it
whole), in a 200 body, in a tool result. What they answer goes into history (activity
errors, the reply's text), into the workspace (the stored conversation, output/error.json)
and into the next prompt. So it is redacted where it enters: each value of a credential
variable of the worker becomes `[redacted <VARIABLE>]`.

Credential variables: the key variables of the declared model endpoints
(configs/endpoints.yaml, and those jobs may name), and every variable whose name says it
holds one (`..._KEY`, `..._KEYS`, `..._SECRET`, `..._SECRET_ACCESS_KEY`, `..._TOKEN`,
`..._PASSWORD`, `..._AUTH`, `..._CREDENTIALS`; not `..._ID`). Values shorter than
MIN_CHARS are left alone (they would match ordinary text).

Used by the model activity (the raw body of every answer, and HTTP error texts) and by
`run_tool` (every tool's result).
"""

from __future__ import annotations

import os
import re

from switchback.activities.model import endpoints

MIN_CHARS = 12
_NAME = re.compile(r"(^|_)(KEYS?|SECRET|TOKEN|PASSWORD|PASSWD|AUTH|CREDENTIALS?)(_|$)")


def secrets() -> dict[str, str]:
    """value -> the variable that holds it, longest value first."""
    names = {n for n in os.environ if _NAME.search(n.upper()) and not n.upper().endswith("_ID")}
    try:
        declared, _ = endpoints.load()
        names |= {s.api_key_env for s in declared.endpoints.values() if s.api_key_env}
        names |= set(declared.allow_job_api_key_env)
    except endpoints.EndpointError:
        pass  # the model activity reports a broken endpoints file itself
    found = {os.environ.get(n, ""): n for n in sorted(names)}
    return {v: found[v] for v in sorted(found, key=len, reverse=True)
            if len(v) >= MIN_CHARS and v != endpoints.NO_KEY}


def redact(text: str) -> str:
    for value, name in secrets().items():
        if value in text:
            text = text.replace(value, f"[redacted {name}]")
    return text


def redact_bytes(data: bytes) -> bytes:
    for value, name in secrets().items():
        raw = value.encode("utf-8", "surrogatepass")
        if raw in data:
            data = data.replace(raw, f"[redacted {name}]".encode())
    return data
