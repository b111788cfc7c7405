"""Size limits for the files aidd reads from the project, which is untrusted (issue 13 item 14):
a file over its limit is never loaded, only reported as invalid or too large in one line."""

from __future__ import annotations

KIB = 1 << 10
MIB = 1 << 20

FEATURE = 1 * MIB  # one features/**/feature.json
TODO = 10 * MIB  # todo.md (or its root-level fallbacks)
ROADMAP = 10 * MIB  # .automaker/roadmap.json (--milestone)
STATE = 1 * MIB  # .automaker/aidd-state.json
OPENCODE_CONFIG = 1 * MIB  # opencode.json that aidd may update
PROMPT_OVERRIDE = 1 * MIB  # .automaker/prompts/**
AUDIT_DEFINITION = 1 * MIB  # .automaker/prompts/audits/*.md
MARKER = 4 * KIB  # .project_completion_pending / .project_completed
