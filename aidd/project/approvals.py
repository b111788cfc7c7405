"""The user's approvals of project config files that make aidd run a command (issue 27 item 8).

A cloned repository's `.automaker/aidd.yaml` may declare a gate, which aidd would run with
/bin/sh before any agent. Such a file is a proposal until the user approves that exact file,
as direnv's `allow` works: `aidd --allow` records a hash of the file's real path and bytes in
the user's own data directory (never in the project); an edited file is a new proposal.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def data_home(environ: Mapping[str, str]) -> Path:
    """`$XDG_DATA_HOME/aidd`, else `~/.local/share/aidd`: the user's, never the project's."""
    base = Path(environ.get("XDG_DATA_HOME") or ".")
    if not base.is_absolute():  # the XDG spec: a relative value is to be ignored
        base = Path(environ.get("HOME") or Path.home()) / ".local" / "share"
    return base / "aidd"


def _record(environ: Mapping[str, str], config: Path, content: bytes) -> Path:
    import hashlib  # lazy: only a project config file is hashed; the import is 4 ms of a start

    digest = hashlib.sha256(os.path.realpath(config).encode("utf-8", "surrogateescape")
                            + b"\0" + content).hexdigest()
    return data_home(environ) / "approved" / digest


def is_approved(environ: Mapping[str, str], config: Path, content: bytes) -> bool:
    return _record(environ, config, content).is_file()


def approve(environ: Mapping[str, str], config: Path, content: bytes) -> Path:
    """Record the approval of `config` as it is now; returns the record's path."""
    from aidd.fsio import write_atomic  # lazy: fsio brings `secrets`, which --help never needs

    record = _record(environ, config, content)
    record.parent.mkdir(parents=True, exist_ok=True)  # the user's own directory: trusted
    write_atomic(record, f"{os.path.realpath(config)}\n", root=record.parent)
    return record
