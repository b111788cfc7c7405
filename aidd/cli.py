"""The Click layer: parse flags into Settings, call `app.run`, turn errors into exit codes.

Nothing below this module knows Click; this is the one place exceptions become exit codes and
one-line messages, and an unexpected one leaves its traceback in a crash file (CLI-1, REL-20).
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aidd import __version__
from aidd.config import (
    ACTION_FLAGS,
    REPORT_VALUES,
    ROLLBACK_HELP,
    Actions,
    Settings,
    color_wanted,
    load_settings,
)
from aidd.console import flush_standard, print_err, print_out, report_traceback
from aidd.errors import EXIT_MEANINGS, AiddError, CrashReported, ExitCode, UsageError, shown
from aidd.options import CLI_NAMES, OPTIONS, Kind, Option, OptionValueError, convert

if TYPE_CHECKING:
    import click

_MANY = (Kind.LIST, Kind.GATE, Kind.NOTIFY)  # flags given again keep every value


def _help_for(opt: Option) -> str:
    default = opt.default
    if opt.kind is Kind.SWITCH:
        shown = "on" if default else "off"
    elif default in (None, ()):
        shown = "unlimited" if opt.name == "max-iterations" else "none"
    else:
        shown = str(default)
    env = f"; env {opt.env}" if opt.configurable else ""
    return f"{opt.help} [default: {shown}{env}]"


def _offer(words: Callable[[], Sequence[str]], listed: bool = False) -> Any:
    """Shell completion of a flag's value from `words` (the last item of a comma list when
    `listed`): Click's `_AIDD_COMPLETE`, README "Shell completion"."""
    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
        done, _, last = incomplete.rpartition(",") if listed else ("", "", incomplete)
        head = f"{done}," if done else ""
        return [head + word for word in words() if word.startswith(last)]

    return complete


def _audit_names() -> list[str]:
    """The shipped audits' names (a project's own are not looked at while completing)."""
    from aidd.resources import data_dir

    return sorted(p.stem for p in (data_dir("prompts") / "audits").glob("[A-Z]*.md"))


def _completion(opt: Option) -> Any:
    if opt.kind is Kind.CLI:
        return _offer(lambda: CLI_NAMES)
    if opt.kind is Kind.CHOICE:
        return _offer(lambda: opt.choices)
    if opt.name in ("audit", "audit-on-completion"):
        return _offer(_audit_names, listed=True)
    return None


def _click_option(opt: Option) -> Any:
    import click

    kwargs: dict[str, Any] = {"help": _help_for(opt), "default": None,
                              "shell_complete": _completion(opt)}
    if opt.kind is Kind.SWITCH:
        decl = f"{opt.flag}/--no-{opt.name}" if opt.name == "stop-when-done" else opt.flag
        decorator = click.option(decl, opt.attr, is_flag=True, **kwargs)
    elif opt.kind in _MANY:
        kwargs["default"] = ()
        decorator = click.option(opt.flag, opt.attr, multiple=True,
                                 metavar=opt.metavar or opt.kind.value, **kwargs)
    else:
        decorator = click.option(opt.flag, opt.attr, metavar=opt.metavar or opt.kind.value,
                                 **kwargs)

    def apply(func: Any) -> Any:
        func = decorator(func)
        func.__click_params__[-1].aidd_group = opt.group
        return func

    return apply


def _print_exit_codes(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        print_out("".join(f"{code:>3}  {meaning}\n" for code, meaning in EXIT_MEANINGS.items()))
        ctx.exit()


# The words that start a command of their own (dispatched in `main` before Click).
SUBCOMMANDS = ("fleet", "watch", "feature")


@functools.cache
def _command() -> click.Command:
    """Built at its first use: a command line `_plain_values` reads never imports Click."""
    import click

    class _GroupedCommand(click.Command):
        """`--help` in the flag table's groups, each flag with its default and AIDD_* variable."""

        def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
            groups: dict[str, list[tuple[str, str]]] = {}
            for param in self.get_params(ctx):
                record = param.get_help_record(ctx)
                if record is not None:
                    group = getattr(param, "aidd_group", "One-shot actions")
                    groups.setdefault(group, []).append(record)
            for group, rows in groups.items():
                with formatter.section(group):
                    formatter.write_dl(rows)

    def callback(**values: Any) -> dict[str, Any]:
        return values

    for opt in reversed(OPTIONS):
        callback = _click_option(opt)(callback)
    for name, metavar, text in reversed(REPORT_VALUES):  # listed after --report
        callback = click.option(f"--{name}", name, metavar=metavar, default=None,
                                help=text)(callback)
    for name, text in reversed(ACTION_FLAGS):
        callback = click.option(f"--{name}", name.replace("-", "_"), is_flag=True,
                                help=text)(callback)
    callback = click.option("--rollback", "rollback", metavar="CHECKPOINT", default=None,
                            help=ROLLBACK_HELP)(callback)
    callback = click.option("--help-exit-codes", is_flag=True, is_eager=True,
                            expose_value=False, callback=_print_exit_codes,
                            help="print what each exit code means, then exit")(callback)
    callback = click.version_option(__version__, "-v", "--version", prog_name="aidd",
                                    message="%(prog)s %(version)s")(callback)
    # No positional argument is taken; this one lets `aidd <TAB>` offer `fleet`, and a stray
    # word is refused in parse_args.
    callback = click.argument("words", nargs=-1, metavar="[fleet|watch|feature ...]",
                              shell_complete=_offer(lambda: SUBCOMMANDS))(callback)
    return click.command(
        "aidd",
        cls=_GroupedCommand,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
        help="Run an AI coding-agent CLI unattended, in loops, on one project.",
        epilog="Many projects at once, on Temporal: aidd fleet --help (pip install "
               "'aidd[fleet]'). Exit codes: aidd --help-exit-codes. Effective settings and "
               "where each came from: aidd --show-config. A live view of a run: aidd watch.",
    )(callback)


# Every flag but help and version: its value's name in the callback, and what it takes.
_PLAIN: dict[str, tuple[str, Kind]] = {
    **{opt.flag: (opt.attr, opt.kind) for opt in OPTIONS},
    **{f"--{name}": (name.replace("-", "_"), Kind.SWITCH) for name, _ in ACTION_FLAGS},
    **{f"--{name}": (name, Kind.TEXT) for name, _, _ in (*REPORT_VALUES, ("rollback", "", ""))},
}
_VALUE_FLAGS = {flag for flag, (_, kind) in _PLAIN.items() if kind is not Kind.SWITCH}


def _plain_values(args: Sequence[str]) -> dict[str, Any] | None:
    """What Click's callback gets for `args` (the flags given) when each is a flag of `_PLAIN`
    followed by its value, if it takes one, not starting with '-'; else None, for Click to
    read (help, --flag=value, a word, completion). Click is ~35 ms of `aidd --status` (issue
    33); tests/unit/test_cli_plain.py holds the two readings equal."""
    if "_AIDD_COMPLETE" in os.environ:
        return None
    values: dict[str, Any] = {}
    rest = iter(args)
    for arg in rest:
        name, kind = _PLAIN.get(arg, ("", None))
        if kind is Kind.SWITCH:
            values[name] = True
            continue
        value = next(rest, None) if kind is not None else None
        if value is None or value.startswith("-"):
            return None
        values[name] = (*values.get(name, ()), value) if kind in _MANY else value
    return values


def _click_values(args: Sequence[str]) -> dict[str, Any] | None:
    """The values Click gives the callback; None when --help/--version already answered."""
    import click

    _check_missing_values(args)
    try:
        values = _command().main(list(args), prog_name="aidd", standalone_mode=False)
    except click.exceptions.Exit:
        return None
    except click.ClickException as exc:
        raise UsageError(exc.format_message()) from None
    return values if isinstance(values, dict) else None  # --help / --version: exit status


def _check_missing_values(args: Sequence[str]) -> None:
    """CLI-2: Click would take `--spec --todo` as spec '--todo'; that is a missing value."""
    known = {p for param in _command().params for p in (*param.opts, *param.secondary_opts)}
    for flag, nxt in itertools.pairwise(args):
        if flag == "--":
            return
        if flag in _VALUE_FLAGS and nxt in known:
            raise UsageError(f"option '{flag}' requires a value (got the flag '{nxt}')")


def parse_args(args: Sequence[str], environ: dict[str, str] | None = None) -> Settings | None:
    """Flags → Settings; None when --help/--version already answered."""
    values = _plain_values(args)
    if values is None:
        values = _click_values(args)
    if values is None:
        return None
    words = values.pop("words", ())
    if words:
        raise UsageError(f"unexpected argument {shown(words[0])}: aidd takes flags; "
                         "aidd fleet … runs many projects, aidd watch shows a run, aidd feature "
                         "edits a feature file")
    chosen: dict[str, Any] = {n.replace("-", "_"): bool(values.get(n.replace("-", "_")))
                              for n, _ in ACTION_FLAGS}
    chosen.update({name: values.get(name) for name, _, _ in REPORT_VALUES})
    actions = Actions(**chosen, rollback=values.get("rollback"))
    flags: dict[str, Any] = {}
    for opt in OPTIONS:
        raw = values.get(opt.attr)
        if raw is None or raw == ():
            continue
        try:
            flags[opt.name] = convert(opt, raw)
        except OptionValueError as exc:
            raise UsageError(f"{opt.flag}: {exc}") from None
    # The doctor reports a config file or variable in error instead of stopping at it.
    return load_settings(flags, actions, environ=environ, argv=tuple(args),
                         lenient=actions.doctor)


def _report_crash(exc: BaseException, settings: Settings | None) -> None:
    target = report_traceback(exc, settings.project_dir if settings is not None else None)
    _error(f"internal error: {exc!r}; traceback in {target}" if target is not None
           else f"internal error: {exc!r} (traceback above)")


def _error(message: str, settings: Settings | None = None) -> None:
    """`aidd: error: …`, in red where colour is wanted (a terminal, --color, NO_COLOR)."""
    mode = settings.color if settings is not None else "auto"
    print_err(f"aidd: error: {message}\n", "error", lambda terminal: color_wanted(mode, terminal))


def _standard_streams() -> None:
    """`aidd … >&-` closes a standard fd: the next file aidd opens (the lock!) would get it and
    receive the console. Hold /dev/null there instead (issue 13 item 13)."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False, encoding="utf-8",  # noqa: SIM115
                                    errors="replace"))


def _fleet(args: Sequence[str]) -> int:
    """`aidd fleet ...`: the optional extra, imported only here, so no other command ever
    imports temporalio (docs/fleet.md)."""
    try:
        from aidd.fleet.commands import main as fleet_main
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "temporalio":
            raise
        raise UsageError("aidd fleet needs the fleet extra: pip install 'aidd[fleet]'") from None
    return fleet_main(args)


def _feature(args: list[str]) -> int:
    """`aidd feature set ID KEY=VALUE…` / `aidd feature done ID` (issue 31 item 7): one
    feature.json changed by merging onto it as it is now (project/featureedit)."""
    from aidd.clock import SystemClock
    from aidd.project import featureedit
    from aidd.project.paths import ProjectPaths

    if not args or args[0] in ("-h", "--help"):
        print_out(featureedit.USAGE)
        return int(ExitCode.SUCCESS)
    project, rest = _project_dir(args[1:])
    if args[0] == "set" and rest:
        changes = featureedit.parse_assignments(rest[1:])
    elif args[0] == "done" and len(rest) == 1:
        changes = featureedit.done_changes()
    else:
        raise UsageError(f"aidd feature: unexpected {shown(' '.join(args))}\n"
                         f"{featureedit.USAGE.splitlines()[0]}")
    done = featureedit.edit_feature(ProjectPaths(project), rest[0], changes,
                                    SystemClock().now())
    print_out(featureedit.describe(done))
    return int(ExitCode.SUCCESS)


def _project_dir(args: list[str]) -> tuple[Path, list[str]]:
    """`--project-dir DIR` anywhere among `args`; else AIDD_PROJECT_DIR, which aidd sets for
    its agent; else the working directory."""
    if "--project-dir" not in args:
        return Path(os.environ.get("AIDD_PROJECT_DIR") or Path.cwd()), args
    at = args.index("--project-dir")
    if at + 1 >= len(args):
        raise UsageError("option '--project-dir' requires a value")
    return Path(args[at + 1]), args[:at] + args[at + 2:]


def _completing_fleet(environ: MutableMapping[str, str]) -> bool:
    """Shell completion (`_AIDD_COMPLETE`) past `aidd fleet`: the fleet's own Click group
    completes the rest, as if it were the whole command line."""
    if "_AIDD_COMPLETE" not in environ:
        return False
    words = environ.get("COMP_WORDS", "").split()
    try:
        cword = int(environ.get("COMP_CWORD", "0"))
    except ValueError:
        return False
    if words[1:2] != ["fleet"] or cword < 2:
        return False
    environ["COMP_WORDS"] = " ".join(["aidd-fleet", *words[2:]])
    environ["COMP_CWORD"] = str(cword - 1)
    return True


def _exit_now(code: int) -> int:
    """After `aidd fleet`: flush and leave without the interpreter's teardown. Short-lived
    processes using Temporal's SDK crashed at interpreter exit (3 of ~15, the issue's
    measurement) after their work succeeded; there is nothing left to tear down here."""
    if sys.modules.get("temporalio") is not None:
        flush_standard()
        os._exit(code)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    _standard_streams()
    args = list(sys.argv[1:] if argv is None else argv)
    if _completing_fleet(os.environ):
        args = ["fleet"]
    if args[:1] == ["fleet"]:
        return _exit_now(_guarded(lambda _known: _fleet(args[1:])))
    if args[:1] == ["watch"]:
        from aidd.watch.command import main as watch_main  # lazy: only `aidd watch` needs it

        return _guarded(lambda _known: watch_main(args[1:]))
    if args[:1] == ["feature"]:
        return _guarded(lambda _known: _feature(args[1:]))
    return _guarded(lambda known: _run_aidd(args, known))


def _run_aidd(args: list[str], known: list[Settings]) -> int:
    settings = parse_args(args)
    if settings is None:
        return ExitCode.SUCCESS
    known.append(settings)  # for a crash report
    from aidd.app import run  # lazy: keep --help/--version fast

    return int(run(settings))


def _guarded(job: Callable[[list[Settings]], int]) -> int:
    """The one place where exceptions become exit codes and one line (aidd and aidd fleet)."""
    known: list[Settings] = []
    try:
        return job(known)
    except AiddError as exc:
        _error(exc.message, known[0] if known else None)
        return int(exc.exit_code)
    except CrashReported as exc:
        what = f": {exc.summary}" if exc.summary else ""
        _error(f"internal error{what}; traceback in {exc.log}")
        return int(ExitCode.GENERAL_ERROR)
    except KeyboardInterrupt:
        _error("interrupted")
        return int(ExitCode.TIMEOUT_OR_SIGNAL)
    except Exception as exc:
        _report_crash(exc, known[0] if known else None)
        return int(ExitCode.GENERAL_ERROR)
