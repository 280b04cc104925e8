"""The breakers' rules on their own (pure): similarity, polling exemption, budget levels."""

from __future__ import annotations

from switchback.workflows.breakers import Breakers, StepFacts
from switchback.workflows.contract.config import BreakerSettings, BudgetSettings


def facts(n: int, *, digests=("d1",), names=("read_file",), text="", progress=0, tokens=0,
          phase_steps=1, variant="work") -> StepFacts:
    return StepFacts(phase=2, phase_steps=phase_steps, phase_variant=variant, job_steps=n,
                     tool_digests=list(digests), tool_names=list(names), text=text,
                     progress=progress, tokens=tokens, cost=0.0)


def breakers(**kw) -> Breakers:
    return Breakers(BreakerSettings(no_progress_steps=0, **kw),
                    BudgetSettings(max_tokens=1000), max_phase_steps=100)


def test_near_identical_messages_trip_even_with_different_calls():
    b = breakers()
    text = "I will now carefully read the document chunk number {} and summarise it."
    trips = [t for i in range(5) for t in b.observe(
        facts(i, digests=(f"d{i}",), text=text.format(i)))]
    assert [t.action for t in trips] == ["note"]
    assert "near-identical messages" in trips[0].message


def test_different_texts_and_calls_do_not_trip():
    b = breakers()
    texts = ["alpha beta gamma delta epsilon", "the quick brown fox jumps over",
             "lorem ipsum dolor sit amet again", "completely unrelated sentence here",
             "yet another distinct message text"]
    assert [t for i, x in enumerate(texts) for t in b.observe(
        facts(i, digests=(f"d{i}",), text=x))] == []


def test_exempt_polling_steps_are_not_counted():
    b = breakers(exempt_tools=["check_status"])
    assert [t for i in range(10) for t in b.observe(facts(i, names=("check_status",)))] == []


def test_escalation_note_rewind_stop():
    b = breakers(repetition_window=3)
    actions = [t.action for i in range(9) for t in b.observe(facts(i))]
    assert actions == ["note", "rewind", "stop"]


def test_two_calls_taking_turns_trip_across_twice_the_window():
    """A 1.5B model wrote output/summary.md instead of main_plan.md, had todo_complete refused,
    and did both again for 40 steps: no window of 5 held one call, so nothing tripped."""
    b = breakers(repetition_window=3)
    turns = [facts(i, digests=("write" if i % 2 else "complete",)) for i in range(18)]
    actions = [(i, t.action) for i, f in enumerate(turns) for t in b.observe(f)]
    assert actions == [(5, "note"), (11, "rewind"), (17, "stop")]
    assert "the same two tool calls by turns" in b.state.trips[0].message
    three = [facts(i, digests=("abc"[i % 3],)) for i in range(12)]  # three calls: work
    assert [t for f in three for t in breakers(repetition_window=3).observe(f)
            ] == []


def test_budget_levels_once_each_then_wrap_up_once():
    b = breakers()
    actions = [t.action for tok in (500, 810, 820, 960, 990, 1000, 1200)
               for t in b.observe(facts(tok, digests=(str(tok),), tokens=tok))]
    assert actions == ["note", "note", "wrap_up"]


def test_phase_cap_rewinds_but_stops_in_a_rewind_phase():
    b = Breakers(BreakerSettings(no_progress_steps=0), BudgetSettings(), max_phase_steps=3)
    assert [t.action for t in b.observe(facts(1, phase_steps=3))] == ["rewind"]
    assert [t.action for t in b.observe(facts(2, digests=("x",), phase_steps=3,
                                              variant="rewind"))] == ["stop"]


def test_one_call_copied_in_two_steps_in_a_row_trips_at_once():
    """The 1.5B model answered with 48 identical read_file calls, answer after answer (each
    ~10 minutes of generation): five copies of one call in each of two steps in a row count
    as a loop at once, without waiting for the window. One such step alone (a tool called 5
    times on purpose), fewer copies, different calls or a polling tool do not."""
    def calls(n: int, digests: list[str], names: list[str] | None = None) -> StepFacts:
        return facts(n, digests=digests, names=names or ["read_file"] * len(digests))

    b = breakers(repetition_window=5)
    assert b.observe(calls(1, digests=["d1"] * 4 + ["d2"])) == []
    assert b.observe(calls(2, digests=[f"d{i}" for i in range(8)])) == []
    assert b.observe(calls(3, digests=["d1"] * 48)) == []  # once: maybe on purpose
    assert b.observe(calls(4, digests=["d2"])) == []
    assert b.observe(calls(5, digests=["d1"] * 48)) == []
    trips = b.observe(calls(6, digests=["d1"] * 48))
    assert [(t.breaker, t.action) for t in trips] == [("repetition", "note")], trips
    assert "the same tool call 48 times in one step, twice in a row." in trips[0].message
    assert b.observe(calls(7, digests=["d1"] * 5)) == []  # the count starts again
    assert [t.action for t in b.observe(calls(8, digests=["d1"] * 5))] == ["rewind"]
    polling = breakers(repetition_window=5, exempt_tools=["check_status"])
    mixed = {"digests": ["d1"] * 5 + ["d9"], "names": ["check_status"] * 5 + ["write_file"]}
    assert polling.observe(calls(1, **mixed)) == [] and polling.observe(calls(2, **mixed)) == []