"""A `View` as the lines of one screen: pure, plain text cut to the terminal's width, every
project string through the console's control-character filter (console.shown)."""

from __future__ import annotations

import unicodedata
from datetime import datetime

from aidd.console import shown
from aidd.watch.model import Attempt, Tracker, View, event_line

BAR = 30  # characters of the features bar at 80 columns
# `--parallel N`: the screen keeps this many lines for the rest when it lists lanes (at 80x24,
# 8 lanes fit whole; more show as many as fit, then a line counting the others)
_BESIDE_LANES = 16
_BOLD, _RESET = "\x1b[1m", "\x1b[0m"


def lines(view: View, width: int, height: int) -> list[str]:
    """The screen, `height` lines at most, each at most `width` characters (no styling)."""
    attempt = _lanes(view, height) if view.tracker.lanes else _attempt(view)
    top = [*_header(view), *attempt, *_progress(view, width)]
    free = max(0, height - len(top) - 3)  # two rules and the footer
    recent = list(view.tracker.recent)[-min(len(view.tracker.recent), free // 2):] if free else []
    room = free - len(recent)
    title = _output_title(view.followed_attempt)
    body = [*top, title + "─" * max(0, width - len(title)),
            *(f"  {shown(line, one_line=True)}" for line in view.output[-room:] if room),
            "── recent events " + "─" * max(0, width - 17),
            *(f"  {shown(event_line(event), one_line=True)}" for event in recent)]
    keys = " · 1-9 a slot's output, 0 the latest" if view.tracker.lanes else ""
    footer = (shown(view.message, one_line=True)
              or f"q quit · s stop the run · r morning report{keys}")
    body = [*body[:max(0, height - 1)], footer]
    return [cut(line, width) for line in body]


def frame(view: View, width: int, height: int, color: bool) -> str:
    return paint(lines(view, width, height), color)


def paint(rows: list[str], color: bool, styles: dict[int, str] | None = None) -> str:
    """Lines (filtered, cut) as the terminal takes them: home, each line cleared to its end;
    the first in bold and each of `styles` (row: SGR codes) in its style, when `color`."""
    if color and rows:
        marked = {0: _BOLD, **(styles or {})}
        rows = [f"{marked[i]}{row}{_RESET}" if i in marked else row for i, row in enumerate(rows)]
    return "\x1b[H" + "\x1b[K\r\n".join(rows) + "\x1b[K\x1b[J"


def _header(view: View) -> list[str]:
    t = view.tracker
    if not t.run_id:
        return ["aidd watch: no run in .automaker/events.jsonl yet (waiting for one)"]
    state = "running" if view.running and t.ended is None else _ended(view)
    elapsed = _duration(((t.ended or view.now) - t.started).total_seconds()) if t.started else "?"
    return [_one(f"aidd watch · {state} · {t.project}"),
            _one(f"run {t.run_id} on {t.host} · {t.cli} {t.model or '(default model)'} · "
                 f"elapsed {elapsed}")]


def _ended(view: View) -> str:
    t = view.tracker
    if t.ended is None:
        return "ended (no aidd holds the lock; the run left no run_end)"
    code = "?" if t.exit_code is None else t.exit_code
    return f"ended: {t.end_reason or '?'}, exit {code}"


def _attempt(view: View) -> list[str]:
    a = view.tracker.attempt
    if a.number is None:
        return ["no attempt yet"]
    of = "∞" if a.of is None else a.of
    where = f"iteration {a.index or '?'} of {of} (log {a.number:03d}) · {a.phase} · {a.kind}"
    if a.ended:
        life = "attempt finished"
    else:
        # Whole seconds, cut as the elapsed time is: "last output 5s ago" never beside "0m04s".
        quiet = "?" if view.quiet_s is None else f"{max(0, int(view.quiet_s))}s"
        life = (f"{a.liveness or 'active'} · last output {quiet} ago · nudges {a.nudges}"
                f"{' · ' + a.why if a.why else ''}")
    feature = f"feature: {view.features.working}" if view.features.working else "feature: -"
    return [_one(where + (f" · model {a.model}" if a.model else "")), _one(life), _one(feature)]


def _lanes(view: View, height: int) -> list[str]:
    """`--parallel N`: the latest iteration, then one line per slot: its feature, attempt,
    prompt kind and liveness, as many as `height` leaves room for."""
    t = view.tracker
    a = t.attempt
    of = "∞" if a.of is None else a.of
    working = sum(1 for lane in t.lanes.values() if not lane.ended)
    rows = [_one(f"iteration {a.index or '?'} of {of} · {len(t.lanes)} lanes, "
                 f"{working} working")]
    if a.slot is None and a.number is not None and not a.ended:
        # An attempt of no slot (an audit, the completion review: one agent, the slots idle)
        quiet = view.quiet_s if view.followed is None else None
        rows.append(_lane("one agent", a, quiet))
    slots = sorted(t.lanes)
    room = max(1, height - _BESIDE_LANES)
    shown_slots = slots if len(slots) <= room else slots[:room - 1]
    rows += [_lane(f"slot {slot}", t.lanes[slot], view.lane_quiet.get(slot))
             for slot in shown_slots]
    if len(shown_slots) < len(slots):
        rows.append(f"… {len(slots) - len(shown_slots)} more lanes (slots "
                    f"{slots[len(shown_slots)]}-{slots[-1]})")
    return rows


def _lane(name: str, a: Attempt, quiet_s: float | None) -> str:
    log = "log ?" if a.number is None else f"log {a.number:03d}"
    if a.ended:
        life = "finished" + (f", {a.merge}" if a.merge else "")
    else:
        quiet = "?" if quiet_s is None else f"{int(quiet_s)}s"
        life = f"{a.liveness or 'active'} {quiet} quiet · nudges {a.nudges}"
    return _one(f"{name} · {a.feature or '-'} · {log} · {a.kind or '?'} · {life}")


def _output_title(a: Attempt) -> str:
    if a.slot is None:
        return "── agent output "
    log = "" if a.number is None else f", log {a.number:03d}"
    return f"── agent output: slot {a.slot}{log} "


def _progress(view: View, width: int) -> list[str]:
    t, f = view.tracker, view.features
    size = max(10, min(BAR, width - 50))
    filled = size * f.done // f.total if f.total else 0
    counts = ", ".join(f"{n} {state}" for state, n in f.by_state)
    wall = t.budgets.get("max_wall_time")
    out = [f"features {f.done}/{f.total} [{'#' * filled}{'.' * (size - filled)}] {counts}",
           f"attempts {t.attempts} · tokens {t.tokens:,}{_of(t.budgets, 'max_tokens', ',.0f')}"
           f" · cost {_cost(t)}{_of(t.budgets, 'max_cost_usd', '.2f', '$')}"
           + (f" · wall limit {_duration(wall)}" if wall else "")]
    if t.pause_until is not None and t.pause_until > view.now and t.ended is None:
        left = _duration((t.pause_until - view.now).total_seconds())
        out.append(f"paused ({t.pause_why}): {left} left, until {_clock(t.pause_until)}")
    out.append(_one(f"gate: {t.gate or 'no verdict yet'}"))
    return out


def _of(budgets: dict[str, float], key: str, spec: str, unit: str = "") -> str:
    return f" of {unit}{budgets[key]:{spec}}" if key in budgets else ""


def _duration(seconds: float) -> str:
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes = f"{rest // 60:02d}m" if hours else f"{rest // 60}m"
    return f"{hours}h{minutes}{rest % 60:02d}s" if hours else f"{minutes}{rest % 60:02d}s"


def _clock(moment: datetime) -> str:
    return moment.astimezone().strftime("%H:%M:%S")


def _one(line: str) -> str:
    return shown(line, one_line=True)


def cut(line: str, width: int) -> str:
    """`line` in at most `width` columns of the terminal: a wide character (CJK, most emoji)
    takes two, a combining one none, so a project's name in them cannot wrap a line and
    scroll the screen."""
    if line.isascii():  # the common case, cheap
        return line if len(line) <= width else line[:max(0, width - 1)] + "…"
    if columns(line) <= width:
        return line
    used = 0
    for at, char in enumerate(line):
        used += _columns(char)
        if used > width - 1:
            return line[:at] + "…"
    return line


def columns(text: str) -> int:
    """The columns `text` takes on a terminal."""
    return len(text) if text.isascii() else sum(_columns(char) for char in text)


def _columns(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def _cost(t: Tracker) -> str:
    """As the morning report says it: never $0.00 for a cost nobody knows (issue 28)."""
    if not t.unknown_cost:
        return f"${t.cost_usd:.2f}"
    if t.unknown_cost >= t.attempts:
        return "unknown"
    return f"≥ ${t.cost_usd:.2f}, some unknown"
