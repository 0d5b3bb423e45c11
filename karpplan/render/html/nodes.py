"""The report's nodes: grouped by zone, one row per node with its type, capacity type, pool, price, the
workloads it runs and CPU and memory bars (requested of allocatable, DaemonSets included)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karpplan.model.quantity import QuantityError, parse_quantity
from karpplan.render.caveats import nodes_heading
from karpplan.render.formatting import ESTIMATED_MARK, abbreviate_counts, workload_counts
from karpplan.render.html.page import esc, hourly, number, section, table, usage_bar

NO_ZONE = "(no zone)"
DASH = "\u2014"
MAX_WORKLOADS_SHOWN = 6  # per node


def _milli(resources: object, name: str) -> int | None:
    if not isinstance(resources, Mapping) or name not in resources:
        return None
    try:
        return parse_quantity(resources[name]).milli()
    except (QuantityError, ValueError, TypeError):
        return None


def _bar(node: Mapping[str, Any], name: str, kind: str, label: str) -> str:
    used = _milli(node.get("requested"), name)
    total = _milli(node.get("allocatable"), name)
    if used is None:
        used = 0 if total is not None else None
    if used is None or total is None:
        return usage_bar(None, None, kind, label, "")
    requested = node.get("requested")
    text = requested.get(name, "0") if isinstance(requested, Mapping) else "0"
    detail = f"{text} of {node['allocatable'][name]} requested"
    return usage_bar(used, total, kind, label, detail)


def _workload_name(pod: Mapping[str, Any] | None, key: str) -> str:
    """`web` for Deployment/web in namespace default, `shop/web` elsewhere; the pod key if unknown."""
    if pod is None:
        return key
    workload = str(pod.get("workload") or pod.get("name") or key)
    name = workload.split("/", 1)[-1]
    namespace = pod.get("namespace")
    return name if namespace in (None, "default") else f"{namespace}/{name}"


def _marker(node: Mapping[str, Any]) -> str:
    if node.get("static"):
        return '<span class="tag new">static</span>'
    return '<span class="tag new">new</span>' if node.get("new") else '<span class="tag">existing</span>'


def _price(node: Mapping[str, Any]) -> str:
    price = number(node.get("hourlyPrice"))
    if not node.get("new") and not price:
        return '<span class="muted" title="already paid for">\u2014</span>'
    text = esc(hourly(price))
    if node.get("priceEstimated"):
        return f'<span class="warn" title="estimated price">{ESTIMATED_MARK}{text}</span>'
    return text


def _row(node: Mapping[str, Any], pods: Mapping[str, Mapping[str, Any]]) -> list[str]:
    keys = [str(k) for k in node.get("pods") or []]
    workloads = abbreviate_counts(workload_counts(_workload_name(pods.get(k), k) for k in keys), MAX_WORKLOADS_SHOWN)
    name = (f'<div class="node-name mono">{esc(node.get("name"))}</div>'
            f'<div class="workloads">{len(keys)} pod{"" if len(keys) == 1 else "s"}'
            f'{": " + esc(workloads) if workloads else ""}</div>')
    return [
        name, _marker(node), esc(_instance(node)), esc(node.get("capacityType") or DASH),
        esc(_pool(node)), _price(node), _bar(node, "cpu", "cpu", "CPU"), _bar(node, "memory", "mem", "Memory"),
    ]


def _fargate(node: Mapping[str, Any]) -> Mapping[str, Any]:
    fargate = node.get("fargate")
    return fargate if isinstance(fargate, Mapping) else {}


def _instance(node: Mapping[str, Any]) -> str:
    """The instance type; for a Fargate pod the size Fargate bills (`Fargate 0.5vCPU 1GB`)."""
    if node.get("instanceType"):
        return str(node["instanceType"])
    size = _fargate(node).get("capacityProvisioned")
    return f"Fargate {size}" if size else DASH


def _pool(node: Mapping[str, Any]) -> str:
    """The NodePool; for a Fargate pod its profile; `\u2014` for an existing node no pool launched."""
    if node.get("nodePool"):
        return str(node["nodePool"])
    if node.get("capacityType") == "fargate":
        profile = _fargate(node).get("profile")
        return f"Fargate profile {profile}" if profile else "Fargate"
    return DASH


def zones(nodes: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Nodes by zone, zones sorted, existing nodes before new ones, otherwise in plan order."""
    by_zone: dict[str, list[Mapping[str, Any]]] = {}
    for node in nodes:
        by_zone.setdefault(str(node.get("zone") or NO_ZONE), []).append(node)
    return {zone: sorted(by_zone[zone], key=lambda n: bool(n.get("new"))) for zone in sorted(by_zone)}


def nodes_section(document: Mapping[str, Any]) -> str:
    nodes = [n for n in document.get("nodes") or [] if isinstance(n, Mapping)]
    pods = {f"{p.get('namespace')}/{p.get('name')}": p for p in document.get("pods") or [] if isinstance(p, Mapping)}
    if not nodes:
        return section("nodes", "Nodes", '<p class="muted">The plan has no nodes.</p>')
    parts = ['<p class="muted">Bars: what the node\'s pods request (DaemonSets included) of its allocatable CPU '
             "and memory.</p>"]
    for zone, members in zones(nodes).items():
        new = [n for n in members if n.get("new")]
        cost = sum(number(n.get("hourlyPrice")) or 0.0 for n in new)
        count = f"{len(members)} node{'s' if len(members) != 1 else ''}"
        if new and len(new) != len(members):
            count += f", {len(new)} new"
        heading = f"{zone} \u2014 {count}" + (f", {hourly(cost)}" if new else "")
        rows = [_row(n, pods) for n in members]
        attrs = [f' data-node="{esc(n.get("name"))}"' for n in members]
        parts.append(f'<section class="zone" data-zone="{esc(zone)}" aria-label="zone {esc(zone)}">'
                     f"<h3>{esc(heading)}</h3>"
                     + table(["Node and its workloads", "", "Instance type", "Capacity", "NodePool", "Price",
                              "CPU", "Memory"], rows, numeric=(5,), row_attrs=attrs,
                                    css="nodes")
                     + "</section>")
    estimated = any(n.get("priceEstimated") for n in nodes)
    if estimated:
        parts.append(f'<p class="muted">{ESTIMATED_MARK} estimated price: the catalog has no published price '
                     "for this offering.</p>")
    existing = sum(1 for n in nodes if not n.get("new"))
    fargate = sum(1 for n in nodes if n.get("new") and n.get("capacityType") == "fargate")
    heading = nodes_heading(existing, len(nodes) - existing - fargate, fargate)
    return section("nodes", f"{heading} by zone", "".join(parts))


__all__ = ["nodes_section", "zones"]
