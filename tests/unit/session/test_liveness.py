"""The liveness states from their signals, on made-up readings and times (issue 17)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aidd.session.liveness import REPORT_AFTER_S, Probe, State, Vitals


@dataclass
class Readings:
    cpu: float | None = 0.0
    files: float | None = None
    tool: bool = False
    talking: bool = True
    lingering: bool = False
    reports: list[tuple[State, float]] = field(default_factory=list)

    def liveness(self, busy_timeout_s: float = 0) -> Vitals:
        probe = Probe(lambda: self.cpu, lambda: self.files, lambda: self.tool,
                      lambda: self.talking, lambda: self.lingering)
        return Vitals(probe, 100.0, busy_timeout_s,
                        lambda state, since: self.reports.append((state, since)))


def run_to(live: Vitals, readings: Readings, until: float, cpu_per_s: float = 0.0,
           start: float = 100.0) -> State:
    """Tick every 0.5 s from `start` to `until`, the tree using `cpu_per_s`."""
    state = live.state
    now = start
    while now <= until:
        if readings.cpu is not None:
            readings.cpu = (now - 100.0) * cpu_per_s
        state = live.tick(now)
        now += 0.5
    return state


def test_silence_in_a_conversation_is_waiting_and_without_one_hung() -> None:
    readings = Readings()
    assert run_to(readings.liveness(), readings, 103) is State.WAITING
    readings = Readings(talking=False)
    live = readings.liveness()
    assert run_to(live, readings, 103) is State.HUNG
    assert live.label() == "hung: no sign of life"


def test_output_is_active_and_restarts_the_judgement() -> None:
    readings = Readings()
    live = readings.liveness()
    run_to(live, readings, 103)
    live.output(103.2)
    assert live.tick(103.5) is State.ACTIVE  # no sample within a second of output
    assert live.due() == 104.2


def test_a_tree_using_cpu_is_busy_and_a_blip_is_not() -> None:
    readings = Readings()
    live = readings.liveness()
    assert run_to(live, readings, 104, cpu_per_s=0.5) is State.BUSY
    assert live.why == "its processes using 50% of a core"
    readings = Readings()
    assert run_to(readings.liveness(), readings, 104, cpu_per_s=0.05) is State.WAITING


def test_an_open_tool_call_is_busy_only_while_something_runs() -> None:
    readings = Readings(tool=True)
    live = readings.liveness()
    assert run_to(live, readings, 104) is State.HUNG
    assert live.why == "a tool call in flight, but nothing runs"
    readings = Readings(tool=True)
    live = readings.liveness()
    assert run_to(live, readings, 104, cpu_per_s=1.0) is State.BUSY
    assert live.why.startswith("a tool call in flight, its processes using")


def test_files_changing_are_busy_for_a_few_seconds() -> None:
    readings = Readings(files=101.5)
    live = readings.liveness()
    assert run_to(live, readings, 103) is State.BUSY
    assert live.why == "files changing"
    assert run_to(live, readings, 106, start=103.5) is State.WAITING
    readings = Readings(files=99.0)  # before the attempt: not its work
    assert run_to(readings.liveness(), readings, 101) is State.WAITING


def test_busy_past_the_busy_timeout_is_hung_until_output() -> None:
    readings = Readings()
    live = readings.liveness(busy_timeout_s=5)
    assert run_to(live, readings, 105, cpu_per_s=1.0) is State.BUSY
    assert run_to(live, readings, 108, cpu_per_s=1.0, start=105.5) is State.HUNG
    assert "past --busy-timeout" in live.why
    live.output(108.5)
    assert run_to(live, readings, 111, cpu_per_s=1.0, start=109) is State.BUSY


def test_lingering_wins() -> None:
    readings = Readings(lingering=True)
    assert run_to(readings.liveness(), readings, 102, cpu_per_s=1.0) is State.LINGERING


def test_a_state_is_reported_once_it_has_lasted() -> None:
    readings = Readings()
    live = readings.liveness()
    run_to(live, readings, 100 + REPORT_AFTER_S + 2)
    assert readings.reports == [(State.WAITING, 1.0)]  # active for 1 s: not worth an event
    live.output(108.0)  # nor is a short burst of output
    run_to(live, readings, 112, start=108.5)
    assert readings.reports == [(State.WAITING, 1.0)]
    live.output(112.0)
    run_to(live, readings, 120, cpu_per_s=1.0, start=112.5)
    assert readings.reports == [(State.WAITING, 1.0), (State.BUSY, 14.0)]


def test_an_unknown_cpu_leaves_the_other_signals() -> None:
    readings = Readings(cpu=None, files=102.0)
    assert run_to(readings.liveness(), readings, 103) is State.BUSY


def test_a_decision_gets_a_fresh_sample() -> None:
    """Samples drift a little later each second; a nudge due between two must not be decided
    on the older one (found when a nudge came 0.3 ms before the sample that saw the CPU)."""
    readings = Readings()
    live = readings.liveness()
    readings.cpu = 0.0
    assert live.tick(101.0003) is State.WAITING  # the first sample: no share yet
    readings.cpu = 0.9
    assert live.tick(102.0) is State.WAITING  # the next sample is due at 102.0003
    assert live.tick(102.0, fresh=True) is State.BUSY
