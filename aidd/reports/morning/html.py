"""The HTML form of the morning report (`--report --html FILE`): one self-contained page, its
style and charts inline; no script, no font, no request (its Content-Security-Policy forbids
any)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from html import escape

from aidd.reports.morning import fmt, svg
from aidd.reports.morning.record import Diffstat, Features, Gate, MorningReport, Parallel

_CSS = """
:root{color-scheme:light;--ink:#1d232a;--mute:#5f6b76;--line:#d9dee3;--bg:#f6f7f9}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,
"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:1040px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0 0 10px}
.sub{color:var(--mute);margin:0 0 18px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:16px 18px;
margin:0 0 16px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(125px,1fr));gap:12px;
background:none;border:0;padding:0}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.card b{display:block;font-size:22px}.card span{color:var(--mute);font-size:12px}
ol.first li{margin:4px 0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--mute);font-weight:600;font-size:12px}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,"DejaVu Sans Mono",monospace;word-break:break-all}
svg{width:100%;height:auto;display:block}
svg .grid{stroke:#e6e9ec;stroke-width:1}svg .frame{fill:#f0f2f4}
svg .tick{font-size:11px;fill:#5f6b76}svg .mark{font-size:11px;fill:#fff;font-weight:600}
svg .value{font-size:12px;font-weight:600;fill:#1d232a}
.legend{margin:6px 0 0;color:var(--mute);font-size:12px}
.key{margin-right:14px}.key i{display:inline-block;width:10px;height:10px;margin-right:5px;
border-radius:2px}
.red{color:#b42318;font-weight:600}.green{color:#1e7a3c}
.two{display:grid;grid-template-columns:1fr 1fr;gap:16px}
@media (max-width:800px){.two{grid-template-columns:1fr}}
footer{color:var(--mute);font-size:12px;margin:8px 0 24px}
"""
SHOWN_FEATURES = 100  # a first night may pass hundreds: the JSON lists them all
SHOWN_MERGES = 100  # the last ones; the JSON lists more
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def render_html(report: MorningReport) -> str:
    title = f"aidd report: {report.project_name}"
    body = [
        heading(title), _window(report), _cards(report), _first(report), _needs_person(report),
        _timeline(report), _charts(report), _runs(report), *_parallel(report.parallel),
        _attempts(report),
        _features(report.features), _diffstat(report.diffstat), _usage(report),
        _gate(report.gate), _checkpoints(report), _events(report),
    ]
    return page(title, body)


def page(title: str, body: Sequence[str]) -> str:
    """One self-contained page (no script, no request: its CSP says so) holding `body`, with
    `title` as its heading too; `aidd fleet report --html` makes its page here as well."""
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n<body><main>\n"
            + "\n".join(body) + "\n</main></body></html>\n")


def _e(value: object) -> str:
    return escape(str(value))


def heading(title: str) -> str:
    return f"<h1>{_e(title)}</h1>"


def table(head: Sequence[str], rows: Iterable[Sequence[object]], numeric: set[int]) -> str:
    def cell(tag: str, i: int, value: object) -> str:
        return f'<{tag} class="n">{_e(value)}</{tag}>' if i in numeric \
            else f"<{tag}>{_e(value)}</{tag}>"

    lines = ["<table><tr>" + "".join(cell("th", i, h) for i, h in enumerate(head)) + "</tr>"]
    lines += ["<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>"
              for row in rows]
    return "".join(lines) + "</table>"


def section(title: str, *parts: str) -> str:
    return f"<section><h2>{_e(title)}</h2>{''.join(parts)}</section>"


def _window(report: MorningReport) -> str:
    w = report.window
    span = fmt.duration((w.end - w.start).total_seconds())
    return (f'<p class="sub">{_e(fmt.stamp(w.start))} to {_e(fmt.stamp(w.end))} ({_e(span)}; '
            f"since {_e(w.since)}) · <code>{_e(report.project_dir)}</code></p>")


def _cards(report: MorningReport) -> str:
    f, u, p = report.features, report.usage, report.pauses
    cards = [(fmt.count(len(report.attempts)), "attempts"),
             (fmt.count(sum(c.count for c in report.failures)), "failed attempts"),
             (fmt.count(len(f.passed)), "features became passing"),
             (f"{fmt.count(f.passing_now)} of {fmt.count(f.total_now)}", "features pass now"),
             (fmt.cost(u), "cost"), (fmt.count(u.total_tokens), "tokens"),
             (fmt.duration(p.rate_limit_s + p.pace_s), "paused")]
    return '<section class="cards">' + "".join(
        f'<div class="card"><b>{_e(v)}</b><span>{_e(k)}</span></div>' for v, k in cards
    ) + "</section>"


def _first(report: MorningReport) -> str:
    health = report.health
    verdict, _, why = health.summary.partition(": ")
    verdict = f"<p>health: <b>{_e(verdict)}</b>{': ' + _e(why) if why else ''}</p>"
    items = "".join(f"<li>{_e(r.what)}<br>next: <code>{_e(r.next)}</code></li>"
                    for r in health.reasons)
    return section("Look at first", verdict + (f'<ol class="first">{items}</ol>' if items
                                                else ""))


def _needs_person(report: MorningReport) -> str:
    if not report.needs_person:
        return ""
    items = "".join(
        f"<li><b>{_e(r.feature)}</b> (run {_e(r.run)})<ul>" + "".join(
            f"<li>{_e(f'{n:03d}')}: {_e(words)}</li>"
            for n, words in zip(r.attempts, r.endings, strict=False)) + "</ul></li>"
        for r in report.needs_person)
    return section("Needs a person", f"<p>set aside after attempts that ended the same way</p>"
                                     f"<ul>{items}</ul>")


def _timeline(report: MorningReport) -> str:
    counts = Counter(svg.result_class(a) for a in report.attempts)
    return section("Attempts over time", svg.timeline(report.attempts, report.window),
                    svg.legend(dict(counts)))


def _charts(report: MorningReport) -> str:
    cost, tokens, total_usd, total_tokens = [], [], 0.0, 0
    for a in report.attempts:
        total_usd += a.cost_usd or 0.0
        total_tokens += a.tokens
        cost.append((a.ended_at, total_usd))
        tokens.append((a.ended_at, float(total_tokens)))
    f = report.features
    passing = [(at, float(n)) for at, n in f.series]
    return ('<div class="two">'
            + section("Cost, cumulative", svg.line_chart(
                cost, report.window, label="cumulative cost", value=fmt.cost(report.usage),
                colour="#2f6fd0", width=svg.HALF))
            + section("Tokens, cumulative", svg.line_chart(
                tokens, report.window, label="cumulative tokens",
                value=fmt.count(total_tokens), colour="#8a4fd0", width=svg.HALF))
            + "</div>"
            + section("Features passing", svg.line_chart(
                passing, report.window, label="features passing",
                value=fmt.count(f.passing_now), colour="#2e9d4c", base=float(f.passing_at_start))))


def _runs(report: MorningReport) -> str:
    rows = [(r.run, fmt.stamp(r.started_at), fmt.stamp(r.ended_at), fmt.duration(r.duration_s),
             r.reason, "-" if r.exit_code is None else r.exit_code, r.attempts)
            for r in report.runs]
    listed = table(("run", "started", "ended", "duration", "ended by", "exit", "attempts"),
                   rows, {3, 5, 6}) if rows else "<p>no run in the window</p>"
    return section("Runs", listed)


def _parallel(p: Parallel | None) -> list[str]:
    """`--parallel N`: one row per slot, the merges counted by result, the last listed (no
    section at all for one agent's nights: their page is as it was)."""
    if p is None:
        return []
    lanes = table(("slot", "attempts", "busy", "merged", "sent back", "features"),
                  [(lane.slot, lane.attempts, fmt.duration(lane.busy_s), lane.merged,
                    lane.sent_back, ", ".join(lane.features) or "-") for lane in p.lanes],
                  {0, 1, 2, 3, 4})
    counts = ", ".join(f"{fmt.count(n)} {result}" for result, n in p.merges.items())
    merges = table(("at", "slot", "attempt", "feature", "result", "why"),
                   [(fmt.stamp(m.at), m.slot or "-", fmt.attempt(m.number), m.feature,
                     m.result, m.why or "") for m in p.listed[-SHOWN_MERGES:]], {1, 2})
    kept = (f"<p>kept unmerged (a stopped run's work): {_e(', '.join(p.kept))}</p>"
            if p.kept else "")
    return [section("Lanes (--parallel)", lanes, f"<p>merges: {_e(counts)}</p>", merges, kept)]


def _attempts(report: MorningReport) -> str:
    results = table(("result", "", "count"),
                     [(c.key, c.label, fmt.count(c.count)) for c in report.results], {0, 2})
    failures = table(("reason", "count"),
                      [(c.label, fmt.count(c.count)) for c in report.failures], {1}) \
        if report.failures else "<p>none</p>"
    return ('<div class="two">'
            + section(f"Attempts: {fmt.count(len(report.attempts))}", results)
            + section("Failures by reason", failures) + "</div>")


def _features(f: Features) -> str:
    head = (f"Features: {fmt.count(len(f.passed))} became passing; {fmt.count(f.passing_now)} "
            f"of {fmt.count(f.total_now)} pass now")
    source = {"checkpoints": "from the checkpoints",
              "mtime": "from the feature files' times (no checkpoints)",
              "none": "no feature files"}.get(f.source, f.source)
    rows = [(p.feature + (f" ({p.title})" if p.title else ""), fmt.attempt(p.number),
             fmt.stamp(p.at),
             f"{p.commit[:12]} {p.subject or ''}" if p.commit
             else (p.checkpoint or "").rpartition("/")[2],
             "yes" if p.passing_now else "no") for p in f.passed[:SHOWN_FEATURES]]
    parts = [f'<p class="sub">{_e(source)}</p>']
    if rows:
        parts.append(table(("feature", "attempt", "at", "commit or checkpoint", "passes now"),
                            rows, {1}))
    if len(f.passed) > SHOWN_FEATURES:
        parts.append(f"<p>… and {_e(fmt.count(len(f.passed) - SHOWN_FEATURES))} more "
                     "(--json lists them all)</p>")
    if f.failed_again:
        parts.append(f'<p class="red">failed again: {_e(", ".join(f.failed_again))}</p>')
    if f.struggling:
        parts.append("<p>changed without passing: " + _e(", ".join(
            f"{name} ({fmt.plural(n, 'attempt')})" for name, n in f.struggling[:10])) + "</p>")
    return section(head, *parts)


def _diffstat(d: Diffstat | None) -> str:
    if d is None:
        return section("Changes: unknown", "<p>no checkpoints and no git history</p>")
    head = (f"Changes: {fmt.plural(d.files, 'file')}, +{fmt.count(d.added)} "
            f"-{fmt.count(d.deleted)}")
    rows = [(c.path, fmt.change(c.added, c.deleted)) for c in d.top]
    return section(head, f'<p class="sub">from <code>{_e(d.base)}</code> to '
                    f"<code>{_e(d.head)}</code></p>", table(("file", "lines"), rows, {1}))


def _usage(report: MorningReport) -> str:
    u, p = report.usage, report.pauses
    rows = [(fmt.TOKEN_LABELS.get(k, k), fmt.count(v)) for k, v in u.tokens.items()]
    rows.append(("total", fmt.count(u.total_tokens)))
    cost = (f"<p>cost {_e(fmt.cost(u))}: {_e(fmt.usd(u.reported_usd))} reported, "
            f"{_e(fmt.usd(u.estimated_usd))} estimated; "
            f"{_e(fmt.plural(u.unknown_cost, 'attempt'))} without a cost</p>")
    paused = (f"<p>paused: rate limits {_e(fmt.duration(p.rate_limit_s))} "
              f"({_e(fmt.plural(p.rate_limits, 'sleep'))}), pacing "
              f"{_e(fmt.duration(p.pace_s))} ({_e(fmt.plural(p.paces, 'pause'))})</p>")
    return section("Tokens and cost", cost, paused, table(("tokens", ""), rows, {1}))


def _gate(gate: Gate) -> str:
    baseline = ("no baseline" if gate.baseline_failing is None
                else f"baseline: {fmt.plural(gate.baseline_failing, 'command')} failing")
    head = f"Gate: {fmt.plural(gate.runs, 'run')}, {baseline}, {gate.reverted} passes reverted"
    rows = [(r.name, f"red since attempt {fmt.attempt(r.red_since)}" if r.red
             else "green" if r.ok else "known failures only", fmt.attempt(r.number),
             r.new_failures, r.known_failures, ", ".join(r.new)) for r in gate.commands]
    listed = table(("command", "state", "attempt", "new", "known", "first new failures"),
                   rows, {2, 3, 4}) if rows else ""
    return section(head, listed)


def _checkpoints(report: MorningReport) -> str:
    points = report.checkpoints
    if report.checkpoints_refused:
        return section("Checkpoints: refused", f"<p>{_e(report.checkpoints_refused)}</p>")
    if not points:
        return section("Checkpoints: none in the window")
    return section(f"Checkpoints: {fmt.count(len(points))}",
                    f"<p>first <code>{_e(points[0].ref)}</code><br>last "
                    f"<code>{_e(points[-1].ref)}</code></p>")


def _events(report: MorningReport) -> str:
    ev = report.events
    error = f"; not read: {ev.error}" if ev.error else ""
    return (f"<footer>Events: {_e(fmt.count(ev.lines))} read, {_e(fmt.count(ev.in_window))} in "
            f"the window, {_e(fmt.count(ev.skipped))} skipped{_e(error)}. Written by aidd "
            f"{_e(fmt.stamp(report.generated_at))}.</footer>")
