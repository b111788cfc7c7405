"""What a hostile repository plants where aidd reads or writes: a symlink or a hard link to a
file outside the project, or a FIFO that blocks whoever opens it; and a git config naming a
program for every key that makes git start one (issue 27)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def plant(path: Path, kind: str, target: Path | None = None) -> Path:
    """`path` made a "symlink" or "hardlink" to `target`, or a "fifo"; parents are created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif target is None:
        raise ValueError(f"a {kind} needs a target")
    elif kind == "symlink":
        path.symlink_to(target)
    elif kind == "hardlink":
        os.link(target, path)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return path


def within(seconds: float, call: Callable[[], T], fifo: Path) -> T:
    """`call()`'s value, asserting it came within `seconds` instead of blocking on the planted
    `fifo` (which is then opened for writing, so the stuck reader lets the test process go)."""
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(call())
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(5)
        raise AssertionError(f"still blocked on the FIFO {fifo} after {seconds} s")
    if failed:
        raise failed[0]
    return done[0]


# Every hook a git aidd starts could run (index, refs, checkout, commit, gc).
HOOKS = ("pre-commit", "post-commit", "post-checkout", "post-index-change",
         "reference-transaction", "pre-auto-gc", "post-rewrite")


def marker_program(programs: Path, markers: Path, name: str) -> str:
    """An executable `programs/name` that leaves `markers/name` and passes its input (a file
    named last, else stdin) through: the proof a planted program ran."""
    programs.mkdir(parents=True, exist_ok=True)
    markers.mkdir(parents=True, exist_ok=True)
    path = programs / name
    path.write_text(f'#!/bin/sh\ntouch "{markers / name}"\n'
                    'for last; do :; done\n'
                    '[ -n "$last" ] && [ -f "$last" ] && exec cat "$last"\nexec cat\n')
    path.chmod(0o755)
    return str(path)


def hostile_git_config(git_dir: Path, programs: Path, markers: Path) -> None:
    """Every config key that makes git start a program, appended to `git_dir/config` (and an
    included file, and hooks in both hook folders), each program leaving its own marker. The
    work tree's .gitattributes (`hostile_attributes`) names the drivers."""
    def mark(name: str) -> str:
        return marker_program(programs, markers, name)

    hooks = programs / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    for hook in HOOKS:
        for folder in (hooks, git_dir / "hooks"):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / hook).write_text(f'#!/bin/sh\ntouch "{markers}/hook-{hook}"\n')
            (folder / hook).chmod(0o755)
    included = programs / "included.cfg"
    included.write_text(f'[filter "inc"]\n\tclean = {mark("included-clean")}\n'
                        f'\tsmudge = {mark("included-smudge")}\n')
    with (git_dir / "config").open("a") as config:
        config.write(
            f'[filter "x"]\n\tclean = {mark("clean")}\n\tsmudge = {mark("smudge")}\n'
            f'[filter "p"]\n\tprocess = {mark("process")}\n'
            f'[diff "t"]\n\ttextconv = {mark("textconv")}\n\tcommand = {mark("diff-command")}\n'
            f'[diff]\n\texternal = {mark("diff-external")}\n'
            f'[core]\n\tfsmonitor = {mark("fsmonitor")}\n\thooksPath = {hooks}\n'
            f'\tsshCommand = {mark("ssh")}\n\taskPass = {mark("askpass")}\n'
            f'\tpager = {mark("pager")}\n\teditor = {mark("editor")}\n'
            f'[credential]\n\thelper = !{mark("credential")}\n'
            f'[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {mark("gpg")}\n'
            f'[commit]\n\tgpgSign = true\n'
            f'[include]\n\tpath = {included}\n')


def hostile_attributes(root: Path) -> None:
    """A .gitattributes naming the planted drivers for every kind of file a test writes."""
    (root / ".gitattributes").write_text("*.txt filter=x diff=t\n*.py filter=p diff=t\n"
                                         "*.json filter=inc diff=t\n*.md filter=x diff=t\n")


def signed_commit(root: Path, env: dict[str, str]) -> str:
    """A commit on HEAD carrying a `gpgsig` header (git verifies it when log.showSignature
    is on, with gpg.program), made by hand: no key needed. Returns its id."""
    def git(*args: str, stdin: str | None = None) -> str:
        return subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c",
                               "core.fsmonitor=false", *args], cwd=root,
                              env=env, input=stdin, capture_output=True, text=True,
                              check=True).stdout.strip()

    tree, parent = git("rev-parse", "HEAD^{tree}"), git("rev-parse", "HEAD")
    stamp = f"{int(time.time())} +0000"
    body = (f"tree {tree}\nparent {parent}\nauthor u <u@x> {stamp}\ncommitter u <u@x> {stamp}\n"
            "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
            " -----END PGP SIGNATURE-----\n\nsigned work\n")
    commit = git("hash-object", "-t", "commit", "-w", "--stdin", stdin=body)
    git("update-ref", "HEAD", commit)
    return commit
