"""The local server left to itself overnight: `aidd fleet up` starts it again when it is gone,
on the same database and port, and that port is one no outgoing connection can take meanwhile
(below the kernel's ephemeral range)."""

from __future__ import annotations

import json
import os
import signal
import socket
from pathlib import Path

import psutil
import pytest

from aidd.fleet import server
from tests.fleet.lab import Lab, working
from tests.integration.runs import events
from tests.waiting import wait_for

pytest.importorskip("temporalio", reason="the fleet extra is not installed")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]


def _ephemeral() -> tuple[int, int]:
    low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    return int(low), int(high)


def _started(lab: Lab) -> dict[str, int]:
    lab.local_server()
    return dict(json.loads((lab.data_dir / "server.json").read_text()))


def test_the_local_servers_port_is_below_the_ephemeral_range_and_kept(lab: Lab) -> None:
    first = _started(lab)
    assert server.PORT_FLOOR <= first["port"] < _ephemeral()[0]
    assert lab.run("down").code == 0
    (lab.data_dir / "server.json").unlink()  # forgotten: the port comes from the data dir
    again = _started(lab)
    assert again["port"] == first["port"]
    assert again["pid"] != first["pid"]


def test_up_starts_its_killed_server_again_by_itself(lab: Lab) -> None:
    projects = {"s0": lab.project("s0", working(10))}
    # A heartbeat timeout longer than the restart: the run goes on, no retry.
    up = lab.start("up", str(lab.fleet_file(projects, heartbeat_timeout=20)))
    wait_for(lambda: lab.mark("s0", "start"), 60, "the agent started")
    address, pid = lab.server_address(), lab.server_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    # Nobody runs a command: `up` looks every 2 s and starts it again.
    wait_for(lambda: lab.server_pid() not in (None, pid) and psutil.pid_exists(
        lab.server_pid() or 0), 30, "the server started again")
    assert lab.server_address() == address
    assert up.wait(90) == 0, lab.output()
    assert f"aidd fleet: the local Temporal server was gone; started again at {address}" in \
        lab.output()
    row = lab.status()["s0"]
    assert (row["state"], row["exit_code"], row["attempt"]) == ("done", 0, 1)
    assert len(events(lab.root / "projects" / "s0", "run_start")) == 1  # resumed, not rerun


def test_a_server_back_on_another_port_gets_a_new_worker(lab: Lab) -> None:
    projects = {"m0": lab.project("m0", working(6), working(0))}
    up = lab.start("up", str(lab.fleet_file(projects, heartbeat_timeout=5)))
    wait_for(lambda: lab.mark("m0", "start"), 60, "the agent started")
    address, pid = lab.server_address(), lab.server_pid()
    assert pid is not None
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taker:
        taker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: _bound(taker, address), 10, "the old port taken by another program")
        taker.listen()
        assert up.wait(120) == 0, lab.output()
        moved = lab.server_address()
    assert moved != address
    out = lab.output()
    assert f"started again at {moved}" in out
    assert f"aidd fleet: connecting the worker to {moved}" in out
    row = lab.status()["m0"]
    assert (row["state"], row["exit_code"]) == ("done", 0)
    wait_for(lambda: not lab.leftovers(), 10, "no aidd or agent left")


def _bound(sock: socket.socket, address: str) -> bool:
    try:
        sock.bind(("127.0.0.1", int(address.rsplit(":", 1)[1])))
    except OSError:
        return False
    return True


def test_up_with_ui_serves_temporals_web_ui_on_loopback(lab: Lab) -> None:
    """Issue 30: `aidd fleet up --ui` starts the local server with its Web UI on 127.0.0.1 and
    prints its URL; the server keeps it when started again; a headless one is not changed."""
    import urllib.request

    projects = {"u0": lab.project("u0", working(1))}
    done = lab.run("up", "--ui", str(lab.fleet_file(projects)), timeout=90)
    assert done.code == 0, done.out + done.err
    state = json.loads((lab.data_dir / "server.json").read_text())
    url = f"http://127.0.0.1:{state['ui_port']}"
    assert f"Temporal's Web UI: {url}" in done.out
    with urllib.request.urlopen(url, timeout=30) as page:
        assert page.status == 200
    assert lab.run("down").code == 0
    lab.local_server()  # started again as `up` starts it: the Web UI comes back with it
    assert json.loads((lab.data_dir / "server.json").read_text())["ui_port"] == state["ui_port"]


def test_ui_on_a_headless_server_says_how_to_get_it(lab: Lab) -> None:
    lab.local_server()  # headless, as plain `up` starts it
    projects = {"h0": lab.project("h0", working(1))}
    done = lab.run("up", "--ui", str(lab.fleet_file(projects)), timeout=90)
    assert done.code == 1
    assert done.err == ("aidd: error: the local Temporal server runs without its Web UI: "
                        "aidd fleet down, then aidd fleet up --ui\n")
