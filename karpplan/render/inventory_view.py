"""What karpplan read: the inventory as rich tables or as a versioned JSON/YAML document.

The document is `apiVersion: karpplan.io/v1alpha1, kind: Inventory`. Quantities are Kubernetes strings
(`500m`, `1Gi`), constraints are written the way Karpenter prints requirements (`key In [a b]`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import yaml
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from karpplan.inputs.loader import Document
from karpplan.model.cluster import FargateProfile, NodeGroup
from karpplan.model.inventory import Inventory
from karpplan.model.nodes import ExistingNode
from karpplan.model.pods import (
    DaemonSet,
    Pod,
    PodAffinity,
    PodGroup,
    PodTemplate,
    TopologySpreadConstraint,
)
from karpplan.model.pools import KubeletConfig, NodeClass, NodePool
from karpplan.model.prometheus_operator import DerivedWorkload
from karpplan.model.requirements import Requirement
from karpplan.model.resources import Resources
from karpplan.model.selectors import NodeAffinity
from karpplan.model.taints import Taint
from karpplan.render.constraint_text import (
    constraint_lines,
    describe_affinity_term,
    describe_selector,
    describe_term,
    describe_toleration,
    fargate_line,
)
from karpplan.render.wrap import fold_at_boundaries

API_VERSION = "karpplan.io/v1alpha1"
# Labels eksctl and EKS put on every node group's nodes: in -o json, left out of the table.
_EKSCTL_SET_LABELS = ("alpha.eksctl.io/", "eks.amazonaws.com/")


# ------------------------------------------------------------------------------------------ document
def _resources(resources: Resources | None) -> dict[str, str] | None:
    return None if resources is None else resources.formatted()


def _taints(taints: Iterable[Taint]) -> list[dict[str, str]]:
    return [t.as_dict() for t in taints]


def _node_affinity(affinity: NodeAffinity) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if affinity.node_selector:
        out["nodeSelector"] = [str(r) for r in affinity.node_selector.values()]
    if affinity.required is not None:
        out["required"] = [describe_term(t) for t in affinity.required]
    if affinity.preferred:
        out["preferred"] = [{"weight": p.weight, "term": describe_term(p.term)} for p in affinity.preferred]
    return out


def _pod_affinity(affinity: PodAffinity) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if affinity.required:
        out["required"] = [describe_affinity_term(t) for t in affinity.required]
    if affinity.preferred:
        out["preferred"] = [{"weight": w.weight, "term": describe_affinity_term(w.term)} for w in affinity.preferred]
    return out


def _spread(constraint: TopologySpreadConstraint) -> dict[str, Any]:
    out: dict[str, Any] = {
        "topologyKey": constraint.topology_key,
        "maxSkew": constraint.max_skew,
        "whenUnsatisfiable": constraint.when_unsatisfiable,
        "labelSelector": None if constraint.label_selector is None else describe_selector(constraint.label_selector),
    }
    if constraint.min_domains is not None:
        out["minDomains"] = constraint.min_domains
    if constraint.match_label_keys:
        out["matchLabelKeys"] = list(constraint.match_label_keys)
    if constraint.node_affinity_policy is not None:
        out["nodeAffinityPolicy"] = constraint.node_affinity_policy
    if constraint.node_taints_policy is not None:
        out["nodeTaintsPolicy"] = constraint.node_taints_policy
    out["origin"] = str(constraint.origin)
    return out


def template_document(template: PodTemplate) -> dict[str, Any]:
    out: dict[str, Any] = {
        "namespace": template.namespace,
        "labels": dict(template.labels),
        "requests": template.requests.formatted(),
    }
    affinity = _node_affinity(template.affinity)
    if affinity:
        out["nodeAffinity"] = affinity
    if template.tolerations:
        out["tolerations"] = [describe_toleration(t) for t in template.tolerations]
    if template.spread:
        out["topologySpreadConstraints"] = [_spread(c) for c in template.spread]
    for key, group in (("podAffinity", template.pod_affinity), ("podAntiAffinity", template.pod_anti_affinity)):
        described = _pod_affinity(group)
        if described:
            out[key] = described
    if template.host_ports:
        out["hostPorts"] = [{"port": p.port, "protocol": p.protocol, "hostIP": p.host_ip} for p in template.host_ports]
    if template.runtime_class:
        out["runtimeClassName"] = template.runtime_class
    if template.priority:
        out["priority"] = template.priority
    if template.fargate.refusals:
        out["fargateRefusals"] = [{"field": path, "reason": reason} for path, reason in template.fargate.refusals]
    out["origin"] = str(template.origin)
    return out


def _group_document(group: PodGroup) -> dict[str, Any]:
    return {
        "workload": group.workload,
        "namespace": group.template.namespace,
        "replicas": group.size,
        "pods": [p.name for p in group.pods],
        "template": template_document(group.template),
    }


def _kubelet(kubelet: KubeletConfig | None) -> dict[str, Any] | None:
    if kubelet is None:
        return None
    out: dict[str, Any] = {}
    if kubelet.max_pods is not None:
        out["maxPods"] = kubelet.max_pods
    if kubelet.pods_per_core is not None:
        out["podsPerCore"] = kubelet.pods_per_core
    if kubelet.kube_reserved is not None:
        out["kubeReserved"] = kubelet.kube_reserved.formatted()
    if kubelet.system_reserved is not None:
        out["systemReserved"] = kubelet.system_reserved.formatted()
    if kubelet.eviction_hard is not None:
        out["evictionHard"] = dict(kubelet.eviction_hard)
    return out


def _pool_document(pool: NodePool) -> dict[str, Any]:
    ref = pool.node_class_ref
    return {
        "name": pool.name,
        "kind": pool.kind,
        "apiVersion": pool.api_version,
        "weight": pool.weight,
        "requirements": [str(r) for r in pool.requirements.values()],
        "labels": dict(pool.labels),
        "taints": _taints(pool.taints),
        "startupTaints": _taints(pool.startup_taints),
        "limits": _resources(pool.limits),
        "nodeLimit": pool.node_limit,
        "nodeClassRef": None if ref is None else {"group": ref.group, "kind": ref.kind, "name": ref.name},
        "kubelet": _kubelet(pool.kubelet),
        "autoMode": pool.auto_mode,
        "origin": str(pool.origin),
    }


def _nodeclass_document(node_class: NodeClass) -> dict[str, Any]:
    return {
        "name": node_class.name,
        "kind": node_class.kind,
        "amiFamily": node_class.ami_family,
        "kubelet": _kubelet(node_class.kubelet),
        "origin": str(node_class.origin),
    }


def _node_document(node: ExistingNode) -> dict[str, Any]:
    return {
        "name": node.name,
        "labels": dict(node.labels),
        "taints": _taints(node.taints),
        "unschedulable": node.unschedulable,
        "allocatable": node.allocatable.formatted(),
        "capacity": node.capacity.formatted(),
        "origin": str(node.origin),
    }


def inventory_document(inventory: Inventory) -> dict[str, Any]:
    """The versioned `Inventory` document behind `plan -o json|yaml` (until the planner lands)."""
    groups = inventory.pending_groups()
    return {
        "apiVersion": API_VERSION,
        "kind": "Inventory",
        "summary": {
            "pods": len(inventory.pods),
            "pending": len(inventory.pending),
            "bound": len(inventory.bound),
            "gated": len(inventory.gated),
            "pendingGroups": len(groups),
            "nodePools": len(inventory.nodepools),
            "nodes": len(inventory.nodes),
            "daemonSets": len(inventory.daemonsets),
            "podDisruptionBudgets": len(inventory.disruption_budgets),
            "skipped": len(inventory.skipped),
            "region": inventory.region,
        },
        "pending": [_group_document(g) for g in groups],
        "pods": [_pod_document(p) for p in inventory.pods],
        "nodePools": [_pool_document(p) for p in inventory.nodepools],
        "nodeClasses": [_nodeclass_document(c) for c in inventory.nodeclasses],
        "nodes": [_node_document(n) for n in inventory.nodes],
        "daemonSets": [
            {
                "name": d.name,
                "namespace": d.namespace,
                "template": template_document(d.template),
                "origin": str(d.origin),
            }
            for d in inventory.daemonsets
        ],
        "fargateProfiles": [
            {
                "name": p.name,
                "selectors": [{"namespace": s.namespace, "labels": dict(s.labels)} for s in p.selectors],
            }
            for p in inventory.fargate_profiles
        ],
        "nodeGroups": [_node_group_document(g) for c in inventory.clusters for g in c.node_groups],
        "runtimeClasses": [
            {"name": r.name, "handler": r.handler, "overhead": r.overhead.formatted()} for r in inventory.runtime_classes
        ],
        "namespaces": [{"name": n.name, "labels": dict(n.labels)} for n in inventory.namespaces],
        "podDisruptionBudgets": [_budget_document(d) for d in inventory.disruption_budgets],
        "skipped": [
            {"kind": s.kind, "name": s.name, "origin": s.origin, "reason": s.why}
            for s in inventory.skipped
        ],
        "derived": [_derived_document(d) for d in inventory.derived],
    }


def _derived_document(derived: DerivedWorkload) -> dict[str, Any]:
    """An operator's resource and the workloads planned for it (`model/prometheus_operator.py`)."""
    return {"kind": derived.kind, "name": derived.name, "namespace": derived.namespace,
            "statefulSets": [] if derived.reason else list(derived.statefulsets),
            "replicas": derived.replicas, "containers": list(derived.containers), "origin": str(derived.origin),
            "reason": derived.reason, "plain": derived.text}


def _node_group_document(group: NodeGroup) -> dict[str, Any]:
    return {
        "name": group.name,
        "managed": group.managed,
        "instanceType": group.instance_type,
        "instanceTypes": list(group.listed),
        "nodes": group.desired,
        "spot": group.spot,
        "maxSize": group.max_size,
        "availabilityZones": list(group.availability_zones),
        "labels": dict(group.labels),
        "taints": _taints(group.taints),
        "origin": str(group.origin),
    }


def _budget_fields(doc: Document) -> dict[str, str]:
    """`minAvailable` / `maxUnavailable` as written (an int or a percentage), the fields that are set."""
    spec = doc.body.get("spec")
    if not isinstance(spec, Mapping):
        return {}
    return {key: str(spec[key]) for key in ("minAvailable", "maxUnavailable") if spec.get(key) is not None}


def _budget_document(doc: Document) -> dict[str, Any]:
    return {"name": doc.name, "namespace": doc.namespace, **_budget_fields(doc), "origin": str(doc.origin)}


def _pod_document(p: Pod) -> dict[str, Any]:
    return {
        "name": p.name,
        "namespace": p.namespace,
        "workload": p.workload,
        "node": p.node_name,
        "bound": p.bound,
        "gated": p.gated,
        "terminating": p.terminating,
        "terminal": p.terminal,
        "owner": p.owner,
        "labels": dict(p.labels),
        "requests": p.requests.formatted(),
    }


def dump_json(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def dump_yaml(document: Mapping[str, Any]) -> str:
    return str(yaml.safe_dump(dict(document), sort_keys=False, allow_unicode=True, width=1000))


# ------------------------------------------------------------------------------------------ tables
def _resources_text(resources: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in resources.items())


def _pending_table(groups: list[PodGroup], *, profiles: Sequence[FargateProfile]) -> Table:
    # Light borders and one request per line leave the constraints room to keep label keys whole at 80 columns.
    table = Table(title="Pending pods", title_justify="left", show_lines=True, box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("Workload", overflow="fold")
    table.add_column("Namespace")
    table.add_column("Pods", justify="right")
    table.add_column("Requests\n(per pod)", overflow="fold", max_width=16)
    table.add_column("Constraints", overflow="fold")
    for group in groups:
        table.add_row(
            Text(group.workload),
            Text(group.template.namespace),
            str(group.size),
            Text("\n".join(f"{k}={v}" for k, v in group.template.requests.formatted().items())),
            Text("\n".join(fargate_line(group.template, profiles)
                            + constraint_lines(group.template, fargate=bool(profiles))) or "-"),
        )
    return table


def _pools_table(pools: Iterable[NodePool]) -> Table:
    """One row per pool: its name, kind and weight in one column, so the requirements get the width (at 80
    columns six columns split even the headers: `Requirement` / `s`)."""
    table = Table(title="Node pools", title_justify="left", show_lines=True, expand=True)
    table.add_column("Pool", overflow="fold", ratio=2)
    table.add_column("Requirements", overflow="fold", ratio=4)
    table.add_column("Taints", overflow="fold", ratio=2)
    table.add_column("Limits", overflow="fold", ratio=2)
    for pool in pools:
        limits = _resources_text(pool.limits.formatted()) if pool.limits is not None else ""
        if pool.node_limit is not None:
            limits = f"{limits}, nodes={pool.node_limit}" if limits else f"nodes={pool.node_limit}"
        kind = f"{pool.kind} ({pool.api_version})" + (" auto mode" if pool.auto_mode else "")
        head = Text(pool.name, style="bold")
        head.append(f"\n{kind}\nweight {pool.weight}", style="dim")
        table.add_row(
            head,
            Text("\n".join(_requirement_text(r) for r in pool.requirements.values())),
            Text("\n".join(str(t) for t in pool.taints) or "-"),
            Text(limits or "-"),
        )
    return table


def _requirement_text(requirement: Requirement) -> str:
    """Karpenter's wording (`Requirement.__str__`), with numeric values in numeric order (`instance-cpu In [4 8 16]`,
    not `[16 4 8]`)."""
    text = str(requirement)
    values = sorted(requirement.values)
    if requirement.operator in ("In", "NotIn") and values and all(v.isdigit() for v in values):
        text = text.replace("[" + " ".join(values), "[" + " ".join(sorted(values, key=int)), 1)
    return text


def _nodes_table(nodes: Iterable[ExistingNode], inventory: Inventory) -> Table:
    pods_on: dict[str, int] = {}
    for pod in inventory.bound:
        if pod.node_name is not None:
            pods_on[pod.node_name] = pods_on.get(pod.node_name, 0) + 1
    table = Table(title="Existing nodes", title_justify="left")
    for name in ("Name", "Zone", "Instance type", "Allocatable", "Pods bound", "Taints"):
        table.add_column(name, overflow="fold")
    for node in nodes:
        taints = [str(t) for t in node.taints] + (["(cordoned)"] if node.unschedulable else [])
        table.add_row(
            Text(node.name),
            Text(node.labels.get("topology.kubernetes.io/zone", "-")),
            Text(node.labels.get("node.kubernetes.io/instance-type", "-")),
            Text(_resources_text(node.allocatable.formatted())),
            str(pods_on.get(node.name, 0)),
            Text("\n".join(taints) or "-"),
        )
    return table


def _daemonsets_table(daemonsets: Iterable[DaemonSet]) -> Table:
    table = Table(title="DaemonSets (per-node overhead)", title_justify="left")
    for name in ("Name", "Namespace", "Requests per node", "Constraints"):
        table.add_column(name, overflow="fold")
    for daemonset in daemonsets:
        table.add_row(
            Text(daemonset.name),
            Text(daemonset.namespace),
            Text(_resources_text(daemonset.template.requests.formatted())),
            Text("\n".join(constraint_lines(daemonset.template)) or "-"),
        )
    return table


def _node_groups_table(groups: Iterable[NodeGroup]) -> Table:
    """eksctl node groups: the nodes each keeps (spot share, maxSize), zones, and the labels and taints the
    user wrote (eksctl's own labels are in -o json)."""
    table = Table(title="eksctl node groups (planned as existing nodes)", title_justify="left")
    for name in ("Name", "Type", "Nodes", "Zones", "Labels and taints"):
        table.add_column(name, overflow="fold")
    for group in groups:
        nodes = f"{group.desired}" + (f" ({group.spot} spot)" if group.spot else "")
        nodes += f", max {group.max_size}" if group.max_size is not None else ""
        marks = [f"{k}={v}" for k, v in group.labels.items() if not k.startswith(_EKSCTL_SET_LABELS)]
        marks += [str(t) for t in group.taints]
        table.add_row(Text(group.name + (" (managed)" if group.managed else "")),
                      Text(" ".join(group.listed) or group.instance_type), Text(nodes),
                      Text(" ".join(group.availability_zones) or "cluster's"), Text("\n".join(marks)))
    return table


def _budgets_table(budgets: Iterable[Document]) -> Table:
    table = Table(title="PodDisruptionBudgets (read by the steady state and consolidate)", title_justify="left")
    for name in ("Name", "Namespace", "Allows", "Where"):
        table.add_column(name, overflow="fold")
    for budget in budgets:
        allows = " ".join(f"{k}={v}" for k, v in _budget_fields(budget).items())
        table.add_row(Text(budget.name), Text(budget.namespace), Text(allows or "-"), Text(str(budget.origin)))
    return table


def render_inventory(inventory: Inventory, console: Console, *, verbose: bool = False) -> None:
    """Rich tables of what was read; skipped documents only when verbose."""
    groups = inventory.pending_groups()
    pending = sum(g.size for g in groups)
    budgets = inventory.disruption_budgets
    groups_of_nodes = [g for c in inventory.clusters for g in c.node_groups]
    console.print(
        Text(
            f"{len(inventory.pods)} pods: {pending} pending in {len(groups)} groups, "
            f"{len(inventory.bound)} bound, {len(inventory.gated)} gated; "
            f"{len(inventory.nodepools)} node pools, {len(inventory.nodes)} existing nodes, "
            f"{len(inventory.daemonsets)} DaemonSets"
            + (f", {len(groups_of_nodes)} eksctl node groups" if groups_of_nodes else "")
            + (f", {len(budgets)} PodDisruptionBudgets" if budgets else "")
        )
    )
    if groups:
        console.print(fold_at_boundaries(_pending_table(groups, profiles=inventory.fargate_profiles), console))
    gated = inventory.gated
    if gated:
        console.print(Text("Gated (never placed): " + ", ".join(p.key for p in gated)))
    if inventory.nodepools:
        console.print(fold_at_boundaries(_pools_table(inventory.nodepools), console))
    if inventory.nodes:
        console.print(fold_at_boundaries(_nodes_table(inventory.nodes, inventory), console))
    if inventory.daemonsets:
        console.print(fold_at_boundaries(_daemonsets_table(inventory.daemonsets), console))
    profiles = inventory.fargate_profiles
    if profiles:
        table = Table(title="Fargate profiles", title_justify="left")
        table.add_column("Name")
        table.add_column("Selectors", overflow="fold")
        for profile in profiles:
            selectors = [
                s.namespace + (" " + ",".join(f"{k}={v}" for k, v in s.labels.items()) if s.labels else "")
                for s in profile.selectors
            ]
            table.add_row(Text(profile.name), Text("\n".join(selectors)))
        console.print(fold_at_boundaries(table, console))
    if groups_of_nodes:
        console.print(fold_at_boundaries(_node_groups_table(groups_of_nodes), console))
    if budgets:
        console.print(fold_at_boundaries(_budgets_table(budgets), console))
    if inventory.derived:
        console.print(Text("Derived from operators' resources (not written as workloads in the input):"))
        for derived in inventory.derived:
            console.print(Text(f"  {derived.origin}: {derived.text}"))
    if verbose and inventory.skipped:
        table = Table(title="Skipped documents", title_justify="left")
        for name in ("Kind", "Name", "Where", "Why"):
            table.add_column(name, overflow="fold")
        for skipped in inventory.skipped:
            table.add_row(
                Text(skipped.kind),
                Text(skipped.name or "-"),
                Text(skipped.origin),
                Text(skipped.why),
            )
        console.print(fold_at_boundaries(table, console))


def skipped_note(inventory: Inventory, *, listed: bool = False) -> str | None:
    """One line for stderr: how many documents were skipped, by kind and why (None when none were):
    `skipped 3 documents: 2 ConfigMap, 1 Deployment (its pods are in the input)`."""
    if not inventory.skipped:
        return None
    groups: dict[tuple[str, str], int] = {}
    for skipped in inventory.skipped:
        key = (skipped.kind, skipped.reason)
        groups[key] = groups.get(key, 0) + 1
    parts = [f"{count} {kind}" + (f" ({reason})" if reason else "") for (kind, reason), count in
             sorted(groups.items(), key=lambda item: (-item[1], item[0]))]
    count = len(inventory.skipped)
    hint = "" if listed else "; -v lists them"
    return f"skipped {count} document{'s' if count != 1 else ''}: {', '.join(parts)}{hint}"


def skipped_lines(inventory: Inventory) -> list[str]:
    """One line per skipped document, where it is and why (for -v)."""
    return [
        f"  {s.origin}: {s.kind}/{s.name or '-'}: {s.why}"
        for s in inventory.skipped
    ]
