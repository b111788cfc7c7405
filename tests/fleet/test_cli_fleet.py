"""`aidd fleet` is dispatched from cli only for `fleet`: other commands never import
temporalio, and without the extra `aidd fleet` says how to install it (exit 2)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from aidd import cli
from tests.fleet.conftest import HAVE_EXTRA, WITHOUT_EXTRA
from tests.integration.runs import REPO


@pytest.mark.skipif(not HAVE_EXTRA, reason=WITHOUT_EXTRA)
def test_the_fleet_extra_is_installed() -> None:
    """The one line that says why the fleet's tests were not collected, when they were not."""
    assert importlib.util.find_spec("temporalio") is not None


def _importtime(*args: str) -> str:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "aidd", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    return done.stderr


@pytest.mark.parametrize("args", [("--help",), ("--help-exit-codes",), ("--version",)])
def test_other_commands_never_import_temporalio(args: tuple[str, ...]) -> None:
    imported = _importtime(*args)
    # `--version` alone is answered before the CLI is imported (issue 33: ~20 ms)
    assert ("aidd.cli" in imported) is (args != ("--version",))
    assert "temporalio" not in imported
    assert "aidd.fleet" not in imported


def test_without_the_extra_fleet_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "temporalio", None)  # as if not installed
    for name in [m for m in sys.modules if m.startswith("aidd.fleet")]:
        monkeypatch.delitem(sys.modules, name)
    assert cli.main(["fleet", "status"]) == 2
    assert capsys.readouterr().err == (
        "aidd: error: aidd fleet needs the fleet extra: pip install 'aidd[fleet]'\n")
