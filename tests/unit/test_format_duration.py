"""The trailer's duration (SUP-96): Xs, Xm Ys or Xh Ym Zs; a quick attempt is never 0.0s."""

from __future__ import annotations

import pytest

from aidd.run.outcomes import format_duration


@pytest.mark.parametrize(("seconds", "text"), [
    (0.042, "0.04s"), (0.999, "1.00s"), (1.25, "1.2s"), (9.94, "9.9s"), (12.4, "12s"),
    (59.4, "59s"), (61, "1m 1s"), (3599, "59m 59s"), (3600, "1h 0m 0s"), (7322, "2h 2m 2s"),
])
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
