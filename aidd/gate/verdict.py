"""A gate run judged against the run's baseline: only failures the baseline did not have block.

With a JUnit report on both sides, failures are compared test by test; otherwise command by
command (a command red at the baseline stays a known failure while it is red)."""

from __future__ import annotations

from dataclasses import dataclass

from aidd.gate.runner import CommandRun

SUMMARY_TESTS = 30  # new failing tests named in a summary


@dataclass(frozen=True)
class CommandVerdict:
    run: CommandRun
    new_failures: tuple[str, ...]
    known_failures: tuple[str, ...]


@dataclass(frozen=True)
class GateVerdict:
    number: int  # the attempt whose work it checked (its NNN.gate.log)
    commands: tuple[CommandVerdict, ...]

    @property
    def red(self) -> bool:
        """New failures: what blocks completion and goes into the next prompt."""
        return any(c.new_failures for c in self.commands)

    @property
    def new_failures(self) -> tuple[str, ...]:
        return tuple(f for c in self.commands for f in c.new_failures)

    @property
    def complete(self) -> bool:
        """Every command ran to its end (none cut short by a stop)."""
        return not any(c.run.cancelled for c in self.commands)

    def summary(self) -> str:
        """For the next prompt: each command with new failures, the new failing tests and the
        last lines of its output."""
        parts = []
        for verdict in self.commands:
            if not verdict.new_failures:
                continue
            run = verdict.run
            tests = [f for f in verdict.new_failures if f != _command_failure(run)]
            named = "" if run.command.name == run.command.run else f" ({run.command.name})"
            lines = [f"Command `{run.command.run}`{named} {run.why}."]
            if tests:
                lines.append(f"Newly failing tests ({len(tests)}):")
                lines.extend(f"- {name}" for name in tests[:SUMMARY_TESTS])
                if len(tests) > SUMMARY_TESTS:
                    lines.append(f"- … and {len(tests) - SUMMARY_TESTS} more")
            if run.tail:
                lines.append(f"Last {len(run.tail)} lines of its output:")
                lines.append("```")
                lines.extend(line.replace("```", "ʼʼʼ") for line in run.tail)
                lines.append("```")
            parts.append("\n".join(lines))
        return "\n\n".join(parts)


def judge(number: int, runs: tuple[CommandRun, ...],
          baseline: dict[str, CommandRun]) -> GateVerdict:
    return GateVerdict(number, tuple(_judge(run, baseline.get(run.command.name)) for run in runs))


def _judge(run: CommandRun, base: CommandRun | None) -> CommandVerdict:
    if run.ok or run.cancelled:
        return CommandVerdict(run, (), ())
    new: list[str] = []
    known: list[str] = []
    tests = run.failing or frozenset()
    if tests:
        if base is not None and base.failing is not None:
            new += sorted(tests - base.failing)
            known += sorted(tests & base.failing)
        elif base is not None and not base.ok:
            known += sorted(tests)  # red at the baseline, tests unknown then: all known
        else:
            new += sorted(tests)
    if not new and not (tests and run.exit != 0 and not run.timed_out):
        # A red command with no test to blame (a timeout, a build or lint step, a report
        # missing): new unless it was red the same way at the baseline.
        failure = _command_failure(run)
        same_at_base = base is not None and not base.ok and base.timed_out == run.timed_out
        (known if same_at_base else new).append(failure)
    return CommandVerdict(run, tuple(new), tuple(known))


def _command_failure(run: CommandRun) -> str:
    return f"{run.command.name}: {run.why}"


def baseline_of(runs: tuple[CommandRun, ...]) -> dict[str, CommandRun]:
    return {run.command.name: run for run in runs if not run.cancelled}
