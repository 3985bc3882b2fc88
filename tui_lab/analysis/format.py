"""Numbers as a person reads them: the one formatter the CLI and the app share."""

from __future__ import annotations


def fmt_count(n: float) -> str:
    """124439808 -> '124.44M'."""
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f}{unit}"
    return f"{n:.0f}"


def fmt_bytes(n: float) -> str:
    """Binary units: 497757184 -> '474.7 MiB'."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"
