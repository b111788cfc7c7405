"""What a hostile repository plants where aidd reads or writes: a symlink or a hard link to a
file outside the project, or a FIFO that blocks whoever opens it."""

from __future__ import annotations

import os
from pathlib import Path


def plant(path: Path, kind: str, target: Path | None = None) -> Path:
    """`path` made a "symlink" or "hardlink" to `target`, or a "fifo"; parents are created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif target is None:
        raise ValueError(f"a {kind} needs a target")
    elif kind == "symlink":
        path.symlink_to(target)
    elif kind == "hardlink":
        os.link(target, path)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return path
