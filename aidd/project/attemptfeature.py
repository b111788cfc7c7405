"""Which feature an attempt worked on (issue 32). With --parallel 1 aidd does not pick the
feature (the prompt asks the agent to), so it is read from what the attempt did: the one place
that decides, for the last-attempt memory, circular-fix detection and the events (and for
--parallel, which assigns features)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from aidd.project.features import FeatureFile, load_features
from aidd.project.featurestate import WorkState
from aidd.project.paths import ProjectPaths

# A changed path under a feature's own folder. A checkpoint's paths are relative to the
# repository, which may hold the project in a subfolder: the folder is found wherever it is.
_FEATURE_PATH = re.compile(r"(?:^|/)\.automaker/features/([^/]+)/")


def features_changed(changed: Iterable[str]) -> tuple[str, ...]:
    """The feature folders among an attempt's changed paths, sorted, each once."""
    found = {m.group(1) for path in changed if (m := _FEATURE_PATH.search(path)) is not None}
    return tuple(sorted(found - {".", ".."}))


def feature_of(named: str | None, changed: Sequence[str], started: Sequence[str]) -> str | None:
    """The feature folder an attempt worked on: the one `--feature` named; else the one whose
    files it changed; else the one in progress at its start. Where several fit, the one both
    changed and in progress at its start, else none: an initializer writes every feature, and
    blaming the first of them for its ending would set the wrong one aside."""
    if named:
        return named
    if len(changed) == 1:
        return changed[0]
    if changed:
        both = [f for f in started if f in changed]
        return both[0] if len(both) == 1 else None
    return started[0] if len(started) == 1 else None


def started_features(paths: ProjectPaths) -> tuple[str, ...]:
    """The folders of the features in progress now (`in_progress` or a pipeline step), sorted."""
    return started_in(load_features(paths, validate=False))


def started_in(files: Iterable[FeatureFile]) -> tuple[str, ...]:
    """`started_features` of feature files already read."""
    return tuple(sorted(f.dir_name for f in files
                        if f.feature is not None and f.feature.state is WorkState.ACTIVE))
