"""`python -m aidd` and the `aidd` command."""

import sys

from aidd import __version__


def main() -> int:
    """`aidd --version` alone answers before the CLI's imports (Click, the flags, the config:
    most of its start-up); everything else, `-v` among other flags included, goes to Click,
    whose answer is the same line."""
    if sys.argv[1:] in (["--version"], ["-v"]) and sys.stdout is not None:
        try:
            sys.stdout.write(f"aidd {__version__}\n")
            sys.stdout.flush()
            return 0
        except OSError:
            pass  # a closed stdout: the CLI's own handling
    from aidd.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
