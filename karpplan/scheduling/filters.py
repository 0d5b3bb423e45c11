"""kube-scheduler's static filters for existing nodes, with its reason strings.

Static means: independent of where other pending pods go. Each rule's filter and wording live in its
constraint kind (`karpplan/constraints/`); this module runs them in kube-scheduler's order. Resources,
topology spread and inter-pod affinity also depend on the rest of the plan and live in `state.py` /
`topology.py` (greedy) and in the kinds' model rows (CP-SAT).
"""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.constraints.host_ports import HOST_PORTS as _HOST_PORTS_KIND
from karpplan.constraints.inter_pod_affinity import INTER_POD_AFFINITY as _INTER_POD_AFFINITY
from karpplan.constraints.node_affinity import NODE_AFFINITY as _NODE_AFFINITY_KIND
from karpplan.constraints.registry import STATIC_FILTERS
from karpplan.constraints.resources import RESOURCES as _RESOURCES
from karpplan.constraints.taints import TAINTS as _TAINTS
from karpplan.constraints.topology_spread import TOPOLOGY_SPREAD as _TOPOLOGY_SPREAD
from karpplan.model.pods import PodTemplate
from karpplan.model.taints import SCHEDULING_EFFECTS, Taint, Toleration, untolerated
from karpplan.scheduling.existing_nodes import ExistingNodeInfo

UNSCHEDULABLE = _TAINTS.reason("unschedulable")
NODE_AFFINITY = _NODE_AFFINITY_KIND.reason("mismatch")
SPREAD = _TOPOLOGY_SPREAD.reason("mismatch")
SPREAD_MISSING_LABEL = _TOPOLOGY_SPREAD.reason("missing_label")
POD_AFFINITY = _INTER_POD_AFFINITY.reason("affinity")
POD_ANTI_AFFINITY = _INTER_POD_AFFINITY.reason("anti_affinity")
EXISTING_ANTI_AFFINITY = _INTER_POD_AFFINITY.reason("existing_anti_affinity")
HOST_PORTS = _HOST_PORTS_KIND.reason("conflict")
TOO_MANY_PODS = _RESOURCES.reason("too_many_pods")


def untolerated_taint_reason(taint: Taint) -> str:
    return _TAINTS.untolerated_taint_reason(taint)


def insufficient(resource: str) -> str:
    return _RESOURCES.insufficient(resource)


def static_reasons(template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
    """The filters that fail for this pod on this node regardless of other pending pods (empty = passes)."""
    reasons: list[str] = []
    for kind in STATIC_FILTERS:
        reasons.extend(kind.filter_node(template, info))
    return reasons


def fits_taints(tolerations: Sequence[Toleration], taints: Sequence[Taint]) -> bool:
    return not untolerated(tolerations, taints, SCHEDULING_EFFECTS)


# Filter plugins in kube-scheduler's order (default_plugins.go): a reason's place is its plugin's.
_PLUGIN_ORDER: tuple[tuple[str, ...], ...] = (
    ("node(s) were unschedulable",),
    ("node(s) didn't match the requested node name",),
    ("node(s) had untolerated taint",),
    ("node(s) didn't match Pod's node affinity/selector",),
    ("node(s) didn't have free ports",),
    ("Insufficient ", "Too many pods"),
    ("node(s) had volume node affinity conflict", "node(s) exceed max volume count", "node(s) had no available volume zone"),
    ("node(s) didn't match pod topology spread constraints",),
    ("node(s) didn't match pod affinity rules", "node(s) didn't match pod anti-affinity rules",
     "node(s) didn't satisfy existing pods anti-affinity rules"),
)


def _plugin_rank(reason: str) -> int:
    """Where the filter that gives `reason` runs (karpplan's own reasons, such as a node full of the plan's other
    pods, after every plugin)."""
    return next((i for i, prefixes in enumerate(_PLUGIN_ORDER) if reason.startswith(prefixes)), len(_PLUGIN_ORDER))


def first_failing(reasons: Sequence[str]) -> list[str]:
    """The reasons kube-scheduler reports for one node: those of the first filter plugin that fails (it stops
    there, `RunFilterPlugins`), all of them (NodeResourcesFit names every resource short)."""
    if not reasons:
        return []
    first = min(_plugin_rank(r) for r in reasons)
    return [r for r in reasons if _plugin_rank(r) == first]


def aggregate_message(total_nodes: int, reasons_by_node: dict[str, list[str]]) -> str:
    """kube-scheduler's FitError text: `0/3 nodes are available: 1 Insufficient cpu, 2 ...`, each node counted for
    the first filter that rejects it, as kube-scheduler counts it (the counts then add up to the nodes, bar
    NodeResourcesFit's several resources)."""
    counts: dict[str, int] = {}
    for reasons in reasons_by_node.values():
        for r in dict.fromkeys(first_failing(reasons)):
            counts[r] = counts.get(r, 0) + 1
    parts = sorted(f"{n} {r}" for r, n in counts.items())
    return f"0/{total_nodes} nodes are available: " + ", ".join(parts) + "."
