"""The hand-off after context exhaustion, read from the lines aidd rendered (issue 32)."""

from __future__ import annotations

from aidd.logs.handoff import MESSAGE_CHARS, TODOS_SHOWN, handoff


def test_the_last_plan_and_the_last_message_win() -> None:
    found = handoff([
        '» tool: todowrite {"todos":[{"content":"old","status":"pending"}]} [completed]',
        "» assistant: first",
        "[aidd 01:02:03] a message of aidd's",
        '» tool: todowrite {"todos":[{"content":"new","status":"completed","id":"1"}]} '
        "[completed]",
        "» final: second",
        "»   and more",
        "{\"type\":\"result\"}",
    ])
    assert found.plan == "- [completed] new"
    assert found.message == "second\nand more"


def test_agent_text_is_capped_and_cannot_close_a_fence() -> None:
    long_list = ",".join(f'{{"content":"item {n}","status":"pending"}}' for n in range(30))
    found = handoff([f"» tool: TodoWrite (toolu_1…) {{\"todos\":[{long_list}]}}",
                     "» assistant: ``` " + "x" * 3000])
    assert found.plan.splitlines()[-1] == f"- … and {30 - TODOS_SHOWN} more"
    assert len(found.plan.splitlines()) == TODOS_SHOWN + 1
    assert "```" not in found.message
    assert len(found.message) == MESSAGE_CHARS


def test_a_cut_or_forged_todo_input_is_shown_raw_and_capped() -> None:
    found = handoff(['» tool: TodoWrite (toolu_1…) {"todos":[{"content":"cut', "» tool: todowrite "
                     '{"todos": 7}', "assistant: not rendered by aidd"])
    assert found.plan == '{"todos": 7}'
    assert found.message == ""
    assert handoff([]) == handoff(["plain agent output"])


def test_a_deeply_nested_todo_input_cannot_crash_aidd() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    found = handoff([f'» tool: todowrite {{"todos": {deep}}} [completed]'])
    assert len(found.plan) <= 1500
