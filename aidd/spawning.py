"""aidd's own children start one at a time, and never while a scope looks at them.

A child aidd starts is, until its `exec`, a copy of aidd: /proc shows aidd's command line and
aidd's environment, without the run's mark (session/orphans) its own environment gives it.
With `--parallel N`, an attempt ending on one thread scans aidd's children for orphans its
agent left (the subreaper adopts them) while another thread starts a `git` run or an agent;
seen in that window, the new child looked adopted and was killed (a checkpoint's `git add`
ended by SIGTERM under load). Every start of a child holds `LOCK` from fork until `Popen`
returns (after the `exec`), and every scan of aidd's children holds it while it reads them.
"""

from __future__ import annotations

import threading

LOCK = threading.Lock()
