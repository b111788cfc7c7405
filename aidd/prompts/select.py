"""The prompt cascade (PRM-1, PRM-2, PRM-3) and the model choice (PRM-30): pure functions."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class PromptKind(Enum):
    DIRECTIVE = "directive"
    AUDIT = "audit"
    TODO = "todo"
    VALIDATE = "validate"
    IN_PROGRESS = "in-progress"
    CODING = "coding"
    ONBOARDING = "onboarding"
    INITIALIZER = "initializer"

    @property
    def template(self) -> str:
        return f"{self.value}.md"

    @property
    def takes_filter_preamble(self) -> bool:
        """Filters reach only these prompts (PRM-22, FEA-40)."""
        return self in _FILTER_KINDS

    @property
    def model_role(self) -> ModelRole:
        return _MODEL_ROLES[self]


class ModelRole(Enum):
    INIT = "init"
    CODE = "code"
    AUDIT = "audit"


_FILTER_KINDS = frozenset(
    {PromptKind.DIRECTIVE, PromptKind.VALIDATE, PromptKind.IN_PROGRESS, PromptKind.CODING}
)
_MODEL_ROLES = {
    PromptKind.DIRECTIVE: ModelRole.CODE,
    PromptKind.AUDIT: ModelRole.AUDIT,
    PromptKind.TODO: ModelRole.INIT,
    PromptKind.VALIDATE: ModelRole.INIT,
    PromptKind.IN_PROGRESS: ModelRole.INIT,
    PromptKind.CODING: ModelRole.CODE,
    PromptKind.ONBOARDING: ModelRole.INIT,
    PromptKind.INITIALIZER: ModelRole.INIT,
}


@dataclass(frozen=True)
class CascadeState:
    """Everything the cascade looks at: the run's flags and the project's facts this iteration."""

    directive: str = ""  # --prompt text
    audit_phase: bool = False
    remediation: bool = False  # a remediation coding phase (AUD-40)
    completion_pending: bool = False  # .automaker/.project_completion_pending exists
    todo: bool = False
    validate: bool = False
    in_progress: bool = False
    onboarding_complete: bool = False  # features, app_spec.txt, CHANGELOG.md (LAY-17)
    existing_codebase: bool = False  # recorded origin is `existing` (LAY-16)


@dataclass(frozen=True)
class Selection:
    kind: PromptKind
    reason: str  # why this kind won, for the header and events (PRM-4)
    completion_review: bool = False
    remediation: bool = False

    @property
    def model_role(self) -> ModelRole:
        return self.kind.model_role



def select_prompt(state: CascadeState) -> Selection:
    """Which prompt this iteration sends: the rules below in order, the first match wins;
    remediation comes first (PRM-1, PRM-2)."""
    rows = (
        (state.remediation, Selection(PromptKind.CODING, "remediation phase", remediation=True)),
        (bool(state.directive), Selection(PromptKind.DIRECTIVE, "--prompt")),
        (state.audit_phase, Selection(PromptKind.AUDIT, "audit phase")),
        (
            state.completion_pending,
            Selection(PromptKind.TODO, "completion review", completion_review=True),
        ),
        (state.todo, Selection(PromptKind.TODO, "--todo")),
        (state.validate, Selection(PromptKind.VALIDATE, "--validate")),
        (state.in_progress, Selection(PromptKind.IN_PROGRESS, "--in-progress")),
        (state.onboarding_complete, Selection(PromptKind.CODING, "onboarding complete")),
        (
            state.existing_codebase,
            Selection(PromptKind.ONBOARDING, "existing codebase, onboarding not complete"),
        ),
    )
    return next(
        (selection for matched, selection in rows if matched),
        Selection(PromptKind.INITIALIZER, "new project"),
    )


def mode_conflict(
    *,
    directive: str = "",
    audit: bool = False,
    todo: bool = False,
    validate: bool = False,
    in_progress: bool = False,
) -> str | None:
    """The one start-up line saying which mode flag wins when several compete, else None
    (PRM-3)."""
    given = [
        name
        for name, on in (
            ("--prompt", bool(directive)),
            ("--audit", audit),
            ("--todo", todo),
            ("--validate", validate),
            ("--in-progress", in_progress),
        )
        if on
    ]
    if len(given) < 2:
        return None
    return f"several mode flags given ({', '.join(given)}); {given[0]} wins"


@dataclass(frozen=True)
class ModelOptions:
    """`--model`, `--init-model`, `--code-model`, `--audit-model`; empty means not given."""

    model: str | None = None
    init_model: str | None = None
    code_model: str | None = None
    audit_model: str | None = None


def choose_model(role: ModelRole, options: ModelOptions) -> str | None:
    """The model a prompt of `role` runs with (PRM-30). None means: pass no model flag, the CLI
    uses its default."""
    code = options.code_model or options.model or None
    match role:
        case ModelRole.INIT:
            return options.init_model or options.model or None
        case ModelRole.CODE:
            return code
        case ModelRole.AUDIT:
            return options.audit_model or code
