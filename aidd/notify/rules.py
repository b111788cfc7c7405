"""Which of a run's events a target hears about, and what it is told: a title and a message in
words, made from the event's fields (docs/events.md). Pure: events in, notes out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from aidd.notify.targets import Target, Trigger


class Note(NamedTuple):
    """One notification, the same for every target that hears it."""

    trigger: Trigger
    title: str
    message: str
    record: Mapping[str, Any]  # the event as events.jsonl has it
    priority: str = "default"  # ntfy's words: "high" for the end of a failed run
    tags: tuple[str, ...] = ()  # ("failed",) for the end of a failed run

    def envelope(self, project_dir: str, host: str) -> dict[str, Any]:
        """What a webhook receives and a command reads on stdin (README "Notifications");
        `text` is the field chat webhooks (Slack, Mattermost) show."""
        return {"source": "aidd", "trigger": self.trigger.value, "title": self.title,
                "message": self.message, "text": f"{self.title}\n{self.message}",
                "priority": self.priority, "tags": list(self.tags),
                "project": project_dir, "host": host, "event": dict(self.record)}


class Rules:
    """The run's notes, event by event. The one state kept is the gate's streak: how many
    attempts in a row left it red (new failures), counted by attempt number."""

    def __init__(self, targets: Sequence[Target], project: str) -> None:
        self.targets = tuple(targets)
        self.project = project
        self.red_streak = 0
        self._gate_number: object = None
        self._gate_red = False

    def notes(self, record: Mapping[str, Any]) -> list[tuple[Target, Note]]:
        if record.get("event") == "gate":
            return self._gate(record)
        trigger = _trigger(record)
        if trigger is None:
            return []
        note = self._note(trigger, record)
        return [(t, note) for t in self.targets
                if trigger in t.events and _wants(t, trigger, record)]

    def _gate(self, record: Mapping[str, Any]) -> list[tuple[Target, Note]]:
        """One `gate` event per command; an attempt is red when any of them found new
        failures, green when none did (known at its next attempt's first gate event)."""
        number = record.get("number")
        if number != self._gate_number:
            if not self._gate_red:
                self.red_streak = 0
            self._gate_number, self._gate_red = number, False
        if not record.get("new_failures") or self._gate_red:
            return []
        self._gate_red = True
        self.red_streak += 1
        note = self._note(Trigger.GATE_RED, record)
        return [(t, note) for t in self.targets
                if Trigger.GATE_RED in t.events and t.gate_red_attempts == self.red_streak]

    def _note(self, trigger: Trigger, record: Mapping[str, Any]) -> Note:
        title, message = _WORDS[trigger](record, self)
        if trigger is Trigger.RUN_END and _verdict(record) == "failed":
            return Note(trigger, f"aidd {self.project}: {title}", message, record, "high",
                        ("failed",))
        return Note(trigger, f"aidd {self.project}: {title}", message, record)


_BY_EVENT = {"run_end": Trigger.RUN_END, "stuck": Trigger.STUCK,
             "budget_exhausted": Trigger.BUDGET_EXHAUSTED,
             "failure_threshold": Trigger.QUIT_ON_ABORT,
             "rate_limit_sleep": Trigger.PAUSE, "pace": Trigger.PAUSE}


def _trigger(record: Mapping[str, Any]) -> Trigger | None:
    name = record.get("event")
    if name == "completion":
        confirmed = record.get("state") in ("confirmed", "already_completed")
        return Trigger.COMPLETED if confirmed else None
    if name == "kill":
        return Trigger.IDLE_KILL if record.get("reason") in ("idle", "hung") else None
    return _BY_EVENT.get(str(name))


def _wants(target: Target, trigger: Trigger, record: Mapping[str, Any]) -> bool:
    if trigger is Trigger.PAUSE:
        return _number(record.get("seconds")) > target.min_pause_minutes * 60
    return True


# -- the words ---------------------------------------------------------------------------------
Words = tuple[str, str]


def _run_end(r: Mapping[str, Any], _: Rules) -> Words:
    cost = r.get("cost_usd")
    spent = "" if cost is None else f"; ${_number(cost):.{2 if _number(cost) >= 1 else 3}f}"
    health: Mapping[str, Any] = r["health"] if isinstance(r.get("health"), Mapping) else {}
    verdict = _verdict(r)
    judged = f", {verdict}" if verdict not in (None, "ok") else ""  # ASCII: a plain header
    reasons = health.get("reasons") or [{}]
    first = f"\n{health.get('headline')}\nnext: {reasons[0].get('next')}" if judged else ""
    return (f"run ended: {r.get('reason')} (exit {r.get('exit_code')}){judged}",
            f"{r.get('iterations')} iterations, {r.get('failures')} failed, in "
            f"{duration(_number(r.get('duration_s')))}{spent}{first}")


def _verdict(record: Mapping[str, Any]) -> str | None:
    """The run's health verdict (aidd/reports/health.py), which run_end carries."""
    health = record.get("health")
    return str(health.get("verdict")) if isinstance(health, Mapping) else None


def _completed(r: Mapping[str, Any], _: Rules) -> Words:
    return "project complete", f"all {r.get('features')} features pass; completion confirmed"


def _stuck(r: Mapping[str, Any], _: Rules) -> Words:
    numbers = ", ".join(str(n) for n in r.get("iterations") or ())
    return "stuck", f"attempts {numbers} changed nothing; the phase ended"


def _budget(r: Mapping[str, Any], _: Rules) -> Words:
    return "budget exhausted", f"{r.get('budget')}: {r.get('used')} used of {r.get('limit')}"


def _quit(r: Mapping[str, Any], _: Rules) -> Words:
    return ("quit on abort", f"{r.get('failures')} failed attempts in a row; exiting with "
            f"{r.get('result')}")


def _pause(r: Mapping[str, Any], _: Rules) -> Words:
    why = ("rate limited" if r.get("event") == "rate_limit_sleep"
           else f"pacing: {r.get('window')} window at {r.get('utilization')}")
    return (f"paused for {duration(_number(r.get('seconds')))}",
            f"{why}; resumes at {_clock_time(r.get('until'), r.get('ts'))}")


def _gate_red(r: Mapping[str, Any], rules: Rules) -> Words:
    new = ", ".join(str(n) for n in list(r.get("new") or ())[:5])
    return (f"gate red {rules.red_streak} attempts in a row",
            f"attempt {r.get('number')}: {r.get('name')}: {r.get('new_failures')} new "
            f"failures ({new})")


def _idle_kill(r: Mapping[str, Any], _: Rules) -> Words:
    killed = f"{len(r.get('pids') or ())} processes killed"
    if r.get("reason") == "hung":  # issue 28: it kept answering nudges, with words only
        return ("agent killed as hung", f"attempt {r.get('number')}: "
                f"{_number(r.get('unanswered_nudges')):g} nudges answered by no work; {killed}")
    return ("agent killed after silence",
            f"attempt {r.get('number')}: no output for the idle timeout; {killed}")


_WORDS = {
    Trigger.RUN_END: _run_end, Trigger.COMPLETED: _completed, Trigger.STUCK: _stuck,
    Trigger.BUDGET_EXHAUSTED: _budget, Trigger.QUIT_ON_ABORT: _quit, Trigger.PAUSE: _pause,
    Trigger.GATE_RED: _gate_red, Trigger.IDLE_KILL: _idle_kill,
}


def duration(seconds: float) -> str:
    """`40s`, `12m`, `2h 5m`: a pause or a run, as a phone shows it."""
    total = round(seconds)
    if total < 60:
        return f"{total}s"
    hours, minutes = divmod(total // 60, 60)
    return f"{hours}h {minutes}m" if hours else f"{minutes}m"


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _clock_time(value: Any, now: Any) -> str:
    """A wake time as local `HH:MM`, with the date when it is not the day of the event (`now`,
    its `ts`)."""
    try:
        when = datetime.fromisoformat(str(value)).astimezone()
    except ValueError:
        return str(value)
    try:
        same_day = datetime.fromisoformat(str(now)).astimezone().date() == when.date()
    except ValueError:
        same_day = False
    return when.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M")


def job(target: Target, note: Note, project_dir: str, host: str) -> dict[str, Any]:
    """What the worker needs to deliver `note` to `target`, and what its outcome is named by."""
    return {"kind": target.kind.value, "url": target.url, "command": target.command,
            "cwd": project_dir, "title": note.title, "message": note.message,
            "body": note.envelope(project_dir, host), "trigger": note.trigger.value,
            "priority": note.priority, "tags": list(note.tags), "shown": target.shown()}
