"""Capture the screenshots of docs/watch.md and docs/fleet.md from real runs, so they stay true.

    .venv/bin/python docs/screens/capture.py   # in the repository: '.[test,fleet]' and tmux

It runs, with the test suite's fake agent (tests/fakes) and a local Temporal server of its own
(tests/fleet/lab.py, under /tmp/aidd-screens, removed first), inside tmux at 80x24:
`aidd watch` during a run's second attempt, `aidd --console compact` itself, and `aidd fleet
watch` over a fleet of 3 projects. Each screen is written here as text (`NAME.txt`,
`capture-pane -p`) and as SVG rendered from its ANSI (`NAME.svg`, `capture-pane -p -e`), and
the text block after each `<!-- screen: NAME -->` line of the docs is replaced by it."""

from __future__ import annotations

import html
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from tests.featurefiles import feature  # noqa: E402 - after the repository is on the path
from tests.fleet.lab import Lab, lab_in, working  # noqa: E402
from tests.tmux import Tmux  # noqa: E402
from tests.waiting import wait_for  # noqa: E402

ROOT = Path("/tmp/aidd-screens")  # fixed, so the paths shown stay the same from run to run
DOCS = {"watch": "watch.md", "compact": "watch.md", "fleet-watch": "fleet.md"}
ARGS = ["--max-iterations", "20", "--max-cost-usd", "10", "--idle-nudge-timeout", "200",
        "--idle-timeout", "400", "--timeout", "600"]


def attempts(second: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A first attempt that works and a second one that talks, then works on (`second`)."""
    first = [{"init": True}, {"say": "Reading the spec and the backlog."},
             {"tool": {"name": "edit", "input": {"path": "src/store.py"}}},
             {"say": "The store is in."}, {"finish": {"cost": 0.04, "tokens": {
                 "input": 18000, "output": 2500, "reasoning": 0, "cache": {"read": 0,
                                                                           "write": 0}}}}]
    return [first, [{"init": True}, {"say": "Next: the session store."},
                    {"tool": {"name": "edit", "input": {"path": "src/session.py"}}},
                    {"line": "Running the tests: 41 passed."}, *second]]


def project(lab: Lab, name: str, second: list[dict[str, Any]]) -> tuple[Path, dict[str, str]]:
    entry = lab.project(name, *attempts(second), args=ARGS)
    root = Path(entry["path"])
    feature(root, "feature-1-a", description="Sign in with a magic link", passes=True,
            status="completed")
    feature(root, "feature-2-session", description="Keep the session across restarts",
            status="in_progress")
    for n, text in ((3, "Export the board as CSV"), (4, "Dark mode")):
        feature(root, f"feature-{n}-more", description=text)
    return root, {**lab.env, **entry["env"], "TERM": "xterm-256color"}


def aidd(*args: str) -> str:
    return shlex.join([sys.executable, "-m", "aidd", *args])


def capture_watch(lab: Lab, tmux: Tmux) -> None:
    root, env = project(lab, "shop", [{"mark": "second"}, {"sleep": 300}])
    run = _aidd_in_background(lab, root, env)
    wait_for(lambda: lab.mark("shop", "second"), 60, "the second attempt")
    tmux.start(aidd("watch", "--project-dir", str(root)), env)
    tmux.wait("Running the tests", 20)
    wait_for(lambda: re.search(r"last output [5-9]s ago", tmux.screen()), 30, "some silence")
    save("watch", tmux)
    tmux.keys("q")
    run.kill()
    run.wait()


def _aidd_in_background(lab: Lab, root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The run being watched, its console in a file (lab.close kills it if need be)."""
    with (lab.root / f"{root.name}.out").open("ab") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "aidd", "--project-dir", str(root),
                                 "--cli", "opencode", *ARGS], env=env, stdout=sink,
                                stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    lab.procs.append(proc)
    return proc


def capture_compact(lab: Lab, tmux: Tmux) -> None:
    root, env = project(lab, "blog", [{"mark": "second"}, {"sleep": 300}])
    tmux.start(aidd("--project-dir", str(root), "--cli", "opencode", "--console", "compact",
                    *ARGS), env)
    wait_for(lambda: lab.mark("blog", "second"), 60, "the second attempt")
    tmux.wait("Running the tests", 20)
    wait_for(lambda: re.search(r"iteration 2 of 20 · 0h00m0[3-9]s", tmux.screen()), 30,
             "the status line, some seconds on")
    save("compact", tmux)
    tmux.keys("C-c")


def capture_fleet(lab: Lab, tmux: Tmux) -> None:
    one = ["--max-iterations", "1"]
    projects = {"api": lab.project("api", working(0), args=one),
                "billing": lab.project("billing", working(0), working(300),
                                       args=["--max-iterations", "2"]),
                "web": lab.project("web", working(300), args=one)}
    up = lab.start("up", str(lab.fleet_file(projects)), name="fleet")
    wait_for(lambda: lab.mark("billing", "start") and lab.mark("web", "start"), 90, "agents")
    tmux.start(aidd("fleet", "watch"), {**lab.env, "TERM": "xterm-256color"})
    tmux.wait("api ", 30)
    wait_for(lambda: "exit 0" in tmux.screen(), 30, "api done")
    wait_for(lambda: " 1    2 " in _line(tmux.screen(), "billing")
             and " 1    1 " in _line(tmux.screen(), "web"), 30, "billing in its iteration 2")
    tmux.keys("j")
    wait_for(lambda: _line(tmux.screen(), "billing").startswith(">"), 10, "billing selected")
    save("fleet-watch", tmux)
    tmux.keys("q")
    lab.run("stop", "--now")
    up.wait(60)


def _line(screen: str, name: str) -> str:
    return next((line for line in screen.splitlines() if line[2:].startswith(name + " ")), "")


def save(name: str, tmux: Tmux) -> None:
    text = "\n".join(line.rstrip() for line in tmux.screen().splitlines()).rstrip() + "\n"
    (HERE / f"{name}.txt").write_text(text)
    (HERE / f"{name}.svg").write_text(svg(tmux.colours()))
    doc = REPO / "docs" / DOCS[name]
    marker = f"<!-- screen: {name} -->\n"
    page = doc.read_text()
    if marker in page:
        page = re.sub(re.escape(marker) + r"```text\n.*?```\n",
                      lambda _: f"{marker}```text\n{text}```\n", page, count=1, flags=re.S)
        doc.write_text(page)
    print(f"{name}: {HERE / name}.txt, .svg")


# -- ANSI to SVG: the SGR codes tmux writes (bold, reverse, the 8 and 16 colours) ------------
COLOURS = ["#1e1e1e", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd",
           "#e5e5e5", "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6",
           "#29b8db", "#ffffff"]
FG, BG = "#e5e5e5", "#1e1e1e"
CELL_W, CELL_H, SIZE = 8.4, 17, 14
_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def svg(ansi: str) -> str:
    rows = ansi.rstrip("\n").split("\n")
    width, height = 80 * CELL_W + 16, len(rows) * CELL_H + 16
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
           f'font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="{SIZE}">',
           f'<rect width="100%" height="100%" fill="{BG}" rx="6"/>']
    for y, row in enumerate(rows):
        base = 8 + y * CELL_H
        for x, text, style in runs(row):
            fg, bg, bold = paint(style)
            if bg != BG:
                out.append(f'<rect x="{8 + x * CELL_W:.1f}" y="{base}" '
                           f'width="{len(text) * CELL_W:.1f}" height="{CELL_H}" fill="{bg}"/>')
            weight = ' font-weight="bold"' if bold else ""
            out.append(f'<text x="{8 + x * CELL_W:.1f}" y="{base + 13}" fill="{fg}"{weight} '
                       f'xml:space="preserve" textLength="{len(text) * CELL_W:.1f}">'
                       f"{html.escape(text)}</text>")
    return "\n".join([*out, "</svg>"]) + "\n"


def runs(row: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(column, text, style) for each stretch of one style."""
    style: dict[str, Any] = {}
    column, at = 0, 0
    for found in _SGR.finditer(row + "\x1b[m"):
        text = row[at:found.start()]
        if text.strip() or (text and style.get("reverse")):
            yield column, text, dict(style)
        column += len(text)
        at = found.end()
        style = sgr(style, [int(c) if c else 0 for c in found.group(1).split(";")])


def sgr(style: dict[str, Any], codes: list[int]) -> dict[str, Any]:
    style = dict(style)
    while codes:
        code = codes.pop(0)
        if code == 0:
            style = {}
        elif code in (1, 22, 7, 27):
            style["bold" if code in (1, 22) else "reverse"] = code in (1, 7)
        elif 30 <= code <= 37 or 90 <= code <= 97:
            style["fg"] = code - 30 if code < 90 else code - 82
        elif 40 <= code <= 47 or 100 <= code <= 107:
            style["bg"] = code - 40 if code < 100 else code - 92
        elif code in (39, 49):
            style.pop("fg" if code == 39 else "bg", None)
        elif code in (38, 48) and codes[:1] == [5] and len(codes) > 1:
            style["fg" if code == 38 else "bg"] = codes[1] if codes[1] < 16 else None
            del codes[:2]
    return style


def paint(style: dict[str, Any]) -> tuple[str, str, bool]:
    fg = FG if style.get("fg") is None else COLOURS[style["fg"]]
    bg = BG if style.get("bg") is None else COLOURS[style["bg"]]
    return (bg, fg, bool(style.get("bold"))) if style.get("reverse") else (fg, bg,
                                                                           bool(style.get("bold")))


def main() -> None:
    if shutil.which("tmux") is None:
        raise SystemExit("capture.py needs tmux (apt-get install -y tmux)")
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir()
    with lab_in(ROOT) as lab:
        for name, capture in (("watch", capture_watch), ("compact", capture_compact),
                              ("fleet", capture_fleet)):
            tmux = Tmux(ROOT / f"{name}.sock")
            try:
                capture(lab, tmux)
            finally:
                tmux.close()


if __name__ == "__main__":
    main()
