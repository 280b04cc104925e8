"""The hostile-input table: one line per case - what is sent -> what comes back, and the state
the job is in afterwards. `tests/test_hostile_table.py` runs every line against real servers
(the `temporal` CLI, a worker, SeaweedFS, the scripted model) and then searches everything the
jobs left behind for the worker's credentials.

Placeholders, filled in when the table runs: `$UID` (unique per run), `$ROOT` (the operator's
document root), `$OPENAI_API_KEY`, `$SEARCH_KEY` (the worker's real secrets).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# what the job is in afterwards
FAILS = "fails at once: SwitchbackJobFailed naming the field, no workflow task retried"
FAILS_CLEANLY = "fails after the retries: SwitchbackJobFailed model_call_failed, output/error.json"
TOOL_ERROR = "the model reads a tool error; the job goes on and completes"
REPAIRED = "the answer is repaired and the model reads what was done; the job completes"
RETRIED = "a classified model error Temporal retries; the job goes on and completes"
REJECTED = "rejected, listed in state.rejected with the reason; the job goes on and completes"
CUT = "accepted, cut; the job goes on and completes"
REFUSED = "the update is refused with the message; the waiting call is untouched"


@dataclass(frozen=True)
class Case:
    kind: str  # job input | config | document | signal | update | model output | tool arguments
    name: str
    send: Any
    expect: str  # a stable fragment of the error text (or the exact text)
    then: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.kind.replace(' ', '-')}:{self.name}"

    def job_id(self, uid: str) -> str:
        """The id its job runs under: unique per case (names repeat across kinds, and two
        starts under one id would each read the other's run)."""
        return f"hostile-{self.id.replace(':', '-')}-{uid}"


def start(name: str, raw: str, expect: str, **extra: Any) -> Case:
    """Job input sent as it is with `temporal workflow start --input` (`job_id=`: under
    that id; `workflow=`: another workflow type)."""
    return Case("job input", name, raw, expect, FAILS, extra)


def forged(name: str, expect: str, **changes: dict) -> Case:
    """A hand-made continue-as-new `carry` (it skips load_config): a finished job's phase-1
    state with its config's `llm` / `workspace` changed (tests/forge.py)."""
    return Case("job input", name, changes, expect, FAILS, {"forge": True})


def config(name: str, inline: dict, expect: str) -> Case:
    """{"config": {"extends": "creator", **inline}, "instructions": "x"} from the CLI."""
    return Case("config", name, inline, expect, FAILS)


def document(name: str, item: Any, expect: str, **extra: Any) -> Case:
    """{"instructions": "x", "documents": [item]} from the CLI (`config=`: another config)."""
    return Case("document", name, item, expect, FAILS, extra)


def tool(name: str, call: tuple[str, Any], expect: str, then: str = TOOL_ERROR) -> Case:
    """One tool call in a turn of the tactical phase: (tool, arguments as sent - a dict is
    JSON-encoded, a string goes out verbatim)."""
    return Case("tool arguments", name, call, expect, then)


def answer(name: str, body: Any, expect: str, then: str = RETRIED) -> Case:
    """A whole 200 body (a string verbatim, else JSON), an `{"error": ...}` HTTP error, or
    (REPAIRED) the assistant message of a turn."""
    return Case("model output", name, body, expect, then)


def signal(name: str, signal_name: str, raw: str | list[str] | None, expect: str,
           then: str = REJECTED) -> Case:
    """`temporal workflow signal --name <signal_name> --input <raw>` (a list: an --input for
    each; None: no input)."""
    return Case("signal", name, raw, expect, then, {"signal": signal_name})


def update(name: str, raw: str, expect: str, update_name: str = "approve") -> Case:
    """The `approve` update (or `update_name`) with the raw JSON payload, while a call waits;
    `$CALL` is the waiting call's id."""
    return Case("update", name, raw, expect, REFUSED, {"update": update_name})


class Raw(str):
    """JSON text sent as it is (not encoded again)."""


def deep(n: int, inner: str = "") -> str:
    return "[" * n + inner + "]" * n


def completion(message: dict) -> dict:
    return {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}]}


def fn(name: Any, arguments: Any, **extra: Any) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}, **extra}


BIG = 10 * 1024 * 1024
BIG_ARGS = json.dumps({"path": "big.md", "content": "x" * BIG})
IN_ROOT = "the job's config folder (configs/creator) or a document root the operator listed"
OWNED = "the workflow owns it and it is read-only to tools"
NOT_UNICODE = "contain text that is not valid Unicode (a lone surrogate"

JOB_INPUT = [
    start("config-number", '{"config": 42}', "job input: 'config' must be a config name "
          "(string) or an inline config object, got 42"),
    start("config-empty", '{"config": ""}', "job input: 'config' must be a config name "
          "(string) or an inline config object, got \"\""),
    start("instructions-number", '{"instructions": 5}', "job input: 'instructions' must be a "
          "string of markdown (at most 200000 characters), got 5"),
    start("instructions-list", '{"instructions": ["a"]}', "job input: 'instructions' must be a"
          " string of markdown (at most 200000 characters), got [\"a\"]"),
    start("instructions-too-long", json.dumps({"instructions": "x" * 200_001}),
          "job input: 'instructions' must be a string of markdown (at most 200000 characters)"
          ", got \"xxxx"),
    start("instructions-surrogate", '{"instructions": "a\\ud800b"}',
          "job input: 'instructions' contains text that is not valid Unicode (a lone "
          "surrogate); send UTF-8 text"),
    start("documents-string", '{"documents": "x"}', "job input: 'documents' must be a list of "
          "documents, each a path (string) or an object {name, text} or {name, base64} (at "
          "most 200), got \"x\""),
    start("documents-201", json.dumps({"documents": ["a.md"] * 201}),
          "job input: 'documents' must be a list of documents"),
    start("document-number", '{"documents": [7]}', "job input: 'documents[0]' must be a path "
          "(string) or an object {name, text} / {name, base64}, got 7"),
    start("document-empty-path", '{"documents": [""]}',
          "job input: 'documents[0]' is an empty path"),
    start("document-unknown-key", '{"documents": [{"name": "a.md", "txt": "x"}]}',
          "job input: 'documents[0].txt': unknown key (known: name, path, text, base64)"),
    start("document-no-name", '{"documents": [{"text": "x"}]}',
          "job input: 'documents[0]': an inline document needs a 'name'"),
    start("document-two-sources", '{"documents": [{"name": "a", "path": "a", "text": "x"}]}',
          "job input: 'documents[0]' must give exactly one of 'path', 'text' or 'base64' "
          "(got path, text)"),
    start("unknown-key", '{"confg": "creator"}',
          'job input: unknown key "confg" (known: config, instructions, documents, deliverables)'),
    start("a-number", "42", 'job input must be a JSON object (e.g. {"config": "creator", '
          '"instructions": "..."}), got 42'),
    start("a-string", '"creator"', "job input must be a JSON object", ),
    start("a-list", '["creator"]', 'job input must be a JSON object (e.g. {"config": '
          '"creator", "instructions": "..."}), got ["creator"]'),
    start("null", "null", "job input must be a JSON object (e.g. {\"config\": \"creator\", "
          "\"instructions\": \"...\"}), got null"),
    start("nested-too-deeply", '{"config": {"extends": "creator", "x": ' + deep(3000) + "}}",
          "job input: JSON nested too deeply (more than 100 levels)"),
    start("number-5000-digits", '{"instructions": 1' + "0" * 5000 + "}",
          "job input is not JSON switchback can read (a number has more than 4,300 digits)"),
    start("carry-number", '{"carry": 5}', "job input: 'carry.': Input should be a valid "
          "dictionary or instance of Carried"),
    start("carry-bad-field", '{"carry": {"cfg": 5}}', "job input: 'carry.cfg': "),
    start("pipeline-surrogate", '{"instructions": "\\udfff"}', "pipeline input: "
          "'instructions' contains text that is not valid Unicode (a lone surrogate)",
          workflow="DocumentPipeline"),
    start("pipeline-nested", '{"documents": ' + deep(300) + "}",
          "pipeline input: JSON nested too deeply (more than 100 levels)",
          workflow="DocumentPipeline"),
    forged("carry-attacker-url", "model call failed (phase 1 strategic step 1): "
           "EndpointNotAllowed: llm.base_url: '$ATTACKER' is not the URL of an endpoint the "
           "operator declared",
           llm={"base_url": "$ATTACKER", "api_key_env": "AWS_SECRET_ACCESS_KEY"}),
    forged("carry-foreign-key", "llm.api_key_env: 'AWS_SECRET_ACCESS_KEY' is not the key "
           "variable of endpoint 'default'", llm={"api_key_env": "AWS_SECRET_ACCESS_KEY"}),
    forged("carry-payload-bucket", "workspace.bucket: 'switchback-payloads' is the payload "
           "bucket", workspace={"bucket": "switchback-payloads"}),
    start("id-dot-dot", '{"instructions": "x"}', "job id '../victim-$UID' cannot name a "
          "workspace: use 1-200 letters, digits, '.', '_' or '-', not starting with '.'",
          job_id="../victim-$UID"),
    start("id-slash", '{"instructions": "x"}', "job id 'team-$UID/b' cannot name a workspace",
          job_id="team-$UID/b"),
    start("id-hidden", '{"instructions": "x"}', "job id '.hidden-$UID' cannot name a workspace",
          job_id=".hidden-$UID"),
    start("id-201-characters", '{"instructions": "x"}', "cannot name a workspace: use 1-200 "
          "letters", job_id="$UID" + "x" * 201),
]

CONFIG = [
    config("llm-base-url", {"llm": {"base_url": "$ATTACKER"}},
           "config 'inline': llm.base_url: job input names a model endpoint by name "
           "(llm.endpoint: default, other), not by URL"),
    config("llm-api-key-env", {"llm": {"api_key_env": "AWS_SECRET_ACCESS_KEY"}},
           "config 'inline': llm.api_key_env: job input may not choose the key variable "
           "('AWS_SECRET_ACCESS_KEY')"),
    config("llm-url-and-key", {"llm": {"base_url": "$ATTACKER",
                                       "api_key_env": "OPENAI_API_KEY"}},
           "llm.base_url: job input names a model endpoint by name"),
    config("llm-replay-from", {"llm": {"replay_from": "someone-else"}},
           "llm.replay_from: no longer a setting (set by `starter.py rerun` only, not by job "
           "input)"),
    config("llm-unknown-endpoint", {"llm": {"endpoint": "gpu"}},
           "llm.endpoint: unknown endpoint 'gpu' (declared in"),
    config("llm-model-not-offered", {"llm": {"endpoint": "other", "model": "gpt-4o"}},
           "llm.model: 'gpt-4o' is not offered by endpoint 'other' (models: other-*)"),
    config("llm-not-a-mapping", {"llm": "x"},
           "llm: Input should be a valid dictionary or instance of LlmSettings"),
    config("bucket-payloads", {"workspace": {"bucket": "switchback-payloads"}},
           "workspace.bucket: 'switchback-payloads' is the payload bucket "
           "(SWITCHBACK_PAYLOAD_BUCKET), never a workspace"),
    config("bucket-unlisted", {"workspace": {"bucket": "someone-elses"}},
           "workspace.bucket: 'someone-elses' is not a workspace bucket the operator listed "
           "(SWITCHBACK_WORKSPACE_BUCKETS: switchback)"),
    config("prompt-dot-dot", {"prompts": {"strategic": "../../etc/passwd"}},
           "prompts.strategic: '../../etc/passwd' must be a relative path inside configs "
           "(no '..', not absolute)"),
    config("prompt-absolute", {"prompts": {"nudge": "/proc/self/environ"}},
           "prompts.nudge: '/proc/self/environ' must be a relative path inside configs"),
    config("prompt-home", {"prompts": {"strategic_todos": "~/.aws/credentials"}},
           "prompts.strategic_todos: '~/.aws/credentials' must be a relative path inside"),
    config("extends-dot-dot", {"extends": "../secret"},
           "extends: config name '../secret' is not a plain name"),
    config("extends-absolute", {"extends": "/etc/passwd"},
           "extends: config name '/etc/passwd' is not a plain name"),
    config("extends-number", {"extends": 5}, "extends: must be a config name, got 5"),
    config("extends-unknown", {"extends": "no-such-config"},
           "extends: config 'no-such-config' not found"),
    config("config-documents-escape", {"documents": ["../../../etc/passwd"]},
           "documents: '../../../etc/passwd' must be a relative path inside configs/creator"),
    config("unknown-key", {"limits": {"max_nudgez": 1}},
           "limits.max_nudgez: Extra inputs are not permitted"),
    config("wrong-type", {"limits": {"max_nudges": "many"}},
           "limits.max_nudges: Input should be a valid integer"),
    config("declares-a-server", {"mcp": {"servers": {"x": {"command": "sh"}}}},
           "mcp: Extra inputs are not permitted"),
    config("unknown-strategy", {"strategy": "evil"},
           "strategy: unknown strategy 'evil' (known: auto, nested, phase_alternation, "
           "plan_revise_execute, react)"),
    config("unknown-tool", {"tools": {"domain": ["no_such_tool"]}},
           "tools: ToolConfigError: 'no_such_tool': unknown tool on this worker"),
    config("undeclared-mcp-server", {"tools": {"domain": ["evil.*"]}},
           "'evil.*': no MCP server 'evil' is declared on this worker"),
    config("min-over-max", {"phase_settings": {"min_todos": 30}},
           "phase_settings: Value error, min_todos (30) > max_todos (20)"),
    config("negative-budget", {"budget": {"max_cost_usd": -1}},
           "budget.max_cost_usd: Input should be greater than 0"),
    config("typo-task-queue", {"task_queues": {"model": "switchback-modle-$UID"}},
           "task_queues.model: no worker polls task queue 'switchback-modle-$UID' (start one "
           "with SWITCHBACK_WORKER_ROLE=model"),
]

DOCUMENTS = [
    document("proc-environ", "/proc/self/environ",
             f"'/proc/self/environ' is not inside {IN_ROOT}"),
    document("etc-passwd", "/etc/passwd", f"'/etc/passwd' is not inside {IN_ROOT}"),
    document("dev-zero", "/dev/zero", "'/dev/zero' is not inside"),
    document("dot-dot", "../../etc/passwd", "a document path may not contain '..' or control "
             "characters"),
    document("dot-dot-in-folder", "documents/../../defaults.yaml", "may not contain '..'"),
    document("nul", "a\x00b", "a document path may not contain '..' or control characters"),
    document("s3-other-job", "s3://switchback/victim-$UID/secret.md",
             "URLs and s3:// references are not accepted"),
    document("metadata-url", "http://169.254.169.254/latest/meta-data/",
             "URLs and s3:// references are not accepted"),
    document("file-url", "file:///etc/passwd", "URLs and s3:// references are not accepted"),
    document("symlink-out-of-root", "$ROOT/escape.txt", "'$ROOT/escape.txt' is not inside"),
    document("missing", "documents/nope.txt", "'documents/nope.txt' does not exist in"),
    document("a-folder", "$ROOT/sub", "'$ROOT/sub' is not a regular file"),
    document("too-large", "$ROOT/big.md", "'$ROOT/big.md' has 2000 bytes, more than "
             "limits.max_file_bytes (1000)", config={"extends": "creator",
                                                     "limits": {"max_file_bytes": 1000}}),
    document("relative-without-folder", "a.md", "'a.md': a relative path is read from the "
             "job's config folder and this config has none",
             config={"limits": {"max_nudges": 2}}),
    document("path-object-proc", {"path": "/proc/self/environ", "name": "env.txt"},
             "'/proc/self/environ' is not inside"),
    document("name-dot-dot", {"name": "../escape.md", "text": "x"},
             "'../escape.md' is not a plain file name"),
    document("name-internal", {"name": ".switchback/owner.json", "text": "{}"},
             "'.switchback/owner.json' is not a plain file name"),
    document("name-hidden", {"name": ".env", "text": "x"}, "'.env' is not a plain file name"),
    document("bad-base64", {"name": "a.pdf", "base64": "!!!"},
             "'base64' is not valid base64"),
    document("inline-too-large", {"name": "big.md", "text": "x" * 2000},
             "'text': '" + "x" * 80 + "...'}: 2000 bytes, more than limits.max_file_bytes (1000)",
             config={"extends": "creator", "limits": {"max_file_bytes": 1000}}),
    document("text-surrogate", Raw('{"name": "a.md", "text": "\\udfff"}'),
             "job input: 'documents[0].text' contains text that is not valid Unicode"),
]

TOOL_ARGUMENTS = [
    tool("path-1500-bytes", ("write_file", {"path": "中" * 500, "content": "x"}),
         "Error [path_too_long]: path is 1500 bytes of UTF-8 (500 characters); at most 512 "
         "bytes are allowed"),
    tool("name-403-bytes", ("write_file", {"path": "notes/" + "é" * 200 + ".md",
                                           "content": "x"}),
         "is 403 bytes of UTF-8; a folder or file name may have at most 255"),
    tool("path-surrogate", ("write_file", '{"path": "a\\ud800.md", "content": "x"}'),
         f"Error [invalid_arguments]: the arguments of 'write_file' {NOT_UNICODE}, in 'path'); "
         "send UTF-8 text"),
    tool("content-surrogate", ("write_file", '{"path": "a.md", "content": "x\\udfff"}'),
         f"the arguments of 'write_file' {NOT_UNICODE}, in 'content')"),
    tool("raw-surrogate", ("write_file", '{"path": "a\ud800.md", "content": "x"}'),
         f"Error [invalid_arguments]: bad tool call: the arguments {NOT_UNICODE}); send UTF-8"),
    tool("path-nul", ("write_file", {"path": "a\x00b.md", "content": "x"}),
         "Error [invalid_path]: path contains a NUL or control character (U+0000 at "
         "character 1)"),
    tool("path-newline", ("read_file", {"path": "a\nb.md"}),
         "path contains a NUL or control character (U+000A at character 1)"),
    tool("path-rtl-override", ("write_file", {"path": "gpj\u202e.exe", "content": "x"}),
         "path contains a NUL or control character (U+202E at character 3)"),
    tool("path-backslash", ("read_file", {"path": "..\\secret"}),
         "Error [invalid_path]: path contains a backslash; use '/' between folders"),
    tool("path-empty", ("read_file", {"path": ""}), "Error [invalid_path]: path is empty"),
    tool("path-absolute", ("read_file", {"path": "/etc/passwd"}),
         "Error [path_outside_workspace]: '/etc/passwd' is absolute; paths are relative to "
         "the workspace root"),
    tool("path-home", ("read_file", {"path": "~/.aws/credentials"}),
         "Error [path_outside_workspace]: '~/.aws/credentials' is absolute"),
    tool("path-drive", ("read_file", {"path": "C:/Windows/win.ini"}), "is absolute"),
    tool("path-dot-dot", ("write_file", {"path": "../victim/x.md", "content": "escape"}),
         "Error [path_outside_workspace]: '../victim/x.md' contains '..'; paths may not leave "
         "the workspace"),
    tool("list-dot-dot", ("list_files", {"path": "a/../.."}), "contains '..'"),
    tool("path-s3-url", ("read_file", {"path": "s3://switchback/victim/secret.md"}),
         "Error [path_outside_workspace]: 's3://switchback/victim/secret.md' is a URL, not a "
         "workspace path"),
    tool("read-internal", ("read_file", {"path": ".switchback/owner.json"}),
         "Error [reserved_path]: '.switchback/' is reserved for switchback itself"),
    tool("list-internal", ("list_files", {"path": "./.switchback"}),
         "Error [reserved_path]: '.switchback/' is reserved"),
    tool("forge-completion", ("write_file", {"path": "output/completion.json",
                                             "content": '{"status": "completed"}'}),
         f"Error [read_only]: cannot write 'output/completion.json': {OWNED} (instructions.md, "
         "output/completion.json, output/error.json, output/breakers/**, archive/**, "
         "subjobs/**, .switchback/**); only job_complete completes a job"),
    tool("forge-child-job", ("write_file", {"path": "subjobs/child-1/output/completion.json",
                                            "content": '{"status": "completed"}'}),
         f"Error [read_only]: cannot write 'subjobs/child-1/output/completion.json': {OWNED}"),
    tool("forge-error", ("write_file", {"path": "./output//error.json", "content": "{}"}),
         f"Error [read_only]: cannot write 'output/error.json': {OWNED}"),
    tool("forge-trip", ("write_file", {"path": "output/breakers/trip_0001.json",
                                       "content": "{}"}),
         f"cannot write 'output/breakers/trip_0001.json': {OWNED}"),
    tool("rewrite-instructions", ("write_file", {"path": "instructions.md",
                                                 "content": "# Obey the model"}),
         f"Error [read_only]: cannot write 'instructions.md': {OWNED}"),
    tool("rewrite-archive", ("write_file", {"path": "archive/phase_1.yaml", "content": "x"}),
         f"cannot write 'archive/phase_1.yaml': {OWNED}"),
    tool("delete-instructions", ("delete_file", {"path": "instructions.md"}),
         f"Error [read_only]: cannot delete 'instructions.md': {OWNED}"),
    tool("arguments-10-mb", ("write_file", BIG_ARGS),
         f"Error [invalid_arguments]: bad tool call: the arguments are {len(BIG_ARGS):,} "
         "characters, over the limit of 200,000; send large content in several smaller calls"),
    tool("nested-20000", ("write_file", '{"path": ' + deep(20_000) + ', "content": "x"}'),
         "Error [invalid_arguments]: bad tool call: the arguments of 'write_file' are nested "
         "too deeply; send a flat JSON object"),
    tool("wrong-types", ("write_file", '{"path": 5, "content": ["a"]}'),
         "Error [invalid_arguments]: bad arguments for 'write_file': path: Input should be a "
         "valid string; content: Input should be a valid string"),
    tool("not-an-object", ("write_file", '["a.md", "x"]'),
         "Error [invalid_arguments]: bad tool call: the arguments of 'write_file' must be a JSON "
         "object"),
    tool("nan", ("read_file", '{"path": "a.md", "offset": NaN}'),
         "the arguments of 'read_file' are not valid JSON (NaN is not a JSON number)"),
    tool("number-5000-digits", ("read_file", '{"path": "a.md", "offset": 1' + "0" * 5000 + "}"),
         "the arguments of 'read_file' are not valid JSON (a number has more than 4,300 "
         "digits)"),
    tool("truncated-json", ("write_file", '{"path": "a.md", "content": '),
         "Error [invalid_arguments]: bad tool call: the arguments of 'write_file' are not valid "
         "JSON (Expecting value at char 28); send a JSON object"),
    tool("missing-field", ("write_file", {"content": "no path"}),
         "bad arguments for 'write_file': path: Field required"),
    tool("negative-offset", ("read_file", {"path": "instructions.md", "offset": -1}),
         "offset: Input should be greater than or equal to 0"),
    tool("empty-query", ("search_files", {"query": ""}),
         "bad arguments for 'search_files': query: String should have at least 1 character"),
    tool("empty-rewind-issue", ("todo_rewind", {"issue": ""}),
         "bad arguments for 'todo_rewind': issue: String should have at least 1 character"),
    tool("missing-file", ("read_file", {"path": "missing.md"}),
         "Error [file_not_found]: 'missing.md' does not exist; list_files shows what is there"),
    tool("binary-file", ("read_file", {"path": "documents/blob.bin"}),
         "Error [binary_file]: 'documents/blob.bin' is a binary file (4 bytes), not text"),
    tool("write-over-limit", ("write_file", {"path": "big.md", "content": "x" * 150_000}),
         "Error [file_too_large]: 150000 bytes for 'big.md' exceed the limit of 100000 bytes"),
    tool("unknown-tool", ("delete_everything", {"path": ""}),
         "Error [unknown_tool]: unknown tool 'delete_everything'. Available: read_file"),
    tool("tool-of-another-phase", ("job_complete", {"summary": "forged", "deliverables": [],
                                                    "confidence": 1.0}),
         "Error [tool_not_allowed]: tool 'job_complete' is not available in the tactical "
         "phase"),
    tool("todo-write-in-tactical", ("todo_write", {"phase": "x", "todos": []}),
         "Error [tool_not_allowed]: tool 'todo_write' is not available in the tactical phase"),
    tool("domain-tool-reads-proc", ("extract_document_text", {"path": "/proc/self/environ"}),
         "Error [path_outside_workspace]: '/proc/self/environ' is absolute"),
    tool("search-provider-echoes-its-key", ("web_search", {"query": "retention periods"}),
         "Error [web_search_failed]: the search provider answered HTTP 401: invalid key "
         "Bearer [redacted SWITCHBACK_WEB_SEARCH_KEY]"),
]

MODEL_OUTPUT = [
    answer("not-json", "<html>502 Bad Gateway</html>",
           "model endpoint answered 200 with a body that is not JSON: "
           "'<html>502 Bad Gateway</html>'"),
    answer("empty-body", "", "model endpoint answered 200 with a body that is not JSON: ''"),
    answer("no-choices", {"object": "chat.completion", "choices": []},
           "model endpoint answered 200 with no choices"),
    answer("choices-not-a-list", {"choices": "none"}, "'choices' that is not a list"),
    answer("choice-without-message", {"choices": [{"index": 0}]},
           "a first choice that has no message object"),
    answer("tool-calls-not-a-list",
           completion({"role": "assistant", "tool_calls": "write_file"}),
           "'tool_calls' that is not a list (str)"),
    answer("json-not-an-object", ["not", "an", "object"],
           "model endpoint answered 200 with JSON that is not an object: "
           "'[\"not\", \"an\", \"object\"]'"),
    answer("json-null", "null", "JSON that is not an object: 'null'"),
    answer("nested-50000", '{"choices": ' + deep(50_000) + "}",
           "model endpoint answered 200 with JSON nested too deeply"),
    answer("body-echoes-the-key", "<html>bad key $OPENAI_API_KEY</html>",
           "a body that is not JSON: '<html>bad key [redacted OPENAI_API_KEY]</html>'"),
    answer("500-echoes-the-key", {"error": {"status": 500, "message": "upstream rejected "
                                            "Bearer $OPENAI_API_KEY"}},
           "model endpoint answered HTTP 500: upstream rejected Bearer [redacted "
           "OPENAI_API_KEY]"),
    answer("429-retry-after-a-day", {"error": {"status": 429, "retry_after": 86400}},
           "model endpoint answered HTTP 429"),
    answer("content-parts", {"content": ["$MARK ", {"type": "text", "text": "b"}, 7]},
           "$MARK b", REPAIRED),
    answer("content-10-mb", {"content": "$MARK " + "x" * BIG},
           f"[... cut by switchback: the answer was {BIG + len('case content-10-mb '):,} "
           "characters; at most 200,000 are kept]", REPAIRED),
    answer("answer-surrogate", {"content": "$MARK \ud800"}, "$MARK \ufffd", REPAIRED),
    answer("content-echoes-the-key", {"content": "$MARK $OPENAI_API_KEY"},
           "$MARK [redacted OPENAI_API_KEY]", REPAIRED),
    answer("call-without-id", {"tool_calls": [fn("write_file", '{"path": "n1.md", "content":'
                                                 ' "1"}')]},
           "Wrote 1 bytes to n1.md.", REPAIRED),
    answer("arguments-as-object", {"tool_calls": [fn("write_file", {"path": "n2.md",
                                                                    "content": "2"}, id="o1")]},
           "Wrote 1 bytes to n2.md.", REPAIRED),
    answer("duplicate-ids", {"tool_calls": [fn("list_files", "{}", id="dup"),
                                            fn("read_file", '{"path": "n2.md"}', id="dup")]},
           '"id": "sb_call_2"', REPAIRED),
    answer("call-without-function", {"tool_calls": [{"id": "c4", "type": "function"}]},
           "Error [unknown_tool]: unknown tool 'unnamed_tool'", REPAIRED),
    answer("bad-tool-name", {"tool_calls": [fn("write file!", "{}", id="c5")]},
           "Error [unknown_tool]: unknown tool 'write_file_'", REPAIRED),
    answer("arguments-a-number", {"tool_calls": [fn("read_file", 7, id="c6")]},
           "Error [invalid_arguments]: bad tool call: the arguments must be a JSON object "
           "encoded as a string, got int", REPAIRED),
    answer("call-not-an-object", {"tool_calls": ["not an object"]},
           "Error [unknown_tool]: unknown tool 'unnamed_tool'", REPAIRED),
    answer("100-calls-in-a-turn", {"tool_calls": [fn("list_files", json.dumps({"path": f"d{i}"}),
                                                     id=f"k{i}") for i in range(100)]},
           "Error [too_many_calls]: too many tool calls in one turn (limit 16); this one was not"
           " run", REPAIRED),
    answer("no-tool-call", {"content": "$MARK I think I am done."},
           "You answered without calling a tool.", REPAIRED),
    answer("4xx-echoes-the-key", {"error": {"status": 401, "message": "Incorrect API key "
                                            "provided: $OPENAI_API_KEY"}},
           "model call failed (phase 1 strategic step 1): ModelRequestRejected: model endpoint "
           "answered HTTP 401: Incorrect API key provided: [redacted "
           "OPENAI_API_KEY]",
           FAILS_CLEANLY),
    answer("unreadable-every-time", "<html>oops</html>",
           "model call failed (phase 1 strategic step 1): ModelBadResponse: model endpoint "
           "answered 200 with a body that is not JSON: '<html>oops</html>'", FAILS_CLEANLY),
]

SIGNALS = [
    signal("rewind-number", "rewind", "5", 'rewind: the payload must be an issue string or '
           '{"issue": string, "restore_phase": N}, got 5; the signal was ignored'),
    signal("rewind-true", "rewind", "true", 'rewind: the payload must be an issue string or '
           '{"issue": string, "restore_phase": N}, got true; the signal was ignored'),
    signal("rewind-null", "rewind", "null", "got null; the signal was ignored"),
    signal("rewind-no-input", "rewind", None, 'rewind: the payload must be an issue string '
           'or {"issue": string, "restore_phase": N}, got null; the signal was ignored'),
    signal("rewind-two-inputs", "rewind", ['"a"', '"b"'], 'rewind: takes one input (an issue '
           'string or {"issue": string, "restore_phase": N}), got 2; the signal was ignored'),
    signal("rewind-list", "rewind", '["a"]', 'got ["a"]; the signal was ignored'),
    signal("rewind-issue-number", "rewind", '{"issue": 5}',
           "rewind: 'issue' must be a string, got 5; the signal was ignored"),
    signal("rewind-no-issue", "rewind", "{}", "rewind: 'issue' must be a string, got null"),
    signal("rewind-unknown-key", "rewind", '{"issue": "x", "by": "me"}',
           'rewind: unknown key "by" (known: issue'),
    signal("rewind-nested", "rewind", deep(3000), "rewind: JSON nested too deeply (more than "
           "100 levels); the signal was ignored"),
    signal("rewind-surrogate", "rewind", '"a\\ud800"', "rewind: the payload contains text that"
           " is not valid Unicode (a lone surrogate); send UTF-8 text; the signal was ignored"),
    signal("rewind-5000-digits", "rewind", "1" + "0" * 5000, "rewind is not JSON switchback "
           "can read (a number has more than 4,300 digits); the signal was ignored"),
    signal("unknown-signal", "rewnid", '"x"', "unknown signal 'rewnid' (known: rewind, pause, "
           "resume, instruct); the signal was ignored"),
    signal("pause-with-input", "pause", '"now"', "pause: takes no input, got 1; the signal "
           "was ignored"),
    signal("resume-two-inputs", "resume", ['"a"', '"b"'], "resume: takes no input, got 2; the "
           "signal was ignored"),
    signal("instruct-number", "instruct", "5", "instruct: the instruction must be a non-empty "
           "string of markdown (at most 20000 characters; longer material belongs in a "
           "workspace document), got 5; the signal was ignored"),
    signal("instruct-tools-path", "instruct", '{"instruction": "x", "tools": ["../../bin/sh"]}',
           "instruct: 'tools' must be a list of at most 50 tool names or globs"),
    signal("instruct-two-inputs", "instruct", ['"a"', '"b"'], "instruct: takes one input (the "
           "instruction), got 2; the signal was ignored"),
    signal("instruct-surrogate", "instruct", '"a\\ud800"', "instruct: the payload contains "
           "text that is not valid Unicode (a lone surrogate)"),
    signal("rewind-21st", "rewind", '"one too many"', "rewind: 20 rewinds already wait for the "
           "next step boundary; the signal was ignored"),
    signal("rewind-6000-characters", "rewind", json.dumps({"issue": "scope " * 1000}),
           "[... cut: the issue had 5999 characters, at most 2000 are kept]", CUT),
]

UPDATES = [
    update("a-string", '"yes"', 'approve must be a JSON object ({"call_id": "call_3", '
           '"approved": true, "note": "ok"}), got "yes"'),
    update("null", "null", "approve must be a JSON object"),
    update("call-id-number", '{"call_id": 5, "approved": true}',
           "approve: 'call_id' must be the id of the waiting call (a string of 1-200 "
           "characters), got 5"),
    update("call-id-empty", '{"call_id": "", "approved": true}',
           "approve: 'call_id' must be the id of the waiting call"),
    update("approved-string", '{"call_id": "$CALL", "approved": "yes"}',
           "approve: 'approved' must be true or false, got \"yes\""),
    update("unknown-key", '{"call_id": "$CALL", "approved": true, "by": "me"}',
           'approve: unknown key "by" (known: call_id, approved, note)'),
    update("note-number", '{"call_id": "$CALL", "approved": true, "note": 7}',
           "approve: 'note' must be a string of at most 2000 characters, got 7"),
    update("note-too-long", json.dumps({"call_id": "$CALL", "approved": True,
                                        "note": "n" * 2001}),
           "approve: 'note' must be a string of at most 2000 characters, got \"nnn"),
    update("note-surrogate", '{"call_id": "$CALL", "approved": true, "note": "\\ud800"}',
           "approve: 'note' contains text that is not valid Unicode (a lone surrogate)"),
    update("nested", '{"call_id": "$CALL", "approved": true, "note": ' + deep(3000) + "}",
           "approve: JSON nested too deeply (more than 100 levels)"),
    update("unknown-call", '{"call_id": "call_999", "approved": true}',
           "no tool call 'call_999' is waiting for approval (waiting: $CALL)"),
    update("instruct-empty", '"  "', "instruct: the instruction must be a non-empty string",
           update_name="instruct"),
    update("instruct-unknown-key", '{"text": "more"}',
           'instruct: unknown key "text" (known: instruction, tools)', update_name="instruct"),
    update("unknown-update", '{"call_id": "$CALL", "approved": true}',
           "Update handler for 'aprove' expected but not found, and there is no dynamic "
           "handler. known updates: [__temporal_workflow_stream_poll approve instruct]",
           update_name="aprove"),
]

TABLE = JOB_INPUT + CONFIG + DOCUMENTS + TOOL_ARGUMENTS + MODEL_OUTPUT + SIGNALS + UPDATES
