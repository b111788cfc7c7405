"""Folders below the project root, each reached without following a link; the errors of
every project path; names removed (a link itself, never its target), temp files a killed run
left."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

TMP_PREFIX = ".aidd-tmp-"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
LINK_ERRNOS = (errno.ELOOP, errno.EMLINK, errno.ENOTDIR)


class UnsafePathError(OSError):
    """A project path aidd would use is a symlink, a hard link, a FIFO or another odd file, or
    leads outside the project. An OSError, so every reader's "cannot read" path handles it."""

    def __init__(self, path: Path | str, why: str) -> None:
        super().__init__(errno.EPERM, why, str(path))
        self.why = why

    def __str__(self) -> str:
        return f"{self.filename}: {self.why}"


class FileTooLargeError(OSError):
    def __init__(self, path: Path | str, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {_size(limit)}", str(path))
        self.limit = limit

    def __str__(self) -> str:
        return f"{self.filename}: larger than the {_size(self.limit)} limit"


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"



def _relative(root: Path, path: Path) -> Path:
    try:
        return path.relative_to(root)
    except ValueError:
        raise UnsafePathError(path, f"is not inside the project {root}") from None


def open_dir(root: Path, rel: Path | str = ".", *, create: bool = False) -> int:
    """A directory fd for `root/rel`, every component below `root` opened without following a
    symlink (refused with UnsafePathError). `create` makes missing directories (0755)."""
    fd = os.open(root, _DIR_FLAGS)
    parts = [part for part in Path(rel).parts if part not in (".", "")]
    try:  # where, as a Path, is made only for a message (a join each folder was, issue 33)
        for i, part in enumerate(parts):
            if part == "..":
                raise UnsafePathError(root.joinpath(*parts[:i + 1]), "leads out of its directory")
            parent, fd = fd, -1  # `_step` closes `parent`, whatever happens
            fd = _step(parent, part, root, parts[:i + 1], create)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise
    return fd


def _step(parent: int, name: str, root: Path, down: list[str], create: bool) -> int:
    """Open `name` below the directory `parent` (closing `parent`), never through a link."""
    try:
        for attempt in (0, 1):
            try:
                return os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=parent)
            except FileNotFoundError:
                if not create or attempt:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=parent)
            except OSError as exc:
                if exc.errno in LINK_ERRNOS:
                    raise UnsafePathError(root.joinpath(*down), _odd_dir(parent, name)) from None
                raise
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(root.joinpath(*down)))
    finally:
        os.close(parent)


def _odd_dir(parent: int, name: str) -> str:
    try:
        mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except OSError:
        return "is not a directory"
    return "is a symlink (refused)" if stat.S_ISLNK(mode) else "is not a directory"


def check_dir(root: Path, path: Path) -> None:
    """Raise UnsafePathError when `path` (below `root`) or a directory above it is a symlink or
    not a directory; a missing one is fine."""
    rel = _relative(root, path)
    with contextlib.suppress(FileNotFoundError):
        os.close(open_dir(root, rel))


def check_file(path: Path) -> None:
    """Raise UnsafePathError when the file aidd will append to at `path` is a symlink, a hard
    link or not a regular file (the directories above are `check_dir`'s); missing is fine."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePathError(path, "is a symlink (refused)")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePathError(path, "is not a regular file")
    if info.st_nlink > 1:
        raise UnsafePathError(path, "has other hard links (refused)")


def make_dirs(root: Path, path: Path) -> None:
    """`mkdir -p` below `root` that never follows a planted link."""
    os.close(open_dir(root, _relative(root, path), create=True))



def parent_fd(root: Path, path: Path, create: bool) -> int:
    rel = _relative(root, path)
    if not rel.name or rel.name == "..":
        raise UnsafePathError(path, "is not a file path")
    return open_dir(root, rel.parent, create=create)



def unlink(root: Path, path: Path) -> bool:
    """Remove the directory entry `path` (a link itself, never its target); False if missing."""
    dirfd = parent_fd(root, path, create=False)
    try:
        os.unlink(path.name, dir_fd=dirfd)
    except FileNotFoundError:
        return False
    finally:
        os.close(dirfd)
    return True


def remove_stale_temps(root: Path, *directories: Path,
                       keep: Callable[[str], bool] = lambda _: False) -> list[Path]:
    """Delete temp files an earlier, killed run left behind in `directories` (not recursive)
    but those `keep` names; returns what was deleted. Only while holding the project lock."""
    removed = []
    for directory in directories:
        for name in (n for n in _temp_names(root, directory) if not keep(n)):
            with contextlib.suppress(OSError):
                if unlink(root, directory / name):
                    removed.append(directory / name)
    return removed


def _temp_names(root: Path, directory: Path) -> Iterator[str]:
    try:
        fd = open_dir(root, _relative(root, directory))
    except OSError:
        return
    try:
        names = os.listdir(fd)  # noqa: PTH208 - a directory fd, which Path cannot take
    except OSError:
        names = []
    finally:
        os.close(fd)
    yield from (n for n in names if n.startswith(TMP_PREFIX))


