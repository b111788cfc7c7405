"""`aidd --report` through the real process, after a real run of the fake agent: the text, the
JSON and the HTML file; `--since`; and every misuse of its flags is one line and exit 2 (or
3 for a file it cannot write)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import LIMITS, OK, RunAidd, onboarded
from tests.planted import plant

PASS_ONE = [{"say": "implementing a"},
            {"tool": {"name": "write", "input": {"filePath": "src/a.py"}, "output": "ok"}},
            {"write_file": "src/a.py", "text": "a = 1\n"},
            {"write_file": ".automaker/features/feature-1-a/feature.json",
             "text": json.dumps({"id": "feature-1-a", "category": "Core",
                                 "description": "a", "status": "completed", "passes": True})},
            {"finish": {"cost": 0.02, "tokens": {"input": 300, "output": 40}}}]
FAIL = [{"say": "broken"}, {"exit": 3}]


@pytest.fixture
def night(tmp_path: Path, fake_agent: FakeAgent, run_aidd: RunAidd,
          env: dict[str, str]) -> Path:
    root = tmp_path / "shop"
    feature(root, "feature-1-a", description="a")
    feature(root, "feature-2-b", description="b")
    onboarded(root)
    fake_agent.script(PASS_ONE, FAIL, OK)
    done = run_aidd("--project-dir", str(root), "--max-iterations", "3", *LIMITS, env=env)
    assert done.code == 0, done.err
    return root


def test_the_text_report_after_a_real_run(night: Path, run_aidd: RunAidd,
                                          env: dict[str, str]) -> None:
    done = run_aidd("--project-dir", str(night), "--report", env=env)
    assert done.code == 0, done.err
    out = done.out
    assert out.startswith("# aidd report: shop\n")
    assert "## Attempts: 3" in out
    assert "feature-1-a" in out
    assert "001-end" in out  # the checkpoint that first shows it passing
    assert "1 became passing; 1 of 2 pass now (from the checkpoints)" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_the_json_report_is_versioned_and_agrees_with_the_events(
        night: Path, run_aidd: RunAidd, env: dict[str, str]) -> None:
    done = run_aidd("--project-dir", str(night), "--report", "--json", env=env)
    assert done.code == 0, done.err
    data: dict[str, Any] = json.loads(done.out)
    assert data["schema"] == 2
    assert data["attempts"]["total"] == 3
    assert {c["result"]: c["count"] for c in data["attempts"]["by_result"]} == {0: 2, 3: 1}
    assert [p["feature"] for p in data["features"]["became_passing"]] == ["feature-1-a"]
    assert data["features"]["became_passing"][0]["attempt"] == 1
    assert data["usage"]["cost_usd"]["reported"] == pytest.approx(0.02 + 0.001)  # fake default
    (run,) = data["runs"]
    assert (run["reason"], run["exit_code"]) == ("done", 0)


def test_the_html_report_is_one_file_with_its_charts(night: Path, run_aidd: RunAidd,
                                                     env: dict[str, str], tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    done = run_aidd("--project-dir", str(night), "--report", "--html", str(target), env=env)
    assert (done.code, done.out) == (0, f"report written to {target}\n")
    page = target.read_text()
    assert page.count("<svg") == 4
    assert "<script" not in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "default-src 'none'" in page


def test_since_chooses_the_window(night: Path, run_aidd: RunAidd, env: dict[str, str]) -> None:
    later = run_aidd("--project-dir", str(night), "--report", "--json", "--since", "0s", env=env)
    assert json.loads(later.out)["attempts"]["total"] == 0
    wide = run_aidd("--project-dir", str(night), "--report", "--json", "--since", "12h", env=env)
    assert json.loads(wide.out)["attempts"]["total"] == 3


@pytest.mark.parametrize(("args", "message"), [
    (("--report", "--since", "yesterday"), "--since: expected a time"),
    (("--report", "--since", "2099-01-01"), "--since: '2099-01-01' is in the future"),
    (("--status", "--since", "12h"), "--since needs --report"),
    (("--html", "x.html"), "--html needs --report"),
    (("--report", "--json", "--html", "x.html"), "--report takes --json or --html FILE"),
    (("--report", "--since"), "Option '--since' requires an argument"),
    (("--report", "--since", "--json"), "option '--since' requires a value"),
])
def test_misuse_is_one_line_and_exit_2(tmp_path: Path, run_aidd: RunAidd,
                                       args: tuple[str, ...], message: str) -> None:
    done = run_aidd("--project-dir", str(tmp_path), *args)
    assert done.code == 2
    assert done.err.startswith("aidd: error: ")
    assert message in done.err
    assert done.err.count("\n") == 1


def test_an_html_file_it_cannot_write_is_exit_3_and_a_planted_link_is_not_followed(
        night: Path, run_aidd: RunAidd, env: dict[str, str], tmp_path: Path) -> None:
    missing = run_aidd("--project-dir", str(night), "--report", "--html",
                       str(tmp_path / "no" / "such" / "r.html"), env=env)
    assert missing.code == 3
    assert "--html: directory" in missing.err
    outside = tmp_path / "outside.html"
    outside.write_text("keep\n")
    plant(night / ".automaker" / "report.html", "symlink", outside)
    linked = run_aidd("--project-dir", str(night), "--report", "--html",
                      str(night / ".automaker" / "report.html"), env=env)
    assert linked.code == 0  # the link itself is replaced, never written through
    assert outside.read_text() == "keep\n"
    assert not (night / ".automaker" / "report.html").is_symlink()
    plant(night / "linked-dir", "symlink", tmp_path)
    refused = run_aidd("--project-dir", str(night), "--report", "--html",
                       str(night / "linked-dir" / "r.html"), env=env)
    assert refused.code == 3
    assert not (tmp_path / "r.html").exists()


def test_a_project_without_events_is_an_empty_report(tmp_path: Path, run_aidd: RunAidd) -> None:
    done = run_aidd("--project-dir", str(tmp_path), "--report")
    assert done.code == 0, done.err
    assert "no run in the window" in done.out
