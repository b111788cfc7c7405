"""Files inside the project, which is untrusted ground (README "Security model", REL-4): every
write reached from the project root without following a link, whole files replaced atomically,
reads that never block and stay inside the project."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

# The project directory itself is the user's choice and trusted; everything below it may have
# been planted by a cloned repository or the agent. So every path aidd writes is reached from the
# project root one directory at a time with O_NOFOLLOW (a symlinked `.automaker` or subdirectory
# is refused, never followed), files are created or appended to with O_NOFOLLOW and must be
# regular files with one link, and whole files are replaced atomically (temp file + fsync +
# rename, LAY-12) in that verified directory. Reads open without blocking (a FIFO cannot hang
# aidd), must land on a regular file inside the project, and are capped in size.

TMP_PREFIX = ".aidd-tmp-"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC  # a temp file
_LINK_ERRNOS = (errno.ELOOP, errno.EMLINK, errno.ENOTDIR)


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


# -- directories ------------------------------------------------------------------------------
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
                if exc.errno in _LINK_ERRNOS:
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


# -- writing ----------------------------------------------------------------------------------
def _parent_fd(root: Path, path: Path, create: bool) -> int:
    rel = _relative(root, path)
    if not rel.name or rel.name == "..":
        raise UnsafePathError(path, "is not a file path")
    return open_dir(root, rel.parent, create=create)


def open_file(root: Path, path: Path, flags: int, mode: int = 0o644, *,
              create_dirs: bool = False) -> int:
    """Open (usually create) the file `path` for writing: never through a symlink, never a FIFO
    or device, never a file with another hard link (writing it would change that other name)."""
    dirfd = _parent_fd(root, path, create_dirs)
    try:
        fd = os.open(path.name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode,
                     dir_fd=dirfd)
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS:
            raise UnsafePathError(path, "is a symlink (refused)") from None
        if exc.errno == errno.ENXIO:  # a FIFO without a reader (O_NONBLOCK)
            raise UnsafePathError(path, "is not a regular file") from None
        raise
    finally:
        os.close(dirfd)
    try:
        _check_plain(fd, path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_plain(fd: int, path: Path) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePathError(path, "is not a regular file")
    if info.st_nlink > 1:
        raise UnsafePathError(path, "has other hard links (refused)")


def open_append(root: Path, path: Path) -> int:
    """An O_APPEND fd on `path` (created 0644), for logs and events."""
    return open_file(root, path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)


def write_all(fd: int, data: bytes) -> None:
    """`os.write` until every byte is written (a short write is not an error)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_atomic(path: Path, data: bytes | str, mode: int | None = None, *,
                 root: Path) -> None:
    """Replace `path` with `data` so a reader (or a crash) sees the old or the new file."""
    with atomic_file(root, path, mode) as out:
        out.file.write(data.encode() if isinstance(data, str) else data)


class AtomicFile:
    """The temp file `atomic_file` yields: write through `file`; set `times_ns` to give the
    result those (atime, mtime), or `discard()` to leave the old file as it is."""

    def __init__(self, file: BinaryIO, mode: int) -> None:
        self.file = file
        self.mode = mode
        self.times_ns: tuple[int, int] | None = None
        self.discarded = False

    def discard(self) -> None:
        self.discarded = True


@contextlib.contextmanager
def atomic_file(root: Path, path: Path, mode: int | None = None) -> Iterator[AtomicFile]:
    """A temp file next to `path` (below `root`, reached without following a link) that
    replaces `path` when the block ends: written, fsynced, given `mode` (default: the old
    file's, else 0644), renamed. A reader (or a crash) sees the old or the new file; an
    exception or `discard()` leaves the old one and removes the temp file. The rename replaces
    a planted symlink or hard link itself, never what it points to (LAY-12)."""
    dirfd = _parent_fd(root, path, create=False)
    try:
        tmp = TMP_PREFIX + os.urandom(6).hex()  # what secrets.token_hex does, unimported
        fd = os.open(tmp, _NEW, 0o600, dir_fd=dirfd)
        try:
            with os.fdopen(fd, "wb") as file:
                out = AtomicFile(file, _old_mode(dirfd, path.name) if mode is None else mode)
                yield out
                if not out.discarded:
                    _finish(file, out)
            if out.discarded:
                os.unlink(tmp, dir_fd=dirfd)
            else:
                os.rename(tmp, path.name, src_dir_fd=dirfd, dst_dir_fd=dirfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dirfd)
            raise
    finally:
        os.close(dirfd)


def place(root: Path, tmp_dir: Path, path: Path, data: bytes, mode: int, *,
          replace: bool) -> bool:
    """`data` in a temp file in `tmp_dir` renamed to `path` (no link followed): a kill leaves it
    there, never in refs/. Unsynced, as git's refs. `replace=False` links: `path` kept (False).
    A folder that is both (status.md's, a prompt's) is opened once (issue 33)."""
    tmp = f"{TMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"  # whose: for a later clean-up
    dst = src = open_dir(root, _relative(root, tmp_dir), create=True)
    renamed = False
    try:
        if tmp_dir != path.parent:
            dst = _parent_fd(root, path, create=True)
        with os.fdopen(os.open(tmp, _NEW, mode, dir_fd=src), "wb") as file:
            file.write(data)
        with contextlib.suppress(FileExistsError):
            (os.rename if replace else os.link)(tmp, path.name, src_dir_fd=src, dst_dir_fd=dst)
            renamed = replace
            return True
        return False
    finally:
        if not renamed:  # linked, or it failed
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=src)
        for fd in {src, dst}:
            os.close(fd)


def _finish(file: BinaryIO, out: AtomicFile) -> None:
    file.flush()
    fd = file.fileno()
    os.fsync(fd)
    os.fchmod(fd, out.mode)
    if out.times_ns is not None:
        os.utime(fd, ns=out.times_ns)


def _old_mode(dirfd: int, name: str) -> int:
    try:
        info = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except OSError:
        return 0o644
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else 0o644


def unlink(root: Path, path: Path) -> bool:
    """Remove the directory entry `path` (a link itself, never its target); False if missing."""
    dirfd = _parent_fd(root, path, create=False)
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


# -- reading ----------------------------------------------------------------------------------
def read_file(root: Path, path: Path, limit: int) -> bytes:
    """The bytes of a project file: it must be a regular file whose real location is inside
    `root` (a symlink may lead elsewhere in the project, never out of it) and at most `limit`
    bytes. Never blocks on a FIFO. Raises FileNotFoundError, UnsafePathError,
    FileTooLargeError or another OSError."""
    with open_read(root, path) as file:
        if os.fstat(file.fileno()).st_size > limit:
            raise FileTooLargeError(path, limit)
        return _read_capped(file.fileno(), path, limit)


def open_read(root: Path, path: Path) -> BinaryIO:
    """`path` opened for reading as a stream (a log cleaned chunk by chunk, the tail of a
    file), after `read_file`'s checks: a regular file whose real location is inside `root`,
    opened without blocking (a FIFO planted there is refused, never waited on). The caller
    bounds what it reads. Raises FileNotFoundError, UnsafePathError or another OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafePathError(path, "is not a regular file")
        real = _real_path(fd, path)  # resolved: below `root` as given, `root` has no link
        if not (_inside(real, str(root)) or _inside(real, os.path.realpath(root))):
            raise UnsafePathError(path, "leads outside the project (refused)")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _real_path(fd: int, path: Path) -> str:
    """Where the open file really is: /proc knows (no race); elsewhere ask realpath."""
    try:
        return str(Path(f"/proc/self/fd/{fd}").readlink())
    except OSError:
        return os.path.realpath(path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _read_capped(fd: int, path: Path, limit: int) -> bytes:
    parts = []
    total = 0
    while chunk := os.read(fd, 1 << 16):
        total += len(chunk)
        if total > limit:  # it grew while we read
            raise FileTooLargeError(path, limit)
        parts.append(chunk)
    return b"".join(parts)


def write_crash_file(root: Path, text: str) -> Path | None:
    """`.automaker/aidd-crash-<UTC time>-<pid>[-N].txt` holding `text`, never overwriting an
    earlier one; None when it could not be written whole (a full disk leaves no empty file
    named in a message)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    automaker = root / ".automaker"
    for n in range(100):
        path = automaker / f"aidd-crash-{stamp}-{os.getpid()}{f'-{n}' if n else ''}.txt"
        try:
            fd = open_file(root, path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        except OSError:
            return None
        try:
            write_all(fd, text.encode("utf-8", "replace"))
            os.fsync(fd)
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                unlink(root, path)
            return None
        os.close(fd)
        return path
    return None
