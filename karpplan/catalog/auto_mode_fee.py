"""EKS Auto Mode's management fee: what AWS bills per hour for each instance Auto Mode launches, on top of its EC2
price, and how karpplan estimates it.

AWS prices the fee per instance type and region (aws.amazon.com/eks/pricing, "Amazon EKS Auto Mode"): it is
billed for the duration and type of each instance Auto Mode launches and manages, in addition to the EC2
charge, and follows the instance type, not how the instance is bought (Spot, Savings Plans and Reserved
Instances discount the EC2 charge, not the fee). AWS's per-type table is not embedded; the rates it lists are
reported at about 12% of the type's On-Demand price (e.g. factualminds.com, "Amazon EKS Pricing ... the Auto
Mode Markup", 2026-06-13; cloudburn.io/blog/amazon-eks-pricing, 2026-03), so karpplan estimates the fee as
12% of the type's On-Demand price in the region, and says it is an estimate. The fee is reported beside the
plan's cost, not in it: Auto Mode chooses instances by their EC2 price, as Karpenter does.
"""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.catalog.types import Catalog

FEE_SHARE = 0.12
HOURS_PER_MONTH = 730
SOURCE = ("estimated at 12% of the instance type's On-Demand price, Spot nodes too (AWS bills the fee per "
          "instance type and region on top of EC2, aws.amazon.com/eks/pricing; its table is not embedded: "
          "the ratio is the one reported for it, e.g. cloudburn.io/blog/amazon-eks-pricing, 2026-03)")


def on_demand_price(catalog: Catalog, instance_type: str, zone: str | None) -> float | None:
    """The type's On-Demand price in `zone` (else its lowest in the region); None when the catalog has none."""
    it = catalog.by_name().get(instance_type)
    if it is None:
        return None
    prices = [o.price for o in it.offerings if o.capacity_type == "on-demand" and (zone is None or o.zone == zone)]
    if not prices:
        prices = [o.price for o in it.offerings if o.capacity_type == "on-demand"]
    return min(prices) if prices else None


def auto_mode_fee_note(catalog: Catalog, nodes: Sequence[tuple[str, str | None, str]]) -> str | None:
    """The plan's line on the fee of its new Auto Mode nodes, each (instance type, zone, NodePool); None when
    there are none."""
    if not nodes:
        return None
    fee = 0.0
    unpriced: set[str] = set()
    for instance_type, zone, _ in nodes:
        price = on_demand_price(catalog, instance_type, zone)
        if price is None:
            unpriced.add(instance_type)
        else:
            fee += FEE_SHARE * price
    pools = sorted({pool for _, _, pool in nodes})
    count = len(nodes)
    nodes_text = f"{count} new node{'s' if count != 1 else ''}"
    text = (f"EKS Auto Mode: the {nodes_text} of NodePool{'s' if len(pools) > 1 else ''} {', '.join(pools)} "
            f"{'also pay' if count != 1 else 'also pays'} AWS's Auto Mode management fee, not in this plan's cost: "
            f"about ${fee:.4f}/h (${fee * HOURS_PER_MONTH:,.2f}/month), {SOURCE}")
    if unpriced:
        text += f"; no On-Demand price for {', '.join(sorted(unpriced))}, whose fee is left out"
    return text
