"""A retry continues its project's run: the limits the fleet file gives aidd (`--max-iterations`
and the run's budgets) count across the run's attempts, so a retry gets what is left of them,
computed from the progress so far (the iterations ended but the one cut off, their cost and
tokens, the time since the first attempt started aidd). Without this a worker lost mid-run made
every retry run the whole `--max-iterations` again (issue 28: projects capped at 5 iterations
ran 7-9); now a 5-iteration project runs at most 5 plus the one cut off.

Only the fleet file's `args` are read (trusted): a limit set in a config file applies afresh to
each attempt. The progress comes from events.jsonl, which the agent can write: a retry's limit
is never looser than the fleet file's (a forged negative cost counts as 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from aidd.errors import ExitCode
from aidd.fleet.records import Progress
from aidd.options import BY_NAME, OptionValueError, convert

_BUDGET = ExitCode.BUDGET_EXHAUSTED  # a used-up budget ends the run as aidd's own would


@dataclass(frozen=True)
class Limit:
    """One of aidd's run limits, and how much of it the run's attempts used so far."""

    name: str  # the option, as in aidd.options
    used: Callable[[Progress, float], float]  # (progress, seconds since the first attempt)
    exit_code: int  # aidd's exit once it is used up
    whole: bool  # a whole number (iterations, tokens, seconds) or dollars


LIMITS = (
    # An iteration cut off by a signal (its worker lost) is done again: it does not count.
    Limit("max-iterations", lambda p, _s: p.ended - p.cut, 0, whole=True),
    Limit("max-cost-usd", lambda p, _s: max(0.0, p.cost_usd), _BUDGET, whole=False),
    Limit("max-tokens", lambda p, _s: p.tokens, _BUDGET, whole=True),
    Limit("max-wall-time", lambda _p, s: max(0.0, s), _BUDGET, whole=True),
)


@dataclass(frozen=True)
class Resumed:
    """aidd's args for this attempt; or, when a limit is used up, why no aidd runs and the
    exit aidd would have ended the run with (0: its iterations done, 9: a budget spent)."""

    args: list[str]
    spent: str = ""
    exit_code: int = 0


def resume_args(args: list[str], progress: Progress, elapsed_s: float) -> Resumed:
    """`args` with each limit they give replaced by what is left of it after `progress`."""
    for limit in LIMITS:
        flag = f"--{limit.name}"
        rest, given = _without(args, flag)
        try:
            total = float(convert(BY_NAME[limit.name], given)) if given is not None else 0.0
        except OptionValueError:  # aidd itself rejects it, in one line (exit 2)
            continue
        used = limit.used(progress, elapsed_s)
        if total <= 0 or used <= 0:  # not given, 0 = none, or nothing used: as it is
            continue
        left = total - used
        if left <= 0:
            return Resumed(args, f"{flag} {given} was used up by the run's earlier attempts: "
                                 "no aidd started", limit.exit_code)
        args = [*rest, flag, _amount(left, limit.whole)]
    return Resumed(args)


def _without(args: list[str], flag: str) -> tuple[list[str], str | None]:
    """`args` without `flag` (`--flag V` or `--flag=V`), and its last value (Click's)."""
    rest: list[str] = []
    value = None
    at = 0
    while at < len(args):
        arg = args[at]
        if arg == flag and at + 1 < len(args):
            value, at = args[at + 1], at + 2
            continue
        if arg.startswith(f"{flag}="):
            value = arg.removeprefix(f"{flag}=")
        else:
            rest.append(arg)
        at += 1
    return rest, value


def _amount(left: float, whole: bool) -> str:
    """Rounded up, never to 0 (which aidd reads as no limit at all)."""
    if whole:
        return str(math.ceil(left))
    return f"{math.ceil(left * 1e6) / 1e6:.6f}".rstrip("0").rstrip(".")
