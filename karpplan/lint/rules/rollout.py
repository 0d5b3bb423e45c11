"""What a cap on a workload's pods means for its rollouts and scale-out: a Deployment's RollingUpdate adds
`maxSurge` pods beside the old ones (the new ReplicaSet's pods carry the same labels, so spread constraints
count them), and removes no old pod first when `maxUnavailable` resolves to 0: a surge pod that can never
schedule hangs the rollout."""

from __future__ import annotations

import math

from karpplan.inputs.loader import Document

_DEFAULT = "25%"  # both maxSurge and maxUnavailable (apps/v1 Deployment defaults)


def _scaled(value: object, replicas: int, *, round_up: bool) -> int | None:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, a percent of the replicas (maxSurge rounds up,
    maxUnavailable down); None when unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        share = int(value[:-1]) * replicas / 100
        return math.ceil(share) if round_up else math.floor(share)
    return None


def rolling_update(doc: Document, replicas: int) -> tuple[int, int] | None:
    """A Deployment's (maxSurge, maxUnavailable) in pods, as the deployment controller resolves them; None for
    other kinds, the Recreate strategy, or values it cannot read."""
    if doc.kind != "Deployment":
        return None
    spec = doc.body.get("spec")
    strategy = spec.get("strategy") if isinstance(spec, dict) else None
    strategy = strategy if isinstance(strategy, dict) else {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    rolling = strategy.get("rollingUpdate")
    rolling = rolling if isinstance(rolling, dict) else {}
    surge = _scaled(rolling.get("maxSurge", _DEFAULT), replicas, round_up=True)
    unavailable = _scaled(rolling.get("maxUnavailable", _DEFAULT), replicas, round_up=False)
    if surge is None or unavailable is None:
        return None
    return surge, unavailable


def cap_consequence(doc: Document, replicas: int, most: int, *, per_revision: bool = False) -> str:
    """What `most` pods at a time means for a workload of `replicas`: who stays pending, and whether its
    rollouts hang (a clause to append to a finding). `per_revision`: the cap counts each revision's pods apart
    (matchLabelKeys: [pod-template-hash]), so surge pods do not share it with the old ones."""
    if most < replicas:
        return f": {replicas - most} of the {replicas} replicas stay pending"
    rolling = None if per_revision else rolling_update(doc, replicas)
    room = most - replicas
    scale = (f"any scale-out past {most} (HPA or more replicas) stays pending" if room else
             "any scale-out (HPA or more replicas) stays pending")
    if rolling is None or rolling[0] <= room:
        return f"; {scale}" if not room else f" ({room} more than the {replicas} replicas); {scale}"
    surge, unavailable = rolling
    stuck = surge - room
    head = (f", exactly the {replicas} replicas" if not room else f", {room} more than the {replicas} replicas")
    pods = "the surge pod" + ("s" if surge > 1 else "") if stuck == surge else f"{stuck} of the {surge} surge pods"
    if unavailable == 0:
        return (f"{head}: {pods} a rolling update adds (maxSurge {surge}, "
                f"maxUnavailable 0) can never schedule, so every rollout hangs; and {scale}")
    return (f"{head}: {pods} a rolling update adds (maxSurge {surge}) cannot "
            f"schedule until old pods go (maxUnavailable {unavailable}), so rollouts run short of replicas; "
            f"and {scale}")
