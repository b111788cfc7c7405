"""Prompt selection (the cascade, models) and rendering (Jinja2 templates with overrides)."""

from aidd.prompts.context import (
    AuditInfo,
    CliInfo,
    FeatureFocus,
    FieldFilter,
    FilterInfo,
    InvalidFinding,
    IterationInfo,
    MilestoneFilter,
    PhaseInfo,
    ProjectInfo,
    PromptContext,
    PromptPaths,
    TimeInfo,
)
from aidd.prompts.render import PromptRenderer
from aidd.prompts.select import (
    CascadeState,
    ModelOptions,
    ModelRole,
    PromptKind,
    Selection,
    choose_model,
    mode_conflict,
    select_prompt,
)

__all__ = [
    "AuditInfo",
    "CascadeState",
    "CliInfo",
    "FeatureFocus",
    "FieldFilter",
    "FilterInfo",
    "InvalidFinding",
    "IterationInfo",
    "MilestoneFilter",
    "ModelOptions",
    "ModelRole",
    "PhaseInfo",
    "ProjectInfo",
    "PromptContext",
    "PromptKind",
    "PromptPaths",
    "PromptRenderer",
    "Selection",
    "TimeInfo",
    "choose_model",
    "mode_conflict",
    "select_prompt",
]
