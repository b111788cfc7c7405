"""The package's shape, read from its source: import arrows point down the layers of
docs/architecture.md, no import cycle (imports under TYPE_CHECKING and inside functions count
too), no module over 400 lines, few modules at the top."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "aidd"

# Lowest first. A module may import modules of its own layer and of lower layers (cycles are
# checked apart).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("aidd", "aidd.errors", "aidd.clock", "aidd.console", "aidd.resources", "aidd.fsio",
     "aidd.events", "aidd.numbers", "aidd.spawning"),
    ("aidd.project",),
    ("aidd.agents",),
    ("aidd.logs",),
    ("aidd.session",),
    ("aidd.gate",),
    ("aidd.budget",),
    ("aidd.prompts",),
    ("aidd.audits",),
    ("aidd.reports",),
    ("aidd.notify",),
    ("aidd.options", "aidd.config"),
    ("aidd.doctor",),
    ("aidd.run",),
    ("aidd.app",),
    ("aidd.watch",),  # `aidd watch`: only cli imports it (docs/watch.md)
    ("aidd.fleet",),  # the optional extra: only cli imports it (docs/fleet.md)
    ("aidd.cli", "aidd.__main__"),
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(module: str) -> Iterator[tuple[int, str]]:
    """(line, imported aidd module) for every import in `module`, wherever it stands."""
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name.startswith("aidd") and name != module:
                yield node.lineno, name


def _unit(module: str) -> str:
    """The module's package under aidd (aidd.run.iteration -> aidd.run), or itself."""
    return ".".join(module.split(".")[:2])


def _layer(module: str) -> int:
    unit = _unit(module)
    for index, members in enumerate(LAYERS):
        if unit in members:
            return index
    raise AssertionError(f"{module} is in no layer of LAYERS: add it where it belongs")


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        _layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module: str) -> None:
    mine = _layer(module)
    upward = sorted({f"line {line}: {name}" for line, name in _imports(module)
                     if _layer(name) > mine})
    assert not upward, f"{module} imports upward: {upward}"


def test_no_import_cycle() -> None:
    graph = {m: {name for _, name in _imports(m)} for m in MODULES}
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycle = [*path[path.index(module):], module]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        for name in sorted(graph[module]):
            visit(name, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])


def test_modules_stay_small_and_few_stay_at_the_top() -> None:
    sizes = {m: len(p.read_text().splitlines()) for m, p in MODULES.items()}
    assert {m: n for m, n in sizes.items() if n > 400} == {}
    top = [p for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(top) <= 12, sorted(p.name for p in top)
