"""The `.stop` watcher (SUP-90) asks the kernel only for names made or moved into
`.automaker/`, never for the writes, opens and reads aidd itself makes there at every event
(issue 33): each woke three of watchdog's threads. On Linux one thread reads them, and looks
for the file only when the name is `.stop`."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from aidd.project import stop
from aidd.project.stop import StopWatcher
from tests.waiting import wait_for

_NOISE = {"IN_ACCESS": 0x1, "IN_MODIFY": 0x2, "IN_ATTRIB": 0x4, "IN_CLOSE_WRITE": 0x8,
          "IN_CLOSE_NOWRITE": 0x10, "IN_OPEN": 0x20}
_WANTED = {"IN_MOVED_TO": 0x80, "IN_CREATE": 0x100}


def _masks(folder: Path) -> list[int]:
    """The masks of this process's inotify watches on `folder`, as the kernel lists them."""
    inode = format(folder.stat().st_ino, "x")
    found = []
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            text = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            fields = dict(f.split(":", 1) for f in line.split()[1:] if ":" in f)
            if line.startswith("inotify ") and fields.get("ino") == inode:
                found.append(int(fields["mask"], 16))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux")
@pytest.mark.parametrize("how", ["file", "rename", "folder", "link"])
def test_it_watches_names_made_only_and_notices_a_stop(tmp_path: Path, how: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stop, "POLL_S", 3600.0)  # only the observer may notice
    automaker = tmp_path / ".automaker"
    automaker.mkdir()
    noticed = threading.Event()
    watcher = StopWatcher(automaker / ".stop", noticed.set)
    looks: list[bool] = []
    present = watcher.present
    monkeypatch.setattr(watcher, "present", lambda: looks.append(present()) or looks[-1])
    watcher.start()
    try:
        wait_for(lambda: _masks(automaker), 10, "a watch on .automaker/")  # added on its thread
        masks = _masks(automaker)
        (automaker / "probe-0").touch()  # aidd's own names: not even a look
        (automaker / "probe-1").mkdir()
        os.rename(automaker / "probe-1", automaker / "probe-2")
        for mask in masks:
            assert not [name for name, bit in _NOISE.items() if mask & bit], hex(mask)
            assert all(mask & bit for bit in _WANTED.values()), hex(mask)
        if how == "file":
            (automaker / ".stop").write_text("now\n")
        elif how == "rename":  # as `aidd --stop` writes it
            (automaker / "tmp").write_text("now\n")
            os.rename(automaker / "tmp", automaker / ".stop")
        elif how == "folder":
            (automaker / ".stop").mkdir()
        else:
            (automaker / ".stop").symlink_to(automaker / "probe-0")
        assert noticed.wait(10), "the .stop was not noticed"
        assert looks == [True]
    finally:
        watcher.close()
