"""Record what `<cli> export <id>` prints (opencode, kilo), which aidd reads to tell whether a
conversation holds the prompt before it nudges (issue 17): `python -m tests.realcli.record_exports`.

Writes tests/fixtures/realcli/<cli>/early.export.json (the CLI interrupted as soon as
`session list` names its session, before it stored the prompt) and hang.export.json (the
prompt sent, the model silent). kilo stores the prompt seconds after it creates the session;
`early` is retried until the export shows no message (at most 4 times).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from aidd.agents.sessions import export_argv

from . import clis
from .flows import deliver, interrupt, launch, session_listing
from .mock_server import MockServer
from .observe import first_id
from .record import FIXTURES
from .scenario import Reply, ReplyKind, Scenario

PROMPT = "Create hello.txt with a greeting."


def export(cli: str, env: dict[str, str], cwd: Path, session: str) -> bytes:
    """`<cli> export <id>` exactly as aidd runs it: stdout only."""
    out = subprocess.run(export_argv(str(clis.binary(cli)), session), cwd=cwd, env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)
    return out.stdout


def interrupted_export(cli: str, *, after_request: bool) -> bytes | None:
    """Start the CLI on a hanging model, SIGINT it once its session is listed (or once the
    model got the request), and export that session."""
    box = clis.Sandbox.create()
    try:
        with MockServer(Scenario([Reply.of(ReplyKind.HANG)])) as mock:
            env = clis.cli_env(cli, mock.url, box.home)
            proc = launch(cli, [*clis.fresh_argv(cli), "--auto"], mock, box)
            deliver(proc, cli, PROMPT)
            session = _wait_session(cli, env, box, mock, after_request)
            interrupt(proc)
            proc.close()
            return None if session is None else export(cli, env, box.project, session)
    finally:
        box.remove()


def _wait_session(cli: str, env: dict[str, str], box: clis.Sandbox, mock: MockServer,
                  after_request: bool) -> str | None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if after_request and not mock.log.wait_for(1, 1):
            continue
        session = first_id(session_listing(cli, env, box.project))
        if session is not None:
            return session
    return None


def messages(raw: bytes) -> int:
    return len(json.loads(raw).get("messages", []))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", action="append", choices=("opencode", "kilo"))
    args = parser.parse_args(argv)
    for cli in args.cli or ("opencode", "kilo"):
        if clis.binary(cli) is None:
            print(f"record_exports: {cli} not installed under {clis.prefix()}", file=sys.stderr)
            return 2
        hang = interrupted_export(cli, after_request=True)
        early = None
        for _ in range(4):
            early = interrupted_export(cli, after_request=False)
            if early is not None and messages(early) == 0:
                break
        for name, raw in (("hang", hang), ("early", early)):
            if raw is not None:
                (FIXTURES / cli / f"{name}.export.json").write_bytes(raw)
            print(f"{cli} {name}: {None if raw is None else messages(raw)} messages", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
