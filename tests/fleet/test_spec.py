"""The fleet file: read into values; each mistake one line naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.errors import ExitCode, UsageError
from aidd.fleet.spec import parse_fleet

SOURCE = Path("/fleets/night.yaml")
GOOD = """
pools: {claude-main: 2}
defaults: {cli: opencode, args: [--max-iterations, "3"]}
heartbeat_timeout: 10
projects:
  shop: {path: shop, key: claude-main}
  blog: {git: "git@host:me/blog.git", branch: aidd/night, cli: claude-code,
         args: {max-iterations: 5, stop-when-done: true, no-clean: false}, env: {A: 1}}
"""


def test_a_fleet_file_is_read_into_jobs() -> None:
    fleet = parse_fleet(GOOD, SOURCE)
    assert fleet.name == "night"
    assert dict(fleet.pools) == {"claude-main": 2}
    shop, blog = fleet.projects
    assert (shop.name, shop.path, shop.cli, shop.pool) == ("shop", "/fleets/shop", "opencode",
                                                           "claude-main")
    assert shop.args == ["--max-iterations", "3"]
    assert shop.heartbeat_s == 10
    assert shop.workflow_id == "aidd-fleet/night/shop"
    assert (blog.git, blog.branch, blog.cli, blog.pool) == ("git@host:me/blog.git", "aidd/night",
                                                            "claude-code", "")
    assert blog.args == ["--max-iterations", "5", "--stop-when-done"]
    assert blog.env == {"A": "1"}
    assert (shop.slots, blog.slots) == (1, 1)


def test_a_project_with_parallel_n_holds_n_slots_of_its_pool() -> None:
    """Issue 29: N agents at once use the pool's key N times at once."""
    text = """
pools: {k: 4}
projects:
  a: {path: a, key: k, args: [--parallel, "3"]}
  b: {path: b, key: k, args: {parallel: 2}}
  c: {path: c, key: k, args: [--parallel=2, --parallel=4]}
  d: {path: d, key: k, env: {AIDD_PARALLEL: "2"}}
  e: {path: e, key: k, env: {AIDD_PARALLEL: "2"}, args: [--parallel, "1"]}
"""
    assert [p.slots for p in parse_fleet(text, SOURCE).projects] == [3, 2, 4, 2, 1]


@pytest.mark.parametrize(("text", "where"), [
    ("projects: {a: {path: x, key: nope}}", "projects.a.key: unknown pool 'nope'"),
    ("projects: {a: {path: x, git: y}}", "projects.a: give exactly one of path"),
    ("projects: {a: {path: x, cli: vim}}", "projects.a.cli: unknown CLI 'vim'"),
    ("projects: {a: {path: x, colour: red}}", "projects.a.colour: unknown key"),
    ("projects: {a: {path: x, args: {bogus-flag: 1}}}", "projects.a.args.bogus-flag: not a"),
    ("projects: {a: {path: x, args: [--project-dir, y]}}", "--project-dir is set by the fleet"),
    ("pools: {p: 0}\nprojects: {a: {path: x}}", "pools.p: expected a number of at least 1"),
    ("projects: {}", "projects: the fleet has no project"),
    ("projects: {'a b': {path: x}}", "projects.a b: expected a name"),
    ("projects: [a", ": not valid YAML"),
    ("surprise: 1\nprojects: {a: {path: x}}", "surprise: unknown key"),
    ("pools: {p: 2}\nprojects: {a: {path: x, key: p, args: [--parallel, '3']}}",
     "projects.a.args: --parallel 3 needs more than the 2 slot(s) of pool 'p'"),
    ("projects: {a: {path: x, args: [--parallel=two]}}", "projects.a.args: --parallel: expected"),
    ("projects: {a: {path: x, env: {AIDD_PARALLEL: 0}}}", "projects.a.env: --parallel: expected"),
])
def test_a_mistake_is_one_line_naming_file_and_key(text: str, where: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_fleet(text, SOURCE)
    assert caught.value.exit_code is ExitCode.INVALID_ARGS
    assert caught.value.message.startswith(f"{SOURCE}: ")
    assert where in caught.value.message
    assert "\n" not in caught.value.message
