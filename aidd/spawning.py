"""aidd's own children start one at a time, and never while a scope looks at them.

A child aidd starts is, until its `exec`, a copy of aidd: /proc shows aidd's command line and
aidd's environment, without the run's mark (session/orphans) its own environment gives it.
With `--parallel N`, an attempt ending on one thread scans aidd's children for orphans its
agent left (the subreaper adopts them) while another thread starts a `git` run or an agent;
seen in that window, the new child looked adopted and was killed (a checkpoint's `git add`
ended by SIGTERM under load). Every start of a child holds `LOCK` from fork until `Popen`
returns (after the `exec`), and every scan of aidd's children holds it while it reads them.

`Popen` returns once the exec began, not once it ended: for a moment after, /proc shows the
new program with an empty environment, no mark either (seen in CI: another slot's scan killed
a `git` run of the merge queue's, and a merge said "nothing new"; a program exec'd by
`setpriv` has that moment again). So each start also names its child here (`own`), and a
scan never takes a child aidd started for an adopted orphan, whatever /proc says of it.
"""

from __future__ import annotations

import threading
from collections.abc import Collection

LOCK = threading.Lock()
_OWN: set[int] = set()  # the children aidd started itself, until a scan finds them reaped


def own(pid: int) -> None:
    """Under LOCK, as `Popen` returns: `pid` is a child aidd started itself."""
    _OWN.add(pid)


def disown(pid: int) -> None:
    """Once its owner reaped it: the pid may be used again, by anything."""
    _OWN.discard(pid)


def is_own(pid: int) -> bool:
    return pid in _OWN


def owned(children: Collection[int]) -> frozenset[int]:
    """Under LOCK, with `children` aidd's children read under that same hold: those aidd
    started. The others named are forgotten (reaped since), so a pid used again is not."""
    _OWN.intersection_update(children)
    return frozenset(_OWN)
