"""The CLI found and tested, nesting, and root against claude's permission flag."""

from __future__ import annotations

from aidd.agents.hints import HINTS
from aidd.agents.registry import ADAPTERS
from aidd.doctor.agentcheck import check_cli, check_nested, check_root
from aidd.doctor.findings import Status
from aidd.errors import ExitCode

CLAUDE = ADAPTERS["claude-code"]
OPENCODE = ADAPTERS["opencode"]


def test_every_cli_of_the_registry_has_its_hints() -> None:
    assert set(HINTS) == set(ADAPTERS)


def test_a_missing_cli_fails_with_8_and_says_how_to_install_it() -> None:
    found = check_cli(CLAUDE, None, None)
    assert (found.status, found.code, found.blocks_run) == (Status.FAIL, ExitCode.CLI_ERROR, True)
    assert "claude" in found.detail
    assert "npm i -g @anthropic-ai/claude-code" in found.fix


def test_a_tested_version_is_ok_an_untested_or_unknown_one_a_warning() -> None:
    assert check_cli(OPENCODE, "/bin/opencode", "1.18.33").status is Status.OK
    untested = check_cli(OPENCODE, "/bin/opencode", "0.9.1")
    assert untested.status is Status.WARN
    assert "0.9.1" in untested.detail
    assert "1.18.x" in untested.detail
    assert check_cli(OPENCODE, "/bin/opencode", "unknown").status is Status.WARN


def test_nesting_variables_warn_naming_them() -> None:
    assert check_nested({"PATH": "/bin"}).status is Status.OK
    found = check_nested({"CLAUDECODE": "1", "AIDD_ITERATION": "3"})
    assert found.status is Status.WARN
    assert "CLAUDECODE, AIDD_ITERATION" in found.detail
    assert "unset CLAUDECODE AIDD_ITERATION" in found.fix
    assert check_nested({"CLAUDECODE": ""}).status is Status.OK  # empty: not set


def test_claude_as_root_needs_is_sandbox_exactly_1() -> None:
    for value in ("yes", "true", "0"):
        refused = check_root(CLAUDE, {"IS_SANDBOX": value}, euid=0)
        assert (refused.status, refused.code, refused.blocks_run) == (
            Status.FAIL, ExitCode.CLI_ERROR, True)
        assert f"IS_SANDBOX={value}" in refused.detail
    assert "IS_SANDBOX unset" in check_root(CLAUDE, {}, euid=0).detail
    assert "set IS_SANDBOX=1" in check_root(CLAUDE, {}, euid=0).fix
    assert check_root(CLAUDE, {"IS_SANDBOX": "1"}, euid=0).status is Status.OK


def test_a_normal_user_and_the_other_clis_as_root_are_ok() -> None:
    assert check_root(CLAUDE, {}, euid=1000).status is Status.OK
    assert check_root(OPENCODE, {}, euid=0).status is Status.OK
