"""Every git process aidd starts: its argv, its environment and its run (issue 27).

A project's repository is untrusted (a clone, a ZIP, the agent's own edits), so no program it
names may run inside aidd's git: no filter, textconv, diff or gpg program, fsmonitor, hook,
pager, ssh command, askpass or credential helper from it. git reads no system or user config
for a project-local run (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`); every executing
key is overridden with `-c` (which beats any file, an included one too); and the filter and diff
drivers the repository configures, which have names of its choosing, are listed first
(`git config --list`) and each emptied. A network run (the fleet's clone, fetch and push)
keeps the user's own system and global config for credentials, and only those values of the
credential keys. docs/decisions.md (issue 27) has the comparison with a git library.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from aidd import spawning
from aidd.project.gitlayout import ConfigFiles, config_files

TIMEOUT_S = 120.0
# Where git would look for a repository, an index or config other than the one aidd names.
_LOCATIONS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
              "GIT_COMMON_DIR", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE",
              "GIT_CEILING_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
              "GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR")
# The user's own config files: a network run reads them where the user put them.
_USER_CONFIG = ("GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
# Overridden in every run: each key that makes git start a program.
_ALWAYS = {"core.fsmonitor": "false", "core.hooksPath": "/dev/null",
           "log.showSignature": "false", "commit.gpgSign": "false", "tag.gpgSign": "false",
           "gpg.program": "", "gpg.ssh.program": "", "gpg.x509.program": "",
           "gpg.ssh.defaultKeyCommand": "", "diff.external": "", "core.pager": "cat",
           "core.editor": "", "sequence.editor": "", "core.attributesFile": "/dev/null",
           "protocol.ext.allow": "never", "gc.auto": "0",
           "core.alternateRefsCommand": ""}
# The program run on the other end of a local or ssh remote: config names it, and git takes the
# FIRST value of `remote.<name>.uploadpack`/`receivepack` (a `-c` comes last), so it is given on
# the command line, which wins over any config.
_PACK = {"push": "--receive-pack=git-receive-pack", "fetch": "--upload-pack=git-upload-pack",
         "clone": "--upload-pack=git-upload-pack"}
# The credential keys: a local run needs none; a network run keeps only the user's own.
_CREDENTIALS = ("core.sshCommand", "core.askPass", "credential.helper")
# Drivers the repository names: each of these keys starts a program when set.
_DRIVER_KEYS = {"filter": ("clean", "smudge", "process"), "diff": ("textconv", "command"),
                # `--parallel N`'s queue merges (docs/parallel.md): an emptied driver is one
                # git cannot start, so the merge fails, never runs it nor takes one side.
                "merge": ("driver",)}
# Commands that never read a work-tree file nor run a textconv the way aidd calls them (no
# `-p`, `--textconv` or `--filters`): no driver can run in them, so they skip the `git
# config` listing (a process saved). Not `write-tree`: it runs the clean filter of a racily
# clean index entry.
_NO_DRIVER = frozenset({"rev-parse", "update-ref", "for-each-ref", "commit-tree", "ls-tree",
                        "cat-file", "diff-tree", "check-ignore", "symbolic-ref", "merge-base",
                        "rev-list", "mktree", "init", "config", "--version"})
_TRUSTED_SCOPES = ("system", "global")  # only ever read in a network run
GIT = "git"


def which(environ: Mapping[str, str]) -> str | None:
    """The git program this environment's PATH finds, or None."""
    return shutil.which(GIT, path=environ.get("PATH"))


class GitError(Exception):
    """git could not be started, took too long, or (when checked) failed."""


class Done(NamedTuple):
    code: int
    out: bytes
    err: bytes

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "surrogateescape").strip()

    @property
    def why(self) -> str:
        """git's last error line, or its exit code."""
        lines = self.err.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"exit {self.code}"


@dataclass(frozen=True)
class Git:
    """git in `cwd`, on the repository `repo` names (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE;
    none: the one git finds from `cwd`), with `environ` (the user's, trusted) otherwise."""

    cwd: Path
    environ: Mapping[str, str]
    repo: Mapping[str, str] = field(default_factory=dict)
    network: bool = False
    timeout: float = TIMEOUT_S
    # The config as listed once for several runs in a row (`pinned`); None: listed per run.
    listing: tuple[tuple[str, str, str], ...] | None = None
    # aidd's own attributes file (packaged, trusted) in place of none: the merge queue's.
    attributes: Path | None = None

    def pinned(self) -> Git:
        """This git with its config listed now, once, for the few runs of one step (a
        checkpoint's add and write-tree): one `git config` run instead of one per run."""
        return replace(self, listing=tuple(self._config()))

    def env(self) -> dict[str, str]:
        dropped = _LOCATIONS if self.network else (*_LOCATIONS, *_USER_CONFIG)
        env = {k: v for k, v in self.environ.items()
               if k not in dropped and not k.startswith(("GIT_CONFIG_KEY_",
                                                          "GIT_CONFIG_VALUE_"))}
        # No optional lock: a read (status) never rewrites an index, the agent's or another's.
        env.update(GIT_TERMINAL_PROMPT="0", GIT_ATTR_NOSYSTEM="1", GIT_PAGER="cat",
                   GIT_OPTIONAL_LOCKS="0",
                   # Set, even empty, it hides core.gitProxy (whose FIRST value git takes).
                   GIT_PROXY_COMMAND=self.environ.get("GIT_PROXY_COMMAND", ""))
        if not self.network:
            env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
        return {**env, **self.repo}

    def argv(self, *args: str, files: ConfigFiles | None = None) -> list[str]:
        """`git -c ... ARGS`: the overrides, those of the repository's drivers included
        (`files`: the config files as `run` just found them, not looked at again)."""
        listing = ([] if args[0] in _NO_DRIVER and not self.network else
                   list(self.listing) if self.listing is not None else self._config(files))
        pack = [_PACK[args[0]]] if args[0] in _PACK else []
        # The user's own ignore file still keeps their editor's files out of a checkpoint.
        mine = [] if self.network else _user_excludes(*(self.environ.get(k, "") for k in _HOME))
        settings = overrides(listing, self.network)
        if self.attributes is not None:
            settings["core.attributesFile"] = str(self.attributes)
        return [GIT, *_flags(settings), *mine, args[0], *pack, *args[1:]]

    def run(self, *args: str, stdin: bytes | None = None) -> Done:
        """`git ARGS`, bounded; a failure to start or a timeout is a GitError."""
        files = self._files([GIT, *args])
        return self._exec(self.argv(*args, files=files), stdin)

    def out(self, *args: str, stdin: bytes | None = None) -> str:
        """stdout of `git ARGS` (stripped), a non-zero exit being a GitError."""
        done = self.run(*args, stdin=stdin)
        if not done.ok:
            raise GitError(f"git {args[0]} failed: {done.why}")
        return done.text

    def _config(self, files: ConfigFiles | None = None) -> list[tuple[str, str, str]]:
        """(scope, key, value) of every config entry git would read here: listed once while
        the files it comes from keep their stat signature (a project-local run; a network
        run reads the user's files too, and is rare), again when one changed (the agent
        may add a filter mid-run)."""
        argv = [GIT, "config", "--null", "--show-scope", "--list"]
        signature = (files or self._files(argv)).signature
        key = None if self.network or signature is None else (
            str(self.cwd), tuple(sorted(self.repo.items())), signature)
        if key is not None and (known := _LISTINGS.get(key)) is not None:
            return list(known)
        done = self._exec(argv, None)
        listing = parse_listing(done.out) if done.ok else []
        if key is not None and done.ok:
            if len(_LISTINGS) >= _LISTINGS_KEPT:
                _LISTINGS.clear()
            _LISTINGS[key] = tuple(listing)
        return listing

    def _files(self, argv: list[str]) -> ConfigFiles:
        """The config files git would read; one it would block on is a GitError."""
        files = config_files(self.cwd, self.repo, self.environ.get("HOME", ""))
        if files.problem:
            raise GitError(f"git {_verb(argv)} not run: {files.problem}")
        return files

    def _exec(self, argv: list[str], stdin: bytes | None) -> Done:
        try:
            return _run(argv, self.cwd, self.env(), stdin, self.timeout)
        except (OSError, subprocess.SubprocessError) as exc:
            raise GitError(f"git {_verb(argv)}: {exc}") from None


def _run(argv: list[str], cwd: Path | str, env: dict[str, str], stdin: bytes | None,
         timeout: float) -> Done:
    """One git run; its start holds aidd/spawning's lock until the exec."""
    with spawning.LOCK:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE)
        spawning.own(proc.pid)
    try:
        with proc:
            try:
                out, err = proc.communicate(stdin, timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise
    finally:
        spawning.disown(proc.pid)
    return Done(proc.returncode, out, err)


# The listings of this process (one run), by place and config signature (`Git._config`).
_LISTINGS: dict[tuple[object, ...], tuple[tuple[str, str, str], ...]] = {}
_LISTINGS_KEPT = 16  # places one run lists config in: the project, a few worktrees

_HOME = ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "PATH")


@functools.cache
def _user_excludes(home: str, xdg: str, global_config: str, path: str) -> tuple[str, ...]:
    """`-c core.excludesFile=...` from the user's own global config (trusted, read once per
    process and home), which a project-local run does not read otherwise."""
    env = {k: v for k, v in zip(_HOME, (home, xdg, global_config, path), strict=True) if v}
    try:
        done = _run([GIT, "config", "--global", "--path", "--get", "core.excludesFile"], "/",
                    env, None, TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return ()
    value = done.text.strip()
    return ("-c", f"core.excludesFile={value}") if done.code == 0 and value else ()


def parse_listing(raw: bytes) -> list[tuple[str, str, str]]:
    """`git config --null --show-scope --list`: scope NUL key LF value NUL, per entry."""
    tokens = raw.decode("utf-8", "surrogateescape").split("\0")
    out = []
    for scope, entry in zip(tokens[0::2], tokens[1::2], strict=False):
        key, _, value = entry.partition("\n")
        out.append((scope, key, value))
    return out


def overrides(listing: list[tuple[str, str, str]], network: bool) -> dict[str, str | list[str]]:
    """The `-c` settings of a run, given what config git would read: `_ALWAYS`; each driver
    the config names emptied; the credential keys empty, or in a network run the user's own."""
    out: dict[str, str | list[str]] = dict(_ALWAYS)
    for _, key, _ in listing:
        section, _, rest = key.partition(".")
        name, _, variable = rest.rpartition(".")
        if name and variable.lower() in _DRIVER_KEYS.get(section.lower(), ()):
            for each in _DRIVER_KEYS[section.lower()]:
                out[f"{section}.{name}.{each}"] = ""
            if section.lower() == "filter":
                out[f"filter.{name}.required"] = "false"
    trusted = [(k.lower(), v) for scope, k, v in listing
               if network and scope in _TRUSTED_SCOPES]
    planted = {k.lower() for scope, k, _ in listing if scope not in _TRUSTED_SCOPES}
    rewrites = sorted(k for k in planted if k.startswith("url.")
                      and k.endswith((".insteadof", ".pushinsteadof")))
    if network and rewrites:  # a URL rule in the repository's config: the work would go there
        raise GitError(f"the repository's own config rewrites remote URLs ({rewrites[0]}): "
                       "refused")
    for key in _CREDENTIALS:
        own = [v for k, v in trusted if k == key.lower()]
        if key == "credential.helper":
            out[key] = ["", *own]  # an empty value forgets the helpers listed before it
        elif own or not network:
            out[key] = own[-1] if own else ""
        elif key.lower() in planted:  # git's default ssh (GIT_SSH stays hidden), no askpass
            out[key] = "ssh" if key == "core.sshCommand" else ""
    return out


def _flags(settings: Mapping[str, str | list[str]]) -> list[str]:
    flags = []
    for key, value in settings.items():
        for each in [value] if isinstance(value, str) else value:
            flags += ["-c", f"{key}={each}"]
    return flags


def _verb(argv: list[str]) -> str:
    """The git command in `argv`: the first word after the `-c` pairs."""
    words = iter(argv[1:])
    for word in words:
        if word == "-c":
            next(words, None)
        else:
            return word
    return ""
