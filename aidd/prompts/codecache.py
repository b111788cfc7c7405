"""Compiled prompt templates kept between runs (issue 33): compiling every template took
0.1-0.3 s of each run's start. An entry is one template's Python code and the names it
includes (what `compile_all` checks), in the user's cache folder (`$XDG_CACHE_HOME/aidd`, else
`~/.cache/aidd`), never in a project.

An entry is used only for the very text it was compiled from: its file is named by the
template's name and path, and begins with a SHA-256 of aidd's, Jinja's and Python's versions,
the environment's options, that name and path and the template's whole source. A project's
override is compiled from its own text or not at all, whatever another project left. A folder
that is missing, not the user's, open to others or unwritable means no cache: templates
compile as before. Not jinja2.FileSystemBytecodeCache: it keeps no includes (the parse they
come from is a third of the compile) and reads a pickle."""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from types import CodeType
from typing import TypeGuard

import jinja2

from aidd import __version__

_FORMAT = b"aidd-templates 1"
_LIMIT = 8 << 20  # an entry's size: the largest shipped template compiles to ~60 KiB
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
Reference = tuple[str, bool, int]  # a name included, whether it may be missing, the line
Entry = tuple[tuple[Reference, ...], CodeType]


class CodeCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def for_user(cls, environ: Mapping[str, str]) -> CodeCache | None:
        """The user's cache folder (an XDG_CACHE_HOME that is not absolute is ignored, as
        the XDG spec says), made 0700; None when it cannot be made or is not safe."""
        base = Path(environ.get("XDG_CACHE_HOME") or ".")
        if not base.is_absolute():
            base = Path(environ.get("HOME") or ".") / ".cache"
            if not base.is_absolute():
                return None
        directory = base / "aidd" / "templates"
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = os.lstat(directory)
        except OSError:
            return None
        private = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not (
            info.st_mode & 0o077)
        return cls(directory) if private else None

    def get(self, env: jinja2.Environment, name: str, filename: str,
            source: str) -> Entry | None:
        """The entry compiled from exactly `source`, or None (none yet, another text, another
        aidd or Python, unreadable, damaged)."""
        try:
            fd = os.open(self._path(name, filename), _READ)
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or \
                        info.st_size > _LIMIT:
                    return None
                data = os.read(fd, _LIMIT + 1)
            finally:
                os.close(fd)
        except OSError:
            return None
        check = _check(env, name, filename, source)
        if not data.startswith(check):
            return None
        try:
            entry = marshal.loads(data[len(check):])
        except (EOFError, ValueError, TypeError):
            return None
        return entry if _well_formed(entry) else None

    def put(self, env: jinja2.Environment, name: str, filename: str, source: str,
            entry: Entry) -> None:
        """Write the entry atomically (a temp file renamed; not synced: a torn one fails its
        check and is compiled again); any failure leaves the cache as it was."""
        path = self._path(name, filename)
        temp = path.with_name(f".tmp-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            data = _check(env, name, filename, source) + marshal.dumps(entry)
            fd = os.open(temp, _WRITE, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            temp.replace(path)
        except (OSError, ValueError):  # ValueError: code marshal cannot write
            with contextlib.suppress(OSError):
                temp.unlink()

    def _path(self, name: str, filename: str) -> Path:
        key = hashlib.sha256(f"{name}\0{filename}".encode("utf-8", "surrogatepass"))
        return self.directory / f"{key.hexdigest()[:40]}.code"


def _check(env: jinja2.Environment, name: str, filename: str, source: str) -> bytes:
    """What the entry was compiled by and from: the file starts with these 32 bytes."""
    flavour = repr((__version__, jinja2.__version__, sys.hexversion, sys.implementation.name,
                    type(env).__qualname__, env.block_start_string, env.block_end_string,
                    env.variable_start_string, env.variable_end_string, env.comment_start_string,
                    env.comment_end_string, env.line_statement_prefix, env.line_comment_prefix,
                    env.trim_blocks,
                    env.lstrip_blocks, env.newline_sequence, env.keep_trailing_newline,
                    env.autoescape, env.optimized, sorted(env.extensions),
                    sorted(env.filters), sorted(env.tests)))
    digest = hashlib.sha256(_FORMAT)
    for part in (flavour, name, filename, source):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.digest()


def _well_formed(entry: object) -> TypeGuard[Entry]:
    if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], CodeType)
            and isinstance(entry[0], tuple)):
        return False
    return all(isinstance(r, tuple) and len(r) == 3 and isinstance(r[0], str)
               and isinstance(r[1], bool) and type(r[2]) is int for r in entry[0])
