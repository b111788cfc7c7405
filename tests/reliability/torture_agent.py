"""A stand-in `opencode` that writes hostile output (tests only).

    torture_agent.py PAYLOAD_FILE [args...]

`--version` prints a tested version. Otherwise it reads stdin to EOF, then writes the bytes of
PAYLOAD_FILE to stdout in uneven chunks the first time it runs (a marker file next to the
payload counts runs) and a short line on later runs, and exits 0.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    payload = Path(sys.argv[1])
    if sys.argv[2:] == ["--version"]:
        print("1.18.33")
        return
    sys.stdin.buffer.read()
    marker = payload.with_suffix(".ran")
    if marker.exists():
        os.write(1, b"second run\n")
        return
    marker.write_text("1")
    data = memoryview(payload.read_bytes())
    sizes = (1, 7, 4096, 65536, 1 << 20)
    step = 0
    while data:
        chunk, data = data[: sizes[step % len(sizes)]], data[sizes[step % len(sizes)] :]
        step += 1
        while chunk:
            chunk = chunk[os.write(1, chunk) :]


if __name__ == "__main__":
    main()
