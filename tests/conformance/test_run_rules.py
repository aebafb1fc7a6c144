"""The rules ``run.py`` applies to the suite's results, on hand-made outcomes (no Node needed)."""

from __future__ import annotations

from tests.conformance import run

LATE = "WARNING client-sse-retry-timing: Client reconnected slightly late (704ms instead of 500ms)."


def outcome(**fields: object) -> run.Outcome:
    values: dict[str, object] = {"scenario": "sse-retry", "passed": 2, "ran": True}
    values.update(fields)
    return run.Outcome(**values)  # type: ignore[arg-type]


def test_only_a_late_reconnection_earns_a_lone_rerun() -> None:
    assert run.only_late(outcome(warnings=1, messages=(LATE,)))
    early = "FAILURE client-sse-retry-timing: Client reconnected too early (300ms instead of 500ms)."
    assert not run.only_late(outcome(failed=1, messages=(early,)))
    very_late = "FAILURE client-sse-retry-timing: Client reconnected very late (1200ms instead of 500ms)."
    # Very late earns the rerun too: a client that ignores the retry field is very late alone too.
    assert run.only_late(outcome(failed=1, messages=(very_late,)))
    assert not run.only_late(outcome(failed=1, warnings=1, messages=(very_late, LATE)))
    no_id = "WARNING client-sse-last-event-id: Client did not send Last-Event-ID header on reconnection."
    assert not run.only_late(outcome(warnings=2, messages=(LATE, no_id)))
    assert not run.only_late(outcome(warnings=1, messages=(no_id,)))
    assert not run.only_late(outcome(ran=False, warnings=1, messages=(LATE,)))
    assert not run.only_late(outcome(passed=3))
