"""The prompt cascade (PRM-1, PRM-2, AC-19, AC-20) and the model table (PRM-30, AC-22)."""

from __future__ import annotations

import pytest

from aidd.prompts.select import (
    CascadeState,
    Mode,
    ModelOptions,
    ModelRole,
    PromptKind,
    choose_mode,
    choose_model,
    select_prompt,
)

K = PromptKind
ALL_MODES = {"todo": True, "validate": True, "in_progress": True}


def cascade(*, directive: str = "", todo: bool = False, validate: bool = False,
            in_progress: bool = False, **facts: bool) -> CascadeState:
    """The cascade's input as a run builds it: the mode chosen from the flags, then the facts."""
    mode, _ = choose_mode(directive=bool(directive), audit=False, todo=todo, validate=validate,
                          in_progress=in_progress)
    return CascadeState(mode=mode, **facts)


@pytest.mark.parametrize(
    ("state", "kind", "reason"),
    [
        # row 1: --prompt beats audit and every mode flag (AC-19)
        (cascade(directive="x", audit_phase=True, **ALL_MODES), K.DIRECTIVE, "--prompt"),
        # row 2: audit beats completion review and modes
        (cascade(audit_phase=True, completion_pending=True, **ALL_MODES), K.AUDIT, "audit"),
        # row 3: completion review beats --todo/--validate/--in-progress
        (cascade(completion_pending=True, **ALL_MODES), K.TODO, "completion review"),
        (cascade(todo=True, validate=True, in_progress=True), K.TODO, "--todo"),
        (cascade(validate=True, in_progress=True), K.VALIDATE, "--validate"),
        (cascade(in_progress=True), K.IN_PROGRESS, "--in-progress"),
        # mode flags apply before onboarding is complete (AC-20)
        (cascade(validate=True, existing_codebase=True), K.VALIDATE, "--validate"),
        (cascade(todo=True), K.TODO, "--todo"),
        # rows 7-9 (AC-18, LAY-18)
        (cascade(onboarding_complete=True, existing_codebase=True), K.CODING, "onboarding"),
        (cascade(existing_codebase=True), K.ONBOARDING, "existing codebase"),
        (cascade(), K.INITIALIZER, "new project"),
        # remediation is coding whatever the flags (PRM-2)
        (cascade(remediation=True, completion_pending=True, **ALL_MODES), K.CODING, "remed"),
    ],
)
def test_cascade_first_matching_row_wins(
    state: CascadeState, kind: PromptKind, reason: str
) -> None:
    selection = select_prompt(state)
    assert selection.kind is kind
    assert reason in selection.reason


def test_completion_review_and_remediation_flags() -> None:
    review = select_prompt(cascade(completion_pending=True))
    assert review.completion_review
    assert not review.remediation
    assert review.kind.template == "todo.md"
    remediation = select_prompt(cascade(remediation=True, todo=True))
    assert remediation.remediation
    assert not remediation.completion_review
    assert remediation.kind.template == "coding.md"


@pytest.mark.parametrize(
    ("kind", "role", "preamble"),
    [
        (K.DIRECTIVE, ModelRole.CODE, True),
        (K.AUDIT, ModelRole.AUDIT, False),
        (K.TODO, ModelRole.INIT, False),
        (K.VALIDATE, ModelRole.INIT, True),
        (K.IN_PROGRESS, ModelRole.INIT, True),
        (K.CODING, ModelRole.CODE, True),
        (K.ONBOARDING, ModelRole.INIT, False),
        (K.INITIALIZER, ModelRole.INIT, False),
    ],
)
def test_kind_table(kind: PromptKind, role: ModelRole, preamble: bool) -> None:
    assert kind.model_role is role
    assert kind.takes_filter_preamble is preamble
    assert kind.template == f"{kind.value}.md"


@pytest.mark.parametrize(
    ("options", "init", "code", "audit"),
    [
        (ModelOptions(), None, None, None),
        (ModelOptions(model="m"), "m", "m", "m"),
        (ModelOptions(model="m", init_model="i"), "i", "m", "m"),
        (ModelOptions(model="m", code_model="c"), "m", "c", "c"),
        (ModelOptions(code_model="c", audit_model="a"), None, "c", "a"),
        (ModelOptions(init_model="i"), "i", None, None),
        (ModelOptions(model="", init_model=""), None, None, None),
    ],
)
def test_models(
    options: ModelOptions, init: str | None, code: str | None, audit: str | None
) -> None:
    assert choose_model(ModelRole.INIT, options) == init
    assert choose_model(ModelRole.CODE, options) == code
    assert choose_model(ModelRole.AUDIT, options) == audit


def test_mode_conflict_names_the_winner() -> None:
    none = {"directive": False, "audit": False, "todo": False, "validate": False,
            "in_progress": False}
    assert choose_mode(**none) == (Mode.DEFAULT, None)
    assert choose_mode(**{**none, "todo": True}) == (Mode.TODO, None)
    mode, message = choose_mode(**{**none, "todo": True, "validate": True, "in_progress": True})
    assert mode is Mode.TODO
    assert message == "several mode flags given (--todo, --validate, --in-progress); --todo wins"
    mode, message = choose_mode(**{**none, "directive": True, "audit": True})
    assert mode is Mode.DIRECTIVE
    assert "--prompt wins" in (message or "")
