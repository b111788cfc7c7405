"""A checkpoint's trees, written by aidd from the index `git add` left: the `git write-tree` run
was one of the two processes an iteration cost (issue 33).

`IndexTrees` holds the index the last checkpoint left, folder by folder, with each folder's tree
id. After `git add -A -v`, only the paths it named are looked up in the new index, and only the
folders above them are hashed and written again, as git's write-tree does with its cache. Every
rule on the way in (ignore files, line endings, modes, links, gitlinks) stays git's: a path's
mode and object id are read from the index git wrote, never from the work tree.

The index is untrusted. Anything this reader does not fully understand (a version other than 2,
a split or sparse index, a flag, a conflict, a name git would not write) makes it answer None,
and git writes the tree. When it is loaded it must give the last checkpoint's tree exactly, and
after each update it must hold as many paths as the index says it has.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path

from aidd.fsio import read_file
from aidd.project.gitobjects import Objects

Entry = tuple[int, bytes]  # mode, object id (raw)
Writer = Callable[[bytes], object]  # places a raw object (`tree <n>\0...`); its id is ours

_HEADER = 12
_STAT = 40  # ctime, mtime, dev, ino, mode, uid, gid, size
_MODES = frozenset((0o100644, 0o100755, 0o120000, 0o160000))
_TREE = 0o40000
_FLAGS = 0xF000  # assume-valid, extended, stage: none is written by `git add` here
_LONG = 0xFFF  # a name this long is not counted in its flags: git's write-tree then
_DEPTH = 256  # folders deeper than this are git's to write (the hashing recurses)
_INDEX_LIMIT = 64 << 20  # an index larger than this is git's to read
_ENTRIES = 100_000  # and one of more paths: held, they would take tens of MB


class IndexTrees:
    """The trees of one index file between checkpoints, written to `objects`."""

    def __init__(self, root: Path, index: Path, objects: Objects) -> None:
        self._root_dir, self._index, self._objects = root, index, objects
        self._hash = hashlib.sha256 if objects.sha256 else hashlib.sha1
        self._size = 32 if objects.sha256 else 20
        self._files: dict[bytes, dict[bytes, Entry]] = {}  # folder -> name -> entry
        self._dirs: dict[bytes, set[bytes]] = {}  # folder -> its folders' names
        self._ids: dict[bytes, bytes] = {}  # folder -> its tree id, while it is unchanged
        self._count = 0
        self.tree: str | None = None  # the root's id, hex; None: nothing loaded

    def hold(self, tree: str) -> None:
        """Before `git add`: hold the index as it is now, which the last checkpoint left with
        `tree` as its tree (read only when another is held)."""
        if self.tree != tree:
            index = self._read()
            if index is None or not self.load(index, tree):
                self.tree = None

    def write(self, names: Iterable[str]) -> str | None:
        """After `git add` named `names` (as `add -v` prints them): the index's tree, written;
        None: git's to write."""
        index = self._read()
        paths = [name.encode("utf-8", "surrogateescape") for name in names]
        try:
            return None if index is None else self.update(index, paths,
                                                          self._objects.write_object)
        except OSError:  # UnsafePathError included: git's then, as before
            self.tree = None
            return None

    def _read(self) -> bytes | None:
        try:
            return read_file(self._root_dir, self._index, _INDEX_LIMIT)
        except OSError:
            return None

    def load(self, index: bytes, tree: str) -> bool:
        """Hold `index`, the one the last checkpoint left with `tree` as its tree. False: not
        understood, or not that tree (nothing held then)."""
        self.tree = None
        self._files, self._dirs, self._ids = {b"": {}}, {b"": set()}, {}
        entries = _entries(index, self._size)
        if entries is None:
            return False
        self._count = 0
        for path, entry in entries:
            if not self._put(path, entry):
                return False
        if self._count != len(entries):  # a name twice
            return False
        root = self._top(None)
        if root != tree:
            return False
        self.tree = root
        return True

    def update(self, index: bytes, paths: Iterable[bytes], write: Writer) -> str | None:
        """The tree of `index` once `git add` changed `paths` in it (each looked up: found, its
        entry now; absent, gone), the new trees written; None: not understood (nothing held
        then: `load` again)."""
        tree, self.tree = self.tree, None
        count = _count(index)
        if tree is None or count is None:
            return None
        found: list[tuple[bytes, Entry | None]] = []
        at = _HEADER
        for path in sorted(set(paths)):
            hit = _find(index, path, self._size, at)
            if hit is not None:
                at = hit[0]
            found.append((path, hit and hit[1]))
        for path, _ in sorted((f for f in found if f[1] is None), reverse=True):
            if not self._drop(path):
                return None
        for path, entry in found:
            if entry is not None and not self._put(path, entry):
                return None
        if self._count != count:
            return None
        self.tree = self._top(write)
        return self.tree

    def _put(self, path: bytes, entry: Entry) -> bool:
        folder, _, name = path.rpartition(b"/")
        if (name in (b"", b".", b"..") or entry[0] not in _MODES or path.count(b"/") > _DEPTH
                or not self._folder(folder)):
            return False
        files = self._files[folder]
        if name in self._dirs[folder]:  # a folder become a file: git drops what it held
            self._forget(folder + b"/" + name if folder else name)
        self._count += name not in files
        files[name] = entry
        self._changed(folder)
        return True

    def _folder(self, folder: bytes) -> bool:
        """Make `folder` and those above it; False where a file holds one of their names."""
        if folder in self._files:
            return True
        parent, _, name = folder.rpartition(b"/")
        if not name or name in (b".", b"..") or not self._folder(parent):
            return False
        if name in self._files[parent]:  # `add -v` names a file become a folder: dropped
            return False
        self._dirs[parent].add(name)
        self._files[folder], self._dirs[folder] = {}, set()
        return True

    def _drop(self, path: bytes) -> bool:
        folder, _, name = path.rpartition(b"/")
        files = self._files.get(folder)
        if files is None or name not in files:
            return False
        del files[name]
        self._count -= 1
        self._changed(folder)
        while folder and not self._files[folder] and not self._dirs[folder]:
            del self._files[folder], self._dirs[folder]
            folder, _, name = folder.rpartition(b"/")
            self._dirs[folder].discard(name)
        return True

    def _forget(self, folder: bytes) -> None:
        """Drop `folder` and all it holds (`add -v` names none of its files)."""
        inside = folder + b"/"
        for each in [f for f in self._files if f == folder or f.startswith(inside)]:
            self._count -= len(self._files.pop(each))
            del self._dirs[each]
            self._ids.pop(each, None)
        parent, _, name = folder.rpartition(b"/")
        self._dirs[parent].discard(name)
        self._changed(parent)

    def _changed(self, folder: bytes) -> None:
        """Forget the ids of `folder` and of every folder above it."""
        while True:
            self._ids.pop(folder, None)
            if not folder:
                return
            folder = folder.rpartition(b"/")[0]

    def _top(self, write: Writer | None) -> str:
        """The root's id; the trees not known yet hashed and, with `write`, written."""
        return self._id(b"", write).hex()

    def _id(self, folder: bytes, write: Writer | None) -> bytes:
        known = self._ids.get(folder)
        if known is not None:
            return known
        prefix = folder + b"/" if folder else b""
        rows = [(name, b"%o %s\0%s" % (mode, name, oid))
                for name, (mode, oid) in self._files[folder].items()]
        rows += [(name + b"/", b"%o %s\0%s" % (_TREE, name, self._id(prefix + name, write)))
                 for name in self._dirs[folder]]
        body = b"".join(row for _, row in sorted(rows))
        raw = b"tree %d\0%s" % (len(body), body)
        if write is not None:
            write(raw)
        self._ids[folder] = oid = self._hash(raw).digest()
        return oid


def _count(index: bytes) -> int | None:
    """The number of entries a version-2 index says it holds; None: another version."""
    if len(index) < _HEADER or index[:4] != b"DIRC" or index[4:8] != b"\0\0\0\2":
        return None
    return int.from_bytes(index[8:12], "big")


def _entries(index: bytes, size: int) -> list[tuple[bytes, Entry]] | None:
    """Every entry of a version-2 index in order; None: one this reader does not take."""
    count = _count(index)
    if count is None or count > _ENTRIES:
        return None
    out = []
    at, names = _HEADER, _STAT + size + 2
    for _ in range(count):
        flags = int.from_bytes(index[at + names - 2:at + names], "big")
        length = flags & _LONG
        end = at + ((names + length + 8) & ~7)
        if flags & _FLAGS or length == _LONG or end > len(index) or any(
                index[at + names + length:end]):
            return None
        mode = int.from_bytes(index[at + 24:at + 28], "big")
        out.append((index[at + names:at + names + length],
                    (mode, index[at + _STAT:at + _STAT + size])))
        at = end
    if [path for path, _ in out] != sorted(path for path, _ in out):
        return None
    return out


def _find(index: bytes, path: bytes, size: int, start: int) -> tuple[int, Entry] | None:
    """`path`'s entry in `index` at `start` or after (entries are in name order): where it
    begins and what it holds, or None. An entry's name comes right after its flags, which hold
    the name's length, so one search finds it; a match that is not where an entry can begin,
    or is not followed by the entry's padding, is not one."""
    if not 0 < len(path) < _LONG or b"\0" in path:
        return None
    names = _STAT + size + 2
    needle = len(path).to_bytes(2, "big") + path + b"\0"
    at = index.find(needle, start + names - 2)
    while at >= 0:
        begin = at + 2 - names
        end = begin + ((names + len(path) + 8) & ~7)
        if (begin - _HEADER) % 8 == 0 and not any(index[at + 2 + len(path):end]):
            mode = int.from_bytes(index[begin + 24:begin + 28], "big")
            return begin, (mode, index[begin + _STAT:begin + _STAT + size])
        at = index.find(needle, at + 1)
    return None
