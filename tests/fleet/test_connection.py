"""Which server a fleet command connects to, and with what: `--server`/`--profile` against
Temporal's client configuration (no server is started here)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="the fleet extra is not installed")

from aidd.errors import UsageError
from aidd.fleet.connection import Target, remote, unreachable, without_credentials

BARE = {"HOME": "/nonexistent"}  # no profile file, no TEMPORAL_* variable


def test_neither_server_nor_profile_is_the_local_server_whatever_temporal_says() -> None:
    assert remote(None, None, None, {**BARE, "TEMPORAL_API_KEY": "k",
                                     "TEMPORAL_ADDRESS": "far:7233"}) is None


def test_a_plain_server() -> None:
    assert remote("h:7233", None, None, BARE) == Target("h:7233", "default", {})
    assert remote("h:7233", "ns", None, BARE) == Target("h:7233", "ns", {})


def test_an_api_key_turns_tls_on_and_stays_out_of_the_repr() -> None:
    target = remote("acct.tmprl.cloud:7233", "ns.acct", None, {**BARE, "TEMPORAL_API_KEY": "k1"})
    assert target is not None
    assert dict(target.options) == {"api_key": "k1", "tls": True}
    assert "k1" not in repr(target)


def test_a_profile_gives_address_namespace_and_tls_and_flags_win(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\n")
    config = tmp_path / "temporal.toml"
    config.write_text('[profile.cloud]\naddress = "a.tmprl.cloud:7233"\nnamespace = "a.b"\n'
                      f'[profile.cloud.tls]\nserver_ca_cert_path = "{ca}"\n')
    env = {**BARE, "TEMPORAL_CONFIG_FILE": str(config)}
    target = remote(None, None, "cloud", env)
    assert target is not None
    assert (target.address, target.namespace) == ("a.tmprl.cloud:7233", "a.b")
    tls = target.options["tls"]
    assert tls.server_root_ca_cert == ca.read_bytes()
    flagged = remote("other:7233", "mine", "cloud", env)
    assert flagged is not None
    assert (flagged.address, flagged.namespace) == ("other:7233", "mine")


@pytest.mark.parametrize(("env", "profile", "said"), [
    ({}, "nope", "Temporal client configuration (profile 'nope'): Profile 'nope' not found"),
    ({"TEMPORAL_TLS_SERVER_CA_CERT_PATH": "/no/ca.pem"}, None,
     "Temporal client configuration: [Errno 2] No such file or directory: '/no/ca.pem'"),
])
def test_a_bad_configuration_is_one_usage_line(env: dict[str, str], profile: str | None,
                                                said: str) -> None:
    with pytest.raises(UsageError) as caught:
        remote("h:1" if profile is None else None, None, profile, {**BARE, **env})
    assert caught.value.message == said


def test_a_profile_without_an_address_says_how_to_give_one(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[profile.x]\nnamespace = "n"\n')
    with pytest.raises(UsageError, match=r"names no server address .*--server HOST:PORT"):
        remote(None, None, "x", {**BARE, "TEMPORAL_CONFIG_FILE": str(config)})


def test_aidd_runs_get_no_temporal_variable() -> None:
    env = {"PATH": "/bin", "TEMPORAL_API_KEY": "k", "TEMPORAL_TLS_CLIENT_KEY_DATA": "x",
           "AIDD_FLEET_SERVER": "h:1"}
    assert without_credentials(env) == {"PATH": "/bin", "AIDD_FLEET_SERVER": "h:1"}


def test_a_failed_connect_is_the_sdks_words_not_its_dump() -> None:
    err = RuntimeError('Failed client connect: Server connection error: tonic::transport::Error('
                       'Transport, ConnectError(Custom { kind: InvalidData, error: '
                       'InvalidCertificate(UnknownIssuer) }))')
    assert unreachable(Target("h:1"), err) == \
        "cannot connect to the Temporal server at h:1: InvalidCertificate(UnknownIssuer)"
