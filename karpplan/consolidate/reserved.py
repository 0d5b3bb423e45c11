"""Nodes in an EC2 capacity reservation (`karpenter.sh/capacity-type: reserved`), priced as Karpenter prices them.

karpenter-provider-aws adds a reserved offering for each reservation an EC2NodeClass's status lists
(`status.capacityReservations`: id, instanceType, availabilityZone, reservationType, state), priced at the
type's on-demand price divided by 10,000,000 (`offering/reserved_capacity_resolver.go`: "treat the
reservation as free, while maintaining relative ordering for consolidation"). A node's offering is found by
its labels (capacity type, zone, `karpenter.k8s.aws/capacity-reservation-id`); a reserved node whose
reservation no EC2NodeClass lists has none, so Karpenter cannot price it and never consolidates it.

What the bill says is another thing: AWS charges a capacity reservation at the on-demand rate whether an
instance runs in it or not. Deleting a reserved node saves nothing billed, and the reservation's fee is in no
figure here (its size, the instances it holds, is not in the status); one warning per reservation says so,
with the fee of the nodes it runs. Launches into a reservation's free instances are not modelled either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from karpplan.inputs.loader import Document
from karpplan.model import labels as L

RESERVED = "reserved"
RESERVATION_ID = "karpenter.k8s.aws/capacity-reservation-id"
FREE_DIVISOR = 10_000_000.0  # reserved_capacity_resolver.go: odPrice / 10_000_000.0


@dataclass(frozen=True)
class Reservation:
    id: str
    instance_type: str
    zone: str
    state: str
    node_class: str


def reservations(documents: Sequence[Document]) -> list[Reservation]:
    """Every capacity reservation an EC2NodeClass's status lists."""
    out: list[Reservation] = []
    for doc in documents:
        if doc.kind != "EC2NodeClass":
            continue
        status = doc.body.get("status")
        listed = status.get("capacityReservations") if isinstance(status, Mapping) else None
        for r in listed if isinstance(listed, list) else []:
            if isinstance(r, Mapping) and r.get("id"):
                out.append(Reservation(str(r["id"]), str(r.get("instanceType", "")), str(r.get("availabilityZone", "")),
                                       str(r.get("state", "active")), doc.name))
    return out


def reservation_of(labels: Mapping[str, str], listed: Sequence[Reservation]) -> Reservation | None:
    """The listed reservation a reserved node runs in: by its reservation-id label, else (a node without the
    label) the one reservation of its type and zone."""
    rid = labels.get(RESERVATION_ID)
    if rid:
        return next((r for r in listed if r.id == rid), None)
    same = [r for r in listed if r.instance_type == labels.get(L.INSTANCE_TYPE) and r.zone == labels.get(L.ZONE)]
    return same[0] if len(same) == 1 else None


def karpenter_price(on_demand: float) -> float:
    """A reserved offering's price as Karpenter sets it: as free, keeping the on-demand order."""
    return on_demand / FREE_DIVISOR


def fee_warnings(priced: Mapping[str, list[tuple[str, float, object]]]) -> list[str]:
    """One warning per reservation: `priced` maps its id to its nodes (name, on-demand price, origin)."""
    out = []
    for rid, nodes in sorted(priced.items()):
        names = ", ".join(n for n, _, _ in nodes[:3]) + (f" and {len(nodes) - 3} more" if len(nodes) > 3 else "")
        fee = sum(p for _, p, _ in nodes)
        out.append(f"{nodes[0][2]}: {len(nodes)} node(s) run in capacity reservation {rid} ({names}): priced as "
                   "Karpenter prices a reserved offering (the on-demand price / 10,000,000), so consolidation "
                   "treats them as free and deleting one saves nothing billed. AWS bills the reservation at "
                   f"the on-demand rate whether used or not: ${fee:.4f}/h for these nodes' instances, more if it "
                   "holds more; that fee is in none of the costs here, and launches into its free instances are "
                   "not modelled")
    return out


def unlisted(name: str, labels: Mapping[str, str], listed: Sequence[Reservation]) -> str:
    """Why a reserved node has no offering: no EC2NodeClass status lists its reservation."""
    rid = labels.get(RESERVATION_ID)
    which = f"capacity reservation {rid}" if rid else f"a capacity reservation of {labels.get(L.INSTANCE_TYPE)} in " \
        f"{labels.get(L.ZONE)}"
    known = f" (they list {', '.join(sorted({r.id for r in listed}))})" if listed else ""
    return (f"node {name} runs in {which}, which no EC2NodeClass's status.capacityReservations lists{known}: "
            "Karpenter has no reserved offering to price it by, so it is never consolidated, and it is left out "
            "of the costs (shown as ?); add the EC2NodeClasses with their status (kubectl get ec2nodeclasses -o "
            "yaml)")
