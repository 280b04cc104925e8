"""`call_model`: one Chat Completions call against any OpenAI-compatible endpoint.

Input is a conversation reference (see workflows/contract/requests.py:ModelRequest). The
activity stores the workflow's inline messages, assembles the prompt with
`workflows.context.assemble` (system prompt + todo block, running summary, recent
messages with old tool results cleared; tool schemas in `tools`), estimates its
tokens (tiktoken, corrected by the ratio the endpoint's `usage` showed last time)
and, above the policy's threshold, answers `needs_compaction` without calling the
model. Otherwise it calls the endpoint, stores the assistant message and returns a
compact reply: tool-call summaries, usage, a capped text.

Tool schemas come from the job's tool record (`req.tool_record`, written once per job by
`list_tools`); calls of tools without Python code here (MCP tools) are checked against the
recorded JSON schema. Jobs from before the record use this worker's registry.

Reruns (`ModelRequest.replay_from`, set by `starter.py rerun`): while the assembled prompt
is identical to the one the recorded job sent at the same conversation position (sha256
kept in each stored assistant message's `_meta`), the recorded answer is returned instead
of calling the endpoint; from the first difference on, the live endpoint answers
(`replay_on_divergence: live`) or the job stops (`stop`). The divergence is noted in
`.switchback/rerun.json`.

`summarize_conversation` folds older messages into the running summary with
configs/prompts/summarization.md; the summary is stored with the conversation and a
readable copy goes to the workspace (`summaries/`).

The request is a plain POST on a pooled httpx client (activities/model/chat.py), raising
the openai client's error types. Temporal owns retries: no client retries, and HTTP errors
are translated once (activities/model/waiting.py): 429 -> retryable with Retry-After
as the next delay (at most `llm.retry.maximum_interval_seconds`: an endpoint cannot park a
job for a day); 408/409/5xx, timeouts and connection errors -> retryable; other 4xx
-> non-retryable. Long calls heartbeat, so a cancelled job stops its model call.
Two answers are not what their status says:

- a context-length error (HTTP 400 "exceeds the available context size", OpenAI's
  `context_length_exceeded`, ...): the older turns are summarized and the call is made again
  (`needs_compaction`, as when the estimate passes the threshold); only a prompt that cannot
  be made smaller fails the job;
- HTTP 500 to the identical request (same prompt sha) with the identical message
  three times in a row (IDENTICAL_FAILURES) is the request's own fault (llama-server
  answers a history it cannot parse that way, every time): not retried further. The count
  travels in the attempt's heartbeat details, so any worker's next attempt sees it.

A slow endpoint (`slow:` in endpoints.yaml) gets a timeout per call that grows with the
prompt and the answer it may write (endpoints.Target.call_timeout).

What the endpoint answers - the body, an error's text - has the worker's credentials
redacted before anything reads it (activities/redaction.py): an endpoint that echoes its
key puts it into no history, workspace or prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

from temporalio import activity
from temporalio.exceptions import ApplicationError

from switchback.activities.model import endpoints, live_tokens, profiles
from switchback.activities.model.call_parts import call_info, cut_instructions
from switchback.activities.model.chat import RAW_JSON, ChatClient
from switchback.activities.model.prompt import (
    assemble,
    clear_tool_results,
    fallback_summary,
    summary_cut,
    transcript,
)
from switchback.activities.model.replies import assistant_message, summary_text
from switchback.activities.model.tokens import (
    OFF_LOOP_CHARS,
    count_messages_async,
    count_text,
    prompt_facts,
)
from switchback.activities.model.waiting import (
    ContextExceeded,
    count_identical,
    heartbeating,
    with_heartbeat,
)
from switchback.activities.redaction import redact_bytes
from switchback.activities.storage.conversations import ConversationStore
from switchback.activities.storage.files import WorkspaceFiles
from switchback.activities.storage.ownership import rerun_source
from switchback.activities.storage.s3 import PreconditionFailed
from switchback.activities.tools import catalog  # noqa: F401 - registers every domain tool in TOOLS
from switchback.activities.tools import record as tool_record
from switchback.activities.tools.registry import (
    TOOLS,
    openai_tool,
)
from switchback.workflows.contract import (
    CALL_MODEL,
    SUMMARIZE,
    ModelReply,
    ModelRequest,
    SummarizeRequest,
    SummarizeResult,
    Usage,
    WorkspaceRef,
    layout,
)
from switchback.workflows.contract.config import LlmSettings
from switchback.workflows.contract.requests import KEEP_RECENT_MESSAGES

IDENTICAL_FAILURES = 3  # the same HTTP 500 to the same request this often: the request's fault

SLOT = "{{instructions}}"
MAX_REPLY_TEXT = 2000
OFF_LOOP_BYTES = 4 * OFF_LOOP_CHARS  # bodies this large are parsed in a thread


class ModelActivities:
    def __init__(self, store: ConversationStore) -> None:
        self.store = store
        self._clients: dict[tuple[str, str, float, tuple[tuple[str, str], ...]], ChatClient] = {}
        self._reruns: set[tuple[str, str, str]] = set()  # (bucket, job, source) checked
        self.records = tool_record.Records(store.s3)  # the jobs' recorded tool schemas

    def target(self, llm: LlmSettings) -> endpoints.Target:
        """The endpoint `llm` names, as the operator declared it (endpoints.py: URL and key
        from the worker's environment, never from the job)."""
        try:
            return endpoints.target(llm)
        except endpoints.EndpointError as e:
            raise ApplicationError(str(e), type="EndpointNotAllowed", non_retryable=True) from e

    def client(self, llm: LlmSettings) -> ChatClient:
        """The endpoint's pooled client (activities/model/chat.py: a plain POST)."""
        t = self.target(llm)
        key = (t.base_url, t.api_key, t.timeout, t.headers)
        if key not in self._clients:
            self._clients[key] = ChatClient(t.base_url, t.api_key, t.timeout, t.headers)
        return self._clients[key]

    async def close(self) -> None:
        for c in self._clients.values():
            await c.close()
        self._clients.clear()  # a worker started again opens new ones

    @activity.defn(name=CALL_MODEL)
    async def call_model(self, req: ModelRequest) -> ModelReply:
        # the messages the workflow made go into the store with the answer (`_meta.inline`:
        # one PUT), the previous phase's last ones and the system prompt while the model
        # answers (the prompt is assembled from the cache); the call completes only once
        # they are all in the store
        ws, conv = req.workspace, req.conversation
        held = {m.index: self.store.keep(ws, conv, m.index, _inline_message(m))
                for m in req.inline}
        writes = [self.store.stage(ws, req.closing_conversation, m.index, _inline_message(m))
                  for m in req.closing]
        if req.system_prompt is not None:
            system = await self._with_instructions(ws, req.system_prompt,
                                                   req.instructions_max_chars)
            added = self.profile(req.llm).instructions()
            system = f"{system}\n\n{added}" if added else system
            writes.append(self.store.stage_text(ws, conv, "system.md", system))
        storing = [asyncio.ensure_future(w) for w in writes]
        try:
            reply = await self._answer(req, held)
        except BaseException:
            for task in storing:
                task.cancel()
            await asyncio.gather(*storing, return_exceptions=True)
            raise
        if reply.needs_compaction:  # no answer to carry them: objects of their own
            storing += [asyncio.ensure_future(self.store.stage(ws, conv, i, m))
                        for i, m in held.items()]
        await asyncio.gather(*storing)
        return reply

    async def _with_instructions(self, ws: WorkspaceRef, system: str, limit: int) -> str:
        """`{{instructions}}` in a system prompt becomes the task, instructions.md (cut at
        `limit` characters): the model has it without asking for it."""
        if SLOT not in system or limit <= 0:
            return system
        text = await WorkspaceFiles(self.store.s3, ws).read_optional(layout.INSTRUCTIONS)
        return system.replace(SLOT, cut_instructions(
            (text or "(instructions.md is empty)").strip(), limit))

    async def _answer(self, req: ModelRequest, held: dict[int, dict]) -> ModelReply:
        ws, conv = req.workspace, req.conversation
        system = await self.store.text(ws, conv, "system.md")
        history = await self.store.messages(ws, conv, req.length)
        summary = (await self.store.summary(ws, conv, req.summary_upto)) if req.summary_upto \
            else None
        messages = assemble(system, req.todo_block, summary, history, req.summary_upto,
                            req.context)
        record = (await self.records.get(ws.bucket, req.tool_record) if req.tool_record
                  else None)
        tools = self.profile(req.llm).shape_tools(
            record.schemas(req.tools) if record is not None
            else [openai_tool(n) for n in req.tools if n in TOOLS])
        facts = await heartbeating(prompt_facts(messages, tools, req.llm.model))
        estimate, fingerprint = facts.tokens, facts.fingerprint
        if (req.may_compact and req.context.enabled
                and estimate * req.token_ratio > req.context.threshold()
                and summary_cut(history, req.summary_upto, KEEP_RECENT_MESSAGES)
                > req.summary_upto):
            return ModelReply(message_index=-1, estimated_prompt_tokens=estimate,
                              needs_compaction=True)
        # messages and tools go in the body as the fingerprint serialized them
        body: dict = self.target(req.llm).shape.apply(
            {"model": req.llm.model}, req.llm.temperature, req.llm.max_tokens)
        body[RAW_JSON] = {"messages": facts.messages_json,
                          **({"tools": facts.tools_json} if tools else {})}
        kwargs: dict = {"body": body, "timeout": self.target(req.llm).call_timeout(
            estimate, req.llm.max_tokens)}
        stored = await self._recorded(req, fingerprint) if req.replay_from else None
        call_ms = 0
        if stored is None:
            started = time.monotonic()
            try:
                stored = await self._live(req, kwargs, fingerprint)
                call_ms = int((time.monotonic() - started) * 1000)
            except ContextExceeded as e:
                if (req.may_compact and req.context.enabled and summary_cut(
                        history, req.summary_upto, KEEP_RECENT_MESSAGES)
                        > req.summary_upto):  # fold older turns, then ask again
                    return ModelReply(message_index=-1, estimated_prompt_tokens=estimate,
                                      needs_compaction=True)
                why = ("even after the older turns were summarized" if not req.may_compact
                       else "and the conversation is too short to summarize")
                raise ApplicationError(f"{e} {why}: the system prompt, tools and recent "
                                       "messages alone are too long for this endpoint",
                                       type="ModelContextExceeded", non_retryable=True) from e
        stored["_meta"] = {**stored.get("_meta", {}), "prompt_sha": fingerprint}
        stored["_meta"].pop("inline", None)  # (a recorded answer's are its own job's)
        if held:  # the workflow's messages before it ride with it (storage/conversations.py)
            stored["_meta"]["inline"] = {str(i): m for i, m in held.items()}
        # written once: if an earlier attempt of this call stored its answer (and timed out
        # after), that answer is the one: this reply describes it, ours is dropped
        stored, _ = await self.store.put_once(ws, conv, req.length, stored)
        u = stored["_meta"].get("usage")
        usage = Usage(**u) if u else Usage(
            prompt_tokens=estimate,
            completion_tokens=await heartbeating(count_messages_async([stored], None,
                                                                       req.llm.model)))
        errors = stored["_meta"].get("call_errors") or {}
        refused = self._refused(req.llm, system, stored)
        calls = [call_info(tc["id"], tc["function"]["name"], tc["function"]["arguments"],
                            tc["function"]["name"] in req.preview_tools, record,
                            errors.get(tc["id"]), refused.get(tc["id"], ""))
                 for tc in stored.get("tool_calls") or []]
        return ModelReply(content=(stored["content"] or "")[:MAX_REPLY_TEXT], tool_calls=calls,
                          finish_reason=stored["_meta"].get("finish_reason"), usage=usage,
                          message_index=req.length, estimated_prompt_tokens=estimate,
                          call_ms=call_ms, attempt=activity.info().attempt)

    async def _live(self, req: ModelRequest, kwargs: dict, fingerprint: str) -> dict:
        """Call the endpoint; the assistant message as stored (usage in `_meta`). The body
        is parsed here, not by the openai client: it is untrusted (activities/model/replies.py)."""
        headers = {"X-Switchback-Job": layout.job_of(req.workspace.job_id),
                   "X-Switchback-Call": req.call_key}
        call = live_tokens.answer(self.client(req.llm), req.call_key, req.stream_interval,
                                  headers=headers, **kwargs)  # streamed to the live stream?
        try:
            body = await with_heartbeat(call, req.llm.retry.longest_wait())
        except ApplicationError as e:
            counted = count_identical(e, fingerprint, IDENTICAL_FAILURES)
            if counted is e:
                raise
            raise counted from e
        known = tuple(req.tools)
        if len(body) > OFF_LOOP_BYTES:
            message = await asyncio.to_thread(_reply, body, req.max_output_chars, known)
        else:
            message = _reply(body, req.max_output_chars, known)
        return self._repaired(req.llm, message)

    async def _recorded(self, req: ModelRequest, fingerprint: str) -> dict | None:
        """The recorded job's answer at this position if it saw the very same prompt."""
        ws, conv = req.workspace, req.conversation
        source = WorkspaceRef(bucket=ws.bucket, job_id=req.replay_from or "")
        if (ws.bucket, ws.job_id, source.job_id) not in self._reruns:  # another job's prefix:
            if await rerun_source(self.store.s3, ws) != source.job_id:  # only a real rerun's
                raise ApplicationError(
                    f"replay_from: job '{ws.job_id}' was not laid out by `starter.py "
                    f"rerun` from job '{source.job_id}', so it may not read that job's "
                    "recorded answers", type="EndpointNotAllowed", non_retryable=True)
            self._reruns.add((ws.bucket, ws.job_id, source.job_id))
        old = await self.store.find(source, conv, req.length)
        if old is not None and old.get("_meta", {}).get("prompt_sha") == fingerprint:
            return old
        why = "no recorded answer" if old is None else "the prompt differs from the recording"
        note = {"diverged_at": {"conversation": conv, "message": req.length}, "reason": why,
                "recorded_job": source.job_id, "mode": req.replay_on_divergence}
        key = layout.key(ws.job_id, layout.RERUN_NOTE)
        with contextlib.suppress(PreconditionFailed):  # the first divergence is the one
            await self.store.s3.put(ws.bucket, key, json.dumps(note).encode(),
                                    "application/json", if_none_match=True)
        if req.replay_on_divergence == "stop":
            raise ApplicationError(f"rerun diverged from job '{source.job_id}' at {conv} "
                                   f"message {req.length}: {why}", type="RerunDiverged",
                                   non_retryable=True)
        return None

    @activity.defn(name=SUMMARIZE)
    async def summarize_conversation(self, req: SummarizeRequest) -> SummarizeResult:
        ws, conv = req.workspace, req.conversation
        history = await self.store.messages(ws, conv, req.length)
        cut = summary_cut(history, req.done, req.keep_recent)
        if cut <= req.done:
            return SummarizeResult(upto=req.done)
        previous = (await self.store.summary(ws, conv, req.done)) if req.done else ""
        folded = clear_tool_results(history[req.done:cut], req.context.keep_tool_results)
        headers = {"X-Switchback-Job": layout.job_of(ws.job_id),
                   "X-Switchback-Call": req.call_key}
        text, usage, messages = "", None, []
        for per_message in (3000, 1000, 300):  # too long for the endpoint: shorter quotes
            body = ((f"## Previous summary\n\n{previous}\n\n" if previous else "")
                    + "## Conversation to fold into the summary\n\n"
                    + transcript(folded, per_message))
            messages = [{"role": "system", "content": req.prompt},
                        {"role": "user", "content": body}]
            request: dict = self.target(req.llm).shape.apply(
                {"model": req.llm.model, "messages": messages}, None, req.llm.max_tokens)
            try:
                raw = await with_heartbeat(self.client(req.llm).create(
                    request, headers, self.target(req.llm).timeout),
                                            req.llm.retry.longest_wait())
            except ContextExceeded:
                continue
            try:
                text, usage = summary_text(redact_bytes(raw))
            except ApplicationError:  # an answer we cannot read: no model summary, as below
                text, usage = "", None
            break
        if not text:  # keep going without a model summary rather than fail the job
            text = fallback_summary(history[req.done:cut])
        text = await self.store.put_text_once(ws, conv, layout.summary_name(cut), text)
        record = (f"# Summary of {conv}, messages 0-{cut - 1}\n\n{text}\n")
        await WorkspaceFiles(self.store.s3, ws).write_once(req.record_path, record)
        if usage is None:
            usage = {"prompt_tokens": await heartbeating(count_messages_async(
                         messages, None, req.llm.model)),
                     "completion_tokens": count_text(text, req.llm.model)}
        return SummarizeResult(upto=cut, chars=len(text), usage=Usage(**usage))


    def profile(self, llm: LlmSettings) -> profiles.ModelProfile:
        """The job's model profile (activities/model/profiles): the null one without."""
        try:
            return profiles.get(llm.profile)
        except LookupError as e:
            raise ApplicationError(str(e), type="ModelProfileMissing", non_retryable=True) from e

    def _repaired(self, llm: LlmSettings, message: dict) -> dict:
        """A live answer's tool calls with their arguments as the profile mends them."""
        profile = self.profile(llm)
        for tc in message.get("tool_calls") or []:
            fn = tc["function"]
            fn["arguments"] = profile.repair(fn["name"], fn["arguments"])
        return message

    def _refused(self, llm: LlmSettings, system: str, stored: dict) -> dict[str, str]:
        """Call id -> why the profile's reply guard does not let the call run."""
        profile, found = self.profile(llm), {}
        for tc in stored.get("tool_calls") or []:
            fn = tc["function"]
            why = profile.refuse(fn["name"], fn["arguments"], system)
            if why:
                found[tc["id"]] = why
        return found


def _reply(body: bytes, max_chars: int, known: tuple[str, ...]) -> dict:
    """The stored assistant message of a 200 body, the worker's credentials redacted."""
    return assistant_message(redact_bytes(body), max_chars, known)


def _inline_message(m) -> dict:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    return {"role": "user", "content": m.content}
