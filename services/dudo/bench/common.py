"""What the benchmarks share beyond the fleet they run (dudo.ops.fleet): percentiles."""

from __future__ import annotations

__all__ = ["percentile"]


def percentile(values: list[float], pct: float) -> float:
    """Linear-interpolated percentile (nan for no values)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * pct / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)
