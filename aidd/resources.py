"""The one resolver for shipped data: prompts/, scaffolding/, artifacts/ (LAY-5, LAY-6), and the
data files inside the package itself (the price table)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """`name` is one of prompts, scaffolding, artifacts.

    An installed wheel carries them under aidd/data/; a source checkout or editable install
    reads the checkout's top-level folders.
    """
    packaged = _PACKAGE_DIR / "data" / name
    if packaged.is_dir():
        return packaged
    checkout = _PACKAGE_DIR.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"aidd data folder {name!r} not found (broken installation?)")


def package_data(name: str) -> bytes:
    """A data file that ships inside the package, e.g. `budget/prices.json`."""
    return package_file(name).read_bytes()


def package_file(name: str) -> Path:
    """Where a data file inside the package is, for a program that reads it itself (git)."""
    return _PACKAGE_DIR / name


def checkout_root() -> Path | None:
    """The source checkout's root when aidd runs from one (LAY-30), else None."""
    root = _PACKAGE_DIR.parent
    if (root / "pyproject.toml").is_file() and (root / "prompts").is_dir():
        return root
    return None
