"""REL-2 / LOG-4 with hostile output through a real aidd: a huge line with no newline, invalid
UTF-8, NUL bytes, `\\r`-only progress bars and 1 MiB of ANSI escapes reach `NNN.log` byte for
byte, and the run goes on to its next attempt."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from tests.reliability.harness import Counts, Job, corrupt_files, kill_all

pytestmark = pytest.mark.reliability

TORTURE_AGENT = Path(__file__).with_name("torture_agent.py")
MIB = 1024 * 1024


def payload(flood_mib: int) -> bytes:
    rng = random.Random(7)
    parts = [
        b"invalid utf-8: \xff\xfe\xc3\x28 \xed\xa0\x80 \xf0\x28\x8c\x28 end\n",
        b"nul bytes: \x00\x00 middle \x00 end\n\x00\x00\x00\n",
        b"".join(b"\rprogress %3d%% [" % i + b"#" * (i // 2) + b"]" for i in range(101)),
        b"\n",
        bytes(rng.randrange(256) for _ in range(64 * 1024)),  # raw noise, any byte
        b"\n",
        (b"\x1b[1;31mred\x1b[0m\x1b[2K\x1b[1G\x1b]0;title\x07\x1b[38;5;208mo\x1b[0m" * 20
         + b"\n") * (MIB // 1000),
        b"x" * (flood_mib * MIB),  # one line, no newline, last
    ]
    return b"".join(parts)


def agent_bytes(log: bytes) -> bytes:
    """LOG-4: drop aidd's lines (`[aidd`, `» `); what is left is the agent's output."""
    kept = [ln for ln in log.splitlines(keepends=True)
            if not ln.startswith((b"[aidd", "» ".encode()))]
    return b"".join(kept)


def test_hostile_output_reaches_the_log_intact(tmp_path: Path, counts: Counts) -> None:
    job = Job(tmp_path)
    data = payload(counts.flood_mib)
    source = job.base / "payload.bin"
    source.write_bytes(data)
    bin_dir = job.base / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "opencode"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{TORTURE_AGENT}" "{source}" "$@"\n')
    wrapper.chmod(0o755)
    try:
        done = job.run("--max-iterations", "2", "--no-clean", "--idle-timeout", "60",
                       bin_dir=bin_dir, timeout=300)
        assert done.code == 0, done.err
        first = (job.automaker / "iterations" / "001.log").read_bytes()
        got = agent_bytes(first)
        # LOG-3: the one byte aidd may add is a newline after a last line that had none
        assert got in (data, data + b"\n")
        assert got[: len(data)] == data
        ends = [e for e in job.events() if e["event"] == "iteration_end"]
        # no JSON events at all: "no assistant output" (ADP-43), a result, not a crash
        assert [e["result"] for e in ends] == [70, 70]
        assert ends[0]["bytes"] == len(data)
        second = (job.automaker / "iterations" / "002.log").read_bytes()
        assert b"second run\n" in second
        assert corrupt_files(job.automaker) == []
        json.loads((job.automaker / "aidd-state.json").read_text())
    finally:
        kill_all(job.leftovers())
