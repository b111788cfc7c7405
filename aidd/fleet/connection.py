"""Where a fleet command connects: the local dev server, or a Temporal server named by `--server`
or `--profile`, with TLS, mTLS and API keys from Temporal's own client configuration (its TOML
profiles and `TEMPORAL_*` variables, read by the SDK's `envconfig` as the temporal CLI reads
them). The key and the client key never reach aidd's runs, output or logs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from temporalio.envconfig import ClientConfigProfile

from aidd.errors import UsageError

CREDENTIAL_PREFIX = "TEMPORAL_"  # Temporal's variables: kept from aidd runs and their agents
DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class Target:
    """A server to connect to: its address and namespace, and the options of `Client.connect`
    that may hold secrets (`api_key`, `tls`, `rpc_metadata`): never printed."""

    address: str
    namespace: str = DEFAULT_NAMESPACE
    options: Mapping[str, Any] = field(default_factory=dict, repr=False)


def remote(server: str | None, namespace: str | None, profile: str | None,
           environ: Mapping[str, str]) -> Target | None:
    """The remote server, or None for the local one (neither `--server` nor `--profile`: then
    Temporal's configuration is not read, the local dev server having no TLS).

    `--server` and `--namespace` win over the profile's address and namespace; TLS, the API key
    and gRPC metadata come from the profile (`--profile`, else TEMPORAL_PROFILE, else
    "default", of TEMPORAL_CONFIG_FILE or ~/.config/temporalio/temporal.toml) with the
    `TEMPORAL_*` variables over it. An API key alone turns TLS on (Temporal Cloud)."""
    if server is None and profile is None:
        return None
    named = environ.get("TEMPORAL_CONFIG_FILE")
    where = (f"Temporal client configuration{f' {named}' if named else ''}"
             f"{f' (profile {profile!r})' if profile else ''}")
    try:
        loaded = ClientConfigProfile.load(profile, override_env_vars=dict(environ))
        options: dict[str, Any] = dict(loaded.to_client_connect_config())
    except Exception as err:  # the SDK's: a bad TOML, a missing profile or certificate file
        raise UsageError(f"{where}: {_short(err)}") from None
    address = server or options.get("target_host")
    if not address:
        raise UsageError(f"{where} names no server address (set `address` in the profile, "
                         "TEMPORAL_ADDRESS, or --server HOST:PORT)")
    found = options.pop("namespace", None)
    options.pop("target_host", None)
    return Target(address, namespace or found or DEFAULT_NAMESPACE, options)


def without_credentials(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for aidd runs: no `TEMPORAL_*` variable (an API key, a client key's path
    or data), which the agent could read and nothing in aidd needs."""
    return {k: v for k, v in environ.items() if not k.startswith(CREDENTIAL_PREFIX)}


def unreachable(target: Target, err: BaseException) -> str:
    """One line for a failed connect, without the SDK's transport dump."""
    return f"cannot connect to the Temporal server at {target.address}: {_short(err)}"


def _short(err: BaseException) -> str:
    """The SDK's words in its error (its Rust transport's Debug text): the messages, the I/O
    error kinds and a certificate's fault, e.g. `transport error; ConnectionReset` (a TLS server
    asked in plain text) or `InvalidCertificate(UnknownIssuer)`."""
    text = str(err)
    said = [*re.findall(r'(?:message|error): "([^"]+)"', text),
            *re.findall(r"Invalid\w+\(\w+\)", text),
            *re.findall(r"Kind\((\w+)\)|kind: (\w+)", text)]
    words = [w if isinstance(w, str) else next(p for p in w if p) for w in said]
    if words:
        return "; ".join(w for w in dict.fromkeys(words) if w != "InvalidData")
    text = text.removeprefix("Failed client connect: ").splitlines()[0] if text else repr(err)
    return text if len(text) <= 300 else text[:297] + "..."
