"""Dollar amounts rounded to millionths so that the rounded parts add up to the rounded whole, exactly.

Rounding each share on its own lets a hundred shares drift a hundred millionths from the total; the
largest-remainder method (Hamilton's) rounds them together: every part is floored to a whole number of
micro-dollars, then the micro-dollars still missing from the total go to the parts with the largest
remainders (ties by the parts' order). Sums of the results are exact in integers; `dollars` turns them back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

MICRO = 1_000_000


def apportion(amounts: Sequence[float], total: float) -> list[int]:
    """`amounts` (dollars, summing to about `total`) as micro-dollars summing to exactly round(total)."""
    target = round(total * MICRO)
    scaled = [max(a, 0.0) * MICRO for a in amounts]
    parts = [math.floor(s) for s in scaled]
    missing = target - sum(parts)
    if not parts:
        return parts
    order = sorted(range(len(parts)), key=lambda i: (-(scaled[i] - parts[i]), i))
    i = 0
    while missing > 0:  # the largest remainders first, round and round if the amounts fell short
        parts[order[i % len(parts)]] += 1
        missing -= 1
        i += 1
    for j in reversed(order):  # amounts over the total (float noise): take back from the smallest remainders
        if missing >= 0:
            break
        take = min(parts[j], -missing)
        parts[j] -= take
        missing += take
    return parts


def dollars(micros: int) -> float:
    """Micro-dollars as dollars, at most six decimals."""
    return round(micros / MICRO, 6)
