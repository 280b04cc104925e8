"""`completion.check: {model: true}`: one verification call judges the deliverables.

The job's endpoint gets the verification prompt (configs/prompts/verify.md) and one message
with the task (instructions.md) and each deliverable's text, each capped; it answers PASS, or
FAIL with one line per problem. Anything else counts as a failed check that says what came
back, so a verifier that cannot be read never passes a job. Errors and retries as for every
model call (activities/model/calls.py); the answer's usage counts in the job's tokens.
"""

from __future__ import annotations

from temporalio import activity

from switchback.activities.model.calls import ModelActivities
from switchback.activities.model.replies import summary_text
from switchback.activities.model.waiting import with_heartbeat
from switchback.activities.redaction import redact_bytes
from switchback.workflows.contract import (
    VERIFY_COMPLETION,
    CheckCompletionResult,
    Usage,
    VerifyCompletionRequest,
    layout,
)

MAX_FILE_CHARS = 6_000  # of each deliverable, in the verification message
MAX_TASK_CHARS = 6_000
MAX_TOKENS = 400  # the answer: a verdict and its reasons


def verdict(text: str) -> tuple[bool, str]:
    """(passed, what the model said), from the answer's text."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    first = lines[0].strip("*`#: ").upper() if lines else ""
    if first == "PASS":
        return True, ""
    if first.startswith("FAIL"):
        reasons = " ".join([lines[0].strip("*`#").strip()[4:].strip(" :-")] + lines[1:]).strip()
        return False, reasons or "the verification found the deliverables wrong"
    return False, f"the verification answered neither PASS nor FAIL: {text.strip()[:300]!r}"


class VerificationActivities:
    def __init__(self, model: ModelActivities) -> None:
        self.model = model

    @activity.defn(name=VERIFY_COMPLETION)
    async def verify_completion(self, req: VerifyCompletionRequest) -> CheckCompletionResult:
        ws, s3 = req.workspace, self.model.store.s3
        task = await s3.get(ws.bucket, layout.key(ws.job_id, layout.INSTRUCTIONS)) or b""
        parts = ["## The task\n\n" + task.decode("utf-8", "replace")[:MAX_TASK_CHARS],
                 "## The files the job delivered"]
        for path in req.paths:
            data = await s3.get(ws.bucket, layout.key(ws.job_id, path))
            text = "(missing)" if data is None else data.decode("utf-8", "replace")
            cut = f"\n[... {len(text):,} characters]" if len(text) > MAX_FILE_CHARS else ""
            parts.append(f"### {path}\n\n```\n{text[:MAX_FILE_CHARS]}{cut}\n```")
        request = self.model.target(req.llm).shape.apply({"model": req.llm.model, "messages": [
            {"role": "system", "content": req.prompt},
            {"role": "user", "content": "\n\n".join(parts)}]},
            None if req.llm.temperature is None else 0, MAX_TOKENS)
        headers = {"X-Switchback-Job": layout.job_of(ws.job_id),
                   "X-Switchback-Call": req.call_key}
        raw = await with_heartbeat(self.model.client(req.llm).create(
            request, headers, self.model.target(req.llm).timeout),
            req.llm.retry.longest_wait())
        text, usage = summary_text(redact_bytes(raw))
        ok, said = verdict(text)
        return CheckCompletionResult(ok=ok, output=said[:2000], usage=Usage(**usage) if usage
                                     else Usage())
