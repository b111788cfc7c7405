"""The health verdict on a table of event logs, one per class of non-success: each class is
named in the reasons exactly once, with a next step naming the project, and a stuck run or a
run where most attempts failed is `failed`."""

from __future__ import annotations

from typing import Any

import pytest

from aidd.reports.health import Context, FeaturesLeft, Verdict, judge

RUN = "20261125T010000Z-4242"
DIR = "/srv/my shop"
WHERE = "--project-dir '/srv/my shop'"


def ev(event: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "ts": "2026-11-25T01:00:00.000Z", "run": RUN, "event": event, **fields}


def end_of(number: int, reason: str = "exit_status", outcome: str = "failure",
           result: int = 1) -> dict[str, Any]:
    return ev("iteration_end", number=number, result=result, outcome=outcome, reason=reason)


def ok(number: int) -> dict[str, Any]:
    return end_of(number, outcome="success", result=0)


def run(*middle: dict[str, Any], reason: str = "done", code: int = 0) -> list[dict[str, Any]]:
    return [ev("run_start"), *middle, ev("run_end", reason=reason, exit_code=code)]


FOUR_OK = (ok(1), ok(2), ok(3), ok(4))
# class -> (events, what the verdict must be)
TABLE: dict[str, tuple[list[dict[str, Any]], Verdict]] = {
    "provider_error": (run(*FOUR_OK, end_of(5, "provider_error", result=72)), Verdict.ATTENTION),
    "no_assistant": (run(*FOUR_OK, end_of(5, "no_assistant", result=70)), Verdict.ATTENTION),
    "no_work": (run(*FOUR_OK, end_of(5, "no_work", result=75)), Verdict.ATTENTION),
    "context_exhausted": (run(*FOUR_OK, end_of(5, "context_exhausted", result=76)),
                          Verdict.ATTENTION),
    "hung": (run(*FOUR_OK, end_of(5, "idle_timeout", result=71)), Verdict.ATTENTION),
    "wall_timeout": (run(*FOUR_OK, end_of(5, "wall_timeout", result=124)), Verdict.ATTENTION),
    "other_failures": (run(*FOUR_OK, end_of(5, "exit_status", result=2)), Verdict.ATTENTION),
    "nudges": (run(ev("nudge", number=1), ev("nudge", number=1), ev("nudge", number=2), ok(1),
                   ok(2)), Verdict.ATTENTION),
    "stuck": (run(ok(1), ok(2), ok(3), ev("stuck", iterations=[1, 2, 3])), Verdict.FAILED),
    "budget": (run(ok(1), ev("budget_exhausted", budget="cost_usd", used=3.25, limit=3),
                   reason="budget", code=9), Verdict.ATTENTION),
    "long_waits": (run(ok(1), ev("rate_limit_sleep", number=2, seconds=1500),
                       ev("pace", number=2, seconds=600), ok(2)), Verdict.ATTENTION),
    "gate_red": (run(ok(1), ev("gate", number=1, name="pytest", new_failures=2,
                               new=["t::a", "t::b", "t::c"], log=".automaker/x.gate.log")),
                 Verdict.ATTENTION),
    "checkpoints_off": (run(ev("checkpoint_failed", number=1, label="001",
                               error="git not found on PATH"), ok(1)), Verdict.ATTENTION),
    "quit_on_abort": (run(ok(1), ok(2), ok(3), end_of(4), end_of(5),
                          ev("failure_threshold", failures=2, result=1),
                          reason="quit_on_abort", code=1), Verdict.FAILED),
    "ended_fatal": (run(ok(1), ok(2), ok(3), reason="fatal", code=8), Verdict.FAILED),
    "run_died": ([ev("run_start"), ok(1)], Verdict.FAILED),
    "signal": (run(ok(1), ev("signal", name="SIGTERM"), reason="signal", code=124),
               Verdict.ATTENTION),
    "notify_failed": (run(ok(1), ev("notify_failed", target="webhook https://h/…",
                                    trigger="stuck", error="HTTP 500", tries=3)),
                      Verdict.ATTENTION),
    "findings_left": (run(ok(1), ev("remediation_cap", unfixed=2)), Verdict.ATTENTION),
    "set_aside": (run(ok(1), ok(2), ok(3), ok(4), ok(5),
                      ev("feature_set_aside", number=5, feature="cart", attempts=[3, 4, 5],
                         endings=["x"] * 3, limit=3)), Verdict.ATTENTION),
    "ended_set_aside": (run(ok(1), ok(2), ok(3), ev("feature_set_aside", number=3,
                                                     feature="cart", attempts=[1, 2, 3],
                                                     endings=["x"] * 3, limit=3),
                            reason="set_aside"), Verdict.FAILED),
}


@pytest.mark.parametrize("kind", sorted(TABLE))
def test_each_class_is_named_once_with_a_next_step(kind: str) -> None:
    events, expected = TABLE[kind]
    health = judge(events, DIR)
    kinds = [r.kind for r in health.reasons]
    assert kinds[0] == kind
    assert len(set(kinds)) == len(kinds)
    assert all(WHERE in r.next for r in health.reasons)
    assert health.verdict is expected
    assert health.line.startswith(expected.value + ": ")


def test_features_left_at_the_end_and_unreadable_events_are_classes_too() -> None:
    health = judge(run(ok(1)), DIR, Context(features=FeaturesLeft(1, 3),
                                            unread="over the size cap"))
    assert [r.kind for r in health.reasons] == ["events_unreadable", "features_left"]
    assert health.reasons[1].what == "1 of 3 features not done at the end"
    assert all(WHERE in r.next for r in health.reasons)
    assert judge(run(ok(1)), DIR, Context(features=FeaturesLeft(0, 3))).verdict is Verdict.OK


def test_a_good_run_is_ok() -> None:
    health = judge(run(*FOUR_OK, ev("nudge", number=2), ev("rate_limit_sleep", seconds=60),
                       ev("gate", number=4, name="pytest", new_failures=0)), DIR)
    assert (health.verdict, health.reasons, health.line) == (Verdict.OK, (), "ok")


def test_a_slot_s_red_worktree_gate_is_not_the_project_s_gate() -> None:
    """--parallel: a gate event tagged `slot` judged a branch in its worktree, which never
    entered the project; the project's gate (the merged result's) is green."""
    health = judge(run(*FOUR_OK, ev("gate", number=3, name="pytest", new_failures=0),
                       ev("gate", number=4, name="pytest", new_failures=1, new=["t::a"],
                          slot=2, feature="cart")), DIR)
    assert (health.verdict, health.reasons) == (Verdict.OK, ())


def test_most_attempts_failed_is_failed_and_each_kind_of_failure_is_listed_once() -> None:
    events = run(end_of(1, "provider_error", result=72), end_of(2, "provider_error", result=72),
                 ok(3), end_of(4, "provider_error", result=72), end_of(5, "no_work", result=75))
    health = judge(events, DIR)
    assert health.verdict is Verdict.FAILED
    assert health.headline == "4 of 5 attempts failed"
    assert [r.kind for r in health.reasons] == ["provider_error", "no_work"]
    assert health.reasons[0].what == ("3 of 5 attempts ended in a provider error (result 72): "
                                      "001, 002, 004")
    assert "aidd --doctor --project-dir '/srv/my shop'" in health.reasons[0].next
    assert ".automaker/iterations/005.log" in health.reasons[1].next


def test_half_failed_is_attention_and_rate_limits_and_budget_stops_do_not_count() -> None:
    events = run(ok(1), ev("iteration_end", number=2, result=74, outcome="rate_limited",
                           reason="rate_limited"),
                 end_of(3, "budget", result=9), end_of(4, "provider_error", result=72))
    assert judge(events, DIR).verdict is Verdict.ATTENTION


def test_a_running_run_has_not_died_and_the_failed_causes_come_first() -> None:
    events = [ev("run_start"), ok(1), ev("stuck", iterations=[1])]
    alive = judge(events, DIR, Context(running={RUN}))
    assert alive.headline == "stuck: attempts 001 changed nothing"
    health = judge([*events, ev("budget_exhausted", budget="tokens", used=10, limit=5)], DIR)
    assert [r.kind for r in health.reasons] == ["run_died", "stuck", "budget"]
    assert health.headline.startswith(f"run {RUN} has no run_end")


def test_forged_fields_are_ignored_and_shown_safely() -> None:
    events = run(ev("iteration_end", number="7", outcome=["failure"], reason={"x": 1}),
                 ev("gate", name="py\x1b[2Jtest", number=True, new_failures=10**30, new="x"),
                 ev("stuck", iterations="1,2"), ev("rate_limit_sleep", seconds=float("nan")))
    health = judge(events, DIR)
    assert health.verdict is Verdict.FAILED  # the stuck event still counts
    assert "\x1b" not in str(health.to_json())


def test_runs_that_died_are_one_reason_and_an_error_end_points_to_the_crash_log() -> None:
    other = {**ev("run_start"), "run": "20261125T020000Z-7"}
    health = judge([ev("run_start"), ok(1), other], DIR)
    assert [r.what for r in health.reasons] == [
        "2 runs (the last 20261125T020000Z-7) have no run_end: aidd was killed or its machine "
        "stopped"]
    (error,) = judge(run(ok(1), reason="error", code=1), DIR).reasons
    assert (error.kind, error.what) == ("ended_error", "run ended error (exit 1): aidd stopped "
                                                       "on an error")
    assert ".automaker/aidd-crash.log" in error.next
    assert WHERE in error.next
