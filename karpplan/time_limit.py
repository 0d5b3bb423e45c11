"""`--time-limit auto|SECONDS`, shared by `plan`, `diff` and `consolidate`: the one limit a command keeps, fitted
to its input when `auto` (the default).

`auto` is `engines/effort.py`'s `auto_time_limit` of the pods the command plans and their pod groups (each a
class of interchangeable pods): `plan` fits it to the pending pods, `diff` to the larger of its two sides,
`consolidate` to the pods its simulation may move. Seconds given on the command line always win. Every
command states the limit it kept, and whether `auto` chose it (`TimeLimit.describe`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from karpplan.engines.effort import AUTO_TIME_LIMIT_MIN_SECONDS, auto_time_limit
from karpplan.model.pods import Pod, group_pods


def auto_seconds(pods: Sequence[Pod]) -> float:
    """The `auto` limit for planning `pods`: from their number and their pod groups."""
    return auto_time_limit(len(pods), len(group_pods(pods)))


@dataclass(frozen=True)
class TimeLimit:
    """A command's time limit: `seconds` given (`--time-limit N`), or None for `auto` until fitted."""

    seconds: float | None = None

    @property
    def auto(self) -> bool:
        return self.seconds is None

    def fitted(self, *pod_sets: Sequence[Pod]) -> float:
        """The seconds to keep: those given, else `auto` of the largest of `pod_sets` (the minimum for none)."""
        if self.seconds is not None:
            return self.seconds
        return max((auto_seconds(pods) for pods in pod_sets), default=AUTO_TIME_LIMIT_MIN_SECONDS)

    def describe(self, seconds: float, per: str = "") -> str:
        """How a command states the limit it kept: `auto time limit 57s` or `time limit 3s`, `per` appended."""
        return ("auto " if self.auto else "") + f"time limit {seconds:g}s" + (f" {per}" if per else "")

