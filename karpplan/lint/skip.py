"""`Skip`: a rule that could not judge the input (or one object of it), and why; the lint context records
it while the rules run, the report lists it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Skip:
    """A rule that could not judge the input (or one object of it), and why: never a silent "0 errors"."""

    rule: str
    reason: str
    object: str = ""  # empty: the rule did not run at all

    def as_dict(self) -> dict[str, str]:
        out = {"rule": self.rule, "reason": self.reason}
        if self.object:
            out["object"] = self.object
        return out
