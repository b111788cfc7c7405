"""Circular fixes through the real aidd and the fake agent (issue 32): an agent that repeats
the same broken fix on one feature has it set aside after --max-attempts-per-feature attempts,
then finishes the other feature; the run ends `set_aside`, health failed, and the report says
who needs a person."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import FakeAgent
from tests.featurefiles import feat
from tests.integration.runs import LIMITS, READ, RunAidd, events, onboarded, prompt
from tests.integration.test_events_schema import validate_file


def _file(name: str, **fields: Any) -> dict[str, Any]:
    data = feat(name, description=name, **{"passes": False, **fields})
    return {"write_file": f".automaker/features/{name}/feature.json", "text": json.dumps(data)}


def test_a_repeated_broken_fix_is_set_aside_and_the_other_feature_is_reached(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    onboarded(project)
    for name in ("a-cart", "b-login"):
        (project / ".automaker" / "features" / name).mkdir(parents=True)
        (project / ".automaker" / "features" / name / "feature.json").write_text(
            json.dumps(feat(name, description=name, status="backlog", passes=False)))
    broken = [READ, _file("a-cart", status="in_progress"),
              {"write_file": "src/cart.py", "text": "total = (\n"}, {"say": "broken"},
              {"exit": 3}]
    done = [READ, _file("b-login", status="verified", passes=True), {"say": "done"},
            {"finish": True}]
    fake_agent.script(broken, broken, broken, done)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "6",
                   "--max-attempts-per-feature", "3", *LIMITS, env=env, timeout=120)
    assert res.code == 0, res.out + res.err
    validate_file(project)
    (aside,) = events(project, "feature_set_aside")
    assert (aside["feature"], aside["attempts"]) == ("a-cart", [1, 2, 3])
    assert [e["feature"] for e in events(project, "iteration_end")] == \
        ["a-cart", "a-cart", "a-cart", "b-login"]
    cart = json.loads((project / ".automaker/features/a-cart/feature.json").read_text())
    assert cart["status"] == "failed"
    assert "3 attempts (001, 002, 003) ended the same way" in cart["error"]
    assert "- a-cart: set aside by aidd" in prompt(project, 4)
    (end,) = events(project, "run_end")
    assert (end["reason"], end["health"]["verdict"]) == ("set_aside", "failed")
    report = run_aidd("--report", "--project-dir", str(project), env=env)
    assert "## Needs a person: 1 feature set aside" in report.out, report.out
    assert "   001: the CLI exited with status 3 (an error or a crash)" in report.out
