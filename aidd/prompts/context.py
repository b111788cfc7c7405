"""The typed template context: exactly the variables a template may use (PRM-20), as records."""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from datetime import datetime
from enum import Enum
from typing import Any, NamedTuple

from aidd.project.paths import ProjectPaths
from aidd.prompts.select import PromptKind

# `PromptContext.to_dict()` turns the records into the mapping Jinja sees. Nested records become
# `Namespace` dicts that know their dotted path, so an undefined `audit.nme` is reported by that
# name rather than as "dict object has no attribute".

class Namespace(dict[str, Any]):
    """A context mapping that remembers its dotted name for error messages.

    The name lives in an underscore attribute: Jinja looks attributes up before keys, so a
    public attribute would shadow a key of the same name, and the sandbox hides `_` names."""

    def __init__(self, dotted: str, items: dict[str, Any]) -> None:
        super().__init__(items)
        self._dotted = dotted

    @property
    def dotted_name(self) -> str:
        return self._dotted


class ProjectInfo(NamedTuple):
    dir: str  # absolute
    name: str


class CliInfo(NamedTuple):
    name: str  # the --cli value, also naming its partial `_cli/<name>.md`
    display_name: str


@dataclass(frozen=True)
class IterationInfo:
    number: int = 1  # log number NNN, continues across phases
    index: int = 1  # 1-based within the phase
    max: int = 0  # --max-iterations; 0 = unlimited


class PhaseInfo(NamedTuple):
    name: str = "main"  # main, audit, post-completion audit, remediation
    cycle: int = 0  # remediation cycle (AUD-40), 0 outside remediation


class PromptPaths(NamedTuple):
    """Project-relative paths the prompts name (`paths.*`)."""

    spec: str
    features: str
    changelog: str
    todo: str
    project_structure: str
    project_md: str
    audit_reports: str

    @classmethod
    def from_project(cls, paths: ProjectPaths) -> PromptPaths:
        return cls(
            spec=paths.rel(paths.app_spec),
            features=paths.rel(paths.features),
            changelog=paths.rel(paths.changelog),
            todo=paths.rel(paths.todo),
            project_structure=paths.rel(paths.project_structure),
            project_md=paths.rel(paths.project_md),
            audit_reports=paths.rel(paths.audit_reports),
        )


class MilestoneFilter(NamedTuple):
    name: str
    description: str
    features: tuple[str, ...]  # feature directory names (FEA-42)


class FeatureFocus(NamedTuple):
    directory: str  # resolved directory name (FEA-43)
    value: str  # the raw --feature value


class FieldFilter(NamedTuple):
    name: str  # --filter-by
    value: str  # --filter


class FilterInfo(NamedTuple):
    milestone: MilestoneFilter | None = None
    feature: FeatureFocus | None = None
    field: FieldFilter | None = None

    @property
    def active(self) -> bool:
        return any((self.milestone, self.feature, self.field))


class InvalidFinding(NamedTuple):
    path: str  # project-relative feature.json
    errors: tuple[str, ...]


class AuditInfo(NamedTuple):
    """`audit.*` (AUD-20); all empty outside audit phases, so overrides never hit undefined."""

    name: str = ""
    kebab: str = ""
    title: str = ""
    category: str = ""
    body: str = ""
    references: tuple[str, ...] = ()  # names copied next to the definition (AUD-21)
    report_path: str = ""
    finding_prefix: str = ""
    invalid_findings: tuple[InvalidFinding, ...] = ()


class GateInfo(NamedTuple):
    """`gate.*`: after an attempt whose validation gate found new failures, what failed."""

    red: bool = False
    report: str = ""  # the commands, the newly failing tests, the end of the output


class ParallelInfo(NamedTuple):
    """`parallel.*` (--parallel N > 1, issue 29): the one feature this agent owns, in its own
    worktree, and the others being worked elsewhere at the same time; empty with N = 1."""

    feature: str = ""  # its feature folder
    feature_id: str = ""  # its id, which names the branch `aidd/<id>`
    others: tuple[str, ...] = ()  # the feature folders other agents work now


class LastAttemptInfo(NamedTuple):
    """`last_attempt.*` (issue 32): the previous attempt at the same work, when it did not
    succeed, and how the previous run ended when it did not end cleanly; empty otherwise."""

    failed: bool = False
    number: int = 0  # its log, NNN
    result: int = 0
    ending: str = ""  # how it ended, in words
    files: tuple[str, ...] = ()  # the files it changed, capped
    more_files: int = 0  # changed files left out of `files`
    transcript: str = ""  # the last lines of its log, cleaned and capped
    advice: str = ""  # one sentence of what to do differently
    previous_run: str = ""  # how the previous run ended, when not cleanly (first prompt only)
    # Out of context or turns (result 76): aidd's hand-off replaces the transcript (issue 32).
    handoff: bool = False
    plan: str = ""  # its last todo list
    last_message: str = ""  # its last assistant message
    # Features set aside for the night after N attempts that ended the same way (issue 32):
    # `folder: why` lines, for every prompt of the run.
    set_aside: tuple[str, ...] = ()


class TimeInfo(NamedTuple):
    iso: str
    unix: int
    date: str  # YYYY-MM-DD, local

    @classmethod
    def from_datetime(cls, now: datetime) -> TimeInfo:
        return cls(now.isoformat(timespec="seconds"), int(now.timestamp()), now.date().isoformat())


class PromptContext(NamedTuple):
    aidd_version: str
    project: ProjectInfo
    cli: CliInfo
    kind: PromptKind
    paths: PromptPaths
    now: TimeInfo
    iteration: IterationInfo = IterationInfo()
    phase: PhaseInfo = PhaseInfo()
    filters: FilterInfo = FilterInfo()
    directive: str = ""
    user_spec: bool = False  # paths.spec is the user's --spec, not the agent's own survey
    completion_review: bool = False
    remediation: bool = False
    audit: AuditInfo = AuditInfo()
    severity: str = ""  # body of SEVERITY_CLASSIFICATION
    nudge_silence: int = 0
    gate: GateInfo = GateInfo()
    last_attempt: LastAttemptInfo = LastAttemptInfo()
    parallel: ParallelInfo = ParallelInfo()

    def with_nudge(self, silence_s: int) -> PromptContext:
        return self._replace(nudge_silence=silence_s)

    def to_dict(self) -> dict[str, Any]:
        """The Jinja context. Filters reach only the kinds that take a preamble (PRM-22)."""
        filters = self.filters if self.kind.takes_filter_preamble else FilterInfo()
        return {
            "aidd": Namespace("aidd", {"version": self.aidd_version}),
            "project": _convert("project", self.project),
            "cli": _convert("cli", self.cli),
            "kind": self.kind.value,
            "iteration": _convert("iteration", self.iteration),
            "phase": _convert("phase", self.phase),
            "paths": _convert("paths", self.paths),
            "filters": _filters(filters),
            "directive": self.directive,
            "user_spec": self.user_spec,
            "completion_review": self.completion_review,
            "remediation": self.remediation,
            "audit": _convert("audit", self.audit),
            "severity": self.severity,
            "now": _convert("now", self.now),
            "nudge": Namespace("nudge", {"silence": self.nudge_silence}),
            "gate": _convert("gate", self.gate),
            "last_attempt": _convert("last_attempt", self.last_attempt),
            "parallel": _convert("parallel", self.parallel),
        }


def _filters(info: FilterInfo) -> Namespace:
    items = {name: _convert(f"filters.{name}", getattr(info, name)) for name in info._fields}
    return Namespace("filters", {**items, "active": info.active})


# Values Jinja takes as they are: a record's plain fields skip the walk below (two contexts an
# attempt, ~60 values each: the walk was a quarter of a prompt's render, issue 33).
_PLAIN = frozenset({str, int, float, bool, type(None)})


def _convert(path: str, value: Any) -> Any:
    names = _record_fields(value)
    if names is not None:
        return Namespace(path, {n: v if type(v := getattr(value, n)) in _PLAIN
                                else _convert(f"{path}.{n}", v) for n in names})
    if isinstance(value, tuple | list):
        return [_convert(f"{path}[{i}]", item) for i, item in enumerate(value)]
    if isinstance(value, Enum):
        return value.value
    return value


# Each type's record fields, found once (the context's dozen types, at every render).
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _record_fields(value: Any) -> tuple[str, ...] | None:
    """A record's field names: a named tuple's, or a dataclass's (`IterationInfo`, whose
    `index` would hide the tuple method); None for any other value."""
    kind = type(value)
    if kind not in _FIELDS:
        _FIELDS[kind] = (tuple(kind._fields) if issubclass(kind, tuple) and hasattr(kind, "_fields")
                         else tuple(f.name for f in fields(kind)) if is_dataclass(kind)
                         else None)
    return _FIELDS[kind]
