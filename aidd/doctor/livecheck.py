"""Can aidd tell a busy silent agent from a hung one here (issue 17 part 1)? The CPU of its
tree needs /proc's children lists; file changes need an inotify watch per directory."""

from __future__ import annotations

import os
from pathlib import Path

from aidd.config import Settings
from aidd.doctor.findings import Finding, ok, warn
from aidd.session import procfs

_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")


def check_liveness(settings: Settings, root: Path) -> Finding:
    if settings.liveness == "output":
        return ok("liveness", "output only (--liveness output): silence is idleness")
    if not procfs.children_known():
        return warn("liveness", "this system lists no process children in /proc: a silent "
                    "agent's CPU is not seen, only its file changes",
                    "use --liveness output to say so, or a Linux kernel with /proc children")
    limit = _watch_limit()
    dirs = _count_dirs(root, limit + 1) if limit is not None else 0
    if limit is not None and dirs > limit:
        return warn("liveness", f"the project has more than {limit} directories, the inotify "
                    "watch limit: file changes are not seen, only the CPU",
                    "raise fs.inotify.max_user_watches (sysctl), or ignore this")
    return ok("liveness", "CPU of the agent's processes and file changes are watched"
              + (f" ({dirs} directories)" if dirs else ""))


def _watch_limit() -> int | None:
    try:
        return int(_WATCHES.read_text().strip())
    except (OSError, ValueError):
        return None


def _count_dirs(root: Path, most: int) -> int:
    """Directories under `root`, links not followed, counting stops at `most`."""
    count = 0
    for _ in os.walk(root):  # links to directories are listed, not followed
        count += 1
        if count >= most:
            break
    return count
