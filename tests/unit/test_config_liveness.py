"""--liveness and --busy-timeout from every layer; the project's file may tighten them, not
loosen them (issue 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.errors import UsageError
from aidd.options import BY_NAME, OptionValueError, convert
from tests.unit.test_config_budget import _settings


def test_the_defaults_judge_by_signals_and_bound_busy_time_by_the_timeout(
        tmp_path: Path) -> None:
    settings = _settings(tmp_path, user="timeout: 1200\n")
    assert (settings.liveness, settings.busy_timeout, settings.busy_timeout_s) == (
        "signals", None, 1200)
    settings = _settings(tmp_path, environ={"AIDD_BUSY_TIMEOUT": "0", "AIDD_LIVENESS": "output"})
    assert (settings.liveness, settings.busy_timeout_s) == ("output", 0)


def test_a_bad_liveness_word_names_the_choices() -> None:
    with pytest.raises(OptionValueError, match="'cpu' is not one of signals, output"):
        convert(BY_NAME["liveness"], "cpu")


@pytest.mark.parametrize(("user", "project"), [
    ("", "busy-timeout: 7200"), ("busy-timeout: 600", "busy-timeout: 900"),
    ("", "busy-timeout: 0"), ("liveness: output", "liveness: signals"),
    ("", "max-nudges: 0"), ("", "max-nudges: 4"), ("max-nudges: 2", "max-nudges: 3")])
def test_the_project_may_not_loosen_liveness(tmp_path: Path, user: str, project: str) -> None:
    key = project.split(":")[0]
    with pytest.raises(UsageError, match=f"key '{key}: .*' loosens supervision"):
        _settings(tmp_path, user=user + "\n", project=project + "\n")
    trusted = _settings(tmp_path, user=f"{user}\ntrust-project-config: true\n",
                        project=project + "\n")
    assert getattr(trusted, key.replace("-", "_")) == convert(BY_NAME[key], project.split()[1])


def test_the_project_may_tighten_liveness(tmp_path: Path) -> None:
    settings = _settings(tmp_path, project="busy-timeout: 300\nliveness: output\n")
    assert (settings.busy_timeout_s, settings.liveness) == (300, "output")


def test_the_nudge_cap_defaults_to_3_and_the_project_may_lower_it(tmp_path: Path) -> None:
    """Issue 28: --max-nudges; 0 is no cap, which only the user may choose."""
    assert _settings(tmp_path).max_nudges == 3
    assert _settings(tmp_path, environ={"AIDD_MAX_NUDGES": "0"}).max_nudges == 0
    assert _settings(tmp_path, user="max-nudges: 5\n", project="max-nudges: 1\n").max_nudges == 1
