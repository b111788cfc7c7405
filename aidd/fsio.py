"""Atomic whole-file writes inside the project (LAY-12): temp file in the same dir + rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

TMP_PREFIX = ".aidd-tmp-"


def write_atomic(path: Path, data: bytes | str, mode: int | None = None) -> None:
    """Replace `path` with `data` so a reader (or a crash) sees the old or the new file."""
    payload = data.encode() if isinstance(data, str) else data
    if mode is None:  # mkstemp creates 0600; keep the old file's mode, else an ordinary 0644
        try:
            mode = path.stat().st_mode & 0o7777
        except OSError:
            mode = 0o644
    fd, name = tempfile.mkstemp(prefix=TMP_PREFIX, dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.chmod(mode)
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def remove_stale_temps(*directories: Path) -> list[Path]:
    """Delete temp files an earlier, killed run left behind in `directories` (not recursive);
    returns what was deleted. Only call it while holding the project lock."""
    removed = []
    for directory in directories:
        with contextlib.suppress(OSError):
            for entry in directory.iterdir():
                if entry.name.startswith(TMP_PREFIX) and not entry.is_dir():
                    with contextlib.suppress(OSError):
                        entry.unlink()
                        removed.append(entry)
    return removed
