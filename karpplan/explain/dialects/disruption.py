"""Karpenter's disruption messages: why a node is not consolidated (`Unconsolidatable` events), why it may not be
disrupted at all (`DisruptionBlocked` events), and the log lines of a disruption under way, v0.2x to v1.x.

    Normal  Unconsolidatable   13m (x86 over 23h)  karpenter  Can't replace with a cheaper node
    Normal  DisruptionBlocked  26s                 karpenter  Pdb "default/nginx-test-pdb" prevents pod evictions
    3m13s  Normal  DisruptionBlocked  node/ip-10-52-162-231...  Pdb prevents pod evictions (PodDisruptionBudget=kube-system/x)
    Cannot disrupt Node: Pod "default/cdp-2ekr" has "karpenter.sh/do-not-disrupt" annotation     (v0.3x prefix)
    No allowed disruptions for disruption reason Underutilized due to blocking budget           (NodePool event)
    disrupting node(s) {"reason": "underutilized", "decision": "delete", ...}                      (v1.1+ log)
    disrupting nodeclaim(s) via delete, terminating 1 nodes (3 pods) ip-.../m5.large/spot        (v1.0 log)
    disrupting via consolidation delete, terminating 1 candidates ip-.../m5.large/spot           (v0.32-v0.37)
    deprovisioning via consolidation delete, ... / Consolidating via Delete, ...                 (v0.2x)

The texts are kubernetes-sigs/karpenter's pkg/controllers/disruption (consolidation.go, emptiness.go, types.go,
events/events.go) and pkg/controllers/state/statenode.go; each is answered with what it means and its smallest
fix. `parse` returns the message from its cause on (the `Cannot disrupt Node:` / `NodeClaim:` prefix and node
names dropped), so the same cause on many nodes is one item; `plain` words that text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from karpplan.explain.dialects import interruption
from karpplan.explain.structure import DISRUPTION_EVENTS

EVENTS = DISRUPTION_EVENTS
UNCONSOLIDATABLE, BLOCKED, DISRUPTING, INTERRUPTED = EVENTS

TRIGGERS = ("Unconsolidatable", "DisruptionBlocked", "isrupting ", "Consolidating via", "eprovisioning via",
            "prevents pod evictions", "do-not-disrupt", "do-not-consolidate", "nominated for a pending pod",
            "without creating", "cheaper", "SpotToSpotConsolidation", "pods would schedule", "blocking budget",
            "consolidation disabled", "consolidation policy WhenEmpty", "Cannot disrupt", "Cannot deprovision",
            "failed to schedule all pods", "waiting to be evicted",
            "is blocking evictions")
_PREFIX = re.compile(r"^(?:Cannot (?:disrupt|deprovision) (?:Node|NodeClaim|Machine)(?::| due to) )", re.I)
_S = r"(?:state )?"
_DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"


def _pdb(m: re.Match[str]) -> str:
    name = (m.group("pdb") or (m.groupdict().get("bare") or "")).strip("[] ")
    pdb = f'PodDisruptionBudget "{name}"' if name else "a PodDisruptionBudget"
    ns, _, short = name.rpartition("/")
    look = f"kubectl get pdb -n {ns} {short}" if ns else "kubectl get pdb -A"
    return (f"{pdb} allows no eviction right now, so Karpenter will not voluntarily disrupt (consolidate, drift, "
            f"expire) this node: {look} shows ALLOWED DISRUPTIONS 0 (its minAvailable equals the healthy pods, or "
            "maxUnavailable is 0, or pods it covers are not Ready). Smallest fix: let the budget allow one eviction "
            "(maxUnavailable: 1, or minAvailable below the replica count) or run one more replica; a single-replica "
            "workload with minAvailable: 1 can never be moved.")


def _drain_pdb(m: re.Match[str]) -> str:
    name = m.group("pdb").strip()
    ns, _, short = name.rpartition("/")
    look = f"kubectl get pdb -n {ns} {short}" if ns else "kubectl get pdb -A"
    return (f'PodDisruptionBudget "{name}" refuses the eviction of a pod on a node Karpenter is already draining '
            "(the node is being deleted: drift, expiry, consolidation or a kubectl delete), so the drain waits and the "
            f"node and its NodeClaim stay: {look} shows ALLOWED DISRUPTIONS 0 - typically a single replica (istiod, a "
            "gateway) with minAvailable: 1. Smallest fix: run one more replica (or let the budget allow one eviction) "
            "so the pod can move; the NodePool's terminationGracePeriod bounds how long such a drain may wait.")


def _draining(m: re.Match[str]) -> str:
    n = m.group("n")
    return (f"Karpenter is draining this node (it is being deleted - consolidation, drift, expiry or a kubectl "
            f"delete) and {n} pod{'' if n == '1' else 's'} have not left yet: their eviction is refused or still under "
            "way - a PodDisruptionBudget that allows no disruption (kubectl get pdb -A shows ALLOWED DISRUPTIONS 0), "
            f'a pod annotated {_DO_NOT_DISRUPT}: "true" (waited for until the NodePool\'s terminationGracePeriod), '
            "or pods slow to terminate. kubectl get pods -A --field-selector spec.nodeName=NODE shows which remain; the "
            "node goes once they are evicted, and terminationGracePeriod bounds the wait.")


def _pdbs(m: re.Match[str]) -> str:
    return (f"Pods on this node are covered by more than one PodDisruptionBudget ({m.group('pdb').strip('[] ')}), "
            "and the eviction API refuses to evict a pod that several budgets select, so Karpenter cannot drain the "
            "node. Smallest fix: make the budgets' selectors disjoint, so each pod has at most one.")


def _pod_annotation(m: re.Match[str]) -> str:
    pod = m.group("pod")
    return (f'Pod "{pod}" carries the {_DO_NOT_DISRUPT}: "true" annotation, so Karpenter will not voluntarily '
            "disrupt (consolidate, drift, expire) the node it runs on while it runs. That is its purpose (jobs that "
            "must finish); if the pod may be moved, remove the annotation (kubectl annotate pod -n NAMESPACE NAME "
            f"{_DO_NOT_DISRUPT}-, and from the workload's pod template). The NodePool's "
            "spec.template.spec.terminationGracePeriod bounds how long such a pod can hold a node.")


def _node_annotation(m: re.Match[str]) -> str:
    key = m.group("key") or _DO_NOT_DISRUPT
    return (f'The node (or its NodeClaim) carries the "{key}" annotation, so Karpenter never disrupts it '
            f"voluntarily. If it should be consolidated again: kubectl annotate node NODE {key}-.")


def _nominated(_: re.Match[str]) -> str:
    return ("Karpenter keeps this node because a pending pod is nominated to it (the scheduler is about to bind "
            "the pod there). This is transient and needs no fix; if it repeats for long, that pod never lands: its "
            "FailedScheduling events (kubectl describe pod) say why.")


def _initializing(_: re.Match[str]) -> str:
    return ("The node is not initialized yet (it is still starting: registered, but not Ready or its startup taints "
            "and extended resources not settled), and Karpenter disrupts only initialized nodes. Transient; if it "
            "persists, kubectl describe nodeclaim shows which condition (Initialized) never became True - often a "
            "device plugin that never advertises its GPUs, or a startup taint nothing removes.")


def _deleting(_: re.Match[str]) -> str:
    return ("The node is already being deleted (or marked for deletion), so no other disruption is started for it. "
            "Nothing to fix; if it stays, its drain is blocked (a PodDisruptionBudget or a pod that does not "
            "terminate).")


def _not_managed(_: re.Match[str]) -> str:
    return ("The node is not a Karpenter node it can disrupt (no NodeClaim, or no karpenter.sh/nodepool label), "
            "so consolidation leaves it alone. Nodes of managed node groups or self-managed groups are scaled by "
            "their own group, not by Karpenter.")


def _no_node_yet(_: re.Match[str]) -> str:
    return ("The NodeClaim has no Node yet: its instance is still launching or its node has not registered, so there "
            "is nothing to disrupt. Expected for the first minutes of a launch (it comes right after the NodeClaim's "
            "Launched event) and nothing to fix. If it stays, the node never joins the cluster (its bootstrap / user "
            "data, the node role's access entry or aws-auth mapping, the route from its subnet to the API server): "
            "Karpenter gives up after its registration timeout (15 minutes) and deletes the NodeClaim.")


def _half_known(_: re.Match[str]) -> str:
    return ("Karpenter knows only half of this node: a NodeClaim whose instance has not joined the cluster as a Node "
            "(still starting, or never will), or a Node no NodeClaim owns (a managed or self-managed node group's, not "
            "Karpenter's). For a NodeClaim stuck that way (kubectl get nodeclaim shows it without a node, its "
            "Registered condition Unknown), the instance runs but its kubelet cannot join: the node role's access "
            "entry (type EC2 Linux) or aws-auth mapping, the AMI family versus its user data, the route from its "
            "subnet to the API server; Karpenter deletes it after its registration timeout (15 minutes). On a Node "
            "of a managed or self-managed node group the event is noise, nothing to fix: Karpenter before v1.1 "
            "emitted it for every node it does not manage (kubernetes-sigs/karpenter#1644).")


def _creates(m: re.Match[str]) -> str:
    n = m.group("n")
    return (f"Removing this node would need {n} new nodes for its pods (they do not fit on the other nodes), and "
            "consolidation replaces at most one node by one cheaper node: so the node stays. Nothing is broken. To "
            "let it go, make room elsewhere for its pods (right-size their requests, loosen pod anti-affinity or "
            "topology spread that forces them apart) or accept it.")


def _no_cheaper(_: re.Match[str]) -> str:
    return ("No instance type the NodePool allows is cheaper than this node and still holds its pods, so "
            "consolidation keeps it (it is already the cheapest fit). If you expected a smaller node, widen the "
            "NodePool's requirements (more instance families and sizes, or the spot capacity type) or lower the "
            "pods' requests.")


def _spot_disabled(m: re.Match[str]) -> str:
    if "SpotToSpotConsolidation" not in m.group(0) and "SpotToSpotConsolidation" not in m.string:
        # the bare sentence is older than the gate (v0.34): those versions never replace spot with spot
        return ("This Karpenter version (before v0.34) never replaces a spot node by another spot node, so this "
                "spot node is consolidated only by deletion, when its pods fit on the other nodes. Replacing spot "
                "with cheaper spot needs Karpenter v0.34 or later with the SpotToSpotConsolidation feature gate on "
                "(Helm value settings.featureGates.spotToSpotConsolidation=true).")
    return ("A spot node is only replaced by a cheaper spot node when the SpotToSpotConsolidation feature gate is "
            "on, and it is off (the default), so this spot node is never consolidated by replacement (it can still "
            "be deleted when its pods fit elsewhere). Smallest fix: enable the gate (Helm value "
            "settings.featureGates.spotToSpotConsolidation=true, or --feature-gates SpotToSpotConsolidation=true).")


def _spot_options(m: re.Match[str]) -> str:
    return (f"Spot-to-spot consolidation needs at least {m.group('need')} cheaper spot instance types to choose from "
            f"(so the replacement is not the next to be interrupted) and the NodePool allows only {m.group('got')}. "
            "Smallest fix: widen the NodePool's instance-type requirements (more families, generations and sizes).")


# `ns/name => cause ` for each pod (scheduling.Results.NonPendingPodSchedulingErrors; `AllPodsScheduled` before v0.30)
_POD_CAUSE = re.compile(r"(?:^|\s)(?P<pod>[a-z0-9][-a-z0-9.]*/[a-z0-9][-a-z0-9.]*) => ")
_UNINITIALIZED = re.compile(r"would schedule against (?:a )?(?:uninitialized|non-initialized) (?P<what>node [^\s,]+|[^\s,]+(?:, [^\s,]+)?)")


def _simulation_failed(_: re.Match[str]) -> str:
    return ("Karpenter simulated moving this node's pods and not all of them would find a place - on the other nodes, "
            "or on a node it may launch - so it keeps the node. This form (v0.3x) does not say which pod; v0.37+ "
            "names it ('not all pods would schedule, <pod> => <why>'). Most often it is transient (a pod would go to a "
            "node still initializing); if it stays, look for pods only this node can hold: a nodeSelector or required "
            "affinity no NodePool offers, anti-affinity or a hostname spread with no other node, a volume pinned to "
            "its zone. Nothing is broken: the node stays until they can move.")


def _would_not_schedule(m: re.Match[str]) -> str:
    """Karpenter's consolidation simulation left pods without a place. Since v0.30 (kubernetes-sigs/karpenter#458)
    the pods it names are never pods that were pending before the simulation; before, they could be - and then
    one pod that fits nowhere blocked the consolidation of every node (aws/karpenter-provider-aws#4533). A pod
    the simulation puts on a node still initializing (`UninitializedNodeError`) waits for that node."""
    rest = m.group("rest").strip()
    marks = list(_POD_CAUSE.finditer(rest))
    pods = [mark.group("pod") for mark in marks]
    causes = [rest[a.end():b.start() if b is not None else len(rest)].strip()
              for a, b in zip(marks, [*marks[1:], None], strict=True)]
    named = ", ".join(pods) or "some pods"
    if causes and all(_UNINITIALIZED.match(c) for c in causes):
        nodes = ", ".join(dict.fromkeys(n for c in causes if (u := _UNINITIALIZED.match(c))
                                        for n in u.group("what").split(", ")))
        return (f"Karpenter waits before disrupting this node: without it, {named} would move to {nodes}, which "
                "Karpenter has launched but not yet initialized (Ready, startup taints gone, resources registered), "
                "and Karpenter never counts on a node before it is initialized. This clears by itself once that node "
                "initializes, usually within minutes; if it does not, look at why that node stays uninitialized "
                "(kubectl describe node: NotReady, a startup taint no agent removes, a missing extended resource).")
    if "provisioner" in rest.lower():  # v1alpha5 (Karpenter before v0.32): the named pod may be one pending already
        one = len(pods) == 1
        return (f"Karpenter's consolidation simulation finds no node for {named} ({rest}). "
                f"If {'that pod is' if one else 'those pods are'} Pending in the cluster (kubectl get pod -n "
                f"{pods[0].split('/')[0] if pods else 'NAMESPACE'} {pods[0].split('/')[1] if pods else 'NAME'}), "
                f"{'it is' if one else 'they are'} what blocks consolidation: Karpenter before v0.30 counted pending "
                "pods in the simulation, so a pod that fits nowhere blocks the consolidation of every node, not only "
                "this one. Smallest fix: make that pod schedulable (the reason after its name: its requests, node "
                "selector, affinity or the Provisioner it needs) or delete it; Karpenter v0.30+ no longer lets pending "
                "pods block consolidation. Only a pod that runs on this node and fits nowhere else keeps this node for "
                "its own sake.")
    return ("Some pods on this node would fit on no other node if it were removed, so consolidation keeps it: "
            f"{rest}. Smallest fix: the cause named for each pod (its requests, node selector, affinity, topology "
            "spread or volume zone) - or add capacity those pods can use.")


def _budget(m: re.Match[str]) -> str:
    reason = m.group("reason")
    which = f" for disruption reason {reason}" if reason else ""
    return (f"The NodePool's disruption budget allows no disruption right now{which} (a budget of nodes: \"0\", or "
            "a schedule window that is active now, or as many nodes already disrupting as the budget allows). "
            "Smallest fix: raise spec.disruption.budgets (e.g. nodes: \"10%\") or narrow its schedule/duration, or "
            "wait for the window to pass.")


def _disabled(m: re.Match[str]) -> str:
    pool = m.group("pool")
    if m.group("nonempty"):
        return (f'NodePool "{pool}" consolidates only empty nodes (consolidationPolicy WhenEmpty), and this node is '
                "not empty. Smallest fix: spec.disruption.consolidationPolicy: WhenEmptyOrUnderutilized (v1; "
                "WhenUnderutilized before v1) if under-used nodes should be consolidated too.")
    return (f'NodePool "{pool}" has consolidation turned off (spec.disruption.consolidateAfter: Never, or v0.3x '
            "consolidation.enabled: false). Smallest fix: set consolidateAfter to a duration (e.g. 30s) if its "
            "nodes should be consolidated.")


def _type_unknown(m: re.Match[str]) -> str:
    return (f"Karpenter no longer knows the node's instance type {m.group('what')} (it left the NodePool's "
            "requirements or the cloud provider's offerings), so it cannot price a replacement. Drift replaces such "
            "nodes; or delete the node to have it replaced.")


def _missing_label(m: re.Match[str]) -> str:
    return (f"The node lacks the label {m.group('what')} Karpenter needs to price and place a replacement "
            "(labels set by Karpenter were removed, or the node was not launched by it). Restore the label or "
            "replace the node.")


def _pool_gone(m: re.Match[str]) -> str:
    return (f"The node's NodePool {m.group('what') or m.group('what2')} no longer exists, so Karpenter has no disruption settings for "
            "it. Recreate the NodePool, or delete the node (kubectl delete nodeclaim) to move its pods.")


def _price(m: re.Match[str]) -> str:
    return (f"Karpenter could not compare prices for a replacement ({m.group('rest').strip()}); consolidation "
            "skips the node. Usually transient (pricing data not loaded); if it persists, check the controller's "
            "pricing errors.")


def _min_values(m: re.Match[str]) -> str:
    return (f"A replacement would break the NodePool's minValues ({m.group('rest').strip()}): too few instance "
            "types would remain to choose from. Lower minValues or widen the requirements.")


def _buffer(m: re.Match[str]) -> str:
    return (f"Node {m.group('what')} holds buffer (placeholder) pods kept for headroom, so emptiness "
            "consolidation leaves it.")


def _disrupting(how: str) -> str:
    return (f"Karpenter is removing nodes on purpose ({how or 'a disruption'}): a voluntary disruption "
            "(consolidation of empty or under-used nodes, drift from the NodePool/NodeClass, or expiry) that drains "
            "them respecting PodDisruptionBudgets. Not a fault. To keep a pod's node: annotate the pod "
            f'{_DO_NOT_DISRUPT}: "true"; to slow or time-box disruption: the NodePool\'s spec.disruption.budgets '
            "and consolidateAfter.")


_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = tuple(
    (re.compile(pattern, re.I), word) for pattern, word in (
        (r"\bpdb (?:\"(?P<pdb>[^\"]+)\"|(?P<bare>[\w./-]+)) prevents pod evictions", _pdb),  # v0.2x: unquoted
        (r"\bpdb prevents pod evictions(?: \(PodDisruptionBudget=(?P<pdb>[^)]*)\))?", _pdb),
        (r"can'?t drain node, PDB \"(?P<pdb>[^\"]+)\" is blocking evictions", _drain_pdb),  # v0.3x consistency
        (r"failed to drain node, (?P<n>\d+) pods? (?:are|is) waiting to be evicted", _draining),
        (r"eviction does not support multiple PDBs(?: \(PodDisruptionBudget\(s\)=(?P<pdb>[^)]*)\))?", _pdbs),
        (r"\bpod \"(?P<pod>[^\"]+)\" has \"?karpenter\.sh/do-not-(?:disrupt|evict)\"? annotation", _pod_annotation),
        (r"\bpod has \"karpenter\.sh/do-not-disrupt\" annotation \(Pod=(?P<pod>[^)]+)\)", _pod_annotation),
        (r"disruption is blocked through the \"(?P<key>[^\"]+)\" annotation", _node_annotation),
        (r"(?P<key>karpenter\.sh/do-not-consolidate) annotation exists", _node_annotation),
        (_S + r"node is nominated for a pending pod", _nominated),
        (_S + r"node isn'?t initialized", _initializing),
        (_S + r"node is (?:deleting or )?marked for deletion|candidate is (?:already being|deleting)", _deleting),
        (r"nodeclaim does not have an associated node", _no_node_yet),
        (_S + r"node doesn'?t contain both a node and a nodeclaim", _half_known),
        (r"node isn'?t managed by karpenter|" + _S + r"node doesn'?t have the Karpenter owner label", _not_managed),
        (r"can'?t remove without creating (?P<n>\d+) candidates?", _creates),
        (r"can'?t replace (?:spot node )?with a cheaper (?:spot )?node", _no_cheaper),
        (r"SpotToSpotConsolidation is disabled|can'?t replace a spot node with a spot node", _spot_disabled),
        (r"SpotToSpotConsolidation requires (?P<need>\d+) cheaper instance type options.*?got (?P<got>\d+)", _spot_options),
        (r"not all pods would schedule,(?P<rest>.*)$", _would_not_schedule),
        (r"scheduling simulation failed to schedule all pods", _simulation_failed),
        (r"no allowed disruptions(?: for disruption reason (?P<reason>\w+))? due to blocking budget", _budget),
        (r"NodePool \"(?P<pool>[^\"]+)\" has (?P<nonempty>non-empty )?consolidation disabled", _disabled),
        (r"NodePool \"(?P<pool>[^\"]+)\" has consolidation policy WhenEmpty(?P<nonempty>, but node is not empty)", _disabled),
        (r"instance type (?P<what>\"[^\"]*\") (?:not found|can'?t be resolved)", _type_unknown),
        (r"node (?:does not|doesn'?t) have (?:required )?label (?P<what>\"[^\"]*\"|\(label=[^)]*\))", _missing_label),
        (r"(?:owning )?nodepool (?P<what>\"[^\"]*\"|\(NodePool=[^)]*\)) (?:not found|can'?t be resolved)|"
         r"nodepool not found (?P<what2>\(NodePool=[^)]*\))", _pool_gone),
        (r"filtering by price:(?P<rest>.*)$", _price),
        (r"minValues requirement is not met for(?P<rest>.*)$", _min_values),
        (r"node (?P<what>\"[^\"]*\") has buffer pods", _buffer),
    ))
# what DisruptionBlocked events say (a node's or its pods' state), the others being Unconsolidatable ones
_BLOCKING = frozenset(p for p, word in _RULES if word in (_pdb, _drain_pdb, _draining, _pdbs, _pod_annotation, _node_annotation,
                                                          _nominated, _half_known, _no_node_yet,
                                                          _initializing, _deleting, _not_managed, _budget, _pool_gone))
# the log of a disruption under way, newest first; what follows the match (node names) is left out of the item
_DISRUPTING = re.compile(
    r"(?:^|(?<=\s))(?:disrupting node\(s\)|disrupting nodeclaim\(s\) via (?P<decision>\w+)|"
    r"(?:disrupting|deprovisioning) via (?P<method>[\w-]+) (?P<decision2>\w+)|Consolidating via (?P<decision3>\w+)|"
    r"Disrupting (?:Node|NodeClaim): (?P<reason>\w+(?:/\w+)?))", re.I)


def _bare(message: str) -> str:
    """The message without the quotes or markdown (`_"..."_`, `**...**`) a paste wraps it in."""
    return message.strip().strip('"_*`').strip()


def _cause(message: str) -> str:
    return _PREFIX.sub("", _bare(message), count=1).strip()


def parse(message: str, event: str | None = None) -> tuple[str, str] | None:
    """(event, text) for a disruption message: the event it belongs to (Unconsolidatable, DisruptionBlocked or
    Disrupting) and its text from the cause on, which `plain` words; None for anything else."""
    text = _cause(message)
    if (m := _DISRUPTING.search(text)) is not None:
        return DISRUPTING, _disrupting_key(m, "")
    for pattern, _ in _RULES:
        if (found := pattern.search(text)) is not None:
            if event not in (UNCONSOLIDATABLE, BLOCKED):  # a message pasted without its event
                event = BLOCKED if text != _bare(message) or pattern in _BLOCKING else UNCONSOLIDATABLE
            return event, text[found.start():].strip()
    if event in (UNCONSOLIDATABLE, BLOCKED) and text:  # a text of another version: still the node's, not a pod's
        return event, text
    return None


def _disrupting_key(m: re.Match[str], reason: str = "", decision: str = "") -> str:
    decision = m.group("decision") or m.group("decision2") or m.group("decision3") or decision
    method = m.group("method") or ("consolidation" if m.group("decision3") else "")
    words = " ".join(w.lower() for w in (method, decision) if w)
    reason = reason or m.group("reason") or ""
    return "disrupting node(s)" + (f" via {words}" if words else "") + (f", reason {reason.lower()}" if reason else "")


def from_fields(message: str, fields: Mapping[str, Any]) -> str | None:
    """The text of a JSON `disrupting ...` log line, with the reason and decision v1.x logs beside the message,
    or None when the message is not one."""
    m = _DISRUPTING.match(message.strip())
    if m is None:
        return None
    reason, decision = fields.get("reason"), fields.get("decision")
    return _disrupting_key(m, reason if isinstance(reason, str) else "", decision if isinstance(decision, str) else "")


def plain(text: str, nodes: tuple[str, ...] = ()) -> str:
    """What a disruption text (as `parse` returns it) means, and its smallest fix; `nodes`: those its records name."""
    if text.startswith("interruption "):  # an interruption item's key: dialects/interruption.py words it
        return interruption.plain(text, nodes)
    if text.startswith("disrupting node(s)"):
        return _disrupting(text.removeprefix("disrupting node(s)").removeprefix(" via ").strip().lstrip(", "))
    for pattern, word in _RULES:
        if (found := pattern.search(text)) is not None:
            return word(found)
    return (f"Karpenter keeps this node for now: {text.rstrip('.')}. This is about removing the node "
            "(consolidation or another voluntary disruption), not about placing a pod; kubectl describe nodeclaim "
            "and the NodePool's spec.disruption show what it waits for.")


# the nodes a `disrupting ...` log line names: `terminating 2 nodes (5 pods) ip-a/m5.large/spot, ip-b/c5.xlarge/on-demand`
_TERMINATING = re.compile(r"\bterminating \d+ (?:nodes|nodeclaims|candidates|machines)(?: \(\d+ pods?\))?\s+(?P<list>[^\t{]+)",
                          re.I)
_NODE_ENTRY = re.compile(r"^(?P<name>[\w.-]+)/[\w.-]+/[\w-]+$")


def nodes_in(message: str) -> tuple[str, ...]:
    """The node names of a `disrupting ...` / `Consolidating via ...` log line (each `name/type/capacity`)."""
    m = _TERMINATING.search(message)
    if m is None:
        return ()
    head = m.group("list").split("; ")[0].split(" and replacing")[0]
    return tuple(e.group("name") for part in head.split(",")
                 if (e := _NODE_ENTRY.match(part.strip().strip("\"'\t"))) is not None)


def nodes_of_fields(fields: Mapping[str, Any]) -> tuple[str, ...]:
    """The node names of a v1.1+ JSON `disrupting node(s)` line: `"disrupted-nodes": [{"Node": {"name": ...}}]`."""
    out: list[str] = []
    entries = fields.get("disrupted-nodes")
    for entry in entries if isinstance(entries, list) else ():
        node = entry.get("Node") if isinstance(entry, dict) else None
        name = node.get("name") if isinstance(node, dict) else None
        if isinstance(name, str) and name:
            out.append(name)
    return tuple(out)


def mentioned(message: str) -> bool:
    return any(t in message for t in TRIGGERS)
