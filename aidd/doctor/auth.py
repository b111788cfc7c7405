"""Does the CLI get an answer from its model? One tiny prompt, run headless like an attempt
(same argv, environment and project directory), bounded and killed with its tree; the
adapter's own parser judges the output, so a refused login reads as it would in a run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

from aidd import __version__
from aidd.agents.base import Adapter, AgentContext, ErrorKind, Signals
from aidd.agents.hints import HINTS, PROBE_PROMPT
from aidd.agents.jsonlines import one_line, plain_text
from aidd.clock import Clock
from aidd.config import Settings
from aidd.doctor.findings import Finding, fail, ok, warn
from aidd.errors import ExitCode
from aidd.session.cliproc import run_cli
from aidd.session.orphans import child_environment

TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Probe:
    adapter: Adapter
    binary: str
    cwd: Path  # the project directory (its CLI config counts), else a scratch one
    timeout_s: float = TIMEOUT_S


def check_auth(settings: Settings, probe: Probe, clock: Clock) -> Finding:
    adapter = probe.adapter
    context = AgentContext(probe.cwd, 0, prompt_kind="doctor", aidd_version=__version__)
    base = child_environment(settings.environ)
    env = {**HINTS[adapter.name].probe_env, **adapter.environment(base, context)}
    argv = adapter.argv(probe.binary, settings.code_model or settings.model)
    started = clock.monotonic()
    out = run_cli(argv, env=env, timeout_s=probe.timeout_s, cwd=probe.cwd, stderr_too=True,
                  clock=clock, stdin=adapter.encode_prompt(PROBE_PROMPT))
    took = clock.monotonic() - started
    if out is None:
        return warn("auth", f"{adapter.binary} gave no answer to a test prompt within "
                    f"{probe.timeout_s:g} s, so its login is unknown",
                    f"try it by hand in the project: {_by_hand(adapter)}")
    return judge(adapter, out, took)


def judge(adapter: Adapter, out: bytes, took_s: float) -> Finding:
    """The verdict on the CLI's output to the test prompt, by its adapter's parser."""
    parser = adapter.new_parser(UTC)
    for line in out.splitlines():
        parser.line(line)
    signals = parser.signals
    error = signals.error
    name = adapter.binary
    if error is not None and error.kind is ErrorKind.FATAL:
        return fail("auth", f"{name} cannot work: {_said(error.message)}",
                    HINTS[adapter.name].login, ExitCode.CLI_ERROR, blocks_run=True)
    if error is not None and error.kind is ErrorKind.RATE_LIMIT:
        return warn("auth", f"{name} is logged in but rate-limited now: {_said(error.message)}",
                    "wait for the limit to reset; a run sleeps through it")
    if error is not None:
        return warn("auth", f"{name} reached no answer ({error.kind.value}): "
                    f"{_said(error.message)}", f"check the provider and model: {_by_hand(adapter)}")
    if signals.assistant_seen:
        return ok("auth", f"{name} answered a test prompt in {took_s:.1f} s{_model(signals)}")
    return warn("auth", f"{name} printed no answer: {_said(_last_line(out))}",
                f"try it by hand in the project: {_by_hand(adapter)}")


def _model(signals: Signals) -> str:
    return f" (model {signals.model})" if signals.model else ""


def _said(text: str) -> str:
    line = one_line(text).strip()
    return (line[:200] + "…") if len(line) > 200 else line or "(nothing)"


def _last_line(out: bytes) -> str:
    lines = [text for text in map(plain_text, out.splitlines()) if text]
    return lines[-1] if lines else ""


def _by_hand(adapter: Adapter) -> str:
    return HINTS[adapter.name].by_hand
