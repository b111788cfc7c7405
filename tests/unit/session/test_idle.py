"""The two-stage idle machine on a fake clock (SUP-20..22, SUP-35)."""

from __future__ import annotations

import pytest

from aidd.session.idle import IdleAction, IdleMonitor, IdlePolicy, IdleStage
from tests.fakes.clock import FakeClock


def run(policy: IdlePolicy, clock: FakeClock, until_s: float, step_s: float = 0.001,
        activity_at: tuple[float, ...] = ()) -> list[tuple[float, IdleAction]]:
    """Advance in `step_s` ticks; returns (elapsed, action) for every action taken."""
    start = clock.monotonic()
    monitor = IdleMonitor(policy, start)
    pending = sorted(activity_at)
    actions = []
    while clock.monotonic() - start < until_s:
        clock.advance(step_s)
        elapsed = round(clock.monotonic() - start, 6)
        while pending and pending[0] <= elapsed:
            pending.pop(0)
            monitor.activity(clock.monotonic())
        action = monitor.poll(clock.monotonic())
        if action is not IdleAction.NONE:
            actions.append((elapsed, action))
    return actions


def test_nudge_then_kill_at_their_deadlines(fake_clock: FakeClock) -> None:
    actions = run(IdlePolicy(nudge_s=1, idle_s=3), fake_clock, until_s=5)
    assert actions == [(pytest.approx(1.0, abs=0.002), IdleAction.NUDGE),
                       (pytest.approx(3.0, abs=0.002), IdleAction.KILL)]


def test_activity_after_the_nudge_restarts_stage_one(fake_clock: FakeClock) -> None:
    actions = run(IdlePolicy(nudge_s=1, idle_s=3), fake_clock, until_s=6, activity_at=(2.0,))
    assert [a for _, a in actions] == [IdleAction.NUDGE, IdleAction.NUDGE, IdleAction.KILL]
    assert actions[1][0] == pytest.approx(3.0, abs=0.002)
    assert actions[2][0] == pytest.approx(5.0, abs=0.002)


def test_output_every_800ms_is_never_nudged(fake_clock: FakeClock) -> None:
    ticks = tuple(0.8 * k for k in range(1, 20))
    assert run(IdlePolicy(nudge_s=1, idle_s=3), fake_clock, until_s=15, activity_at=ticks) == []


@pytest.mark.parametrize(
    ("nudge_s", "idle_s", "expected"),
    [
        (0, 3, [(3.0, IdleAction.KILL)]),  # nudge 0: no nudge
        (3, 3, [(3.0, IdleAction.KILL)]),  # nudge >= idle: nudge disabled
        (5, 3, [(3.0, IdleAction.KILL)]),
        (1, 0, []),  # idle 0: no idle supervision at all
        (0, 0, []),
    ],
)
def test_disabled_stages(fake_clock: FakeClock, nudge_s: float, idle_s: float,
                         expected: list[tuple[float, IdleAction]]) -> None:
    actions = run(IdlePolicy(nudge_s, idle_s), fake_clock, until_s=6, step_s=0.01)
    assert [(round(t, 1), a) for t, a in actions] == expected


def test_due_tracks_the_next_deadline(fake_clock: FakeClock) -> None:
    monitor = IdleMonitor(IdlePolicy(nudge_s=300, idle_s=900), 0.0)
    assert monitor.due() == 300
    assert monitor.poll(299.999) is IdleAction.NONE
    assert monitor.poll(300) is IdleAction.NUDGE
    assert monitor.stage is IdleStage.NUDGED
    assert monitor.due() == 900
    monitor.activity(450)
    assert (monitor.stage, monitor.due()) == (IdleStage.WATCHING, 750)
    assert monitor.silence(500) == 50
    assert IdleMonitor(IdlePolicy(300, 0), 0.0).due() is None


def test_after_the_kill_nothing_more(fake_clock: FakeClock) -> None:
    monitor = IdleMonitor(IdlePolicy(nudge_s=0, idle_s=1), 0.0)
    assert monitor.poll(1) is IdleAction.KILL
    assert monitor.poll(100) is IdleAction.NONE
    assert monitor.due() is None


@pytest.mark.parametrize(
    ("nudge_s", "idle_s", "grace"),
    [(300, 900, 30), (10, 900, 10), (0, 20, 20), (0, 900, 30), (0, 0, 30), (900, 900, 30)],
)
def test_linger_grace(nudge_s: float, idle_s: float, grace: float) -> None:
    assert IdlePolicy(nudge_s, idle_s).linger_grace() == grace


def test_work_after_the_nudge_delays_the_kill_but_earns_no_second_nudge(
        fake_clock: FakeClock) -> None:
    """Busy (issue 17) restarts the silence, not stage one: a relaunched CLI starting up is
    busy for seconds, and must not be nudged again instead of killed."""
    monitor = IdleMonitor(IdlePolicy(nudge_s=1, idle_s=3), 0.0)
    assert monitor.poll(1.0) is IdleAction.NUDGE
    monitor.busy(2.5)
    assert monitor.stage is IdleStage.NUDGED
    assert monitor.poll(5.4) is IdleAction.NONE
    assert monitor.poll(5.5) is IdleAction.KILL


# -- the nudge cap (issue 28) ----------------------------------------------------------------
def capped_run(max_nudges: int, replies_at: tuple[float, ...], work_at: tuple[float, ...] = (),
               until_s: float = 30) -> list[tuple[float, IdleAction]]:
    """Nudge after 1 s, kill after 5 s of silence; a line of text at each of `replies_at`, a
    tool call or file change at each of `work_at`."""
    monitor = IdleMonitor(IdlePolicy(nudge_s=1, idle_s=5, max_nudges=max_nudges), 0.0)
    actions = []
    for tick in range(1, int(until_s * 100) + 1):
        now = tick / 100
        if any(abs(now - t) < 1e-9 for t in replies_at):
            monitor.activity(now)
        if any(abs(now - t) < 1e-9 for t in work_at):
            monitor.activity(now)
            monitor.work()
        action = monitor.poll(now)
        if action is not IdleAction.NONE:
            actions.append((round(now, 2), action))
    return actions


def test_nudges_answered_with_text_only_end_in_a_hung_kill() -> None:
    """Each nudge gets a line of text 0.2 s later: the text restarts the silence, so without a
    cap this is nudged every 1.2 s until the wall clock; with 2 the third nudge is the kill."""
    replies = tuple(round(1.2 * k, 2) for k in range(1, 30))
    assert capped_run(2, replies) == [(1.0, IdleAction.NUDGE), (2.2, IdleAction.NUDGE),
                                      (3.4, IdleAction.HUNG)]
    assert [a for _, a in capped_run(0, replies)] == [IdleAction.NUDGE] * 25  # 0: no cap


def test_a_tool_call_between_nudges_starts_the_count_again() -> None:
    replies = (1.2, 2.4, 3.6, 4.8, 6.0, 7.2)
    nudges = [(1.0, IdleAction.NUDGE), (2.2, IdleAction.NUDGE), (3.4, IdleAction.NUDGE)]
    assert capped_run(3, replies) == [*nudges, (4.6, IdleAction.HUNG)]
    assert capped_run(3, replies, work_at=(3.6,)) == [
        *nudges, (4.6, IdleAction.NUDGE), (5.8, IdleAction.NUDGE), (7.0, IdleAction.NUDGE),
        (8.2, IdleAction.HUNG)]


def test_silence_after_the_last_nudge_is_still_the_idle_kill() -> None:
    """The cap decides at a nudge's due time; an agent silent after the last nudge is killed
    at --idle-timeout, as before, with its unanswered nudges counted."""
    monitor = IdleMonitor(IdlePolicy(nudge_s=1, idle_s=5, max_nudges=1), 0.0)
    assert monitor.poll(1.0) is IdleAction.NUDGE
    assert monitor.poll(4.9) is IdleAction.NONE
    assert monitor.poll(5.0) is IdleAction.KILL
    assert monitor.unanswered == 1


def test_the_cap_needs_a_nudge() -> None:
    monitor = IdleMonitor(IdlePolicy(nudge_s=0, idle_s=5, max_nudges=1), 0.0)
    assert monitor.poll(5.0) is IdleAction.KILL
    assert monitor.unanswered == 0
