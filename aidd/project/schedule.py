"""Which features `--parallel N` starts next, as AutoMaker's auto mode chooses them (its
`loadPendingFeatures` and dependency resolver, docs/parallel.md): the workable ones, in
dependency order with the ready ones sorted by priority, whose dependencies are all done;
never one a slot already has, one the run set aside, or one whose id cannot name a branch.
Pure: feature files in, feature files out."""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from aidd.project import featurestate
from aidd.project.features import Feature, FeatureFile
from aidd.project.filters import FeatureFilter
from aidd.project.worktrees import valid_id

DEFAULT_PRIORITY = 2  # AutoMaker's `priority ?? 2`: medium


@dataclass(frozen=True)
class Busy:
    """What the run holds back from the scheduler."""

    taken: Collection[str] = ()  # ids a slot is working now
    set_aside: Collection[str] = ()  # ids the run set aside (issue 32): never again this run


def next_features(files: list[FeatureFile], free: int, busy: Busy | None = None,
                  filters: FeatureFilter | None = None) -> list[FeatureFile]:
    """Up to `free` features to start now, first first."""
    if free <= 0:
        return []
    busy = busy or Busy()
    features = [f for f in files if f.feature is not None and not f.is_finding]
    counts: dict[str, int] = {}
    for file in features:
        counts[_of(file).id] = counts.get(_of(file).id, 0) + 1
    done = {_of(f).id for f in features if _of(f).done}
    pending = [f for f in sorted(features, key=lambda f: f.dir_name)
               if _pending(_of(f), counts, busy) and (filters is None or filters.matches(f))]
    ready = [f for f in ordered(pending) if not featurestate.blocking(
        list(_of(f).dependencies), done)]
    return ready[:free]


def ordered(files: list[FeatureFile]) -> list[FeatureFile]:
    """Kahn's sort over the dependencies among `files`, the ready ones taken by priority (a
    lower number first), then in the given order; the features of a dependency cycle last,
    in the given order."""
    ids = {_of(f).id for f in files}
    waiting = {_of(f).id: sum(d in ids for d in set(_of(f).dependencies)) for f in files}
    dependents: dict[str, list[int]] = {}
    for index, file in enumerate(files):
        for dep in set(_of(file).dependencies) & ids:
            dependents.setdefault(dep, []).append(index)
    # The ready queue as AutoMaker keeps it: sorted by priority, a stable sort, so equal
    # priorities keep the order they entered it in (`seq`).
    heap = [(_priority(f), i, i) for i, f in enumerate(files) if waiting[_of(f).id] == 0]
    heapq.heapify(heap)
    seq = len(files)
    out: list[FeatureFile] = []
    while heap:
        _, _, index = heapq.heappop(heap)
        out.append(files[index])
        for later in dependents.get(_of(files[index]).id, ()):
            waiting[_of(files[later]).id] -= 1
            if waiting[_of(files[later]).id] == 0:
                heapq.heappush(heap, (_priority(files[later]), seq, later))
                seq += 1
    placed = {id(f) for f in out}
    return out + [f for f in files if id(f) not in placed]


def _pending(feature: Feature, counts: dict[str, int], busy: Busy) -> bool:
    return (featurestate.is_workable(feature.status) and not feature.done
            and counts[feature.id] == 1  # two files, one id: one branch for two features
            and valid_id(feature.id)
            and feature.id not in busy.taken and feature.id not in busy.set_aside)


def _priority(file: FeatureFile) -> float:
    """Its priority; missing, NaN or absurd: AutoMaker's default."""
    priority = _of(file).priority
    return priority if priority is not None and -1e9 < priority < 1e9 else DEFAULT_PRIORITY


def _of(file: FeatureFile) -> Feature:
    assert file.feature is not None  # only valid files get here
    return file.feature


def ids(files: Iterable[FeatureFile]) -> list[str]:
    return [_of(f).id for f in files]
