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
