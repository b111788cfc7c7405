"""Ending + signals -> result, outcome, reason (EXIT-2, EXIT-3, EXIT-5, ADP-43)."""

from __future__ import annotations

import pytest

from aidd.agents.base import ErrorKind, ErrorSignal, Signals
from aidd.session.outcome import EndCause, Outcome, Reason, Verdict, classify

E, I, W, L, S = EndCause.EXITED, EndCause.IDLE, EndCause.WALL, EndCause.LINGER, EndCause.SIGNAL  # noqa: E741 - one-letter names keep the table readable


def signals(error: ErrorKind | None = None, assistant: bool = True, ok: bool = True) -> Signals:
    s = Signals(assistant_seen=assistant, last_turn_ok=ok)
    if error is not None:
        s.note_error(ErrorSignal(error, "msg"))
    return s


@pytest.mark.parametrize(
    ("cause", "status", "sig", "exit1", "expected"),
    [
        (E, 0, signals(), False, (0, Outcome.SUCCESS, Reason.EXIT_STATUS)),
        (E, 1, signals(), True, (0, Outcome.SUCCESS, Reason.EXIT1_SUCCESS)),
        (E, 1, signals(assistant=False), True, (0, Outcome.SUCCESS, Reason.EXIT1_SUCCESS)),
        (E, 1, signals(), False, (1, Outcome.FAILURE, Reason.EXIT_STATUS)),
        (E, 2, signals(), True, (2, Outcome.FAILURE, Reason.EXIT_STATUS)),
        (E, 139, signals(), False, (139, Outcome.FAILURE, Reason.EXIT_STATUS)),
        (E, 0, signals(assistant=False), False, (70, Outcome.FAILURE, Reason.NO_ASSISTANT)),
        (E, 1, signals(ErrorKind.PROVIDER), True, (72, Outcome.FAILURE, Reason.PROVIDER_ERROR)),
        (E, 0, signals(ErrorKind.NO_ASSISTANT), False,
         (70, Outcome.FAILURE, Reason.NO_ASSISTANT)),
        (E, 0, signals(ErrorKind.RATE_LIMIT), False,
         (74, Outcome.RATE_LIMITED, Reason.RATE_LIMITED)),
        (E, 1, signals(ErrorKind.FATAL), False, (8, Outcome.FATAL, Reason.FATAL)),
        # 74 > 124 > 71 > 72 > 70 > raw status
        (W, 143, signals(ErrorKind.RATE_LIMIT), False,
         (74, Outcome.RATE_LIMITED, Reason.RATE_LIMITED)),
        (W, 143, signals(ErrorKind.PROVIDER), False,
         (124, Outcome.FAILURE, Reason.WALL_TIMEOUT)),
        (I, 137, signals(ErrorKind.PROVIDER), False,
         (71, Outcome.FAILURE, Reason.IDLE_TIMEOUT)),
        (I, 143, signals(assistant=False), False, (71, Outcome.FAILURE, Reason.IDLE_TIMEOUT)),
        (L, 143, signals(), False, (0, Outcome.SUCCESS, Reason.LINGER)),
        (L, 143, signals(ok=False), False, (1, Outcome.FAILURE, Reason.LINGER)),
        (L, 143, signals(ErrorKind.PROVIDER, ok=False), True,
         (72, Outcome.FAILURE, Reason.PROVIDER_ERROR)),
        (S, 143, signals(ErrorKind.RATE_LIMIT), False, (124, Outcome.FAILURE, Reason.SIGNAL)),
        # 76: out of context or turns, whatever the status; a timeout still wins (issue 32)
        (E, 1, signals(ErrorKind.CONTEXT), True,
         (76, Outcome.FAILURE, Reason.CONTEXT_EXHAUSTED)),
        (L, 143, signals(ErrorKind.CONTEXT, ok=False), True,
         (76, Outcome.FAILURE, Reason.CONTEXT_EXHAUSTED)),
        (W, 143, signals(ErrorKind.CONTEXT), False, (124, Outcome.FAILURE, Reason.WALL_TIMEOUT)),
    ],
)
def test_classify(cause: EndCause, status: int, sig: Signals, exit1: bool,
                  expected: tuple[int, Outcome, Reason]) -> None:
    assert classify(cause, status, sig, exit1_success=exit1) == Verdict(*expected)


def test_most_important_error_is_kept() -> None:
    s = Signals()
    s.note_error(ErrorSignal(ErrorKind.NO_ASSISTANT, "a"))
    s.note_error(ErrorSignal(ErrorKind.RATE_LIMIT, "b"))
    s.note_error(ErrorSignal(ErrorKind.PROVIDER, "c"))
    assert s.error == ErrorSignal(ErrorKind.RATE_LIMIT, "b")
