"""`python -m aidd`."""

from aidd.cli import main

raise SystemExit(main())
