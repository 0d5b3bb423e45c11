"""The configuration LP's own plan: which patterns (one node of one shape holding whole pods of each class)
its optimum buys, and how many. `engines/lp_rounding.py` rounds it into a plan."""

from __future__ import annotations

from dataclasses import dataclass

from karpplan.engines.patterns.instance import Instance


@dataclass(frozen=True)
class MixColumn:
    room: tuple[float, ...]  # the shape's room per dimension of `PatternMix.dims`
    price: float
    counts: tuple[tuple[int, int], ...]  # (class, pods of it on one such node)
    value: float  # nodes of this pattern in the LP's optimum (fractional)


@dataclass(frozen=True)
class PatternMix:
    """Every new-node pattern the column generation priced, with its value in the last master's optimum."""

    dims: tuple[str, ...]
    class_of_group: dict[int, int]  # group index -> class (groups of free classes are not in it)
    # class -> the master's covering rows it counts in: first the row it shares with every class of the same
    # requests and options (they differ only by their per-node caps), then one row per cap set it is in
    rows_of: tuple[tuple[int, ...], ...]
    columns: tuple[MixColumn, ...]

    @staticmethod
    def of(inst: Instance, rows_of: list[list[int]], columns: list[tuple[int, tuple[tuple[int, int], ...], float]]
           ) -> PatternMix:
        return PatternMix(tuple(inst.dims), dict(inst.class_of_group), tuple(tuple(rs) for rs in rows_of),
                          tuple(MixColumn(tuple(float(v) for v in inst.free[k]), float(inst.price[k]), counts,
                                          max(value, 0.0)) for k, counts, value in columns))
