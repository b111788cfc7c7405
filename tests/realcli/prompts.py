"""Prompts used against the real CLIs, the 1 MiB one built deterministically."""

from __future__ import annotations

HELLO = "Create the file hello.txt containing a greeting, using your file-writing tool.\n"
SHELL = "Run the shell command `echo mock-shell-ok` with your shell tool.\n"
NUDGE = (
    "aidd nudge: you have been silent for a while. Continue the task, or finish and "
    "summarise what you did. [nudge-marker-7f3a]"
)
MIB = 1 << 20


def big_prompt(size: int = MIB) -> str:
    """Exactly `size` UTF-8 bytes: lines far over 4095 bytes, multibyte characters, and
    characters a terminal would interpret (ESC, ^C, ^D, ^Z, CR, tab). Starts and ends with a
    visible character, so a CLI that trims whitespace cannot hide a difference."""
    unit = (
        "BEGIN big prompt line: Grüße, 日本語, emoji 🚀, control \x1b[31mred\x1b[0m "
        '\x03 \x04 \x1a \r tab\t quote " backslash \\ — '
    )
    line = (unit * 60)[:5000] + " END\n"
    out = "START " + line * (size // len(line.encode()) + 2)
    data = out.encode()[: size - 4]
    text = data.decode("utf-8", errors="ignore")
    pad = size - 4 - len(text.encode())
    return text + "." * pad + " END"
