"""The project on disk: the directory usable (or creatable), the spec, free space, and no
link or FIFO planted where aidd reads and writes (issue 13)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from aidd.config import Settings
from aidd.doctor.findings import Finding, fail, ok, warn
from aidd.errors import ExitCode, NotFoundError
from aidd.project.detect import Origin, detect_origin
from aidd.project.paths import ProjectPaths, check_layout

MIB = 1 << 20
DISK_WARN = 1024 * MIB  # under this a long night's logs and checkpoints may not fit
DISK_FAIL = 100 * MIB  # under this an attempt may not even write its log
_SCAN_LIMIT = 5000  # entries of .automaker looked at: the check stays quick
_SKIPPED = ("iterations", "checkpoints.git")  # aidd's own, large, checked by the run itself


def existing_parent(path: Path) -> Path:
    """`path`, or its nearest ancestor that exists (where a missing project dir would go)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_project_dir(root: Path) -> Finding:
    if root.exists() and not root.is_dir():
        return fail("project", f"{root} exists and is not a directory",
                    "pass --project-dir a directory", ExitCode.INVALID_ARGS)
    if root.is_dir():
        if not os.access(root, os.R_OK | os.W_OK | os.X_OK):
            return fail("project", f"{root} is not readable and writable by this user",
                        "fix its permissions or run aidd as its owner", ExitCode.NOT_FOUND)
        return ok("project", f"{root} is writable")
    parent = existing_parent(root)
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        return fail("project", f"{root} does not exist and cannot be created ({parent} is not "
                    "writable)", "create it, or choose another --project-dir",
                    ExitCode.NOT_FOUND)
    return ok("project", f"{root} does not exist yet; a run creates it")


def check_spec(settings: Settings, paths: ProjectPaths) -> Finding:
    spec = settings.spec
    if spec is not None:
        if not spec.is_file():
            what = "does not exist" if not spec.exists() else "is not a regular file"
            return fail("spec", f"--spec {spec} {what}", "pass the path of your spec file",
                        ExitCode.NOT_FOUND)
        if not os.access(spec, os.R_OK):
            return fail("spec", f"--spec {spec} is not readable", "fix its permissions",
                        ExitCode.NOT_FOUND)
        return ok("spec", f"{spec} is readable")
    if paths.app_spec.is_file():
        return ok("spec", f"{paths.rel(paths.app_spec)} is there")
    if not paths.root.is_dir() or detect_origin(paths) is Origin.NEW:
        return warn("spec", "the project is new and has no .automaker/app_spec.txt",
                    "give the first run --spec FILE (or start from existing code)")
    return ok("spec", "existing code, no spec needed")


def check_disk(root: Path) -> Finding:
    where = existing_parent(root)
    try:
        free = shutil.disk_usage(where).free
    except OSError as exc:
        return warn("disk", f"free space in {where} unknown ({exc.strerror})",
                    "check it with df")
    shown = f"{free / (1 << 30):.1f} GiB" if free >= DISK_WARN else f"{free // MIB} MiB"
    if free < DISK_FAIL:
        return fail("disk", f"{shown} free in {where}: attempts would fail to write their logs",
                    "free some space (at least 1 GiB)", ExitCode.NOT_FOUND)
    if free < DISK_WARN:
        return warn("disk", f"only {shown} free in {where}",
                    "free some space: logs and checkpoints grow through the night")
    return ok("disk", f"{shown} free in {where}")


def check_links(paths: ProjectPaths) -> Finding:
    """The project directory may be a link (the user's choice); `.automaker` and what aidd
    writes in it may not be (a run refuses them, exit 3), and links or FIFOs elsewhere in it
    are skipped or refused wherever aidd reads them."""
    root = paths.root
    if not root.is_dir():
        return ok("links", "no project directory yet")
    try:
        check_layout(paths)
    except NotFoundError as exc:  # its message names the path
        return fail("links", str(exc).removeprefix("refused: "), "remove the link or odd file "
                    "(a cloned repository may have planted it)", ExitCode.NOT_FOUND)
    odd = _odd_entries(paths.automaker)
    if odd:
        more = f" and {len(odd) - 3} more" if len(odd) > 3 else ""
        return warn("links", "links or special files in .automaker, which aidd refuses to "
                    f"follow: {', '.join(paths.rel(p) for p in odd[:3])}{more}",
                    "replace them with plain files and directories")
    if root.is_symlink():
        return warn("links", f"{root} is a symlink to {os.path.realpath(root)}",
                    "fine if you meant it; aidd works in the real directory")
    return ok("links", "no symlink, hard link or FIFO where aidd reads and writes")


def _odd_entries(top: Path) -> list[Path]:
    """Symlinks, FIFOs, devices, sockets and hard-linked files under `top` (bounded)."""
    found: list[Path] = []
    pending, seen = [top], 0
    while pending and seen < _SCAN_LIMIT:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:  # gone since the listing
                continue
            if stat.S_ISDIR(info.st_mode):
                if entry.name not in _SKIPPED:
                    pending.append(Path(entry.path))
            elif not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                found.append(Path(entry.path))
    return sorted(found)

