"""What git knows about the window, in a handful of git runs whatever its length: the feature
files each checkpoint changed (one `diff-tree --stdin`, one `cat-file --batch`), the diffstat
of the window, and the project's own commits."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aidd.numbers import unix_s
from aidd.project import jsonfile
from aidd.project.checkpoints import INDEX, CheckpointError, CheckpointStore
from aidd.project.featurestate import is_done
from aidd.project.limits import FEATURE as FEATURE_FILE_LIMIT
from aidd.reports.morning.fmt import clean
from aidd.reports.morning.record import CheckpointRow, Diffstat, FileChange
from aidd.reports.morning.tally import HEX

_FEATURES = ".automaker/features/"
_TOP_FILES = 10
_COMMITS = 2000  # the newest project commits looked at: a night makes tens, not thousands


@dataclass(frozen=True)
class Change:
    """One feature.json as it differs between a checkpoint and the one before it."""

    feature: str  # its directory under features/
    before: bool | None  # passes before: None when the file was absent or unreadable
    after: bool | None
    title: str | None
    checkpoint: CheckpointRow  # the first checkpoint that shows the change


@dataclass(frozen=True)
class Commit:
    sha: str
    at: datetime
    subject: str


@dataclass(frozen=True)
class Findings:
    """What git said about the window."""

    kept: list[CheckpointRow]  # the window's checkpoints whose commits are there
    changes: list[Change]
    commits: list[Commit]
    diffstat: Diffstat | None


NOTHING = Findings([], [], [], None)


def read_history(store: CheckpointStore, checkpoints: list[CheckpointRow],
                 start: datetime) -> Findings:
    """Every git read of the report (a handful of git runs), or NOTHING without a
    repository."""
    try:
        view = GitView(store) if store.exists() else None
    except CheckpointError:  # a planted link where the private repository should be
        return NOTHING
    if view is None:
        return NOTHING
    commits = view.commits_since(start)
    kept = view.existing(checkpoints)
    if kept:
        return Findings(kept, view.feature_changes(kept), commits, view.diffstat(
            kept[0].commit, kept[-1].commit, "checkpoints", (kept[0].ref, kept[-1].ref)))
    return Findings([], [], commits, view.commits_diffstat(start))


class GitView:
    """Reads of the repository holding the checkpoints (the project's own, or aidd's private
    one); every method answers None or nothing when git cannot, never raises."""

    def __init__(self, store: CheckpointStore) -> None:
        self._store = store
        self._env = store.git_at(store.root / INDEX)

    @property
    def private(self) -> bool:
        return self._store.repo.private

    def _git(self, *args: str, stdin: bytes = b"") -> bytes | None:
        try:
            return self._store.git_bytes(self._env, stdin, *args)
        except CheckpointError:
            return None

    def existing(self, checkpoints: list[CheckpointRow]) -> list[CheckpointRow]:
        """The checkpoints of the runs whose commits are still there (a pruned run's go with
        git's gc). A run's checkpoints are a chain, each the parent of the next, so its last
        one being there vouches for the rest: one look per run, not per checkpoint; only a run
        whose last one is missing (or was never real) has each of its own looked at."""
        last = {c.run: c.commit for c in checkpoints}
        types = self._object_types(sorted(set(last.values())))
        kept = {run for run, sha in last.items() if types.get(sha, ("",))[0] == "commit"}
        doubtful = sorted({c.commit for c in checkpoints if c.run not in kept})
        types.update(self._object_types(doubtful))
        return [c for c in checkpoints
                if c.run in kept or types.get(c.commit, ("",))[0] == "commit"]

    def _object_types(self, shas: list[str]) -> dict[str, tuple[str, int]]:
        out = self._git("cat-file", "--batch-check", stdin="".join(s + "\n" for s in shas)
                        .encode()) if shas else None
        found: dict[str, tuple[str, int]] = {}
        for line in (out or b"").decode("ascii", "replace").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                found[parts[0]] = (parts[1], int(parts[2]))
        return found

    def feature_changes(self, checkpoints: list[CheckpointRow]) -> list[Change]:
        """Every feature.json change between consecutive checkpoints of one line of work,
        oldest first. A `--parallel N` run's slots each work in a worktree of their own, so a
        slot's checkpoint follows that worktree's previous one, and the project's own follows
        the project's (merges come between: a slot already counted what they bring)."""
        pairs: dict[str, tuple[str, CheckpointRow]] = {}
        parallel = {row.run for row in checkpoints if row.lane is not None}
        last: dict[tuple[str, tuple[int, str] | None] | None, CheckpointRow] = {}
        for row in checkpoints:
            key = (row.run, row.lane) if row.run in parallel else None
            before, last[key] = last.get(key), row
            if before is not None and row.commit != before.commit:
                pairs.setdefault(row.commit, (before.commit, row))
        if not pairs:
            return []
        # "<commit> <parent>" per line: each commit diffed against the checkpoint before it.
        listing = self._git("diff-tree", "--stdin", "-r", "--no-renames", "-z", "--",
                            _FEATURES.rstrip("/"),
                            stdin="".join(f"{c} {p}\n" for c, (p, _) in pairs.items()).encode())
        raw = _parse_raw(listing or b"")
        blobs = self._blobs({sha for _, _, old, new in raw for sha in (old, new)})
        changes = [Change(feature, _passes(blobs.get(old)), _passes(blobs.get(new)),
                          _title(blobs.get(new)), pairs[commit][1])
                   for commit, feature, old, new in raw if commit in pairs]
        return sorted(changes, key=lambda c: c.checkpoint.at)

    def _blobs(self, shas: set[str]) -> dict[str, Any]:
        """Parsed feature files by blob id: those of a feature file's size only."""
        sizes = self._object_types(sorted(s for s in shas if HEX.match(s) and s.strip("0")))
        wanted = [s for s, (kind, size) in sizes.items()
                  if kind == "blob" and size <= FEATURE_FILE_LIMIT]
        out = self._git("cat-file", "--batch", stdin="".join(s + "\n" for s in wanted)
                        .encode()) if wanted else None
        parsed: dict[str, Any] = {}
        at, data = 0, out or b""
        while at < len(data):
            end = data.find(b"\n", at)
            header = data[at:end].split() if end >= 0 else []
            if len(header) != 3 or not header[2].isdigit():
                break
            size = int(header[2])
            body, at = data[end + 1:end + 1 + size], end + 2 + size
            try:
                parsed[header[0].decode()] = jsonfile.loads(body)
            except ValueError:
                parsed[header[0].decode()] = None
        return parsed

    def diffstat(self, base: str, head: str, source: str, names: tuple[str, str]) -> Diffstat:
        out = self._git("diff-tree", "-r", "--numstat", "--no-renames", "--no-ext-diff",
                        "--no-textconv", "-z", base, head) if base != head else b""
        files = []
        for record in (out or b"").split(b"\0"):
            fields = record.split(b"\t", 2)  # added, deleted ("-" for a binary file), path
            if len(fields) == 3:
                files.append(FileChange(clean(fields[2].decode("utf-8", "replace")),
                                        _count(fields[0]), _count(fields[1])))
        top = sorted(files, key=lambda f: -((f.added or 0) + (f.deleted or 0)))[:_TOP_FILES]
        return Diffstat(source, names[0], names[1], len(files),
                        sum(f.added or 0 for f in files), sum(f.deleted or 0 for f in files),
                        tuple(top))

    def commits_since(self, start: datetime) -> list[Commit]:
        """The project's own commits since `start`, oldest first (none for a private repo)."""
        if self.private:
            return []
        stamp = start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        out = self._git("log", f"-n{_COMMITS}", "--format=%H %ct %s", f"--since={stamp}",
                        "HEAD")
        commits = []
        for line in (out or b"").decode("utf-8", "replace").splitlines():
            sha, _, rest = line.partition(" ")
            stamp_s, _, subject = rest.partition(" ")
            when = unix_s(int(stamp_s)) if stamp_s.isdigit() else None  # planted: year 318857
            if HEX.match(sha) and when is not None:
                commits.append(Commit(sha, datetime.fromtimestamp(when, UTC),
                                      clean(subject, 100)))
        return sorted(commits, key=lambda c: c.at)

    def commits_diffstat(self, start: datetime) -> Diffstat | None:
        """No checkpoints: what the project's commits changed since `start`."""
        if self.private:
            return None
        base, head = self.base_commit(start), self.head()
        if base is None or head is None:
            return None
        return self.diffstat(base, head, "git", (base[:12], head[:12]))

    def head(self) -> str | None:
        out = (self._git("rev-parse", "-q", "--verify", "HEAD^{commit}") or b"").decode(
            "ascii", "replace").strip()
        return out if HEX.match(out) else None

    def base_commit(self, start: datetime) -> str | None:
        """The project's last commit before `start`, else its first one."""
        stamp = start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for args in (("rev-list", "-1", f"--before={stamp}", "HEAD"),
                     ("rev-list", "--max-parents=0", "HEAD")):
            out = (self._git(*args) or b"").decode("ascii", "replace").split()
            if out and HEX.match(out[-1]):
                return out[-1]
        return None


def _parse_raw(listing: bytes) -> list[tuple[str, str, str, str]]:
    """(commit, feature, old blob, new blob) for each feature.json in `diff-tree --stdin -z`
    output: a commit's id, then per changed path `:<modes> <old> <new> <status>` and the
    path, each ended by NUL."""
    out = []
    tokens = listing.decode("utf-8", "surrogateescape").split("\0")
    commit, i = "", 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith(":") and i + 1 < len(tokens):
            meta, feature = token[1:].split(), _feature_of(tokens[i + 1])
            if len(meta) == 5 and feature is not None and commit:
                out.append((commit, feature, meta[2], meta[3]))
            i += 2
            continue
        if HEX.match(token.strip()):
            commit = token.strip()
        i += 1
    return out


def _feature_of(path: str) -> str | None:
    if not path.startswith(_FEATURES) or not path.endswith("/feature.json"):
        return None
    name = path[len(_FEATURES):-len("/feature.json")]
    if "/" in name:  # nested deeper: neither tool reads it as a feature (issue 18 item 8)
        return None
    return clean(name, 120) or None


def _passes(data: Any) -> bool | None:
    """Done in either vocabulary (featurestate); None when the file was not an object."""
    return is_done(data) if isinstance(data, dict) else None


def _title(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    title = data.get("title")
    return clean(title, 100) if isinstance(title, str) and title.strip() else None


def _count(field: bytes) -> int | None:
    return int(field) if field.isdigit() else None
