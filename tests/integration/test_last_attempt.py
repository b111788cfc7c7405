"""The last attempt through the real aidd (issue 32): an attempt killed as hung is named, with
the file it wrote and the end of its log, in the next prompt of the same work."""

from __future__ import annotations

from tests.integration.runs import READ
from tests.integration.scenario import MakeScenario

ARGS = ("--max-iterations", "2", "--idle-nudge-timeout", "1", "--idle-timeout", "20",
        "--timeout", "40", "--max-nudges", "2")


def test_the_second_prompt_names_the_first_attempts_hung_kill(scenario: MakeScenario) -> None:
    hung = [{"init": True}, {"write_file": "src/cart.py", "text": "total = 0\n"},
            {"say": "working on the cart"}, *[{"echo_stdin": 1}] * 60, {"sleep": 60}]
    s = scenario("claude-code", hung, [{"init": True}, READ, {"say": "done"}, {"finish": True}],
                 args=ARGS).start().wait(timeout=90)
    assert s.code == 0, s.out + s.err
    assert [e["result"] for e in s.named("iteration_end")] == [71, 0]
    first = (s.iterations / "001.prompt.md").read_text()
    second = (s.iterations / "002.prompt.md").read_text()
    assert "did not succeed" not in first
    assert ("Attempt 001 ended with result 71: aidd killed it as hung: 2 nudges answered "
            "without any work.") in second, second[:3000]
    assert "Files it changed: src/cart.py." in second
    # its log's last lines: aidd's kill line, not the nudge text it repeats in the log
    assert "counts as hung (--max-nudges); killing the agent tree" in second
    assert "nudge: aidd has seen no output" not in second
