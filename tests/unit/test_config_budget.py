"""Budget and pacing settings from every layer: the converters' one-line errors, config keys and
AIDD_* variables, and a project file that may lower the user's budgets but not raise them."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.config import Actions, Settings, load_settings
from aidd.errors import UsageError
from aidd.options import BY_NAME, OptionValueError, convert


def _settings(tmp_path: Path, *, user: str = "", project: str = "",
              environ: dict[str, str] | None = None) -> Settings:
    home = tmp_path / "home"
    if user:
        (home / ".config" / "aidd").mkdir(parents=True, exist_ok=True)
        (home / ".config" / "aidd" / "config.yaml").write_text(user)
    root = tmp_path / "proj"
    (root / ".automaker").mkdir(parents=True, exist_ok=True)
    if project:
        (root / ".automaker" / "aidd.yaml").write_text(project)
    return load_settings({"project-dir": root}, Actions(), {"HOME": str(home), **(environ or {})},
                         cwd=tmp_path)


@pytest.mark.parametrize(("raw", "seconds"), [
    ("8h", 28800), ("90m", 5400), ("1h30m", 5400), ("45s", 45), ("2d", 172800), ("3600", 3600),
    (7200, 7200), ("0", 0), (" 10M ", 600)])
def test_durations(raw: object, seconds: int) -> None:
    assert convert(BY_NAME["max-wall-time"], raw) == seconds


@pytest.mark.parametrize("raw", ["1h30", "8x", "", "h", "-5", True, 1.5, "99999999999"])
def test_bad_durations(raw: object) -> None:
    with pytest.raises(OptionValueError, match=r"duration|longer than"):
        convert(BY_NAME["max-wall-time"], raw)


@pytest.mark.parametrize(("raw", "usd"), [("5", 5.0), ("2.50", 2.5), (0.5, 0.5), (3, 3.0)])
def test_amounts(raw: object, usd: float) -> None:
    assert convert(BY_NAME["max-cost-usd"], raw) == usd


@pytest.mark.parametrize("raw", ["-1", "1e3", "$5", "2.", float("nan"), float("inf"), True,
                                 "5000000000"])
def test_bad_amounts(raw: object) -> None:
    with pytest.raises(OptionValueError, match="is not an amount in USD"):
        convert(BY_NAME["daily-max-cost-usd"], raw)


def test_percentages() -> None:
    pace = BY_NAME["pace-at"]
    assert [convert(pace, v) for v in ("80", "80%", 100, 0)] == [80, 80, 100, 0]
    for bad in ("101", "x", -1, True):
        with pytest.raises(OptionValueError, match="not a percentage"):
            convert(pace, bad)


def test_config_keys_and_variables(tmp_path: Path) -> None:
    settings = _settings(tmp_path, user="max-wall-time: 8h\nmax-cost-usd: 5\npace-at: 90\n",
                         environ={"AIDD_MAX_TOKENS": "1000000", "AIDD_DAILY_MAX_COST_USD": "20",
                                  "AIDD_DAILY_MAX_TOKENS": "5000000"})
    assert (settings.max_wall_time, settings.max_cost_usd, settings.pace_at) == (28800, 5.0, 90)
    assert (settings.max_tokens, settings.daily_max_cost_usd, settings.daily_max_tokens) == (
        1_000_000, 20.0, 5_000_000)
    assert _settings(tmp_path / "none").max_wall_time is None


def test_a_bad_variable_names_itself(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="AIDD_MAX_WALL_TIME: 'soon' is not a duration"):
        _settings(tmp_path, environ={"AIDD_MAX_WALL_TIME": "soon"})


def test_the_project_may_lower_a_budget_or_set_one_the_user_has_not(tmp_path: Path) -> None:
    settings = _settings(tmp_path, user="max-cost-usd: 5\n",
                         project="max-cost-usd: 2\nmax-tokens: 100\npace-at: 50\n")
    assert (settings.max_cost_usd, settings.max_tokens, settings.pace_at) == (2.0, 100, 50)


@pytest.mark.parametrize(("user", "project"), [
    ("max-cost-usd: 5", "max-cost-usd: 50"), ("max-wall-time: 8h", "max-wall-time: 0"),
    ("daily-max-tokens: 1000", "daily-max-tokens: 2000"), ("pace-at: 80", "pace-at: 100")])
def test_the_project_may_not_raise_or_drop_the_users_budget(tmp_path: Path, user: str,
                                                            project: str) -> None:
    key = project.split(":")[0]
    with pytest.raises(UsageError, match=f"key '{key}: .*' loosens your budget"):
        _settings(tmp_path, user=user + "\n", project=project + "\n")
    trusted = _settings(tmp_path, user=f"{user}\ntrust-project-config: true\n",
                        project=project + "\n")
    assert getattr(trusted, key.replace("-", "_")) is not None


def test_the_rate_limit_sleep_cap() -> None:
    """--rate-limit-max-sleep (issue 27): a duration, 6h by default, never 0 (no cap at all)."""
    cap = BY_NAME["rate-limit-max-sleep"]
    assert cap.default == 6 * 3600
    assert [convert(cap, v) for v in ("6h", "90m", 600)] == [21600, 5400, 600]
    with pytest.raises(OptionValueError, match="at least 1"):
        convert(cap, "0")


def test_the_project_may_shorten_the_sleep_cap_not_lengthen_it(tmp_path: Path) -> None:
    assert _settings(tmp_path, project="rate-limit-max-sleep: 1h\n").rate_limit_max_sleep == 3600
    with pytest.raises(UsageError, match="loosens supervision"):
        _settings(tmp_path, project="rate-limit-max-sleep: 30d\n")
    trusted = "trust-project-config: true\n"
    assert _settings(tmp_path, user=trusted,
                     project="rate-limit-max-sleep: 2d\n").rate_limit_max_sleep == 172800
