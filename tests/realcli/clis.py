"""How to launch each real CLI against the mock: binary lookup, argv (ADP-10), env, config.

Everything points at loopback; HOME is a throwaway directory; telemetry, sharing, update checks,
model-catalogue fetches and default plugin installs are off.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_PREFIX = REPO / ".realcli"
CLIS = ("claude", "opencode", "kilo")
MOCK_PROVIDER = "mock"
MOCK_MODEL = "mock-model"
FAKE_KEY = "sk-mock-0000"  # never a real credential; the mock strips it from its records


def prefix() -> Path:
    return Path(os.environ.get("AIDD_REALCLI_PREFIX") or DEFAULT_PREFIX)


def binary(cli: str) -> Path | None:
    """The CLI installed by .ci/install-clis.sh, or None."""
    path = prefix() / "node_modules" / ".bin" / cli
    return path if path.exists() and os.access(path, os.X_OK) else None


def fresh_argv(cli: str, model: str | None = None) -> list[str]:
    """ADP-10's fresh attempt, with the binary as an absolute path."""
    exe = str(binary(cli) or cli)
    if cli == "claude":
        argv = [
            exe,
            "--print",
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
            "--no-session-persistence",
            "--input-format",
            "stream-json",
        ]
    else:
        argv = [exe, "run", "--format", "json"]
    return argv + (["--model", model] if model else [])


def relaunch_argv(cli: str, session_id: str, model: str | None = None) -> list[str]:
    """ADP-10's nudge relaunch (opencode and kilo only)."""
    exe = str(binary(cli) or cli)
    return [exe, "run", "--format", "json", "--session", session_id] + (
        ["--model", model] if model else []
    )


def claude_user_line(text: str) -> bytes:
    """One stream-json user message, as ADP-22 writes it to claude's stdin."""
    msg = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}
    return (json.dumps(msg) + "\n").encode()


def provider_config(base_url: str) -> dict[str, Any]:
    """opencode/kilo config: one OpenAI-compatible provider at the mock, nothing remote."""
    model = {
        "name": "Mock Model",
        "tool_call": True,
        "attachment": False,
        "reasoning": False,
        "temperature": True,
        "limit": {"context": 2_000_000, "output": 32_000},
    }
    return {
        "autoupdate": False,
        "share": "disabled",
        "model": f"{MOCK_PROVIDER}/{MOCK_MODEL}",
        "small_model": f"{MOCK_PROVIDER}/{MOCK_MODEL}",
        "enabled_providers": [MOCK_PROVIDER],
        "provider": {
            MOCK_PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {"baseURL": f"{base_url}/v1", "apiKey": FAKE_KEY},
                "models": {MOCK_MODEL: model},
            }
        },
    }


def _base_env(home: Path, base_url: str) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "TMPDIR": str(home / "tmp"),
        "NO_PROXY": "127.0.0.1,localhost",
        # opencode/kilo npm-install plugin packages into their config dirs on every run;
        # send that to the mock (404) instead of the public registry.
        "npm_config_registry": f"{base_url}/npm-registry/",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
    }
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def cli_env(cli: str, base_url: str, home: Path) -> dict[str, str]:
    """A hermetic environment (not aidd's: no inherited keys, no CLAUDECODE) for one CLI."""
    env = _base_env(home, base_url)
    if cli == "claude":
        return env | {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": FAKE_KEY,
            "IS_SANDBOX": "1",  # root: else --dangerously-skip-permissions is refused
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
    var = "OPENCODE" if cli == "opencode" else "KILO"
    flags = [
        "DISABLE_AUTOUPDATE",
        "DISABLE_SHARE",
        "DISABLE_MODELS_FETCH",
        "DISABLE_LSP_DOWNLOAD",
        "DISABLE_DEFAULT_PLUGINS",
    ]
    if cli == "kilo":
        flags += [
            "NO_DAEMON",
            "DISABLE_SESSION_INGEST",
            "DISABLE_PRESENCE",
            "DISABLE_CODEBASE_INDEXING",
        ]
        env["KILO_TELEMETRY_LEVEL"] = "off"
    return (
        env
        | {f"{var}_{f}": "1" for f in flags}
        | {f"{var}_CONFIG_CONTENT": json.dumps(provider_config(base_url))}
    )


@dataclass(frozen=True)
class Sandbox:
    """A throwaway HOME and project dir for one CLI run; `remove()` deletes both."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @classmethod
    def create(cls) -> Sandbox:
        root = Path(tempfile.mkdtemp(prefix="aidd-realcli-"))
        (root / "home").mkdir()
        (root / "project").mkdir()
        return cls(root)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
