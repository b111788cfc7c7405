"""The text form of the morning report, what `aidd --report` prints: fits 100 columns."""

from __future__ import annotations

import textwrap

from aidd.reports.morning import fmt
from aidd.reports.morning.record import Diffstat, Features, Gate, MorningReport, Parallel

WIDTH = 100
SHOWN_FEATURES = 20  # a first night may pass hundreds: the JSON lists them all
SHOWN_MERGES = 20  # the last ones; the JSON lists more


def render_text(report: MorningReport) -> str:
    window = report.window
    span = fmt.duration((window.end - window.start).total_seconds())
    lines = [
        f"# aidd report: {fmt.clean(report.project_name, 80)}",
        f"Window    {fmt.stamp(window.start)} to {fmt.stamp(window.end)} ({span}; since "
        f"{fmt.clean(window.since, 40)})",
        f"Project   {report.project_dir}",
        "", "## Look at first", *_first(report),
        *_needs_person(report),
        "", "## Runs", *_runs(report),
        *_parallel(report.parallel),
        "", *_attempts(report),
        "", *_features(report.features),
        "", *_diffstat(report.diffstat),
        "", *_usage(report),
        "", *_gate(report.gate),
        "", *_checkpoints(report),
        "", "## Events",
        f"{fmt.count(report.events.lines)} read, {fmt.count(report.events.in_window)} in the "
        f"window, {fmt.count(report.events.skipped)} skipped"
        + (f"; not read: {report.events.error}" if report.events.error else ""),
    ]
    return "".join(_fit(line) + "\n" for line in lines)


def _first(report: MorningReport) -> list[str]:
    health = report.health
    return [_wrap(f"health: {health.summary}"), *(
        _wrap(f"{i}. {r.what}") + "\n" + _wrap(f"   next: {r.next}")
        for i, r in enumerate(health.reasons, 1))]


def _needs_person(report: MorningReport) -> list[str]:
    """The features set aside (issue 32), each with how its attempts ended."""
    if not report.needs_person:
        return []
    lines = ["", f"## Needs a person: {fmt.plural(len(report.needs_person), 'feature')} set "
             "aside after attempts that ended the same way"]
    for row in report.needs_person:
        lines.append(_wrap(f"{row.feature} (run {row.run})"))
        lines += [_wrap(f"   {fmt.attempt(n)}: {words}")
                  for n, words in zip(row.attempts, row.endings, strict=False)]
    return lines


def _fit(line: str) -> str:
    """A table row is cut at the edge; prose was wrapped before (`_wrap`)."""
    return "\n".join(part if len(part) <= WIDTH else part[:WIDTH - 1] + "…"
                     for part in line.split("\n"))


def _wrap(line: str) -> str:
    return textwrap.fill(line, WIDTH, subsequent_indent="   ", break_on_hyphens=False)


def _runs(report: MorningReport) -> list[str]:
    if not report.runs:
        return ["no run in the window"]
    head = (f"{'run':<24} {'started':<11} {'ended':<11} {'duration':>9} {'ended by':<14} "
            f"{'exit':>4} {'attempts':>8}")
    rows = [f"{r.run:<24} {fmt.short(r.started_at):<11} {fmt.short(r.ended_at):<11} "
            f"{fmt.duration(r.duration_s):>9} {r.reason:<14} "
            f"{'-' if r.exit_code is None else r.exit_code:>4} {r.attempts:>8}"
            for r in report.runs]
    return [head, *rows]


def _parallel(p: Parallel | None) -> list[str]:
    """`--parallel N`: one line per slot, then the merge queue's verdicts."""
    if p is None:
        return []
    merges = ", ".join(f"{fmt.count(n)} {result}" for result, n in p.merges.items())
    lines = ["", f"## Lanes: {fmt.plural(len(p.lanes), 'slot')} (--parallel); merges: {merges}",
             f"{'slot':>4} {'attempts':>8} {'busy':>9} {'merged':>6} {'sent back':>9}  features"]
    lines += [f"{lane.slot:>4} {lane.attempts:>8} {fmt.duration(lane.busy_s):>9} "
              f"{lane.merged:>6} {lane.sent_back:>9}  {', '.join(lane.features) or '-'}"
              for lane in p.lanes]
    shown = p.listed[-SHOWN_MERGES:]
    if len(p.listed) > len(shown):
        lines.append(f"… {fmt.count(len(p.listed) - len(shown))} earlier merges (--json "
                     "lists them)")
    lines += [f"{fmt.short(m.at):<11} slot {m.slot or '-':<3} {fmt.attempt(m.number):>3} "
              f"{m.feature:<30} {m.result}" + (f": {m.why}" if m.why else "") for m in shown]
    if p.kept:
        lines.append(f"kept unmerged (a stopped run's work): {', '.join(p.kept)}")
    return lines


def _attempts(report: MorningReport) -> list[str]:
    lines = [f"## Attempts: {fmt.count(len(report.attempts))}"]
    lines += [f"{c.key:>4}  {c.label:<24} {fmt.count(c.count):>8}" for c in report.results]
    lines += ["", "## Failures by reason"]
    lines += [f"{c.label:<30} {fmt.count(c.count):>8}" for c in report.failures] or ["none"]
    return lines


def _features(f: Features) -> list[str]:
    source = {"checkpoints": "from the checkpoints", "mtime": "from file times, no checkpoints",
              "none": "no feature files"}.get(f.source, f.source)
    lines = [f"## Features: {fmt.count(len(f.passed))} became passing; "
             f"{fmt.count(f.passing_now)} of {fmt.count(f.total_now)} pass now ({source})"]
    if f.passed:
        lines.append(f"{'feature':<30} {'attempt':>7} {'at':<11} commit or checkpoint")
    for p in f.passed[:SHOWN_FEATURES]:
        where = (f"{p.commit[:12]} {p.subject or ''}" if p.commit
                 else (p.checkpoint or "").rpartition("/")[2])
        mark = "" if p.passing_now else " (failing now)"
        lines.append(f"{p.feature:<30} {fmt.attempt(p.number):>7} {fmt.short(p.at):<11} "
                     f"{where}{mark}")
    if len(f.passed) > SHOWN_FEATURES:
        lines.append(f"… and {fmt.count(len(f.passed) - SHOWN_FEATURES)} more (--json lists "
                     "them all)")
    if f.failed_again:
        lines.append(_wrap("failed again: " + ", ".join(f.failed_again)))
    if f.struggling:
        lines.append(_wrap("changed without passing: " + ", ".join(
            f"{name} ({fmt.plural(n, 'attempt')})" for name, n in f.struggling[:10])))
    return lines


def _diffstat(d: Diffstat | None) -> list[str]:
    if d is None:
        return ["## Changes: unknown (no checkpoints and no git history)"]
    lines = [f"## Changes: {fmt.plural(d.files, 'file')}, +{fmt.count(d.added)} "
             f"-{fmt.count(d.deleted)} ({'checkpoints' if d.source == 'checkpoints' else 'git'})",
             f"from {d.base}", f"to   {d.head}"]
    lines += [f"{c.path[-80:]:<80} {fmt.change(c.added, c.deleted):>19}" for c in d.top]
    return lines


def _usage(report: MorningReport) -> list[str]:
    usage, pauses = report.usage, report.pauses
    kinds = ", ".join(f"{fmt.TOKEN_LABELS.get(k, k)} {fmt.count(v)}"
                      for k, v in usage.tokens.items())
    return [
        "## Tokens and cost",
        f"tokens    {fmt.count(usage.total_tokens)}: {kinds}",
        f"cost      {fmt.cost(usage)}: {fmt.usd(usage.reported_usd)} reported, "
        f"{fmt.usd(usage.estimated_usd)} estimated; "
        f"{fmt.plural(usage.unknown_cost, 'attempt')} without a cost",
        f"paused    rate limits {fmt.duration(pauses.rate_limit_s)} "
        f"({fmt.plural(pauses.rate_limits, 'sleep')}), pacing {fmt.duration(pauses.pace_s)} "
        f"({fmt.plural(pauses.paces, 'pause')})",
    ]


def _gate(gate: Gate) -> list[str]:
    baseline = ("no baseline" if gate.baseline_failing is None
                else f"baseline: {fmt.plural(gate.baseline_failing, 'command')} failing")
    lines = [f"## Gate: {fmt.plural(gate.runs, 'run')}, {baseline}, "
             f"{fmt.count(gate.reverted)} passes reverted"]
    for row in gate.commands:
        state = (f"red since attempt {fmt.attempt(row.red_since)}" if row.red
                 else "green" if row.ok else "known failures only")
        new = f" ({', '.join(row.new)})" if row.red and row.new else ""
        lines.append(_wrap(f"{row.name:<20} {state} (last run after "
                           f"{fmt.attempt(row.number)}): {row.new_failures} new, "
                           f"{row.known_failures} known{new}"))
    return lines


def _checkpoints(report: MorningReport) -> list[str]:
    points = report.checkpoints
    if report.checkpoints_refused:
        return [f"## Checkpoints: refused, {fmt.clean(report.checkpoints_refused, 200)}"]
    if not points:
        return ["## Checkpoints: none in the window"]
    return [f"## Checkpoints: {fmt.count(len(points))}", f"first {points[0].ref}",
            f"last  {points[-1].ref}"]
