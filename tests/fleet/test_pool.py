"""The pool semaphore's decisions on its values (no server): a project with `--parallel N`
holds N of its pool's slots (issue 29); one slot each is the semaphore as before."""

from __future__ import annotations

import pytest

pytest.importorskip("temporalio", reason="the fleet extra is not installed")

from aidd.fleet.records import PoolState
from aidd.fleet.workflows import PoolWorkflow


def pool(cap: int) -> PoolWorkflow:
    found = PoolWorkflow()
    found._state = PoolState(cap=cap)
    return found


def grant_all(found: PoolWorkflow) -> list[str]:
    """What the pool's loop grants now, in order."""
    granted = []
    while found._grantable():
        granted.append(found._grant())
    return granted


def test_a_parallel_project_holds_n_slots_and_gives_them_back() -> None:
    found = pool(cap=3)
    found.acquire("big", 2)
    found.acquire("one")
    found.acquire("two")
    assert grant_all(found) == ["big", "one"]  # 2 + 1 = the cap; "two" waits
    assert found._state.held() == 3
    found.release("one")
    assert grant_all(found) == ["two"]
    found.release("big")
    assert found._state.held() == 1
    assert found._state.slots == {}  # a released holder's count is forgotten


def test_the_first_in_line_is_not_overtaken_by_smaller_requesters() -> None:
    found = pool(cap=2)
    found.acquire("one")
    assert grant_all(found) == ["one"]
    found.acquire("big", 2)
    found.acquire("small")
    assert grant_all(found) == []  # "small" would fit, but "big" asked first
    found.release("one")
    assert grant_all(found) == ["big"]
    found.release("big")
    assert grant_all(found) == ["small"]


def test_a_requester_above_the_cap_holds_the_pool_alone() -> None:
    found = pool(cap=1)  # lowered by `up` after it asked: it must not wait forever
    found.acquire("big", 3)
    found.acquire("one")
    assert grant_all(found) == ["big"]
    found.release("big")
    assert grant_all(found) == ["one"]


def test_one_slot_each_is_the_semaphore_as_before() -> None:
    found = pool(cap=2)
    for name in ("a", "b", "c"):
        found.acquire(name)
    assert grant_all(found) == ["a", "b"]
    found.acquire("a")  # asked again (a restart): queued again, its slot given back
    assert found._state.holders == ["b"]
    assert grant_all(found) == ["c"]
