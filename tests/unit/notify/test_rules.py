"""Which events a target hears about and the words it gets: each trigger from its event, the
pause threshold per target, and the gate's streak counted by attempt number."""

from __future__ import annotations

from typing import Any

from aidd.notify.rules import Rules, duration, job
from aidd.notify.targets import Target, TargetKind, Trigger

TS = "2026-11-22T23:00:00.000Z"


def _event(event: str, /, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "ts": TS, "run": "20261122T220000Z-1", "event": event, **fields}


ALL = Target(TargetKind.WEBHOOK, "https://x.example/hook")
ENDS = Target(TargetKind.NTFY, "https://ntfy.example/t", events=frozenset({Trigger.RUN_END}))


def _heard(rules: Rules, record: dict[str, Any]) -> list[tuple[Target, str, str]]:
    return [(t, n.trigger.value, n.title) for t, n in rules.notes(record)]


def test_each_trigger_from_its_event() -> None:
    rules = Rules([ALL], "shop")
    cases = [
        (_event("run_end", exit_code=73, reason="completed", iterations=4, failures=1,
                duration_s=7260.5, cost_usd=4.2), "run_end", "run ended: completed (exit 73)",
         "4 iterations, 1 failed, in 2h 1m; $4.20"),
        (_event("completion", state="confirmed", features=12, failing=0, blocking_todos=0),
         "completed", "project complete", "all 12 features pass; completion confirmed"),
        (_event("stuck", iterations=[4, 5, 6]), "stuck", "stuck",
         "attempts 4, 5, 6 changed nothing; the phase ended"),
        (_event("budget_exhausted", budget="cost_usd", limit=5.0, used=5.02),
         "budget_exhausted", "budget exhausted", "cost_usd: 5.02 used of 5.0"),
        (_event("failure_threshold", failures=3, result=72), "quit_on_abort", "quit on abort",
         "3 failed attempts in a row; exiting with 72"),
        (_event("rate_limit_sleep", number=3, until="2026-11-23T00:30:00+01:00",
                seconds=5400.0, source="retry_after", message=None), "pause",
         "paused for 1h 30m", "rate limited; resumes at "),
        (_event("pace", number=3, utilization=0.9, window="five_hour",
                until="2026-11-23T01:00:00Z", seconds=7200), "pause", "paused for 2h 0m",
         "pacing: five_hour window at 0.9; resumes at 2026-11-23 "),
        (_event("kill", number=2, reason="idle", pids=[{"pid": 1, "name": "x"}],
                escalated=False), "idle_kill", "agent killed after silence",
         "attempt 2: no output for the idle timeout; 1 processes killed"),
        (_event("kill", number=4, reason="hung", pids=[{"pid": 1, "name": "x"}],
                escalated=False, unanswered_nudges=3), "idle_kill", "agent killed as hung",
         "attempt 4: 3 nudges answered by no work; 1 processes killed"),
    ]
    for record, trigger, title, message in cases:
        ((target, note),) = rules.notes(record)
        assert (target, note.trigger.value, note.title) == (ALL, trigger, f"aidd shop: {title}")
        assert note.message.startswith(message), (note.message, message)


def test_other_events_and_other_states_are_not_told() -> None:
    rules = Rules([ALL], "shop")
    for record in (_event("completion", state="pending"), _event("completion", state="held"),
                   _event("kill", reason="timeout"), _event("iteration_end", number=1),
                   _event("warning", message="x", file=None), _event("notify_failed")):
        assert rules.notes(record) == []


def test_a_target_hears_only_its_events() -> None:
    rules = Rules([ALL, ENDS], "shop")
    assert [t for t, _ in rules.notes(_event("stuck", iterations=[1]))] == [ALL]
    assert [t for t, _ in rules.notes(_event("run_end", reason="done"))] == [ALL, ENDS]


def test_a_pause_is_told_when_longer_than_the_targets_minutes() -> None:
    short = Target(TargetKind.DESKTOP, min_pause_minutes=0)
    rules = Rules([ALL, short], "p")  # ALL: 30 minutes
    pause = _event("rate_limit_sleep", seconds=1800.0, until=TS)
    assert [t for t, _ in rules.notes(pause)] == [short]
    assert [t for t, _ in rules.notes({**pause, "seconds": 1800.5})] == [ALL, short]
    assert rules.notes({**pause, "seconds": 0}) == []


def _gate(number: int, new_failures: int, name: str = "pytest") -> dict[str, Any]:
    return _event("gate", number=number, name=name, ok=not new_failures, exit=0,
                  duration_s=1.0, new_failures=new_failures, known_failures=0,
                  new=[f"t::test_{i}" for i in range(new_failures)], timed_out=False, log="x")


def test_the_gate_is_told_once_when_red_n_attempts_in_a_row() -> None:
    two = Target(TargetKind.NTFY, "https://n.example/t", gate_red_attempts=2)
    rules = Rules([ALL, two], "p")  # ALL: 3 attempts
    heard = []
    # attempt 1 red (two commands, one red), 2 green, 3 red, 4 red, 5 red (a second red
    # command), 6 red, 7 green, 8 red
    for number, failures in ((1, 0), (1, 2), (2, 0), (3, 1), (4, 1), (5, 1), (5, 3), (6, 1),
                             (7, 0), (8, 1)):
        heard += [(number, t, n.title) for t, n in rules.notes(_gate(number, failures))]
    assert heard == [(4, two, "aidd p: gate red 2 attempts in a row"),
                     (5, ALL, "aidd p: gate red 3 attempts in a row")]


def test_a_gate_note_names_the_new_failures() -> None:
    rules = Rules([Target(TargetKind.DESKTOP, gate_red_attempts=1)], "p")
    ((_, note),) = rules.notes(_gate(4, 2))
    assert note.message == "attempt 4: pytest: 2 new failures (t::test_0, t::test_1)"


def test_the_job_and_envelope() -> None:
    rules = Rules([ALL], "shop")
    record = _event("stuck", iterations=[1, 2, 3])
    ((target, note),) = rules.notes(record)
    item = job(target, note, "/src/shop", "box")
    assert item == {
        "kind": "webhook", "url": "https://x.example/hook", "command": None, "cwd": "/src/shop",
        "title": "aidd shop: stuck", "message": note.message, "trigger": "stuck",
        "shown": "webhook https://x.example/…", "priority": "default", "tags": [],
        "body": {"source": "aidd", "trigger": "stuck", "title": "aidd shop: stuck",
                 "message": note.message, "text": f"aidd shop: stuck\n{note.message}",
                 "priority": "default", "tags": [],
                 "project": "/src/shop", "host": "box", "event": record}}


def test_the_end_of_a_failed_run_is_urgent_and_tagged_and_says_what_to_do() -> None:
    rules = Rules([ALL], "shop")
    health = {"verdict": "failed", "headline": "4 of 5 attempts failed",
              "reasons": [{"kind": "provider_error", "what": "…",
                           "next": "aidd --doctor --project-dir /src/shop"}]}
    ((_, failed),) = rules.notes(_event("run_end", reason="done", exit_code=0, iterations=5,
                                        failures=4, duration_s=60, health=health))
    assert (failed.priority, failed.tags) == ("high", ("failed",))
    assert failed.title == "aidd shop: run ended: done (exit 0), failed"
    assert failed.message.endswith("\n4 of 5 attempts failed\n"
                                   "next: aidd --doctor --project-dir /src/shop")
    body = job(ALL, failed, "/src/shop", "box")["body"]
    assert (body["priority"], body["tags"]) == ("high", ["failed"])
    ((_, good),) = rules.notes(_event("run_end", reason="done", exit_code=0, iterations=5,
                                      failures=0, duration_s=60,
                                      health={"verdict": "ok", "reasons": []}))
    assert (good.priority, good.tags, good.title) == ("default", (), "aidd shop: run ended: "
                                                      "done (exit 0)")


def test_durations_read_as_a_phone_shows_them() -> None:
    assert [duration(s) for s in (0.4, 59, 60, 3599, 3600, 90061)] == [
        "0s", "59s", "1m", "59m", "1h 0m", "25h 1m"]
