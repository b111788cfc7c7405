"""Audit definitions (AUD-1..5), their copies next to the project (AUD-21), report detection
(AUD-22) and the `audit.*` prompt context (AUD-20)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from aidd.audits.names import is_audit_name, kebab, normalize_name
from aidd.errors import NotFoundError, UsageError, ValidationError
from aidd.fsio import read_file, write_atomic
from aidd.project import jsonfile, limits
from aidd.project.paths import ProjectPaths
from aidd.prompts.context import AuditInfo, InvalidFinding
from aidd.resources import data_dir

SEVERITY_REFERENCE = "SEVERITY_CLASSIFICATION"
_LINK_RE = re.compile(r"\(\./([^()/\s]+)\.md\)")
_FENCE = "---"
_E = TypeVar("_E", bound=Enum)


class AuditType(Enum):
    AUDIT = "audit"
    REFERENCE = "reference"


class Lifecycle(Enum):
    DEVELOPMENT = "development"
    PRE_RELEASE = "pre-release"
    POST_RELEASE = "post-release"
    MIGRATION = "migration"
    SPECIALIZED = "specialized"
    REFERENCE = "reference"


class AuditDefinition(NamedTuple):
    name: str
    path: Path
    title: str
    category: str
    lifecycle: Lifecycle
    type: AuditType
    body: str  # everything after the front matter (AUD-4)
    references: tuple[str, ...] = ()
    priority: int | None = None

    @property
    def kebab(self) -> str:
        return kebab(self.name)

    @property
    def finding_prefix(self) -> str:
        return f"audit-{self.kebab}-"

    @property
    def runnable(self) -> bool:
        return self.type is AuditType.AUDIT


def available(paths: ProjectPaths | None) -> dict[str, Path]:
    """Every definition file by name, shipped then project-local (which wins, AUD-1)."""
    found: dict[str, Path] = {}
    dirs = [data_dir("prompts") / "audits"]
    if paths is not None:
        dirs.append(paths.prompt_overrides / "audits")
    for directory in dirs:
        if directory.is_dir():
            for path in directory.glob("*.md"):
                if path.is_file() and is_audit_name(path.stem):
                    found[path.stem] = path
    return dict(sorted(found.items()))


def load_audit(name: str, paths: ProjectPaths | None) -> AuditDefinition:
    files = available(paths)
    if name not in files:
        raise _unknown([name], files)
    return parse_definition(files[name], name)


def resolve_audits(names: Iterable[str], paths: ProjectPaths | None) -> list[AuditDefinition]:
    """The audits of `--audit A,B` in order, duplicates dropped, all validated up front: every
    name (exit 2), then every lookup (exit 3), then each definition and the severity reference
    the prompt will need (exit 7)."""
    ordered = list(dict.fromkeys(normalize_name(raw) for raw in names))
    files = available(paths)
    missing = [name for name in ordered if name not in files]
    if missing:
        raise _unknown(missing, files)
    definitions = [parse_definition(files[name], name) for name in ordered]
    for definition in definitions:
        if not definition.runnable:
            raise UsageError(f"{definition.name} is a reference, not an audit that can run")
    severity_reference(paths)
    return definitions


def all_runnable(paths: ProjectPaths | None) -> list[AuditDefinition]:
    """`--audit-all` (AUD-10): every non-reference definition, by name in byte order."""
    loaded = [parse_definition(path, name) for name, path in available(paths).items()]
    severity_reference(paths)
    return [d for d in loaded if d.runnable]


def _unknown(names: list[str], files: dict[str, Path]) -> NotFoundError:
    """Exit 3 naming every unknown audit and listing the runnable ones (references cannot run,
    so they are not offered), with a hint when only the case differs (names are file names)."""
    runnable = [name for name, path in files.items() if _offered(path, name)]
    by_lower = {name.lower(): name for name in runnable}
    hints = [f"{n!r} -> {by_lower[n.lower()]!r}" for n in names if n.lower() in by_lower]
    listing = ", ".join(runnable) or "none"
    noun = "audit" if len(names) == 1 else "audits"
    message = f"unknown {noun} {', '.join(repr(n) for n in names)}; available: {listing}"
    if hints:
        message += f" (names are case-sensitive: {', '.join(hints)})"
    return NotFoundError(message)


def _offered(path: Path, name: str) -> bool:
    """Runnable, or unreadable here: a broken definition still exists and is listed."""
    try:
        return parse_definition(path, name).runnable
    except ValidationError:
        return True


def severity_reference(paths: ProjectPaths | None) -> str:
    """The body of SEVERITY_CLASSIFICATION (`severity` in the templates)."""
    return load_audit(SEVERITY_REFERENCE, paths).body


def _read_source(path: Path) -> bytes:
    """A project-local definition (`<root>/.automaker/prompts/audits/`) is project content
    (issue 13 items 7, 8): a regular file inside the project, capped; shipped ones are ours."""
    parts = path.parts
    if len(parts) > 4 and parts[-4:-1] == (".automaker", "prompts", "audits"):
        return read_file(path.parents[3], path, limits.AUDIT_DEFINITION)
    return path.read_bytes()


def parse_definition(path: Path, name: str) -> AuditDefinition:
    """Front matter between the first line `---` and the next `---` line, then the body."""
    try:
        text = _read_source(path).decode("utf-8")
    except OSError as exc:  # a refused one (link out, FIFO, too large) says why, once
        why = exc.strerror or exc
        raise ValidationError(f"cannot read audit definition: {why}, {path}") from None
    except UnicodeDecodeError as exc:
        raise ValidationError(f"cannot read audit definition: {exc}, {path}") from None
    meta, body = _split_front_matter(text, path)
    _check_informational(meta, path)
    return AuditDefinition(
        name=name,
        path=path,
        title=_required_str(meta, "title", path),
        category=_required_str(meta, "category", path),
        lifecycle=_enum(Lifecycle, meta.get("lifecycle"), "lifecycle", path),
        type=_enum(AuditType, meta.get("type", "audit"), "type", path),
        body=body,
        references=_references(meta, path),
        priority=_priority(meta, path),
    )


def _split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    import yaml  # lazy: a run without audits never reads a definition (15 ms, as in config)

    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != _FENCE:
        raise ValidationError(f"audit definition has no front matter (first line '---'), {path}")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() == _FENCE), None)
    if end is None:
        raise ValidationError(f"audit front matter is not closed by a '---' line, {path}")
    try:
        meta = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 2}" if mark is not None else str(path)
        raise ValidationError(f"audit front matter is not valid YAML, {where}") from exc
    except RecursionError:
        raise ValidationError(f"audit front matter is nested too deeply, {path}") from None
    if jsonfile.holds_surrogate(meta):  # the project-JSON rule (issue 13 item 6)
        raise ValidationError(f"audit front matter {jsonfile.SURROGATE_WHY}, {path}")
    if not isinstance(meta, dict):
        raise ValidationError(f"audit front matter must be a mapping of keys, {path}")
    return meta, "".join(lines[end + 1 :]).strip("\n")


def _required_str(meta: dict[str, Any], key: str, path: Path) -> str:
    value = meta.get(key)
    if value is None:
        raise ValidationError(f"audit front matter lacks required key '{key}', {path}")
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"audit key '{key}' must be a non-empty string, {path}")
    return value.strip()


def _enum(enum: type[_E], value: Any, key: str, path: Path) -> _E:
    if value is None:
        raise ValidationError(f"audit front matter lacks required key '{key}', {path}")
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(str(member.value) for member in enum)
        raise ValidationError(f"audit key '{key}' must be one of {allowed}, {path}") from None


def _references(meta: dict[str, Any], path: Path) -> tuple[str, ...]:
    value = meta.get("references")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError(f"audit key 'references' must be a list of audit names, {path}")
    return tuple(v.strip().removesuffix(".md") for v in value)


def _priority(meta: dict[str, Any], path: Path) -> int | None:
    value = meta.get("priority")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4:
        raise ValidationError(f"audit key 'priority' must be an integer 1-4, {path}")
    return value


def _check_informational(meta: dict[str, Any], path: Path) -> None:
    for key in ("version", "last_updated", "estimated_time", "frequency"):
        value = meta.get(key)
        if value is not None and not isinstance(value, str | date):
            raise ValidationError(f"audit key '{key}' must be a string or a date, {path}")


# -- copies next to the project (AUD-21) -------------------------------------------------------


def companions(definition: AuditDefinition, paths: ProjectPaths | None) -> tuple[str, ...]:
    """Names copied with a definition: its `references`, its `(./NAME.md)` links (one level,
    valid audit names that exist), and the severity reference."""
    files = available(paths)
    linked = _LINK_RE.findall(definition.body)
    names = [*definition.references, *linked, SEVERITY_REFERENCE]
    wanted = (n for n in names if is_audit_name(n) and n in files and n != definition.name)
    return tuple(dict.fromkeys(wanted))


def copy_definitions(definition: AuditDefinition, paths: ProjectPaths) -> list[Path]:
    """Write the definition and its companions, front matter included, into `.automaker/audits/`.

    Those files are overwritten; other files there are left alone."""
    files = available(paths)
    paths.audits.mkdir(parents=True, exist_ok=True)
    written = []
    for name in (definition.name, *companions(definition, paths)):
        source = definition.path if name == definition.name else files[name]
        target = paths.audits / f"{name}.md"
        write_atomic(target, _read_source(source), root=paths.root)
        written.append(target)
    return written


# -- reports (AUD-22) ---------------------------------------------------------------------------


def report_path(name: str, now: datetime) -> str:
    """`.automaker/audit-reports/<NAME>-<YYYYMMDD-HHMMSS>.md`, UTC, project-relative."""
    stamp = now.astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    return f".automaker/audit-reports/{name}-{stamp}.md"


ReportSnapshot = Mapping[str, tuple[int, int]]


def report_snapshot(paths: ProjectPaths) -> dict[str, tuple[int, int]]:
    """(mtime_ns, size) of every report, taken when an audit phase starts (AUD-22).

    Comparing with a snapshot instead of the wall clock: a file's timestamp may lag the clock
    (coarse file-system time, a network server's clock), and a fresh report must never look
    older than its phase."""
    out: dict[str, tuple[int, int]] = {}
    for path in _report_files(paths.audit_reports):
        try:
            st = path.stat()
        except OSError:
            continue
        out[path.name] = (st.st_mtime_ns, st.st_size)
    return out


def report_written(paths: ProjectPaths, name: str, before: ReportSnapshot) -> Path | None:
    """A report for exactly this audit, created or changed since the snapshot `before`.

    The file name is the audit name in any case followed by `-`. A file that also starts with
    a longer audit's name or kebab form (`DEAD` vs `DEAD-CODE-…`, `dead-code-…`) is that
    audit's report."""
    prefix = name.lower() + "-"
    others = {form + "-" for n in available(paths) for form in (n.lower(), kebab(n))}
    longer = [p for p in others if p.startswith(prefix) and p != prefix]
    for path in sorted(_report_files(paths.audit_reports)):
        lowered = path.name.lower()
        if not lowered.startswith(prefix) or any(lowered.startswith(p) for p in longer):
            continue
        try:
            st = path.stat()
        except OSError:
            continue
        if before.get(path.name) != (st.st_mtime_ns, st.st_size):
            return path
    return None


def _report_files(directory: Path) -> list[Path]:
    try:
        return [p for p in directory.iterdir() if p.suffix == ".md" and p.is_file()]
    except OSError:
        return []


# -- prompt context (AUD-20) --------------------------------------------------------------------


def audit_info(
    definition: AuditDefinition,
    paths: ProjectPaths | None,
    now: datetime,
    invalid_findings: Iterable[InvalidFinding] = (),
) -> AuditInfo:
    return AuditInfo(
        name=definition.name,
        kebab=definition.kebab,
        title=definition.title,
        category=definition.category,
        body=definition.body,
        references=companions(definition, paths),
        report_path=report_path(definition.name, now),
        finding_prefix=definition.finding_prefix,
        invalid_findings=tuple(invalid_findings),
    )
