"""Taints and tolerations (`v1.Toleration.ToleratesTaint`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from karpplan.model.requirements import parse_int

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


@dataclass(frozen=True)
class Taint:
    key: str
    value: str = ""
    effect: str = NO_SCHEDULE

    def __str__(self) -> str:
        """Karpenter's `key[=value]:effect` form."""
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    def kube_text(self) -> str:
        """kube-scheduler's `{key: value}` form."""
        return f"{{{self.key}: {self.value}}}"

    def as_dict(self) -> dict[str, str]:
        out = {"key": self.key, "effect": self.effect}
        if self.value:
            out["value"] = self.value
        return out


@dataclass(frozen=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if not self.key and self.operator != "Exists":
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        if self.operator in ("Lt", "Gt"):
            a, b = parse_int(taint.value), parse_int(self.value)
            if a is None or b is None:
                return False
            return a < b if self.operator == "Lt" else a > b
        return False


def tolerates(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def untolerated(tolerations: Iterable[Toleration], taints: Iterable[Taint], effects: Iterable[str]) -> list[Taint]:
    """Taints with one of `effects` that no toleration tolerates, in their order."""
    tols = tuple(tolerations)
    wanted = frozenset(effects)
    return [t for t in taints if t.effect in wanted and not tolerates(tols, t)]


SCHEDULING_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)  # kube-scheduler's filter ignores PreferNoSchedule
ALL_EFFECTS = EFFECTS  # Karpenter's Tolerates() checks every effect on a NodePool
