"""What the names of aidd's checkpoint refs mean (`refs/aidd/checkpoints/<run>/<label>`): a run
id as aidd makes them, the run a ref belongs to, and the order of an attempt's labels. Shared by
the checkpoints, the rollback, the previous run's reading and `--rollback`'s words."""

from __future__ import annotations

import re
from datetime import UTC, datetime

REF_ROOT = "refs/aidd/checkpoints"
# A run id as aidd makes them (events.make_run_id): its UTC start, then its pid. Only refs of
# such runs are listed, pruned or rolled back to; a planted "refs/aidd/checkpoints/x/001" is not.
_RUN_ID = re.compile(r"(\d{8}T\d{6}Z)-\d{1,10}")


def is_run_id(text: str, now: datetime | None = None) -> bool:
    """`text` is a run id aidd could have made: well formed, and not started after `now`."""
    match = _RUN_ID.fullmatch(text)
    if match is None:
        return False
    try:
        started = datetime.strptime(match[1], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return False
    return started <= (now or datetime.now(UTC))


def run_of(ref: str) -> str:
    """The run a checkpoint ref belongs to (its first name under REF_ROOT)."""
    return ref.removeprefix(REF_ROOT + "/").partition("/")[0]


def rank(label: str) -> tuple[str, int]:
    """NNN, then NNN-prekill, then NNN-end; other labels after them."""
    number, _, kind = label.partition("-")
    order = {"": 0, "prekill": 1, "end": 2}
    return (number, order.get(kind, 3)) if number.isdigit() else ("~" + label, 3)
