"""Why a pod could not be placed, in kube-scheduler's and Karpenter's own words.

For existing nodes: kube-scheduler's aggregate (`0/3 nodes are available: ...`), static filters plus the
plan's final state (resources used, topology counts). For each NodePool: the first Karpenter filter that
rules it out (taint, requirements, resources with the largest candidate, limits, topology with counts per
domain). Every reason list ends with where the workload is defined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from karpplan.catalog.coverage import lacking_text, lacking_types, remedy
from karpplan.constraints.pool_headroom import Headroom
from karpplan.constraints.pool_limits import POOL_LIMITS
from karpplan.constraints.registry import REGISTRY
from karpplan.engines.karpenter_simulation import NOT_SIMULATED_REASON
from karpplan.engines.result import Solution
from karpplan.inputs.placeholders import PLACEHOLDER
from karpplan.model import labels as L
from karpplan.model.pods import Pod, PodTemplate
from karpplan.model.pools import NodePool
from karpplan.model.requirements import Requirements
from karpplan.model.resources import EPHEMERAL, Resources
from karpplan.plan import NotSimulatedPod
from karpplan.plan_spot_gaps import spot_file_gaps, spot_file_reason
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.daemon_ports import DaemonPort, clashing, existing_daemon_port_note
from karpplan.scheduling.existing_nodes import ExistingNodeInfo
from karpplan.scheduling.filters import HOST_PORTS, aggregate_message
from karpplan.scheduling.node_groups import growable_groups, growth_reason
from karpplan.scheduling.nodeclaim import PlannedNode
from karpplan.scheduling.preferences import Attempt
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.shortfall_hints import ephemeral_storage_note
from karpplan.scheduling.state import PlacementState


def reasons_for(problem: Problem, group: GroupInfo, pod: Pod, state: PlacementState) -> list[str]:
    unpriced: set[str] = set()  # types a pool allows that would fit the pod but have no price here
    spot_gaps: dict[str, set[str]] = {}  # ... and zones of theirs the --spot-prices file gives no spot price for
    relaxed = Attempt(None, (), True)
    reasons = _existing_nodes_reasons(group, state, relaxed)
    if not problem.pools:
        growable = growable_groups(problem.inventory, pod.requests, group.existing_reasons)
        reasons.append(growth_reason(growable) if growable else "no nodepools found: nothing can be launched")
    for verdict in group.verdicts:
        pool = verdict.pool
        prefix = f'nodepool "{pool.name}": '
        if pool.static:
            # Its nodes are planned as they run (counted with the nodes above): nothing is launched for pods.
            n = pool.replicas
            reasons.append(prefix + f"static (spec.replicas: {n}): Karpenter keeps its {n} node(s) whatever is "
                           "pending and never launches one for a pod; raise spec.replicas for more of them")
            continue
        if not verdict.ok:
            lacking = _lacking(problem, group.template, verdict.pool, verdict.kind)
            unpriced.update(lacking)
            wanted = _wanted(problem, group.template, verdict.pool, verdict.kind)
            gaps = {} if wanted is None else spot_file_gaps(problem.catalog.for_pool(pool.name), wanted,
                                                             group.template.requests)
            for name, zones in gaps.items():
                spot_gaps.setdefault(name, set()).update(zones)
            note = "; but the pod would fit types this NodePool allows that have no price here (first reason)"
            reasons.append(prefix + verdict.reason + (note if lacking or gaps else "")
                           + _storage_note(problem, group.template, verdict.pool, verdict.kind))
            continue
        statically_out = _option_rejection(group, verdict.options)
        if statically_out is not None:
            reasons.append(prefix + statically_out)
            continue
        headroom = problem.headroom[pool.name]
        slot = state.new_slot(pool, list(verdict.options))
        options, why = state.evaluate(group, slot, relaxed)
        state.claims_created -= 1
        launched = [s for s in state.slots if s.new and s.pool is pool and s.members]
        after = headroom.charged(_launched_capacity(headroom, launched), len(launched))
        if options is None:
            reasons.append(prefix + why)
        elif headroom.nodes is not None and after.nodes is not None and after.nodes <= 0:
            reasons.append(prefix + POOL_LIMITS.reason("nodes_exhausted", pool=pool.name, allowed=headroom.nodes,
                                                       launched=len(launched)))
        elif headroom.resources is not None and not any(after.fits(o.capacity) for o in options):
            left = ", ".join(f"{k}={v}" for k, v in headroom.resources.formatted().items())
            reasons.append(prefix + POOL_LIMITS.reason("exceeded", pool=pool.name, left=left))
        else:
            reasons.append(prefix + "a node could be launched for this pod alone, but not together with the "
                           "plan's other pods (spread, affinity or limits across the batch)")
    origin = group.template.origin
    reasons.append(f"{pod.workload}'s pod template is at {origin}")  # the workload's own line is its document's
    if unpriced:  # our catalog's gap, not Karpenter's verdict: said first, not as the last clause of a long reason
        reasons.insert(0, _unpriced_reason(problem, sorted(unpriced)))
    if spot_gaps:  # the price file's gap likewise
        reasons.insert(0, spot_file_reason(problem.catalog, spot_gaps))
    return reasons


def _existing_nodes_reasons(group: GroupInfo, state: PlacementState, relaxed: Attempt) -> list[str]:
    """kube-scheduler's "0/N nodes are available" over the existing nodes, and the DaemonSet ports they hold."""
    nodes = [s for s in state.slots if s.existing is not None]
    if not nodes:
        return []
    per_node: dict[str, list[str]] = {}
    for slot in nodes:
        static = group.existing_reasons.get(slot.name)
        if static:
            per_node[slot.name] = static
            continue
        _, why = state.evaluate(group, slot, relaxed)
        per_node[slot.name] = [why or "node(s) were full once the plan's other pods were placed"]
    reasons = [aggregate_message(len(nodes), per_node)]
    held = _daemon_ports_held(group, [s.existing for s in nodes if s.existing is not None])
    if held:
        reasons.append(held)
    return reasons


# How an unschedulable pod's first reason begins when only the catalog's missing prices keep it out (diff reads it)
UNPRICED_REASON = "no type with a price here fits the pod"


def _unpriced_reason(problem: Problem, names: list[str]) -> str:
    catalog = problem.catalog
    them = "it" if len(names) == 1 else "them"
    return (f"{UNPRICED_REASON}: its NodePools allow {lacking_text(catalog, names)}, and the pod "
            f"would fit {them}, so it is left out here though Karpenter could launch {them}: {remedy(catalog)}")


def _wanted(problem: Problem, template: PodTemplate, pool: NodePool, kind: str) -> Requirements | None:
    """What a node of `pool` must satisfy for the pod (its first strict node-affinity term and the pool's
    requirements), when the pool's verdict is on its instance types (`resources`); None otherwise. A pool refused
    before its types are looked at (a taint, requirements the pod's contradict, a label it does not define)
    refuses the pod whatever the catalog holds, and a note there would suggest a catalog fix that cannot help."""
    if kind != "resources":
        return None
    alternatives = template.affinity.strict_alternatives()
    if alternatives:
        # A term asking for a label the pool does not define matches no node of it, whatever its type.
        alternatives = [a for a in alternatives if not a.undefined_custom_keys(pool.requirements,
                                                                          L.WELL_KNOWN | problem.catalog.label_keys())]
        if not alternatives:
            return None
    wanted = (alternatives[0] & pool.requirements) if alternatives else pool.requirements
    zone = wanted.get(L.ZONE)
    if zone is not None and not any(zone.has(z) for z in problem.catalog.zones):
        return None  # zones the region has none of (another region's): no type would fit, priced or not
    return wanted


def _lacking(problem: Problem, template: PodTemplate, pool: NodePool, kind: str) -> list[str]:
    """When no type the pool allows fits the pod: the types it allows that would fit but the region's embedded
    catalog has no price for (`reasons_for` says so first: the verdict is our catalog's, not Karpenter's)."""
    wanted = _wanted(problem, template, pool, kind)
    if wanted is None:
        return []
    # ephemeral storage aside: a node's comes from its EC2NodeClass (root volume or instance-store RAID0), not the
    # type's bare figures (a 400Gi NVMe cache pod on i4i in a region whose catalog lacks i4i was not said to fit)
    rest = Resources({k: v for k, v in template.requests.items() if k != EPHEMERAL})
    return lacking_types(problem.catalog.for_pool(pool.name), wanted, rest)


def _storage_note(problem: Problem, template: PodTemplate, pool: NodePool, kind: str) -> str:
    """When no node of the pool has room for the pod's ephemeral-storage: the node class volume that decides it."""
    request = template.requests.get(EPHEMERAL)
    if kind != "resources" or not request:
        return ""
    free = [(o.free.get(EPHEMERAL), o.daemon_overhead.get(EPHEMERAL)) for o in problem.options if o.pool is pool]
    ref = pool.node_class_ref
    node_class = next((c for c in problem.inventory.nodeclasses if ref is not None and c.name == ref.name), None)
    return ephemeral_storage_note(request, pool, node_class, free)


def with_placeholders_said(reasons: Sequence[str], template: PodTemplate | None = None) -> tuple[str, ...]:
    """The reasons, led by one line per unrendered template placeholder they quote (`<<AVAILABILITY_ZONE>>` of a
    blueprint, `${AZ}`, `{{ .Values.zone }}`) or the pod's `template` requires (Karpenter's `label "team" does
    not have known values` quotes none): read as written it is no zone, label or name anything carries,
    which is why the pod cannot be placed; filled in, it may be (lint's unrendered-placeholder says it too)."""
    required = [v for alt in template.affinity.strict_alternatives() for r in alt.values() for v in sorted(r.values)
                ] if template is not None else []
    found = dict.fromkeys(m.group(0) for r in (*reasons, *required) for m in PLACEHOLDER.finditer(r))
    said = tuple(f"{text} is an unrendered template placeholder, not a real value: nothing matches it as written; "
                 "fill it in before applying, and plan again" for text in found)
    return (*said, *reasons)


def keeps_off_karpenter(template: PodTemplate) -> bool:
    """Does the pod require `karpenter.sh/nodepool` (or v1beta1's provisioner-name) to be absent, as the Karpenter
    chart's own controller does? Then no NodePool may take it, by design."""
    return template.affinity.forbids(L.NODEPOOL) or template.affinity.forbids(L.PROVISIONER_NAME)


KEEPS_OFF_KARPENTER = ("the pod keeps off the nodes Karpenter launches (its required node affinity says {key} "
                       "DoesNotExist, as the Karpenter chart's own controller does): no NodePool may take it, by "
                       "design, and removing that rule would let it run on the nodes Karpenter manages; ")
_NOTHING_ELSE = ("it runs on a managed node group, a Fargate profile or existing nodes, none of them in the input: give "
                 "them to karpplan (an eksctl ClusterConfig's managedNodeGroups, --fargate-profile, or kubectl get "
                 "nodes -o yaml)")
_OTHERS_FULL = "only the input's nodes, node groups or Fargate profiles may take it, and the next reasons say why they do not"


def control_plane_selector(template: PodTemplate) -> str | None:
    """The requirement by which a pod selects control-plane nodes (`kubernetes.io/role In [control-plane]`),
    when every alternative of its node selection has one; None otherwise."""
    found: list[str] = []
    for alternative in template.affinity.strict_alternatives():
        marking = next((req for key, req in alternative.items() if L.marks_control_plane(key, req.finite_values())
                        and not req.absent_ok), None)
        if marking is None:
            return None
        found.append(str(marking))
    return found[0] if found else None


CONTROL_PLANE = ("the pod selects control-plane nodes ({requirement}): EKS runs the control plane itself, so no node "
                 "of an EKS cluster carries that label, and giving it to a NodePool would pass Karpenter's nodes off "
                 "as the control plane; the manifest is written for a self-managed control plane (kubeadm, kops): on "
                 "EKS, remove that node selection (and the control-plane toleration)")


LONELY_AFFINITY = ("its required podAffinity term {index} (topologyKey {key}, selector {selector}) matches no pod in "
                   "the input, not even itself: kube-scheduler and Karpenter place it only in a {key} domain that "
                   "already runs a matching pod, and none does; add the pods it must join to the input (from the "
                   "cluster: kubectl get pods,nodes -o yaml), or make the term preferred")


def lonely_affinity(template: PodTemplate, pods: Sequence[Pod], namespace_labels: Mapping[str, Mapping[str, str]],
                    memo: dict[tuple[str, ...], bool] | None = None) -> tuple[str, ...]:
    """A line per required pod-affinity term of `template` that no pod of the input matches, itself included
    (kube-scheduler lets the first pod of a term that matches itself in; one that does not waits forever).
    `memo`: whether a (selector, namespace scope) matches some pod, shared by the calls of one plan."""
    memo = {} if memo is None else memo
    out: list[str] = []
    for index, term in enumerate(template.pod_affinity.required):
        selector = term.selector_for(template.labels)
        if selector is None:
            continue
        key = (str(selector), template.namespace, *sorted(term.namespaces), str(term.namespace_selector))
        if key not in memo:
            memo[key] = any(not p.terminal and selector.matches(p.labels)
                            and term.namespace_in_scope(template.namespace, p.namespace, namespace_labels)
                            for p in pods)
        if not memo[key]:
            out.append(LONELY_AFFINITY.format(index=index, key=term.topology_key, selector=selector))
    return tuple(out)


def with_leading_notes(reasons: Sequence[str], template: PodTemplate, *, other_capacity: bool,
                       lonely: Sequence[str] = ()) -> tuple[str, ...]:
    """`with_placeholders_said`, and first, for a pod that keeps off Karpenter's nodes, that it does by design
    (`other_capacity`: the input holds nodes, node groups or Fargate profiles, which may take it); for a pod
    that selects control-plane nodes, that EKS has none; `lonely`: its required pod-affinity terms that no pod
    matches (`lonely_affinity`)."""
    said = (*lonely, *with_placeholders_said(reasons, template))
    requirement = control_plane_selector(template)
    if requirement is not None and not other_capacity:
        said = (CONTROL_PLANE.format(requirement=requirement), *said)
    if not keeps_off_karpenter(template):
        return said
    key = L.NODEPOOL if template.affinity.forbids(L.NODEPOOL) else L.PROVISIONER_NAME
    return (KEEPS_OFF_KARPENTER.format(key=key) + (_OTHERS_FULL if other_capacity else _NOTHING_ELSE), *said)


def not_simulated_pods(solution: Solution) -> tuple[NotSimulatedPod, ...]:
    """The pods the time limit left undecided: the Karpenter simulation was cut before it could place them
    (and the optimiser, starting from it, did not place them either). Nothing is known against them, so
    they carry no unschedulable reasons, only that the clock ran out."""
    reason = (f"{NOT_SIMULATED_REASON} before the Karpenter simulation could place this pod"
              + (" (nor did the optimiser, which starts from it)" if solution.engine == "optimal" else "")
              + "; a longer --time-limit lets it finish")
    return tuple(NotSimulatedPod(pod.key, pod.workload, reason)
                 for _, pod in solution.unplaced if pod.key in solution.not_simulated)


def _option_rejection(group: GroupInfo, options: Sequence[LaunchOption]) -> str | None:
    """Why a constraint kind's static option test leaves out every option of the pool (None: some pass)."""
    if not options or any(o.index in group.option_ids for o in options):
        return None
    for kind in REGISTRY:
        test = kind.option_filter(group.template)
        why = test(options[0].labels) if test is not None else None
        if why is not None:
            return why
    return None


def _daemon_ports_held(group: GroupInfo, infos: Sequence[ExistingNodeInfo]) -> str | None:
    """Which DaemonSets hold the pod's host ports on the existing nodes that refuse it for its ports (None: no
    DaemonSet does): kube-scheduler's count names the ports' holders nowhere."""
    clashes: list[DaemonPort] = []
    count = 0
    for info in infos:
        if HOST_PORTS not in group.existing_reasons.get(info.node.name, ()):
            continue
        found = clashing(group.template.host_ports, info.daemon_ports)
        count += bool(found)
        clashes.extend(found)
    if not clashes:
        return None
    # The fix is said once: by the NodePools' reasons when theirs are the same DaemonSet ports.
    said = any(not v.ok and v.kind == "daemonset" for v in group.verdicts)
    return existing_daemon_port_note(clashes, count, with_fix=not said)


def _launched_capacity(headroom: Headroom, launched: Sequence[PlannedNode]) -> dict[str, int]:
    """What the plan's new nodes of the pool are charged with against its limits: each its largest open
    option, per limited resource."""
    return {key: sum(max((o.capacity.get(key) for o in slot.options), default=0) for slot in launched)
            for key in (headroom.resources or {})}
