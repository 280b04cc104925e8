"""The live stream's fold (operate/live.py:Transcript): a retried model call's partial text
is replaced, never kept twice; model.end is the whole reply; late events of a failed
attempt are ignored. Pure: no server."""

from switchback.operate.live import Transcript
from switchback.workflows.contract.stream import event, parse


def test_deltas_build_the_text_and_end_replaces_it() -> None:
    t = Transcript()
    t.add(event("model.start", call="c.m1", attempt=1))
    t.add(event("model.delta", call="c.m1", attempt=1, text="Hello "))
    t.add(event("model.delta", call="c.m1", attempt=1, text="wor"))
    assert t.text("c.m1") == "Hello wor"
    t.add(event("model.end", call="c.m1", text="Hello world", tool_calls=["write_file"]))
    assert t.text("c.m1") == "Hello world"
    assert t.calls["c.m1"].done and t.calls["c.m1"].tool_calls == ["write_file"]


def test_a_retried_attempt_replaces_the_failed_ones_text() -> None:
    t = Transcript()
    for ev in (event("model.start", call="c.m3", attempt=1),
               event("model.delta", call="c.m3", attempt=1, text="The quick brown"),
               event("model.start", call="c.m3", attempt=2),
               event("model.delta", call="c.m3", attempt=1, text=" fox (late)"),
               event("model.delta", call="c.m3", attempt=2, text="The quick brown fox")):
        t.add(ev)
    ct = t.calls["c.m3"]
    assert (ct.text, ct.attempt, ct.replaced) == ("The quick brown fox", 2, 1)
    # a delta of a newer attempt without its start also replaces
    t.add(event("model.delta", call="c.m3", attempt=3, text="Again"))
    assert t.text("c.m3") == "Again" and t.calls["c.m3"].replaced == 2


def test_other_events_do_not_touch_calls_and_parse_knows_kinds() -> None:
    t = Transcript()
    assert t.add(event("tool.call", call="call_1", name="read_file", arguments="{}")) is None
    assert t.add({"kind": "something.new", "call": "x"}) is None
    assert t.calls == {}
    ev = parse(event("tool.result", call="call_1", name="read_file", ok=False, text="no"))
    assert ev is not None and ev.kind == "tool.result" and ev.model_dump()["ok"] is False
    assert parse({"no": "kind"}) is None
