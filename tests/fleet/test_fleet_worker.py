"""`aidd fleet worker --server HOST:PORT --slots N` as its own process ("another machine": its
own data dir) serving a fleet that `aidd fleet up --server` started and left to the workers."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.fleet.lab import Lab, max_overlap, working
from tests.waiting import wait_for

pytest.importorskip("temporalio", reason="the fleet extra is not installed")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]


def test_a_separate_worker_runs_the_fleet_at_most_slots_at_once(lab: Lab) -> None:
    lab.local_server()  # as a shared one would be
    address = lab.server_address()
    other = lab.machine("m2")
    worker = lab.start("worker", "--server", address, "--slots", "2", name="worker", env=other)
    projects = {f"w{i}": lab.project(f"w{i}", working(1.5)) for i in range(4)}
    res = lab.run("up", str(lab.fleet_file(projects)), "--server", address)
    assert res.code == 0, res.err
    assert res.out.splitlines()[-1] == "fleet lab: started; workers run it (aidd fleet worker)"

    def ended() -> bool:
        return {row["state"] for row in lab.status().values()} == {"done"}

    wait_for(ended, 90, "every project done")
    assert max_overlap(lab.spans(projects)) == 2  # the worker's slots, used and never passed
    logs = Path(other["XDG_DATA_HOME"]) / "aidd" / "fleet" / "logs" / "lab"
    assert sorted(p.name for p in logs.iterdir()) == [f"w{i}.log" for i in range(4)]
    assert not (lab.data_dir / "logs").exists()  # nothing ran in `up`'s process
    worker.send_signal(signal.SIGINT)
    assert worker.wait(60) == 0, lab.output("worker")
    assert "aidd fleet worker: 2 slots, task queue ready" in lab.output("worker")
