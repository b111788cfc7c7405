"""project/git, the one owner of git runs: which run ids count, which config keys are
overridden, and the user's own credential keys kept for a network run (issue 27)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from aidd.project.checkpointnames import is_run_id
from aidd.project.checkpoints import PRIVATE_REPO, CheckpointStore
from aidd.project.git import Git, overrides, parse_listing


def test_run_ids_are_aidds_own_and_not_in_the_future() -> None:
    now = datetime(2026, 11, 27, tzinfo=UTC)
    assert is_run_id("20261125T010000Z-42", now)
    assert not is_run_id("20261128T010000Z-42", now)
    assert not is_run_id("20261325T010000Z-42", now)
    assert not is_run_id("001", now)
    assert not is_run_id("20261125T010000Z-42/x", now)


def test_a_network_run_keeps_only_the_users_own_credential_keys() -> None:
    listing = parse_listing(
        b"global\0credential.helper\nstore\0local\0credential.helper\n!evil\0"
        b"local\0core.sshcommand\nevil-ssh\0local\0filter.lfs.process\nevil\0")
    network, local = overrides(listing, network=True), overrides(listing, network=False)
    assert network["credential.helper"] == ["", "store"]
    assert network["core.sshCommand"] == "ssh"
    assert local["credential.helper"] == [""]
    assert local["core.sshCommand"] == ""
    for each in (network, local):
        assert each["filter.lfs.process"] == each["filter.lfs.clean"] == ""
        assert each["filter.lfs.required"] == "false"


def test_a_merge_driver_the_repository_names_is_emptied() -> None:
    """The merge queue of --parallel N runs `git merge`: a driver in the project's config would
    run as a shell command in it."""
    listing = parse_listing(b"local\0merge.evil.driver\ntouch pwned\0")
    assert overrides(listing, network=False)["merge.evil.driver"] == ""


def test_the_other_end_of_a_push_or_fetch_is_gits_own(tmp_path: Path) -> None:
    """git takes the first `remote.<name>.receivepack` of the config, so a `-c` cannot win:
    the command line names the program."""
    for verb, flag in (("push", "--receive-pack=git-receive-pack"),
                       ("fetch", "--upload-pack=git-upload-pack"),
                       ("clone", "--upload-pack=git-upload-pack")):
        argv = Git(tmp_path, {}, network=True).argv(verb, "origin")
        assert argv[-3:] == [verb, flag, "origin"]


def test_a_network_run_without_planted_credential_keys_leaves_them_to_the_user() -> None:
    """GIT_SSH and the user's own askpass stay in effect where nothing was planted."""
    listing = parse_listing(b"global\0user.name\nme\0")
    network = overrides(listing, network=True)
    assert "core.sshCommand" not in network
    assert "core.askPass" not in network


def test_the_users_own_ignore_file_still_keeps_files_out_of_a_checkpoint(
        tmp_path: Path) -> None:
    """A project-local run reads no global config, but the user's core.excludesFile counts."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "my-ignore").write_text("*.swp\n")
    (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/my-ignore\n")
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "a.txt.swp").write_text("editor\n")
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    point = CheckpointStore(root, "20261125T010000Z-42", env).record("001")
    listed = Git(root, env, {"GIT_DIR": str(root / PRIVATE_REPO)}).out(
        "ls-tree", "-r", "--name-only", point.ref)
    assert listed.split() == ["a.txt"]


def test_only_a_network_run_reads_the_users_config_files(tmp_path: Path) -> None:
    environ = {"GIT_CONFIG_GLOBAL": "/home/me/.gitconfig", "GIT_DIR": "/elsewhere",
               "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='x'"}
    local, network = Git(tmp_path, environ).env(), Git(tmp_path, environ, network=True).env()
    assert (local["GIT_CONFIG_GLOBAL"], local["GIT_CONFIG_NOSYSTEM"]) == ("/dev/null", "1")
    assert network["GIT_CONFIG_GLOBAL"] == "/home/me/.gitconfig"
    assert "GIT_CONFIG_NOSYSTEM" not in network
    for env in (local, network):
        assert "GIT_DIR" not in env
        assert "GIT_CONFIG_PARAMETERS" not in env
