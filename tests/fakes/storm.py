"""Agent CLIs that breed processes (issue 13 item 5), as tiny shell scripts named `opencode`.

Each answers `--version` like the real CLI, writes the mark aidd gave it
(`$AIDD_SUPERVISOR_ID`) to `$STORM_DIR/mark-<attempt>`, then misbehaves. `STORM_DIR` is set by
the test in aidd's environment, so every process of the run (agent, helpers, daemons) carries
it too: `left_running` finds them wherever they went, whatever aidd did to their mark.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

TAG = "STORM_DIR"


def _head(on_version: str = "") -> str:
    return f"""#!/bin/sh
case "$1" in --version) {on_version} echo "1.18.33"; exit 0 ;; esac
echo "$AIDD_SUPERVISOR_ID" > "$STORM_DIR/mark-$AIDD_ITERATION"
"""


# Ignores SIGTERM (so do its children: an ignored signal stays ignored across exec), then forks
# for ever without a byte of output: ended by the idle kill, --timeout or a signal to aidd.
FORK_STORM = _head() + """trap "" TERM
echo READY
while :; do sleep 1002 & sleep 0.005; done
"""

# Leaves a daemon (own session) that answers SIGTERM by forking a child, then exits 0.
FORKS_ON_TERM = _head() + """setsid sh -c 'trap "sleep 1004 & exit 0" TERM
    while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 &
echo READY
"""

# `--version` leaves a background sleep in its group and a setsid'd one; the run is quick.
VERSION_LEAVES_HELPERS = _head(
    "sleep 1005 </dev/null >/dev/null 2>&1 & setsid sleep 1006 </dev/null >/dev/null 2>&1 &"
) + "echo READY\n"


def install(bin_dir: Path, script: str) -> Path:
    """`script` as the `opencode` found first on PATH through `bin_dir`."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    cli = bin_dir / "opencode"
    cli.write_text(script)
    cli.chmod(0o755)
    return bin_dir


def marks(storm_dir: Path) -> list[str]:
    """The marks aidd gave the agent, one per attempt."""
    return [p.read_text().strip() for p in sorted(storm_dir.glob("mark-*"))]


def left_running(key: str, value: str) -> list[int]:
    """Pids of running (non-zombie) processes whose environment holds key=value (/proc)."""
    needle = f"{key}={value}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if state not in ("Z", "X"):
                found.append(int(entry.name))
    return found


def wait_until_none(key: str, value: str, limit_s: float) -> list[int]:
    """Poll until nothing carries key=value or `limit_s` passed; returns what is left."""
    deadline = time.monotonic() + limit_s
    while (left := left_running(key, value)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def kill_everything(key: str, value: str) -> None:
    """Clean up after a failed test: freeze, then kill, until none is left."""
    for _ in range(20):
        pids = left_running(key, value)
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
        time.sleep(0.1)
