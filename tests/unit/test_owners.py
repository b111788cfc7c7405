"""One owner per side effect (docs/architecture.md "Owners", issue 27), read from the source
like the layers in test_architecture.py: a second module that starts a process, opens a file,
parses an events.jsonl line, judges a lock's holder, writes a result code as a number or
writes to the terminal fails here, even while it agrees with the owner."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator

import pytest

from aidd.errors import ExitCode
from tests.unit.test_architecture import MODULES

# -- processes: one owner per kind ------------------------------------------------------------
PROCESS_OWNERS: dict[str, frozenset[str]] = {
    "agent": frozenset({"aidd.session.pty", "aidd.session.cliproc"}),  # the agent, its --version
    "gate": frozenset({"aidd.gate.runner"}),
    "notify": frozenset({"aidd.notify.send", "aidd.notify.courier"}),  # a command; the worker
    "fleet": frozenset({"aidd.fleet.child", "aidd.fleet.server",  # aidd; Temporal's server
                        "aidd.fleet.report"}),  # `aidd --report` of each project
    "git": frozenset({"aidd.project.git"}),
}
GIT_OWNERS = PROCESS_OWNERS["git"]

_PROCESS_MODULES = frozenset({"subprocess", "pexpect", "pty", "multiprocessing"})
_SPAWNS = frozenset({"subprocess.Popen", "subprocess.run", "subprocess.call",
                     "subprocess.check_call", "subprocess.check_output", "os.fork",
                     "os.posix_spawn", "os.posix_spawnp", "pty.fork", "pexpect.spawn"})
_STARTS = re.compile(r"(os\.(system|popen|exec\w*|spawn\w*|posix_spawn\w*|fork\w*)"
                     r"|pty\.(fork|spawn)|asyncio\.create_subprocess_\w+)")

# -- files: fsio opens every project file -----------------------------------------------------
# Modules that open files that are not the project's, each saying whose they are. A module
# listed here reads no project file, or reads them through fsio and opens only the named ones.
OPEN_ALLOWED: dict[str, str] = {
    "aidd.fsio.dirs": "the owner: folders",
    "aidd.fsio.read": "the owner: reads",
    "aidd.fsio.write": "the owner: writes",
    "aidd.cli": "/dev/null on a standard fd that `aidd >&-` closed",
    "aidd.console": "/dev/null as the sink of a broken standard output",
    "aidd.resources": "aidd's packaged data",
    "aidd.session.procfs": "/proc",
    "aidd.doctor.livecheck": "/proc/sys (the inotify limit)",
    "aidd.project.scaffold": "packaged scaffolding and the user's --spec",
    "aidd.project.copylists": "the user's copy lists (aidd's home, checkout, ~/.config/aidd)",
    "aidd.audits.definitions": "shipped audits; the project's go through fsio.read_file",
    "aidd.prompts.render": "shipped templates; the project's overrides go through fsio",
    "aidd.prompts.codecache": "the user's cache of compiled templates (~/.cache/aidd)",
    # Thousands of feature.json per scan: fsio's checks (regular, inside, capped, never a FIFO)
    # for a walk that refused linked directories already; 10x fsio.read_file's speed (3,000
    # files: 80 ms against 760 ms, measured for issue 27).
    "aidd.project.featurescan": "feature.json files, fsio's rules on a checked walk",
    # A watch per folder (issue 33): each opened with O_NOFOLLOW and matched to the inode its
    # parent's listing gave; fsio.open_dir, which opens every folder on the way, took 2.3x.
    "aidd.project.inotify": "the project's folders, to watch them; no file",
    "aidd.notify.send": "no file: urllib's opener.open, a request to the user's endpoint",
    "aidd.fleet.spec": "the user's fleet file",
    "aidd.fleet.child": "the fleet's data directory (a run's log)",
    "aidd.fleet.publish": "the fleet's data directory (a checkout's log)",
    "aidd.fleet.server": "the fleet's data directory and /proc",
}
_OPENERS = frozenset({"open", "read_text", "read_bytes", "write_text", "write_bytes"})

# -- JSON: events.parse_event is the one parser of events.jsonl lines -------------------------
JSON_ALLOWED: dict[str, str] = {
    "aidd.events": "the owner",
    "aidd.agents.sessions": "a CLI's conversation list",
    "aidd.agents.jsonlines": "an agent's stream-json lines",
    "aidd.notify.courier": "the notification worker's answers",
    "aidd.notify.worker": "the courier's jobs",
    "aidd.budget.prices": "the packaged price table",
    "aidd.project.jsonfile": "feature.json and the other JSON project files",
    "aidd.project.lockfile": "the lock record",
    "aidd.logs.extract": "an agent's stream-json lines in a log; a feature's description",
    "aidd.fleet.report": "`aidd --report --json` output",
    "aidd.fleet.server": "the fleet's server.json",
}
_JSON_CALLS = frozenset({"json.loads", "json.load", "json.JSONDecoder"})

# -- the terminal: console writes it ----------------------------------------------------------
TERMINAL_ALLOWED: dict[str, str] = {
    "aidd.console": "the owner",
    "aidd.notify.worker": "its standard output is the pipe to the courier, not a terminal",
    "aidd.__main__": "`aidd --version` alone, before importing console (issue 33: 100 ms)",
}

# -- lock holders: lockfile judges them; procfs answers its Liveness --------------------------
LOCK_OWNERS = frozenset({"aidd.project.lockfile", "aidd.session.procfs"})

# -- result codes: errors names them ----------------------------------------------------------
# Every code above the small, common numbers (0-5 are also counts, indexes and sizes).
RESULT_CODES = frozenset(int(code) for code in ExitCode if code > 5)
_CODE_NAMES = re.compile(r"EXIT|CODE|RESULT|STATUS", re.IGNORECASE)
_SMALL = 64  # the exit codes below this are also everyday numbers (10 seconds)

# Turning a number read from the agent or a project file into money, tokens or a time:
# aidd.numbers, the one sanitiser (finite, non-negative, in range, else unknown).
NUMBERS_OWNER = "aidd.numbers"
_FINITENESS = frozenset({"isfinite", "isnan", "isinf"})


@functools.cache
def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text())


def _name(node: ast.AST) -> str:
    """`a.b.c` for a Name or an Attribute chain, else ""."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _name(node.value)
        return f"{inner}.{node.attr}" if inner else f"?.{node.attr}"
    return ""


def _calls(module: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Call):
            yield node.lineno, _name(node.func)


def _starts_processes(module: str) -> list[str]:
    found = []
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in _PROCESS_MODULES]
        elif (isinstance(node, ast.ImportFrom) and node.module and not node.level
              and node.module.split(".")[0] in _PROCESS_MODULES):
            found.append(node.module)
    found += [name for _, name in _calls(module) if _STARTS.fullmatch(name)]
    return found


def _runs_git(module: str) -> bool:
    return bool(_starts_processes(module)) and any(
        isinstance(n, ast.Constant) and n.value == "git" for n in ast.walk(_tree(module)))


def test_only_the_owners_start_processes() -> None:
    owners = frozenset().union(*PROCESS_OWNERS.values())
    strays = {m: _starts_processes(m) for m in MODULES if m not in owners}
    assert {m: found for m, found in strays.items() if found} == {}


def test_only_the_git_owner_runs_git() -> None:
    assert sorted(m for m in MODULES if _runs_git(m) and m not in GIT_OWNERS) == []


def test_every_process_owner_starts_processes() -> None:
    """The table stays true: an owner that no longer starts a process leaves it."""
    named = frozenset().union(*PROCESS_OWNERS.values()) & MODULES.keys()
    assert sorted(m for m in named if not _starts_processes(m)) == []
    assert sorted(m for m in GIT_OWNERS if not _runs_git(m)) == []


def _unlocked_starts(module: str) -> list[int]:
    """Lines where `module` starts a child outside `with spawning.LOCK:`."""
    def walk(node: ast.AST, locked: bool) -> Iterator[int]:
        if isinstance(node, ast.With):
            locked = locked or any(_name(i.context_expr) == "spawning.LOCK" for i in node.items)
        if isinstance(node, ast.Call) and _name(node.func) in _SPAWNS and not locked:
            yield node.lineno
        for child in ast.iter_child_nodes(node):
            yield from walk(child, locked)
    return list(walk(_tree(module), False))


def test_every_start_of_a_child_holds_the_spawn_lock() -> None:
    """aidd/spawning: a scan of aidd's children never sees one between fork and exec (the
    fleet's `up` process runs no attempt's scope: its asyncio starts are left as they are)."""
    owners = frozenset().union(*(m for k, m in PROCESS_OWNERS.items() if k != "fleet"))
    assert {m: lines for m in sorted(owners) if (lines := _unlocked_starts(m))} == {}


def _unnamed_starts(module: str) -> list[int]:
    """Lines where `module` starts a child it keeps running (Popen) under `spawning.LOCK`
    without naming it there (`spawning.own`)."""
    found = []
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.With) and any(_name(i.context_expr) == "spawning.LOCK"
                                              for i in node.items):
            calls = [c for stmt in node.body for c in ast.walk(stmt) if isinstance(c, ast.Call)]
            if not any(_name(c.func) == "spawning.own" for c in calls):
                found += [c.lineno for c in calls if _name(c.func) == "subprocess.Popen"]
    return found


def test_every_child_aidd_keeps_running_is_named_as_its_own() -> None:
    """aidd/spawning: /proc shows a child just exec'd without its environment for a moment;
    a scan knows it as aidd's own by its name there, never takes it for an orphan."""
    owners = frozenset().union(*(m for k, m in PROCESS_OWNERS.items() if k != "fleet"))
    assert {m: lines for m in sorted(owners) if (lines := _unnamed_starts(m))} == {}


def test_only_fsio_and_the_named_modules_open_files() -> None:
    strays = {m: sorted({f"line {line}: {name}" for line, name in _calls(m)
                         if name.rpartition(".")[2] in _OPENERS})
              for m in MODULES if m not in OPEN_ALLOWED}
    assert {m: found for m, found in strays.items() if found} == {}


def test_only_events_parses_events_lines() -> None:
    strays = {m: sorted({f"line {line}: {name}" for line, name in _calls(m)
                         if name in _JSON_CALLS or name.endswith(".raw_decode")})
              for m in MODULES if m not in JSON_ALLOWED}
    assert {m: found for m, found in strays.items() if found} == {}


def test_only_console_writes_to_the_terminal() -> None:
    strays: dict[str, list[str]] = {}
    for module in MODULES:
        if module in TERMINAL_ALLOWED:
            continue
        found = [f"line {n.lineno}: {_name(n)}" for n in ast.walk(_tree(module))
                 if isinstance(n, ast.Attribute) and _name(n) in (
                     "sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__")]
        found += [f"line {line}: print" for line, name in _calls(module) if name == "print"]
        if found:
            strays[module] = found
    assert strays == {}


def test_only_lockfile_judges_a_locks_holder() -> None:
    strays: dict[str, list[str]] = {}
    for module in MODULES:
        if module in LOCK_OWNERS:
            continue
        tree = _tree(module)
        found = [f"line {line}: {name}" for line, name in _calls(module)
                 if name.rpartition(".")[2] == "read_lock"]
        found += [f"line {n.lineno}: os.kill(pid, 0)" for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and _name(n.func) == "os.kill"
                  and len(n.args) == 2 and isinstance(n.args[1], ast.Constant)
                  and n.args[1].value == 0]
        found += [f"line {n.lineno}: 'pid_start'" for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and n.value == "pid_start"]
        if found:
            strays[module] = found
    assert strays == {}


def _code_literals(tree: ast.Module) -> Iterator[int]:
    """Lines where a result code is written as a number where it is compared, looked up or
    listed: a comparison, a dict key, a match case, a collection named for exits or results."""
    def codes(node: ast.AST | None) -> Iterator[ast.Constant]:
        if isinstance(node, ast.Constant) and type(node.value) is int \
                and node.value in RESULT_CODES:
            yield node
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            for element in node.elts:
                yield from codes(element)

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            # A small code (6-10) is also a plain number (`seconds < 10`): it counts where the
            # comparison names an exit code or a result.
            named = _CODE_NAMES.search(ast.unparse(node)) is not None
            for side in (node.left, *node.comparators):
                yield from (c.lineno for c in codes(side) if named or c.value >= _SMALL)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                yield from (c.lineno for c in codes(key))
        elif isinstance(node, ast.MatchValue) or _names_codes(node):
            yield from (c.lineno for c in codes(getattr(node, "value", None)))


def _names_codes(node: ast.AST) -> bool:
    """An assignment to a name that says it holds exit codes or results (`STOPPED_EXITS`)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    else:
        return False
    return _CODE_NAMES.search(" ".join(_name(t) for t in targets)) is not None


def test_only_errors_writes_result_codes_as_numbers() -> None:
    strays = {m: sorted(set(_code_literals(_tree(m)))) for m in MODULES if m != "aidd.errors"}
    assert {m: lines for m, lines in strays.items() if lines} == {}


@pytest.mark.parametrize("allowed", [OPEN_ALLOWED, JSON_ALLOWED, TERMINAL_ALLOWED])
def test_every_allowance_is_still_used(allowed: dict[str, str]) -> None:
    """An allowance whose module no longer does the thing goes, so the lists only shrink."""
    assert sorted(m for m in allowed if m not in MODULES) == []
    uses = {
        id(OPEN_ALLOWED): lambda m: any(n.rpartition(".")[2] in _OPENERS for _, n in _calls(m)),
        id(JSON_ALLOWED): lambda m: any(n in _JSON_CALLS or n.endswith(".raw_decode")
                                        for _, n in _calls(m)),
        id(TERMINAL_ALLOWED): lambda m: "sys.std" in MODULES[m].read_text(),
    }[id(allowed)]
    assert sorted(m for m in allowed if not uses(m)) == []


def test_only_the_sanitiser_judges_a_number() -> None:
    """A second `math.isfinite`/`isnan`/`isinf` is a second sanitiser; those drifted apart
    before (three had none, one read NaN as a cost: issue 27 items 5, 6)."""
    found = {}
    for module in MODULES:
        if module == NUMBERS_OWNER:
            continue
        lines = [node.lineno for node in ast.walk(_tree(module))
                 if (node.attr if isinstance(node, ast.Attribute) else
                     node.id if isinstance(node, ast.Name) else "") in _FINITENESS]
        if lines:
            found[module] = lines
    assert found == {}
