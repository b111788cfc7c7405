"""Benchmark `aidd watch` on a night of 10,000 attempts, in a real pseudo-terminal of 80x24.

    python bench/watch_bench.py [--repeat 5]

The project is `report_bench`'s (10,000 attempts as aidd writes them, 42,106 lines, made once
under `bench/.work/`). Each round starts a fresh `python -m aidd watch` in a pty and measures:

- open: from the start of the process to its first whole frame on the terminal;
- follow: from an event appended to events.jsonl to the screen showing it;
- idle CPU: the watch's user + system CPU over 5 s of a run that writes nothing, in % of a core;
- memory: its resident set after the first frame.

Floor of `open`: a bare python that reads events.jsonl and `json.loads` every line.
Targets (issue 30): open <= 1 s, follow <= 0.5 s, idle CPU <= 1 % of a core.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import statistics
import struct
import sys
import termios
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import Result, env_with_repo, print_results, round_robin, timed
from bench.report_bench import ATTEMPTS, FLOOR, cpu_seconds, make_project

OPEN_S, FOLLOW_S, IDLE_PCT = 1.0, 0.5, 1.0
IDLE_WINDOW_S = 5.0
FRAME_END = b"\x1b[J"  # the last bytes of every frame (aidd/watch/screen.py)


class Watched:
    """`aidd ARGS` (`watch`, `fleet watch`) in a pty of 80x24, its output read as it comes."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.started = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: the watch itself
            os.execvpe(sys.executable, [sys.executable, "-m", "aidd", *args],
                       env or env_with_repo())
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        self.pid, self.fd, self.seen = pid, fd, b""

    def until(self, marker: bytes, timeout: float = 30) -> float:
        """Seconds (perf_counter) when a frame holding `marker` was complete."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if select.select([self.fd], [], [], 0.01)[0]:
                self.seen += os.read(self.fd, 1 << 16)
                at = self.seen.rfind(marker)
                if at >= 0 and FRAME_END in self.seen[at:]:
                    return time.perf_counter()
        sys.exit(f"bench: the watch never showed {marker!r}")

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def drain(self, seconds: float) -> float:
        """Read what it draws for `seconds`, typing nothing: its CPU meanwhile, % of a core."""
        cpu, wall = self.cpu_s(), time.perf_counter()
        while time.perf_counter() < wall + seconds:
            if select.select([self.fd], [], [], 0.1)[0]:
                self.seen = os.read(self.fd, 1 << 16)
        return 100 * (self.cpu_s() - cpu) / (time.perf_counter() - wall)

    def close(self) -> None:
        os.write(self.fd, b"q")
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def one_round(project: Path, events: Path, samples: dict[str, list[float]], n: int) -> None:
    watch = Watched(["watch", "--project-dir", str(project)])
    try:
        samples["open"].append(watch.until(b"recent events") - watch.started)
        samples["open cpu"].append(watch.cpu_s())
        samples["rss"].append(watch.rss_mb())
        samples["idle"].append(watch.drain(IDLE_WINDOW_S))
        marker = f"bench-follow-{os.getpid()}-{n}"
        line = {"v": 1, "ts": "2026-01-01T00:00:00.000Z", "run": "x", "event": "warning",
                "message": marker}
        with events.open("a") as file:
            file.write(json.dumps(line) + "\n")
        written = time.perf_counter()
        samples["follow"].append(watch.until(marker.encode()) - written)
    finally:
        watch.close()


def run(quick: bool) -> list[Result]:
    """The rows for `bench/run.py`."""
    return results(measure(3 if quick else 5))


def measure(repeat: int) -> dict[str, list[float]]:
    project = make_project(ATTEMPTS)
    events = project / ".automaker" / "events.jsonl"
    pristine = events.read_bytes()
    samples: dict[str, list[float]] = {"open": [], "open cpu": [], "follow": [], "idle": [],
                                       "rss": []}
    floor = [sys.executable, "-c", FLOOR, str(events)]
    try:
        times = round_robin({"floor": lambda: timed(floor),
                             "floor cpu": lambda: cpu_seconds(floor, env_with_repo())}, repeat)
        for n in range(repeat):
            one_round(project, events, samples, n)
    finally:
        events.write_bytes(pristine)  # report_bench reuses the project
    samples["floor"], samples["floor cpu"] = times["floor"], times["floor cpu"]
    samples["lines"] = [float(pristine.count(b"\n"))]
    return samples


def results(s: dict[str, list[float]]) -> list[Result]:
    lines = f"{int(s['lines'][0]):,} event lines"
    return [
        Result(group="watch", case=f"`aidd watch` opens, {ATTEMPTS:,} attempts", samples=s["open"],
               floor="bare python: json.loads every line of events.jsonl",
               floor_samples=s["floor"], target=f"<= {OPEN_S:g} s",
               met=statistics.median(s["open"]) <= OPEN_S,
               note=f"{lines}; start to first whole frame, 80x24 pty"),
        Result(group="watch", case=f"`aidd watch` opens, {ATTEMPTS:,} attempts: CPU",
               samples=s["open cpu"], unit="s CPU", floor="the same bare python's CPU",
               floor_samples=s["floor cpu"], target=f"<= {OPEN_S:g} s",
               met=statistics.median(s["open cpu"]) <= OPEN_S,
               note="user + system CPU to the first frame: steadier than wall time on a "
                    f"loaded machine (load average {os.getloadavg()[0]:.1f} on "
                    f"{os.cpu_count()} cores here)"),
        Result(group="watch", case="`aidd watch` follows a new event", samples=s["follow"],
               target=f"<= {FOLLOW_S:g} s", met=max(s["follow"]) <= FOLLOW_S,
               note="appended line to the frame showing it; read from the last offset"),
        Result(group="watch", case="`aidd watch` idle CPU", samples=s["idle"], unit="% core",
               target=f"<= {IDLE_PCT:g} %", met=max(s["idle"]) <= IDLE_PCT,
               note=f"over {IDLE_WINDOW_S:g} s of a run writing nothing"),
        Result(group="watch", case="`aidd watch` memory (RSS)", samples=s["rss"], unit="MB"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    print_results(results(measure(parser.parse_args().repeat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
