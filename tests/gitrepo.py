"""git as the user of a test repository runs it: an identity of its own, stdout back, and a
failed command fails the test."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_USER = {"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u",
         "GIT_COMMITTER_EMAIL": "u@x"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env={**os.environ, **_USER},
                          capture_output=True, text=True, check=True).stdout
