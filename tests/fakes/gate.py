"""A scripted validation gate for in-process loop tests: each call plays the next entry (the
last repeats), writing a line to the gate log it was given. No process."""

from __future__ import annotations

from dataclasses import dataclass, field

from aidd.gate.runner import CommandRun, GateRequest

# A command's play: its exit status and the failing tests of its JUnit report (None: no report).
Play = tuple[int, frozenset[str] | None]
GREEN: Play = (0, None)


def red(*tests: str) -> Play:
    return (1, frozenset(tests) if tests else None)


@dataclass
class FakeGate:
    plays: list[dict[str, Play]]  # per call: command name -> play (absent: green)
    requests: list[GateRequest] = field(default_factory=list)

    def __call__(self, req: GateRequest) -> tuple[CommandRun, ...]:
        play = self.plays[min(len(self.requests), len(self.plays) - 1)]
        self.requests.append(req)
        req.log.parent.mkdir(parents=True, exist_ok=True)
        with req.log.open("a") as log:
            log.write(f"fake gate call {len(self.requests)}\n")
        return tuple(
            CommandRun(command, exit, False, False, 1.5, (f"{command.name} said {exit}",),
                       failing)
            for command in req.commands
            for exit, failing in [play.get(command.name, GREEN)])

    @property
    def logs(self) -> list[str]:
        return [req.log.name for req in self.requests]
