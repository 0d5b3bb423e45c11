"""Cost per workload (showback): who the plan's dollars are for, by one rule applied everywhere.

The rule (`RULE`, printed with every breakdown):

- a new node's hourly price is split among the pods on it by each pod's share of the node's allocatable:
  the largest of its CPU, memory and accelerator shares (the way most showback tools weigh requests; on a
  GPU node the GPUs are most of the price, so a pod holding every GPU pays for the node). When
  the shares of a node's pods add up to more than the whole node (one pod's CPU beside another's memory),
  they are scaled down to the whole node;
- what the pods leave unrequested is idle, reported per NodePool;
- the DaemonSet pods on a node are charged to their DaemonSet (one line per DaemonSet, not per node);
- a Fargate pod pays its own price, all of it (no idle);
- existing nodes are not charged, as the plan's cost does not count them (they are already paid for), so
  the pods on them cost nothing here.

The breakdowns therefore add up to the plan's `summary.hourlyCost`; amounts are apportioned in
micro-dollars (`apportion.py`) so that they add up exactly, after rounding, in every view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from karpplan.costs.apportion import MICRO, apportion, dollars
from karpplan.costs.daemonsets import daemonsets_on
from karpplan.model.pods import DaemonSet
from karpplan.model.resources import CPU, MEMORY, Resources
from karpplan.plan import HOURS_PER_MONTH, Plan, PlanNode, PlanPod

RULE = ("a new node's price is split among its pods by their share of its allocatable (the largest of the CPU, "
        "memory and accelerator shares); the unrequested rest is its NodePool's idle cost; DaemonSet pods count for their "
        "DaemonSet; a Fargate pod pays its own price; existing nodes are not charged, as in the plan's cost")
FARGATE_POOL_PREFIX = "fargate:"  # `fargate:<profile>`: NodePool names cannot hold a colon
NO_POOL = "(no pool)"


def runs_to_completion(workload: str) -> bool:
    """A Job's or CronJob's pods (`Kind/namespace/name`): their nodes run while they do, not all month."""
    return workload.startswith(("Job/", "CronJob/"))


@dataclass(frozen=True)
class WorkloadCost:
    workload: str  # `Kind/namespace/name`
    namespace: str
    pods: int  # its pods the plan placed (on any node, charged or not)
    hourly_micros: int

    @property
    def hourly_cost(self) -> float:
        return dollars(self.hourly_micros)

    def to_document(self) -> dict[str, Any]:
        return {"workload": self.workload, "namespace": self.namespace, "pods": self.pods,
                "hourlyCost": self.hourly_cost, "monthlyCost": monthly(self.hourly_micros)}


@dataclass(frozen=True)
class NamespaceCost:
    namespace: str
    hourly_micros: int

    def to_document(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "hourlyCost": dollars(self.hourly_micros),
                "monthlyCost": monthly(self.hourly_micros)}


@dataclass(frozen=True)
class PoolCost:
    node_pool: str
    nodes: int  # the charged (new) nodes of the pool
    hourly_micros: int  # everything the pool's nodes cost, idle included
    idle_micros: int

    @property
    def hourly_cost(self) -> float:
        return dollars(self.hourly_micros)

    def to_document(self) -> dict[str, Any]:
        return {"nodePool": self.node_pool, "nodes": self.nodes, "hourlyCost": self.hourly_cost,
                "idleHourlyCost": dollars(self.idle_micros), "monthlyCost": monthly(self.hourly_micros)}


@dataclass(frozen=True)
class Costs:
    """The plan's cost by workload, namespace and pool: each view (with idle) adds up to `hourly_micros`."""

    hourly_micros: int
    workloads: tuple[WorkloadCost, ...]
    namespaces: tuple[NamespaceCost, ...]
    pools: tuple[PoolCost, ...]
    # What the nodes Jobs and CronJobs run on cost for them, each node's idle split in proportion to the pods'
    # shares: a node only a nightly job fills is all the job's (its nodes run only while it does; `diff`'s gate
    # judges the rest).
    jobs_micros: int = 0

    @property
    def hourly_cost(self) -> float:
        return dollars(self.hourly_micros)

    @property
    def idle_micros(self) -> int:
        return sum(p.idle_micros for p in self.pools)

    def workload(self, name: str) -> WorkloadCost | None:
        return next((w for w in self.workloads if w.workload == name), None)

    def to_document(self) -> dict[str, Any]:
        return {
            "rule": RULE,
            "hourlyCost": self.hourly_cost,
            "monthlyCost": monthly(self.hourly_micros),
            "idleHourlyCost": dollars(self.idle_micros),
            "workloads": [w.to_document() for w in self.workloads],
            "namespaces": [n.to_document() for n in self.namespaces],
            "nodePools": [p.to_document() for p in self.pools],
        }


def monthly(micros: int) -> float:
    """The monthly figure of an hourly amount in micro-dollars (the plan's HOURS_PER_MONTH), exact to 6 places."""
    return dollars(micros * HOURS_PER_MONTH)


def workload_key(kind_name: str, namespace: str) -> str:
    """`Deployment/web` in `shop` as `Deployment/shop/web` (`Pod/x` for bare pods likewise)."""
    kind, _, name = kind_name.partition("/")
    return f"{kind}/{namespace}/{name}" if name else f"Pod/{namespace}/{kind}"


def pool_of(node: PlanNode) -> str:
    if node.fargate is not None:
        return FARGATE_POOL_PREFIX + node.fargate.profile
    return node.node_pool or NO_POOL


def share(requests: Mapping[str, int], allocatable: Resources) -> float:
    """The largest of the CPU, memory and accelerator shares of `allocatable` that `requests` take (0 without
    any). Accelerators are the extended resources (nvidia.com/gpu, aws.amazon.com/neuron, ...) other than the
    VPC's network interfaces and addresses, which a node is not priced for."""
    shares = [requests.get(k, 0) / allocatable.get(k) for k in (CPU, MEMORY) if allocatable.get(k) > 0]
    shares += [amount / allocatable.get(k) for k, amount in requests.items()
               if is_accelerator(k) and allocatable.get(k) > 0]
    return max(shares, default=0.0)


def is_accelerator(resource: str) -> bool:
    """An extended resource a node's price pays for (a GPU, Neuron or Gaudi device, a MIG slice)."""
    return "/" in resource and not resource.startswith(NETWORK_RESOURCE_PREFIX)


NETWORK_RESOURCE_PREFIX = "vpc.amazonaws.com/"  # pod-eni, PrivateIPv4Address: plumbing, not what is priced


@dataclass(frozen=True)
class _Part:
    pool: str
    workload: str  # "" for the pool's idle
    namespace: str
    amount: float
    daemon_pods: int = 0  # 1 for a DaemonSet's pod on this node


def _node_parts(node: PlanNode, pods: Mapping[str, PlanPod], daemonsets: Sequence[DaemonSet]) -> list[_Part]:
    """A charged node's price as parts: one per pod (and per DaemonSet), and its idle rest."""
    pool = pool_of(node)
    takers: list[tuple[str, str, Mapping[str, int], int]] = []
    for key in node.pods:
        pod = pods.get(key)
        if pod is not None:
            takers.append((workload_key(pod.workload, pod.namespace), pod.namespace, pod.requests, 0))
    if node.fargate is not None:  # the pod pays for the Fargate size it is billed for, all of it
        return [_Part(pool, w, ns, node.hourly_price) for w, ns, _, _ in takers[:1]] or [
            _Part(pool, "", "", node.hourly_price)]
    for ds, requests in daemonsets_on(node, daemonsets):
        takers.append((f"DaemonSet/{ds.namespace}/{ds.name}", ds.namespace, requests, 1))
    shares = [share(requests, node.allocatable) for _, _, requests, _ in takers]
    scale = 1.0 / sum(shares) if sum(shares) > 1.0 else 1.0
    parts = [_Part(pool, w, ns, node.hourly_price * s * scale, daemon)
             for (w, ns, _, daemon), s in zip(takers, shares, strict=True)]
    idle = node.hourly_price - sum(p.amount for p in parts)
    parts.append(_Part(pool, "", "", max(idle, 0.0)))
    return parts


def plan_costs(plan: Plan, daemonsets: Sequence[DaemonSet] = ()) -> Costs:
    """The plan's cost per workload, namespace and pool by `RULE`; `daemonsets` are the inventory's."""
    pods = {p.key: p for p in plan.pods}
    parts: list[_Part] = []
    nodes_of: dict[str, int] = {}
    jobs = 0.0
    for node in plan.nodes:
        if node.new:
            nodes_of[pool_of(node)] = nodes_of.get(pool_of(node), 0) + 1
            node_parts = _node_parts(node, pods, daemonsets)
            parts.extend(node_parts)
            jobs += _jobs_part(node_parts)
    # One cell per (pool, workload) before rounding, so that every view sums the same rounded cells.
    cells: dict[tuple[str, str, str], float] = {}
    placed: dict[str, int] = {}  # DaemonSet pods on charged nodes (the plan lists no pods for them)
    for part in parts:
        key = (part.pool, part.workload, part.namespace)
        cells[key] = cells.get(key, 0.0) + part.amount
        if part.daemon_pods:
            placed[part.workload] = placed.get(part.workload, 0) + part.daemon_pods
    keys = sorted(cells)
    micros = dict(zip(keys, apportion([cells[k] for k in keys], plan.summary.hourly_cost), strict=True))
    return replace(_views(plan, micros, nodes_of, placed), jobs_micros=round(jobs * MICRO))


def _jobs_part(parts: Sequence[_Part]) -> float:
    """A node's cost for its Job and CronJob pods: their parts, and the idle in proportion to them."""
    jobs = sum(p.amount for p in parts if p.workload and runs_to_completion(p.workload))
    used = sum(p.amount for p in parts if p.workload)
    idle = sum(p.amount for p in parts if not p.workload)
    return jobs + (idle * jobs / used if used > 0 else 0.0)


def _views(plan: Plan, micros: Mapping[tuple[str, str, str], int], nodes_of: Mapping[str, int],
           placed: dict[str, int]) -> Costs:
    by_workload: dict[str, int] = {}
    namespace_of: dict[str, str] = {}
    for pod in plan.pods:
        key = workload_key(pod.workload, pod.namespace)
        namespace_of[key] = pod.namespace
        by_workload.setdefault(key, 0)
        if pod.node is not None:
            placed[key] = placed.get(key, 0) + 1
    by_pool: dict[str, list[int]] = {pool: [0, 0] for pool in nodes_of}
    for (pool, workload, namespace), amount in micros.items():
        totals = by_pool.setdefault(pool, [0, 0])
        totals[0] += amount
        if not workload:
            totals[1] += amount
            continue
        by_workload[workload] = by_workload.get(workload, 0) + amount
        namespace_of.setdefault(workload, namespace)
    by_namespace: dict[str, int] = {}
    for workload, amount in by_workload.items():
        by_namespace[namespace_of[workload]] = by_namespace.get(namespace_of[workload], 0) + amount
    return Costs(
        hourly_micros=sum(micros.values()),
        workloads=tuple(sorted((WorkloadCost(w, namespace_of[w], placed.get(w, 0), m) for w, m in by_workload.items()),
                               key=lambda c: (-c.hourly_micros, c.workload))),
        namespaces=tuple(sorted((NamespaceCost(n, m) for n, m in by_namespace.items()),
                                key=lambda c: (-c.hourly_micros, c.namespace))),
        pools=tuple(sorted((PoolCost(p, nodes_of.get(p, 0), t[0], t[1]) for p, t in by_pool.items()),
                           key=lambda c: (-c.hourly_micros, c.node_pool))),
    )
