"""A checkpoint's commit object and ref, written by aidd itself: each is a few bytes, and a git
run for each cost two of an iteration's processes (issue 33).

A commit is a loose object (zlib of `commit <size>\\0<text>`, named by its SHA-1, or SHA-256
where the repository says `extensions.objectFormat=sha256`), never written over an existing
one. A ref is its commit id and a newline. Both are written to a temp file in `<git-dir>/aidd/tmp`
and renamed into place (fsio.place): a kill -9 leaves nothing in `objects/` or `refs/` that git
reads, and the next store cleans that temp folder. Where the refs are not plain files (reftable),
a packed ref of that name exists, or the config asks for reflogs of every ref, `write_ref` says
no and the caller runs `git update-ref`. The git directory is untrusted: every write goes through
fsio (no link followed, nothing outside `root`).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from aidd.fsio import TMP_PREFIX, open_dir, open_read, place, read_file, remove_stale_temps
from aidd.project.gitlayout import remembered

TMP = Path("aidd") / "tmp"  # below the git directory: git never reads it
_REF = re.compile(r"refs/aidd/checkpoints/[A-Za-z0-9_.-]+/[A-Za-z0-9_-]+")
_PACKED_LIMIT = 8 << 20  # a packed-refs larger than this is git's to read
_OBJECT = 0o444  # git's own loose objects are read-only


class Objects(NamedTuple):
    """Where one repository keeps its objects and refs (`common`: the repository's own git
    directory, a linked worktree's shared one), below `root` (fsio's boundary)."""

    root: Path
    common: Path
    sha256: bool = False
    plain_refs: bool = True  # the files backend, and no reflog of every ref asked for
    loose: bool = True  # no second hash to map each object to (extensions.compatObjectFormat)

    @classmethod
    def of(cls, root: Path, common: Path,
           listing: Iterable[tuple[str, str, str]]) -> Objects:
        """From the repository's config listing (project/git): only its local scope counts."""
        config = {key.lower(): value.lower() for scope, key, value in listing
                  if scope in ("local", "worktree", "command")}
        plain = (config.get("extensions.refstorage", "files") == "files"
                 and config.get("core.logallrefupdates", "") != "always")
        return cls(root, common, config.get("extensions.objectformat") == "sha256", plain,
                   "extensions.compatobjectformat" not in config)

    def clean(self) -> None:
        """Remove the temp files a killed writer left; this process's own (its other stores:
        `--parallel N`'s slots) may be mid-write."""
        mine = f"{TMP_PREFIX}{os.getpid()}-"
        remove_stale_temps(self.root, self.common / TMP, keep=lambda n: n.startswith(mine))

    def _place(self, path: Path, data: bytes, mode: int, replace: bool) -> bool:
        """fsio.place from the temp folder; once more if another aidd on this repository (a
        project in another of its folders) cleaned the temp file away mid-write."""
        try:
            return place(self.root, self.common / TMP, path, data, mode, replace=replace)
        except FileNotFoundError:
            return place(self.root, self.common / TMP, path, data, mode, replace=replace)

    def write_commit(self, tree: str, parent: str | None, message: str,
                     identity: str) -> str | None:
        """The commit's id, its object written unless the store has it already; None: git
        must write it (a second object format to keep a map for)."""
        if not self.loose:
            return None
        stamp = f"{int(time.time())} {_offset()}"
        lines = [f"tree {tree}", *([f"parent {parent}"] if parent else []),
                 f"author {identity} {stamp}", f"committer {identity} {stamp}", "", message]
        body = "\n".join(lines).encode("utf-8")
        return self.write_object(b"commit %d\0" % len(body) + body)

    def write_object(self, raw: bytes) -> str:
        """The loose object `raw` (`<kind> <size>\\0<body>`) written unless the store has it
        already; its id. Only where `loose` holds."""
        name = (hashlib.sha256 if self.sha256 else hashlib.sha1)(raw).hexdigest()
        self._place(self.common / "objects" / name[:2] / name[2:], zlib.compress(raw, 1),
                    _OBJECT, replace=False)
        return name

    def write_ref(self, ref: str, commit: str, same_as: str | None = None) -> bool:
        """Point `ref` (a checkpoint's) at `commit`; False: git must do it (see the module).
        `same_as`: a ref of the same folder that aidd wrote with that commit, linked to when
        it still plainly holds it (`_link`)."""
        if not self.plain_refs or not _REF.fullmatch(ref) or self._packed(ref):
            return False
        data = f"{commit}\n".encode()
        if same_as is None or not self._link(self.common / same_as, self.common / ref, data):
            self._place(self.common / ref, data, 0o644, replace=True)
        return True

    def _link(self, source: Path, path: Path, data: bytes) -> bool:
        """`path` made one more name of the ref file `source`, checked to be a plain file in
        the project holding `data` (fsio.open_read): a new file costs a file system far more
        than a name (0.3 to 0.9 ms against 10 us on ext4 here), and a link is as atomic as a
        rename (a kill -9 leaves the ref whole or absent). Neither git nor aidd writes a ref
        in place (a rename replaces it), so the names part at their next write, and a name
        elsewhere for that file is never written through. The link is to the file opened and
        checked (through /proc), never to a name swapped in since. False: not done, `path`
        untouched."""
        if source.parent != path.parent:
            return False
        folder = open_dir(self.root, path.parent.relative_to(self.root))
        try:
            with open_read(self.root, source) as file:
                if file.read(len(data) + 1) != data:
                    return False
                os.link(f"/proc/self/fd/{file.fileno()}", path.name, dst_dir_fd=folder,
                        follow_symlinks=True)
        except OSError:  # gone, odd, the label again, no /proc: a write then
            return False
        finally:
            os.close(folder)
        return True

    def _packed(self, ref: str) -> bool:
        """`ref` is in packed-refs (a loose one would hide it, and git's deletion of the loose
        one bring it back), or packed-refs cannot be read: either way, git's to do. Its
        checkpoint names are read again only when its stat changed (it may hold megabytes)."""
        path = self.common / "packed-refs"
        try:
            info = path.stat()
        except FileNotFoundError:
            return False
        except OSError:
            return True
        names = remembered("checkpoint refs", self.root, path, info,
                           lambda: self._packed_names(path))
        return names is None or ref in names

    def _packed_names(self, path: Path) -> frozenset[str] | None:
        """The checkpoint refs a packed-refs names; None: it cannot be read."""
        try:
            packed = read_file(self.root, path, _PACKED_LIMIT)
        except OSError:
            return None
        return frozenset(line.partition(b" ")[2].decode("utf-8", "surrogateescape")
                         for line in packed.splitlines() if b" refs/aidd/" in line)


def _offset() -> str:
    """The local time zone as git writes it (+0100), as `git commit-tree` would."""
    seconds = time.localtime().tm_gmtoff
    sign = "-" if seconds < 0 else "+"
    minutes = abs(seconds) // 60
    return f"{sign}{minutes // 60:02d}{minutes % 60:02d}"

