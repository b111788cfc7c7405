"""What a user is told to do about each CLI (`aidd --doctor`): how to install it, how to log
in, which variables betray a run inside another agent, and what the login probe adds to the
CLI's environment. Keyed by the registry's names (a test keeps the two in step)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CliHints:
    install: str  # the command that installs a tested version
    login: str  # the one-line fix for a refused login
    by_hand: str  # a headless try the user can run in the project
    probe_env: dict[str, str] = field(default_factory=dict)  # unless the user set them
    root_needs: tuple[str, str] | None = None  # (variable, value) the CLI wants as root


HINTS = {
    "opencode": CliHints("npm i -g opencode-ai@1.18", "run `opencode auth login`, or configure a "
                         "provider and its key in opencode.json", "echo 'say OK' | opencode run"),
    "kilocode": CliHints("npm i -g @kilocode/cli@7.7", "run `kilo auth login`, or configure a "
                         "provider and its key in kilo's config", "echo 'say OK' | kilo run"),
    # claude retries a refused key for ~3 minutes on its own (docs/real-clis.md); two retries
    # still let a subscription login refresh its token.
    "claude-code": CliHints("npm i -g @anthropic-ai/claude-code@2.1", "run `claude auth login`, "
                            "or set ANTHROPIC_API_KEY", "echo 'say OK' | claude --print",
                            probe_env={"CLAUDE_CODE_MAX_RETRIES": "2"},
                            root_needs=("IS_SANDBOX", "1")),
}

# Variables an agent CLI sets for the commands it runs: aidd started from there runs nested
# (claude sets CLAUDECODE and CLAUDE_CODE_ENTRYPOINT, opencode OPENCODE and AGENT, kilo KILO
# and AGENT, aidd its agents' AIDD_ITERATION).
NESTED_VARS = {
    "CLAUDECODE": "Claude Code",
    "CLAUDE_CODE_ENTRYPOINT": "Claude Code",
    "OPENCODE": "OpenCode",
    "KILO": "Kilo Code",
    "AGENT": "an agent CLI",
    "AIDD_ITERATION": "an agent of another aidd run",
}

# The tiny prompt that proves the CLI can reach its model: one short answer, no tool.
PROBE_PROMPT = "This is a connection test. Reply with the single word OK and do nothing else."
