"""run/slots.StartTurns: one agent starts at a time; the next once the last has spoken, or
after the turn's bound when it never does."""

from __future__ import annotations

import threading
import time

from aidd.run.slots import StartTurns


def _take_in_thread(turns: StartTurns) -> threading.Event:
    taken = threading.Event()
    threading.Thread(target=lambda: (turns.take(), taken.set()), daemon=True).start()
    return taken


def test_the_next_start_waits_for_the_first_output() -> None:
    turns = StartTurns(turn_s=30.0)
    let_next = turns.take()
    taken = _take_in_thread(turns)
    assert not taken.wait(0.2)  # the first agent has not spoken
    let_next()
    assert taken.wait(5.0)
    let_next()  # said again at the attempt's end: no second release
    assert not _take_in_thread(turns).wait(0.2)


def test_a_silent_agent_holds_the_next_start_for_one_turn_at_most() -> None:
    turns = StartTurns(turn_s=0.3)
    turns.take()
    began = time.monotonic()
    assert _take_in_thread(turns).wait(5.0)
    assert time.monotonic() - began >= 0.25
