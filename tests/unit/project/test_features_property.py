"""Any content in feature files: check_features, status and completion never crash (FEA-21)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aidd.errors import ExitCode
from aidd.project.completion import evaluate, in_progress_done, unfixed_findings
from aidd.project.paths import ProjectPaths
from aidd.reports.featurecheck import check_features
from aidd.reports.status import build_status
from aidd.reports.statusjson import status_json
from aidd.reports.statustext import render_status_text

FIELDS = ["id", "category", "description", "title", "status", "passes", "priority",
          "dependencies", "planSpec", "auditSource", "thinkingLevel", "imagePaths"]  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["feature-1-a", "audit-x-1-y", "waiting_approval", "completed", "backlog"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=20,
)
OBJECTS = st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=len(FIELDS))
CONTENTS = (
    OBJECTS.map(json.dumps)
    | VALUES.map(json.dumps)
    | st.binary(max_size=60).map(lambda b: b.decode("latin-1"))
)
DIRS = st.sampled_from(["a", "b c", "audit-sec-1-x", "nested/d", "feature-1-a", "ü"])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.dictionaries(DIRS, CONTENTS, max_size=5), todo=st.text(max_size=80))
def test_random_feature_files_never_crash(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, str], todo: str
) -> None:
    paths = ProjectPaths(tmp_path_factory.mktemp("p"))
    paths.features.mkdir(parents=True)
    paths.todo.write_text(todo, encoding="utf-8", errors="surrogateescape")
    for rel, content in files.items():
        target = paths.features / rel / "feature.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8", errors="surrogatepass")
    read = [rel for rel in files if "/" not in rel]  # nested ones are strays (issue 18)
    text, code = check_features(paths)
    assert code in (ExitCode.SUCCESS, ExitCode.VALIDATION_ERROR)
    assert f"Total files: {len(read)}" in text
    report = build_status(paths, None, datetime.now(UTC))
    render_status_text(report)
    doc: dict[str, Any] = json.loads(json.dumps(status_json(report)))
    counted = sum(1 for rel in read if not rel.startswith("audit-"))
    assert doc["features"]["total"] + doc["features"]["invalid"] == counted
    assert doc["findings"]["total"] == len(read) - counted
    state = evaluate(paths, None)
    assert state.counted == counted
    in_progress_done(paths, None)
    assert unfixed_findings(paths) <= len(read) - counted
