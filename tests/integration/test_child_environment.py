"""What the agent and a gate command inherit of aidd's environment (issue 27 item 13): aidd's
own `AIDD_*` variables stay with aidd (the heartbeat URL and the webhook carry credentials),
only the ones aidd sets for its children reach them."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FakeAgent
from tests.integration.runs import LIMITS, OK, RunAidd, onboarded
from tests.localhttp import recorder

# What aidd itself puts in the agent's environment (ADP-11) and the mark (REL-1).
SET_BY_AIDD = {"AIDD_VERSION", "AIDD_PROJECT_DIR", "AIDD_CLI", "AIDD_ITERATION",
               "AIDD_PROMPT_KIND", "AIDD_SUPERVISOR_ID"}


def test_the_agent_and_the_gate_get_no_aidd_setting_and_no_credential(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    onboarded(project)
    fake_agent.script(OK)
    with recorder() as server:
        secret = server.url.replace("http://", "http://me:SECRET@")
        res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *LIMITS,
                       "--gate", "env > gate.env", env={
                           **env, "AIDD_HEARTBEAT_URL": secret + "/hb",
                           "AIDD_NOTIFY_WEBHOOK": secret + "/hook",
                           "AIDD_NOTIFY_COMMAND": "echo SECRET"})
    assert res.code == 0, res.out + res.err
    assert server.to("/hb/start"), "the heartbeat was configured from the environment"
    agent = fake_agent.records()[0]["env"]
    assert {k for k in agent if k.startswith("AIDD_")} == SET_BY_AIDD
    assert "SECRET" not in repr(agent)
    gate = (project / "gate.env").read_text()
    # the mark, and the gate run's own tag (docs/parallel.md "Process scope")
    assert sorted(line.partition("=")[0] for line in gate.splitlines()
                  if line.startswith("AIDD_")) == ["AIDD_GATE_RUN", "AIDD_SUPERVISOR_ID"]
    assert "SECRET" not in gate
