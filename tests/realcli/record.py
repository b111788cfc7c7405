"""Record the real CLIs against the mock: `python -m tests.realcli.record [--cli C] [--case N]`.

Writes tests/fixtures/realcli/<cli>/<case>.{stdout,stderr,json-meta} (and .relaunch.* for the
opencode/kilo nudge relaunch). Needs the CLIs from .ci/install-clis.sh.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import clis, observe, prompts
from .cases import CASES, Action, Case
from .drive import CliProcess
from .flows import claude_interrupt_line, deliver, interrupt, launch, run_to_end, session_listing
from .mock_server import MockServer
from .recording import sha256_text
from .scenario import Scenario

FIXTURES = clis.REPO / "tests" / "fixtures" / "realcli"


def cli_version(cli: str) -> str:
    sandbox = clis.Sandbox.create()
    try:
        out = subprocess.run(
            [str(clis.binary(cli)), "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
            env=clis.cli_env(cli, "http://127.0.0.1:9", sandbox.home),
        )
        lines = [ln for ln in out.stdout.decode().splitlines() if ln.strip()]
        return lines[0].strip() if lines else "unknown"
    finally:
        sandbox.remove()


def nudge_flow(
    proc: CliProcess, cli: str, case: Case, mock: MockServer, sandbox: clis.Sandbox, out: Path
) -> dict[str, Any]:
    """ADP-30 after a silent model: claude gets a stdin line; opencode/kilo SIGINT + relaunch."""
    notes = _watch_silence(proc, case, mock)
    if cli == "claude":
        return notes | _nudge_claude(proc, case, mock)
    notes |= interrupt(proc)
    sid = notes["session_id_before_nudge"] or observe.session_id(proc.capture.bytes_of("stdout"))
    notes["session_id_source"] = "stdout" if sid else "session list"
    if sid is None:
        listing = session_listing(cli, clis.cli_env(cli, mock.url, sandbox.home), sandbox.project)
        (out / f"{case.name}.session-list.json").write_bytes(listing)
        sid = observe.first_id(listing)
        notes["session_id_from_list"] = sid
    if sid is None:
        return notes | {"relaunch": "impossible: no session id on stdout nor in session list"}
    return notes | _relaunch(cli, sid, case, mock, sandbox, out)


def _watch_silence(proc: CliProcess, case: Case, mock: MockServer) -> dict[str, Any]:
    """Wait for the first model turn, then watch `silence_s`: does the CLI act on its own?"""
    first = mock.log.wait_for(1, 60)
    before = len(proc.capture.bytes_of("stdout"))
    alive = proc.wait(case.silence_s) is None
    stdout = proc.capture.bytes_of("stdout")
    return {
        "first_request": first,
        "silence_s": case.silence_s,
        "alive_after_silence": alive,
        "stdout_bytes_during_silence": len(stdout) - before,
        "session_id_before_nudge": observe.session_id(stdout),
    }


def _nudge_claude(proc: CliProcess, case: Case, mock: MockServer) -> dict[str, Any]:
    if case.claude_interrupt:
        proc.write(claude_interrupt_line())
    proc.write(clis.claude_user_line(prompts.NUDGE))
    arrived = mock.log.wait_for(2, 10)
    if arrived and case.claude_interrupt:
        return {"nudge_request_arrived": True} | run_to_end(proc, "claude", 30, results=2)
    return {"nudge_request_arrived": arrived} | interrupt(proc)


def _relaunch(
    cli: str, sid: str, case: Case, mock: MockServer, sandbox: clis.Sandbox, out: Path
) -> dict[str, Any]:
    """ADP-10's relaunch argv with the nudge on stdin; its output goes to <case>.relaunch.*."""
    argv = clis.relaunch_argv(cli, sid)
    again = launch(cli, argv, mock, sandbox, case.pty)
    try:
        deliver(again, cli, prompts.NUDGE)
        result = run_to_end(again, cli, 60) | {"elapsed_s": again.elapsed()}
    finally:
        again.close()
    (out / f"{case.name}.relaunch.stdout").write_bytes(again.capture.bytes_of("stdout"))
    (out / f"{case.name}.relaunch.stderr").write_bytes(again.capture.bytes_of("stderr"))
    return {
        "relaunch": result,
        "relaunch_stdout_lines": observe.timeline(again.capture, "stdout"),
        "relaunch_argv": [Path(argv[0]).name, *argv[1:]],
    }


def record(cli: str, case: Case, version: str) -> dict[str, Any]:
    out = FIXTURES / cli
    out.mkdir(parents=True, exist_ok=True)
    sandbox = clis.Sandbox.create()
    argv = clis.fresh_argv(cli) + list(case.extra_args.get(cli, ()))
    try:
        with MockServer(Scenario(case.replies(sandbox.project))) as mock:
            proc = launch(cli, argv, mock, sandbox, case.pty, case.env_drop, case.env_add)
            try:
                deliver(proc, cli, case.prompt)
                if case.action is Action.RUN:
                    result = run_to_end(proc, cli, case.cap_s)
                else:
                    result = nudge_flow(proc, cli, case, mock, sandbox, out)
                result |= {
                    "duration_s": proc.elapsed(),
                    "first_stdout_s": proc.first_byte_s(),
                    "left_in_session_after_exit": proc.session_members(),
                }
            finally:
                proc.close()
            (out / f"{case.name}.stdout").write_bytes(proc.capture.bytes_of("stdout"))
            (out / f"{case.name}.stderr").write_bytes(proc.capture.bytes_of("stderr"))
            meta = _meta(cli, version, case, argv, sandbox, proc, mock) | {"result": result}
    finally:
        sandbox.remove()
    (out / f"{case.name}.json-meta").write_text(
        json.dumps(meta, indent=1, ensure_ascii=False) + "\n"
    )
    return meta


def _meta(
    cli: str,
    version: str,
    case: Case,
    argv: list[str],
    sandbox: clis.Sandbox,
    proc: CliProcess,
    mock: MockServer,
) -> dict[str, Any]:
    stdout = proc.capture.bytes_of("stdout")
    replies = case.replies(sandbox.project)
    return {
        "cli": cli,
        "version": version,
        "case": case.name,
        "argv": [Path(argv[0]).name, *argv[1:]],
        "stdin": "pipe",
        "env_dropped": list(case.env_drop),
        "env_added": case.env_add,
        "stdout_stderr": "two ptys (raw, 200x50)" if case.pty else "two pipes",
        "sandbox_root": str(sandbox.root),
        "scenario": [{"kind": r.kind.value, "retry_after_s": r.retry_after_s} for r in replies],
        "prompt_bytes": len(case.prompt.encode()),
        "prompt_sha256": sha256_text(case.prompt),
        "files_written": sorted(p.name for p in sandbox.project.iterdir()),
        "session_id": observe.session_id(stdout),
        "stdout_lines": observe.timeline(proc.capture, "stdout"),
        "stderr_lines": observe.timeline(proc.capture, "stderr"),
        "structured_errors": observe.retry_hints(stdout),
        "requests": observe.request_summary(mock, case.prompt),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", action="append", choices=clis.CLIS)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    args = parser.parse_args(argv)
    for cli in args.cli or clis.CLIS:
        if clis.binary(cli) is None:
            print(f"record: {cli} not installed under {clis.prefix()}", file=sys.stderr)
            return 2
        version = cli_version(cli)
        for name in args.case or CASES:
            if cli not in CASES[name].only:
                continue
            meta = record(cli, CASES[name], version)
            print(f"{cli} {name}: {json.dumps(meta['result'])[:300]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
