"""`--check-features` (FEA-20): every feature.json judged on its own, every error listed."""

from __future__ import annotations

from aidd.errors import ExitCode, NotFoundError
from aidd.project.features import FeatureFile, duplicate_ids, load_features
from aidd.project.paths import ProjectPaths

ALL_VALID = "All feature.json files are valid."
NONE_FOUND = "No feature files found."


def check_features(paths: ProjectPaths) -> tuple[str, ExitCode]:
    """The full stdout text and the exit code: 0 all valid or none, 7 any invalid.

    Raises NotFoundError (3) when `.automaker/features/` is missing.
    """
    if not paths.features.is_dir():
        raise NotFoundError(f"{paths.rel(paths.features)} does not exist")
    files = load_features(paths)
    invalid = [f for f in files if not f.is_valid]
    lines = [
        f"Feature validation: {paths.root.absolute()}",
        f"Total files: {len(files)}",
        f"Valid: {len(files) - len(invalid)}",
        f"Invalid: {len(invalid)}",
    ]
    if invalid:
        lines += ["", "Invalid files:"]
        for file in invalid:
            lines += _invalid_block(paths, file)
    lines += _warnings(paths, files)
    if not files:
        lines += ["", NONE_FOUND]
    elif not invalid:
        lines += ["", ALL_VALID]
    code = ExitCode.VALIDATION_ERROR if invalid else ExitCode.SUCCESS
    return "\n".join(lines) + "\n", code


def _invalid_block(paths: ProjectPaths, file: FeatureFile) -> list[str]:
    return [
        "",
        f"  {file.dir_name}",
        f"    {paths.rel(file.path)}",
        *(f"    - {message}" for message in file.messages()),
    ]


def _warnings(paths: ProjectPaths, files: list[FeatureFile]) -> list[str]:
    dupes = duplicate_ids(files)
    if not dupes:
        return []
    lines = ["", "Warnings:"]
    for fid, holders in dupes.items():
        where = ", ".join(paths.rel(f.path) for f in holders)
        lines.append(f"  id {fid!r} is used by {len(holders)} files: {where}")
    return lines
