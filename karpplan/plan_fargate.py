"""The plan's part on Fargate: which pending pods a Fargate profile takes (they never fall back to EC2), the
node Fargate runs each on, sized as Fargate sizes it, what it costs, and the pods Fargate refuses with why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from karpplan.catalog import DEFAULT_REGION
from karpplan.catalog.types import Catalog
from karpplan.costs.showback import workload_key
from karpplan.errors import InputError, Origin
from karpplan.model.cluster import FargateProfile
from karpplan.model.fargate import (
    EC2_ONLY,
    FARGATE_NODE_TAINT,
    FargateSize,
    fargate_hourly_price,
    fargate_node_labels,
    kept_off_fargate,
    profile_for,
    size_pod,
)
from karpplan.model.fargate_prices import FargatePrice, fargate_rate, missing_rate_message
from karpplan.model.inventory import Inventory
from karpplan.model.labels import COMPUTE_TYPE
from karpplan.model.pods import Pod
from karpplan.model.resources import CPU, MEMORY, Resources
from karpplan.plan import FargateInfo, PlanNode, UnschedulablePod


@dataclass
class FargatePlacement:
    pod: Pod
    profile: FargateProfile
    reasons: list[str]


def split_fargate(
    inventory: Inventory, profiles: Sequence[FargateProfile]
) -> tuple[list[FargatePlacement], list[Pod], list[str]]:
    """Pods matching a Fargate profile run on Fargate (never falling back to EC2); the rest go to EC2. Also the
    notes on workloads a profile selects that their `eks.amazonaws.com/compute-type: ec2` annotation keeps on EC2."""
    fargate: list[FargatePlacement] = []
    ec2: list[Pod] = []
    kept_on_ec2: dict[str, str] = {}
    for pod in inventory.pending:
        profile = profile_for(profiles, pod.namespace, pod.labels) if profiles else None
        if profile is not None and kept_off_fargate(pod.template.annotations):
            kept_on_ec2.setdefault(f"{pod.namespace}/{pod.workload}", profile.name)
            profile = None
        if profile is None:
            ec2.append(pod)
            continue
        reasons = [f"Fargate refuses {path}: {why}" for path, why in pod.template.fargate.refusals]
        fargate.append(FargatePlacement(pod, profile, reasons))
    notes = [f"{workload}: Fargate profile {name} selects its pods, but their annotation {COMPUTE_TYPE}: {EC2_ONLY} "
             "keeps them off Fargate (EKS's Fargate webhook leaves such pods alone), so they are planned on EC2; "
             "remove the annotation from the pod template to run them on Fargate"
             for workload, name in sorted(kept_on_ec2.items())]
    return fargate, ec2, notes


def fargate_price(placement: FargatePlacement, region: str, rate: FargatePrice | None) -> float:
    """$/h of a pod on Fargate: 0 when Fargate refuses it or cannot size it (the plan leaves it out).
    Raises InputError when the region has no known rate and none is supplied: never a silent $0."""
    pod = placement.pod
    size = size_pod(pod.requests.get(CPU), pod.requests.get(MEMORY))
    if placement.reasons or size is None:
        return 0.0
    return fargate_hourly(size, region, rate)


def fargate_hourly(size: FargateSize, region: str, rate: FargatePrice | None) -> float:
    """$/h of a Fargate size in the region: the supplied rate, else the region's; InputError without one."""
    price = fargate_hourly_price(size, region, rate)
    if price is None:
        raise InputError.at(Origin("--region"), missing_rate_message(region))
    return price


@dataclass
class OnFargate:
    """The plan's part on Fargate: a node per pod it runs, the pods it refuses, and what they cost."""

    nodes: list[PlanNode] = field(default_factory=list)
    placed: dict[str, str] = field(default_factory=dict)
    unschedulable: list[UnschedulablePod] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cost: float = 0.0


def on_fargate(fargate: Sequence[FargatePlacement], catalog: Catalog) -> OnFargate:
    """The pods Fargate takes, each on a node of its own sized as Fargate sizes it (zones dealt in turn), or
    unschedulable with why (Fargate never falls back to EC2)."""
    out = OnFargate()
    region = catalog.region or DEFAULT_REGION
    zones = catalog.zones or (f"{region}a",)
    over_limit: dict[str, list[tuple[Pod, FargateSize, float]]] = {}
    for i, fp in enumerate(fargate):
        pod = fp.pod
        size = size_pod(pod.requests.get(CPU), pod.requests.get(MEMORY))
        if size is None:
            fp.reasons.append(f"Fargate cannot size the pod: {pod.requests.formatted()} plus 256Mi exceeds 16 vCPU / 120 GB")
        if fp.reasons:
            fp.reasons.append(f"the pod matches Fargate profile {fp.profile.name!r}, so it does not fall back to EC2")
            out.unschedulable.append(UnschedulablePod(pod.key, pod.workload, tuple(fp.reasons)))
            continue
        assert size is not None
        price = fargate_hourly(size, region, catalog.fargate_price)
        name = f"fargate-{region}-{pod.namespace}-{pod.name}"
        zone = zones[i % len(zones)]
        if pod.template.fargate.limit_exceeds_requests:
            over_limit.setdefault(workload_key(pod.workload or pod.name, pod.namespace), []).append((pod, size, price))
        out.nodes.append(PlanNode(name, True, None, None, zone, "fargate", price, False,
                                  fargate_node_labels(zone, region, name, fp.profile.name),
                                  (FARGATE_NODE_TAINT.as_dict(),), size.resources, pod.requests, Resources(),
                                  (pod.key,), _fargate_info(fp, size)))
        out.placed[pod.key] = name
        out.cost += price
    out.warnings.extend(limit_warning(workload, pods) for workload, pods in over_limit.items())
    return out


def limit_warning(workload: str, pods: Sequence[tuple[Pod, FargateSize, float]]) -> str:
    """Once per workload, where it is written: a container's limit above its request buys nothing on Fargate,
    which sizes and bills the pod from its requests (AWS EKS user guide, Fargate Pod configuration)."""
    pod, size, price = pods[0]
    where = f"{pod.template.origin}: " if pod.template.origin.file else ""
    sizes = sorted({s.capacity_provisioned for _, s, _ in pods})
    prices = sorted({p for _, _, p in pods})
    each = f"${prices[0]:.4f}/h" if len(prices) == 1 else f"${prices[0]:.4f}-${prices[-1]:.4f}/h"
    count = f"{len(pods)} pod{'s' if len(pods) != 1 else ''} on Fargate"
    return (f"{where}{workload} ({count}): a container's limit exceeds its request, but Fargate sizes and bills "
            f"each pod from its requests alone ({' or '.join(sizes)}, {each} each), so the container never gets "
            "more than that size whatever its limit says (CPU is throttled and memory runs out there); set "
            "requests to what the pods need (AWS asks for requests equal to limits on Fargate), which sets the "
            "Fargate size and price")


def _fargate_info(fp: FargatePlacement, size: FargateSize) -> FargateInfo:
    """What a Fargate pod is billed for against what it asks, and how far its requests could grow for free."""
    pod = fp.pod
    waste = size.rounding_waste(pod.requests.get(CPU), pod.requests.get(MEMORY))
    hint = ""
    spare = waste.formatted()
    growth = " and ".join(f"{spare[k]} {label}" for k, label in ((CPU, "CPU"), (MEMORY, "memory")) if k in spare)
    if growth:
        hint = f"requests could grow by {growth} at no extra cost (billed for {size.capacity_provisioned})"
    asked = pod.requests.formatted()
    return FargateInfo(size.cpu_text, size.memory_text, size.capacity_provisioned, fp.profile.name,
                       requested_cpu=asked.get(CPU, "0"), requested_memory=asked.get(MEMORY, "0"),
                       waste_cpu=waste.formatted().get(CPU, "0"), waste_memory=waste.formatted().get(MEMORY, "0"),
                       hint=hint)


def fargate_rate_text(region: str, supplied: FargatePrice | None) -> str | None:
    rate = fargate_rate(region, supplied)
    return None if rate is None else rate.describe()
