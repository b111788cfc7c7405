"""Size limits for the files aidd reads from the project, which is untrusted (issue 13 item 14):
a file over its limit is never loaded, only reported as invalid or too large in one line."""

from __future__ import annotations

KIB = 1 << 10
MIB = 1 << 20

# One features/<dir>/feature.json. AutoMaker stores each text attachment inline, up to 1 MiB
# (image-utils.ts:24), with no cap on their number, and keeps every old description in
# `descriptionHistory`: a feature with a dozen full attachments is its practical top, and its
# board loads it. 16 MiB holds that with room and still refuses a planted gigabyte; parsing one
# takes ~0.1 s (issue 31 item 8). Only what goes into a prompt or a record is capped (FEATURE_TEXT).
FEATURE = 16 * MIB
FEATURE_TEXT = 4 * KIB  # a feature's description as copied into an iteration record
TODO = 10 * MIB  # todo.md (or its root-level fallbacks)
ROADMAP = 10 * MIB  # .automaker/roadmap.json (--milestone)
STATE = 1 * MIB  # .automaker/aidd-state.json
OPENCODE_CONFIG = 1 * MIB  # opencode.json that aidd may update
PROMPT_OVERRIDE = 1 * MIB  # .automaker/prompts/**
AUDIT_DEFINITION = 1 * MIB  # .automaker/prompts/audits/*.md
MARKER = 4 * KIB  # .project_completion_pending / .project_completed
