"""What the names of aidd's checkpoint refs mean (`refs/aidd/checkpoints/<run>/<label>`): a run
id as aidd makes them, the run a ref belongs to, and the order of an attempt's labels. Shared by
the checkpoints, the rollback, the previous run's reading and `--rollback`'s words."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import NamedTuple

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


class Listed(NamedTuple):
    run: str
    label: str
    ref: str
    commit: str
    created: str  # ISO 8601
    files: int | None  # paths changed since the previous checkpoint, when recorded


def parse_listing(out: str) -> list[Listed]:
    """`git for-each-ref`'s lines of refname, objectname, creatordate and body, NUL-separated:
    aidd's checkpoints, oldest first."""
    fields = out.split("\0")  # four a checkpoint; a newline starts the next one's ref
    rows = []
    for i in range(0, len(fields) - 3, 4):
        ref, commit, when, body = (f.strip() for f in fields[i:i + 4])
        run, _, label = ref.removeprefix(REF_ROOT + "/").partition("/")
        if not is_run_id(run):  # a planted ref: not aidd's, not listed, no rollback to it
            continue
        files = body.removeprefix("files: ")
        rows.append(Listed(run, label, ref, commit, when, int(files) if files.isdigit()
                           else None))
    # Commit times have whole seconds: within one, an attempt's checkpoints keep their order.
    rows.sort(key=lambda row: (row.created, row.run, rank(row.label)))
    # A checkpoint of an unchanged tree names the run's previous commit: nothing changed.
    last: dict[str, str] = {}
    for n, row in enumerate(rows):
        if last.get(row.run) == row.commit:
            rows[n] = row._replace(files=0)
        last[row.run] = row.commit
    return rows
