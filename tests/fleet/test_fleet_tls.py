"""A fleet on a server behind TLS, as Temporal Cloud is: the connection's TLS, client
certificate and API key come from Temporal's own client configuration (TEMPORAL_* variables, a
profile file); the key reaches the server and nowhere else (not aidd's runs, their agents, the
output or the logs). A TLS front (tests/fleet/tlsproxy.py) stands before the lab's dev server."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from tests.fleet.lab import Lab, working

pytest.importorskip("temporalio", reason="the fleet extra is not installed")
trustme = pytest.importorskip("trustme")
from tests.fleet.tlsproxy import credentials, tls_front  # noqa: E402  (needs trustme, hpack)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]


def _files_under(root: Path) -> str:
    """Every readable file's text under `root` (the project, the worker's logs)."""
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*")
                     if p.is_file() and not p.is_symlink())


def test_mtls_and_an_api_key_from_temporals_variables_run_a_fleet(lab: Lab) -> None:
    lab.local_server()  # the front's upstream
    ca = trustme.CA()
    mine = credentials(ca, lab.root / "certs")
    key = "aidd-test-" + secrets.token_hex(12)
    env = {**lab.env, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(mine.ca),
           "TEMPORAL_TLS_CLIENT_CERT_PATH": str(mine.cert),
           "TEMPORAL_TLS_CLIENT_KEY_PATH": str(mine.key), "TEMPORAL_API_KEY": key}
    shop = lab.project("shop", working(0.5))
    fleet = str(lab.fleet_file({"shop": shop}))
    with tls_front(lab.server_address(), ca, client_cert=True) as (front, seen):
        res = lab.run("up", fleet, "--server", front, "--worker", env=env, timeout=120)
        assert res.code == 0, res.out + res.err
        assert res.out.splitlines()[-1].startswith("shop  done ")
        status = lab.run("status", "--json", "--server", front, env=env)
        assert status.code == 0, status.err
        assert [(r["project"], r["state"]) for r in json.loads(status.out)] == [("shop", "done")]

        assert seen.clients
        assert all(c == (("email", "worker@aidd.test"),) for c in seen.clients)
        assert seen.authorization
        assert set(seen.authorization) == {f"Bearer {key}"}

        # The agent's environment holds no TEMPORAL_* variable (its record keeps them all).
        records = lab.fakes["shop"].records()
        assert records
        assert all(not any(k.startswith("TEMPORAL_") for k in r["env"])
                               for r in records)
        # The key is in no output, log or project file.
        for text in (res.out, res.err, status.out, status.err, _files_under(Path(shop["path"])),
                     _files_under(lab.data_dir / "logs")):
            assert key not in text


def test_a_server_behind_tls_refuses_a_plain_or_a_certless_client_in_one_line(lab: Lab) -> None:
    lab.local_server()
    ca = trustme.CA()
    mine = credentials(ca, lab.root / "certs")
    trusting = {**lab.env, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(mine.ca)}
    with tls_front(lab.server_address(), ca, client_cert=True) as (front, seen):
        for env in (lab.env, trusting):  # no TLS at all; TLS without the client certificate
            res = lab.run("status", "--server", front, env=env, timeout=90)
            assert res.code == 1, res.out + res.err
            lines = res.err.strip().splitlines()
            assert len(lines) == 1, res.err
            # The SDK's words vary with timing ("transport error; ConnectionReset" mostly,
            # "operation was canceled" on a loaded machine): one line with a reason.
            head = f"aidd: error: cannot connect to the Temporal server at {front}: "
            assert lines[0].startswith(head), lines[0]
            assert len(lines[0]) > len(head)
        assert seen.clients == []  # no handshake went through
        assert seen.authorization == []


def test_a_profile_file_names_the_server_namespace_and_tls(lab: Lab) -> None:
    lab.local_server()
    ca = trustme.CA()
    mine = credentials(ca, lab.root / "certs")
    with tls_front(lab.server_address(), ca, client_cert=True) as (front, seen):
        config = lab.root / "temporal.toml"
        config.write_text(
            f'[profile.night]\naddress = "{front}"\nnamespace = "default"\n'
            f'[profile.night.tls]\nserver_ca_cert_path = "{mine.ca}"\n'
            f'client_cert_path = "{mine.cert}"\nclient_key_path = "{mine.key}"\n')
        env = {**lab.env, "TEMPORAL_CONFIG_FILE": str(config)}
        res = lab.run("status", "--profile", "night", env=env)
        assert res.code == 0, res.out + res.err
        assert seen.clients == [(("email", "worker@aidd.test"),)] * len(seen.clients)
        assert seen.clients

        res = lab.run("status", "--profile", "day", env=env)
        assert res.code == 2
        assert res.err.strip() == (f"aidd: error: Temporal client configuration {config} "
                                   "(profile 'day'): Profile 'day' not found")
