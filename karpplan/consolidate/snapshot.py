"""A cluster snapshot as the disruption controller sees it: nodes with what runs on them, pending pods,
PodDisruptionBudgets and each NodePool's disruption settings.

Reads `kubectl get nodes,pods,pdb,daemonsets -A -o yaml` plus NodePools and EC2NodeClasses (files,
directories, `-`). The typed model comes from `model/build.py` (the same reading `plan` does); what the
model does not keep (Node annotations, PDBs, `spec.disruption`) is read here from the same documents.
Input that cannot be simulated as written is a `file:line: message` warning, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TextIO

from karpplan.catalog.coverage import lacking_text, remedy
from karpplan.catalog.embedded import embedded_data
from karpplan.catalog.types import Catalog
from karpplan.consolidate.budgets import (
    DEFAULT_BUDGET,
    POLICIES,
    WHEN_UNDERUTILIZED,
    Disruption,
    NodeBudget,
)
from karpplan.consolidate.claims import claim_only_names
from karpplan.consolidate.clock import Clock, snapshot_clock
from karpplan.consolidate.legacy import ignored_annotations, provisioner_nodes
from karpplan.consolidate.pdb import Budget
from karpplan.consolidate.reserved import (
    RESERVED,
    Reservation,
    fee_warnings,
    karpenter_price,
    reservation_of,
    reservations,
    unlisted,
)
from karpplan.consolidate.waiting import expire_do_not_disrupt, waiting
from karpplan.errors import InputError
from karpplan.inputs.loader import DEFAULT_MAX_BYTES, Document, read_documents
from karpplan.model import labels as L
from karpplan.model.build_fields import Field
from karpplan.model.build_pods import parse_label_selector
from karpplan.model.inventory import Inventory
from karpplan.model.nodes import ExistingNode, is_starting, shed_startup_taints
from karpplan.model.pods import Pod

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# The taints Karpenter puts on a node it is disrupting: v1's `karpenter.sh/disrupted:NoSchedule`, v1beta1's
# `karpenter.sh/disruption=disrupting:NoSchedule`.
DISRUPTED_TAINTS = ("karpenter.sh/disrupted", "karpenter.sh/disruption")


@dataclass(frozen=True)
class SimNode:
    """A node of the simulated cluster: one of the snapshot's, or a replacement a command launched."""

    node: ExistingNode
    annotations: Mapping[str, str] = field(default_factory=dict)
    price: float | None = None  # the catalog's offering price; None: the type (or offering) is unknown
    replacement: bool = False
    # being deleted (`metadata.deletionTimestamp`) or disrupted (Karpenter's taint): `MarkedForDeletion`
    deleting: bool = False
    # its NodeClaim's `Drifted` condition is True: when it turned so (`lastTransitionTime`, "" if not given)
    drifted: str | None = None
    # its NodeClaim's `Initialized` / `Consolidatable` conditions are not True (only a NodeClaim in the snapshot
    # says so; without one, a node is taken as initialized and past `consolidateAfter`)
    uninitialized: bool = False
    not_consolidatable: bool = False
    claim_only: bool = False  # a launched NodeClaim whose Node has not registered (`claims.py`)
    # why it is still inside `consolidateAfter` at the simulation's time (`waiting.py`), None: not known to be
    waiting: str | None = None
    # its `Ready` condition is there and not True: it uses up its NodePool's disruption budget
    not_ready: bool = False
    # its NodeClaim's `InstanceTerminating` condition is True: drained and its instance deleted, it no longer
    # counts in its NodePool's budget at all
    instance_terminating: bool = False

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def pool(self) -> str | None:
        return self.node.labels.get(L.NODEPOOL)

    @property
    def instance_type(self) -> str | None:
        return self.node.labels.get(L.INSTANCE_TYPE)

    @property
    def zone(self) -> str | None:
        return self.node.labels.get(L.ZONE)

    @property
    def capacity_type(self) -> str | None:
        return self.node.labels.get(L.CAPACITY_TYPE) or self.node.capacity_type

    @property
    def cost(self) -> float:
        return self.price or 0.0


@dataclass
class Snapshot:
    inventory: Inventory
    nodes: list[SimNode]
    pods_on: dict[str, list[Pod]]  # node name -> pods bound there (DaemonSet and mirror pods included)
    pending: list[Pod]  # pods waiting for a node (Karpenter simulates them; their failures do not count)
    pdbs: list[Budget]
    disruption: dict[str, Disruption]  # NodePool name -> spec.disruption
    warnings: list[str] = field(default_factory=list)
    clock: Clock = Clock(None, "")  # the time budgets' schedules are evaluated at


def is_daemon(pod: Pod) -> bool:
    return bool(pod.owner and pod.owner.startswith("DaemonSet/"))


def is_mirror(pod: Pod) -> bool:
    """A static pod's mirror (owned by its Node): never rescheduled, never evicted."""
    return bool(pod.owner and pod.owner.startswith("Node/")) or MIRROR_ANNOTATION in pod.template.annotations


def offering_price(catalog: Catalog, instance_type: str | None, zone: str | None,
                   capacity_type: str | None) -> float | None:
    """The node's price: its type's offering in its zone and capacity type (`resolveNodePrice`)."""
    it = catalog.by_name().get(instance_type or "")
    if it is None:
        return None
    wanted = capacity_type or "on-demand"
    prices = [o.price for o in it.offerings if o.capacity_type == wanted and (zone is None or o.zone == zone)]
    if not prices and zone is not None:  # a zone the catalog does not list: the type's price in the region
        prices = [o.price for o in it.offerings if o.capacity_type == wanted]
    return min(prices) if prices else None


def read_documents_or_fail(paths: Sequence[str], max_bytes: int = DEFAULT_MAX_BYTES,
                           stdin: TextIO | None = None) -> list[Document]:
    """Every document in `paths`; InputError (exit 2) when any file cannot be read."""
    documents, problems = read_documents(paths, max_bytes=max_bytes, stdin=stdin)
    if problems:
        raise InputError(problems)
    return documents


def _disruption(doc: Document) -> Disruption:
    root = Field.root(doc.body, doc.origin, [])
    spec = root["spec"]["disruption"]
    policy = spec["consolidationPolicy"].string(WHEN_UNDERUTILIZED)
    if policy == "WhenUnderutilized":  # v1beta1's name for it
        policy = WHEN_UNDERUTILIZED
    if policy not in POLICIES:
        policy = WHEN_UNDERUTILIZED
    after_field = spec["consolidateAfter"]
    after: str | None = after_field.string("0s") if after_field.present else "0s"
    if after == "Never":
        after = None
    budgets: list[NodeBudget] = []
    if spec["budgets"].present:
        for b in spec["budgets"].mappings():
            reasons = b["reasons"].string_list() if b["reasons"].present else None
            nodes = b["nodes"].string(DEFAULT_BUDGET) if b["nodes"].present else DEFAULT_BUDGET
            budgets.append(NodeBudget(str(nodes), tuple(reasons) if reasons is not None else None,
                                      b["schedule"].optional_string(), b["duration"].optional_string(), b.origin))
    else:
        budgets.append(NodeBudget(DEFAULT_BUDGET))
    min_values: list[tuple[str, int]] = []
    requirements = root["spec"]["template"]["spec"]["requirements"]
    if requirements.present:
        for r in requirements.mappings():
            least = r["minValues"].optional_integer() if r["minValues"].present else None
            if least is not None and r["key"].present:
                min_values.append((r["key"].string(""), least))
    grace = root["spec"]["template"]["spec"]["terminationGracePeriod"]
    return Disruption(doc.name, policy, after, tuple(budgets), doc.origin, tuple(min_values),
                      grace.optional_string() if grace.present else None)


def _pdb(doc: Document) -> Budget:
    root = Field.root(doc.body, doc.origin, [])
    spec, status = root["spec"], root["status"]
    allowed = status["disruptionsAllowed"].optional_integer() if status["disruptionsAllowed"].present else None
    min_av = spec["minAvailable"].value if spec["minAvailable"].present else None
    max_un = spec["maxUnavailable"].value if spec["maxUnavailable"].present else None
    policy = spec["unhealthyPodEvictionPolicy"].optional_string() if spec["unhealthyPodEvictionPolicy"].present else None
    return Budget(doc.namespace, doc.name, parse_label_selector(spec["selector"]), allowed,
                  None if min_av is None else str(min_av), None if max_un is None else str(max_un), doc.origin,
                  always_allow_unhealthy=policy == "AlwaysAllow")


def unready_pods(documents: Sequence[Document]) -> frozenset[str]:
    """The pods (namespace/name) whose `Ready` condition is False (CrashLoopBackOff, failing probes)."""
    out: set[str] = set()
    for d in documents:
        status = d.body.get("status") if d.kind == "Pod" else None
        conditions = status.get("conditions") if isinstance(status, dict) else None
        if isinstance(conditions, list) and any(isinstance(c, dict) and c.get("type") == "Ready"
                                                and str(c.get("status")) == "False" for c in conditions):
            out.add(f"{d.namespace}/{d.name}")
    return frozenset(out)


def claim_conditions(documents: Sequence[Document]) -> dict[str, dict[str, tuple[str, str]]]:
    """Node name -> its NodeClaim's conditions, type -> (status, lastTransitionTime) (a NodeClaim names its node
    in `status.nodeName`, or by `status.providerID`, the Node's `spec.providerID`)."""
    by_provider: dict[str, str] = {}
    for d in documents:
        spec = d.body.get("spec") if d.kind == "Node" else None
        if isinstance(spec, dict) and spec.get("providerID"):
            by_provider[str(spec["providerID"])] = d.name
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for d in documents:
        if d.kind != "NodeClaim" or d.group != "karpenter.sh":
            continue
        status = d.body.get("status")
        if not isinstance(status, dict):
            continue
        name = status.get("nodeName") or by_provider.get(str(status.get("providerID")))
        conditions = status.get("conditions")
        if not name or not isinstance(conditions, list):
            continue
        out[str(name)] = {str(c.get("type")): (str(c.get("status")), str(c.get("lastTransitionTime") or ""))
                          for c in conditions if isinstance(c, dict)}
    return out


def _not_true(conditions: Mapping[str, tuple[str, str]] | None, kind: str) -> bool:
    """The NodeClaim shows the condition, and not as True."""
    return conditions is not None and kind in conditions and conditions[kind][0] != "True"


def _is_true(conditions: Mapping[str, tuple[str, str]] | None, kind: str) -> bool:
    """The NodeClaim shows the condition as True."""
    return conditions is not None and conditions.get(kind, ("", ""))[0] == "True"


def is_deleting(doc: Document) -> bool:
    """The Node is being deleted, or Karpenter is disrupting it (its taint): `StateNode.MarkedForDeletion`."""
    if doc.metadata.get("deletionTimestamp"):
        return True
    spec = doc.body.get("spec")
    taints = spec.get("taints") if isinstance(spec, dict) else None
    return isinstance(taints, list) and any(isinstance(t, dict) and t.get("key") in DISRUPTED_TAINTS for t in taints)


def starting(doc: Document) -> bool:
    """`model/nodes.is_starting` of the Node document as written."""
    labels = doc.metadata.get("labels")
    labels = labels if isinstance(labels, dict) else {}
    spec = doc.body.get("spec")
    taints = spec.get("taints") if isinstance(spec, dict) else None
    keys = [str(t.get("key")) for t in taints if isinstance(t, dict)] if isinstance(taints, list) else []
    return is_starting({str(k): str(v) for k, v in labels.items()}, keys)


def is_not_ready(doc: Document) -> bool:
    """The Node shows a `Ready` condition, and not True (Karpenter counts it against the budget)."""
    status = doc.body.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return False
    ready = [c for c in conditions if isinstance(c, dict) and c.get("type") == "Ready"]
    return bool(ready) and str(ready[-1].get("status")) != "True"


def _budget_warnings(disruption: Mapping[str, Disruption], clock: Clock) -> list[str]:
    out: list[str] = []
    for d in disruption.values():
        for b in d.budgets:
            what = f"{b.origin}: NodePool {d.pool}: budget nodes={b.nodes}"
            problem = b.problem()
            if problem is not None:
                out.append(f"{what}: Karpenter cannot evaluate it ({problem}), so it allows no disruption of the "
                           "pool for any reason")
                continue
            if not b.schedule:
                continue
            window = f"schedule {b.schedule!r} duration {b.duration or '0s'}"
            if clock.now is None:
                out.append(f"{what}: {window}: assumed active now (the snapshot has no Node heartbeat to tell the "
                           "time; --now sets it)")
            else:
                state = "active" if b.active(clock.now) else "not active"
                out.append(f"{what}: {window}: {state} at {clock.source} (UTC)")
    return out


def _annotations(doc: Document) -> dict[str, str]:
    raw = doc.metadata.get("annotations")
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}


def _bind(pods: Sequence[Pod], nodes: Sequence[SimNode], warnings: list[str]) -> tuple[dict[str, list[Pod]], list[Pod]]:
    """The pods bound to each node, and those pending (a pod bound to a node not in the snapshot: a warning)."""
    names = {n.name for n in nodes}
    pods_on: dict[str, list[Pod]] = {n.name: [] for n in nodes}
    pending: list[Pod] = []
    for pod in pods:  # a running pod's template holds its claims' zones (model/build.py)
        if pod.terminal:
            continue
        if pod.node_name is None:
            if not pod.gated:
                pending.append(pod)
            continue
        if pod.node_name not in names:
            warnings.append(f"{pod.origin}: pod {pod.key} is bound to node {pod.node_name}, which is not in the "
                            "snapshot: left out of the simulation")
            continue
        pods_on[pod.node_name].append(pod)
    return pods_on, pending


def make_snapshot(inventory: Inventory, documents: Sequence[Document], catalog: Catalog,
                  now: datetime | None = None) -> Snapshot:
    """The simulated cluster at the snapshot, with a warning for each thing it cannot simulate as written.
    `now`: the time to simulate at (`--now`), else the snapshot's own (`clock.py`)."""
    warnings: list[str] = []
    node_annotations = {d.name: _annotations(d) for d in documents if d.kind == "Node"}
    deleting = {d.name for d in documents if d.kind == "Node" and is_deleting(d)}
    not_ready = {d.name for d in documents if d.kind == "Node" and is_not_ready(d)}
    started = {d.name for d in documents if d.kind == "Node" and starting(d)}
    claim_only = claim_only_names(documents)
    startup = {p.name: p.startup_taints for p in inventory.nodepools}
    claims = claim_conditions(documents)
    disruption = {d.name: _disruption(d) for d in documents
                  if d.kind == "NodePool" and d.group == "karpenter.sh"}
    clock = snapshot_clock(documents, now)
    waits = waiting(documents, {n.name: n.labels.get(L.NODEPOOL) for n in inventory.nodes}, disruption, clock.now)
    unready = unready_pods(documents)
    pdbs = [replace(b, unhealthy=unready) if b.always_allow_unhealthy else b
            for b in (_pdb(d) for d in documents if d.kind == "PodDisruptionBudget")]
    nodes: list[SimNode] = []
    listed = reservations(documents)
    fees: dict[str, list[tuple[str, float, object]]] = {}
    for node in inventory.nodes:
        labels = node.labels
        if L.INSTANCE_TYPE not in labels:
            warnings.append(f"{node.origin}: node {node.name} has no {L.INSTANCE_TYPE} label: Karpenter cannot "
                            "price it, so it is never consolidated (its pods may still move onto it)")
        pool = labels.get(L.NODEPOOL)
        price = _node_price(node, catalog, listed, warnings, fees)
        conditions = claims.get(node.name)
        uninitialized = _not_true(conditions, "Initialized") or node.name in started
        if uninitialized:
            node = shed_startup_taints(node, startup.get(pool or "", ()))
        drifted = conditions.get("Drifted") if conditions is not None else None
        nodes.append(SimNode(node, node_annotations.get(node.name, {}), price, deleting=node.name in deleting,
                             drifted=drifted[1] if drifted is not None and drifted[0] == "True" else None,
                             uninitialized=uninitialized, claim_only=node.name in claim_only,
                             not_consolidatable=_not_true(conditions, "Consolidatable") or node.name in waits,
                             waiting=waits.get(node.name),
                             not_ready=node.name in not_ready,
                             instance_terminating=_is_true(conditions, "InstanceTerminating")))
    pods_on, pending = _bind(inventory.pods, nodes, warnings)
    pods_on, expired = expire_do_not_disrupt(pods_on, documents, clock.now)
    warnings.extend(expired)
    everyone = [p for ps in pods_on.values() for p in ps] + pending
    for pdb in pdbs:
        if not any(pdb.selects(p) for p in everyone):
            warnings.append(f"{pdb.origin}: PodDisruptionBudget {pdb.key} selects no pod in the snapshot")
    warnings.extend(ignored_annotations(
        [("node", n.name, n.annotations, n.node.origin) for n in nodes]
        + [("pod", p.key, p.template.annotations, p.origin) for ps in pods_on.values() for p in ps]))
    warnings.extend(provisioner_nodes((n.name, n.node.labels, n.node.origin) for n in nodes))
    warnings.extend(_missing_pools(nodes, {p.name for p in inventory.nodepools}))
    warnings.extend(_budget_warnings(disruption, clock))
    warnings.extend(fee_warnings(fees))
    return Snapshot(inventory, nodes, pods_on, pending, pdbs, disruption, warnings, clock)


def _node_price(node: ExistingNode, catalog: Catalog, listed: Sequence[Reservation], warnings: list[str],
                fees: dict[str, list[tuple[str, float, object]]]) -> float | None:
    """The node's price as Karpenter finds it (a warning when it finds none). Karpenter prices a candidate from
    its NodePool's instance types (`NewCandidate` reads `instanceTypeMap[nodePool.Name]`), NodeOverlays that
    select that pool applied: its own catalog; a reserved node by the reservation its EC2NodeClass lists
    (`reserved.py`), whose fee goes to `fees` (reservation id -> its nodes)."""
    labels = node.labels
    pool = labels.get(L.NODEPOOL)
    priced_by = catalog if pool is None else catalog.for_pool(pool)
    kind, zone, capacity = labels.get(L.INSTANCE_TYPE), labels.get(L.ZONE), labels.get(L.CAPACITY_TYPE)
    price = offering_price(priced_by, kind, zone, capacity)
    if price is not None or kind is None:
        return price
    on_demand = offering_price(priced_by, kind, zone, "on-demand")
    if capacity == RESERVED and on_demand is not None:
        found = reservation_of(labels, listed)
        if found is None:
            warnings.append(f"{node.origin}: {unlisted(node.name, labels, listed)}")
            return None
        fees.setdefault(found.id, []).append((node.name, on_demand, node.origin))
        return karpenter_price(on_demand)
    warnings.append(_unpriced(node.origin, node.name, labels, priced_by))
    return None


def _missing_pools(nodes: Sequence[SimNode], pools: set[str]) -> list[str]:
    """One warning per NodePool that nodes name and the inputs do not define: the most common paste,
    `kubectl get nodes,pods -A -o yaml`, leaves the NodePools out, and Karpenter keeps a node whose NodePool does
    not exist ("NodePool not found"), so nothing would be consolidated for want of an input."""
    named: dict[str, list[SimNode]] = {}
    for n in nodes:
        if n.pool is not None and n.pool not in pools:
            named.setdefault(n.pool, []).append(n)
    out = []
    for pool, members in sorted(named.items()):
        first = members[0]
        others = f" (and {len(members) - 1} other node(s))" if len(members) > 1 else ""
        out.append(f"{first.node.origin}: node {first.name}{others} belongs to NodePool {pool!r} "
                   f"({L.NODEPOOL}={pool}), which no input defines: Karpenter keeps the nodes of a NodePool that does "
                   f"not exist, so karpplan keeps them too (\"NodePool not found\"). If the cluster has it, add it to "
                   f"the inputs (kubectl get nodepools,ec2nodeclasses -o yaml)")
    return out


def _unpriced(origin: object, name: str, labels: Mapping[str, str], catalog: Catalog) -> str:
    """The warning for a node the catalog cannot price: left out of the costs, never consolidated, and, when the
    region's embedded price list is what lacks its type (a 2022 list has no g6e), said so with the remedy."""
    kind = labels[L.INSTANCE_TYPE]
    head = f"{origin}: node {name}: "
    tail = "left out of the costs (shown as ?) and never consolidated here"
    if catalog.embedded and kind not in catalog.by_name() and any(t.name == kind for t in embedded_data().types):
        return head + f"instance type {lacking_text(catalog, [kind])}: {tail}; {remedy(catalog)}"
    return (head + f"instance type {kind!r} has no {labels.get(L.CAPACITY_TYPE) or 'on-demand'} offering in the "
            f"catalog: {tail}")
