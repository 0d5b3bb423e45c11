"""Say it plainly: one sentence per reason, one paragraph per item, naming the object and the field."""

from __future__ import annotations

from dataclasses import replace

from karpplan.explain import structure as reason_kind
from karpplan.explain.structure import CLUSTER_AUTOSCALER, KUBE_SCHEDULER, Item, Parsed, PoolReasons, Reason

_WELL_KNOWN_POOL_KEYS = ("karpenter.sh/nodepool", "karpenter.sh/provisioner-name")


def _pool_name(pool: PoolReasons | None) -> str:
    if pool is None:
        return "a NodePool"
    return f'{"Provisioner" if pool.kind == "provisioner" else "NodePool"} "{pool.name}"'


def _taint_text(r: Reason) -> str:
    text = r.key or "?"
    if r.value:
        text += f"={r.value}"
    if r.effect:
        text += f":{r.effect}"
    return text


def reason_plain(r: Reason, pool: PoolReasons | None = None, source: str = "karpenter") -> str:
    where = _pool_name(pool)
    if r.kind == reason_kind.TAINT:
        if source != "karpenter":
            return (f"some nodes carry the taint {_taint_text(r)} and the pod has no matching entry in "
                    "spec.tolerations; add one if the pod may run there.")
        effect = r.effect or "NoSchedule"
        return (f"{where} taints its nodes with {_taint_text(r)} and the pod's spec.tolerations has no entry "
                f"for it; add a toleration (key: {r.key}, operator: {'Equal' if r.value else 'Exists'}"
                f"{', value: ' + r.value if r.value else ''}, effect: {effect}) if the pod belongs there, "
                f"or leave it out if the taint is meant to keep it away.")
    if r.kind == reason_kind.UNKNOWN_LABEL:
        hint = (f' Karpenter suggests you meant "{r.suggestion}": check the spelling in nodeSelector / '
                "nodeAffinity.") if r.suggestion else ""
        return (f'the pod selects on label "{r.key}" (spec.nodeSelector or spec.affinity.nodeAffinity), but no '
                f"node {where} can launch carries that label: it is neither a well-known label nor in the pool's "
                f"spec.template.metadata.labels or spec.template.spec.requirements. Add the label to the pool, "
                f"or remove it from the pod's nodeSelector.{hint}")
    if r.kind == reason_kind.REQUIREMENT_CONFLICT:
        if r.key in _WELL_KNOWN_POOL_KEYS:
            return (f"the pod asks for {r.pod_side or 'a different pool'} but this is {where}"
                    f" ({r.pool_side or r.key}); that is expected when the pod pins another pool through "
                    f"nodeSelector / nodeAffinity on {r.key}.")
        if r.key:
            return (f"the pod requires {r.pod_side or r.key} (spec.nodeSelector or "
                    f"spec.affinity.nodeAffinity) but {where} only allows {r.pool_side or 'other values'} "
                    f"(spec.template.spec.requirements, key {r.key}); widen the pool's requirement or change "
                    "the pod's selector so the two overlap.")
        return f"the pod's node selector and {where}'s requirements do not overlap."
    if r.kind == reason_kind.NO_INSTANCE_TYPE:
        asked = ", ".join(f"{k} {v}" for k, v in (r.resources or {}).items() if k != "pods")
        cause = f" ({r.cause})" if r.cause else ""
        reqs = [q for q in r.requirements if not q.key.startswith(("karpenter.sh/", "karpenter.k8s.aws/ec2nodeclass"))]
        narrow = ", ".join(str(q) for q in reqs[:6])
        return (f"no instance type {where} may launch fits the pod{cause}"
                + (f": it asks for {asked} (with DaemonSet overhead)" if asked else "")
                + (f" under the requirements {narrow}" if narrow else "")
                + ". Lower the pod's resources.requests, or widen the pool's instance requirements "
                "(instance-category, -family, -size, capacity-type, zones) so a large enough type with an "
                "offering qualifies.")
    if r.kind == reason_kind.LIMITS:
        name = f'NodePool "{r.node_pool}"' if r.node_pool else where
        if "node limits" in r.text:
            return f"{name} has reached spec.limits.nodes; raise it or free nodes."
        return (f"{name} has reached its spec.limits (limits.cpu / limits.memory): every instance type it could "
                "launch would exceed what is left. Raise the limits, or let another pool take the pod. "
                "(Karpenter also says this when the pool's EC2NodeClass is missing or not ready.)")
    if r.kind == reason_kind.EXCLUDED_TYPES:
        return (f"{r.excluded} of {r.total} instance types were left out because they would breach the pool's "
                "spec.limits; raise limits.cpu / limits.memory if the larger types are wanted.")
    if r.kind == reason_kind.TOPOLOGY:
        field = {"topology spread": "spec.topologySpreadConstraints",
                 "pod affinity": "spec.affinity.podAffinity",
                 "pod anti-affinity": "spec.affinity.podAntiAffinity"}.get(r.constraint or "", "the pod")
        counts = ""
        if r.counts:
            counts = "; pods per domain now: " + ", ".join(f"{k}={v}" for k, v in list(r.counts.items())[:6])
        if r.constraint == "pod affinity":
            advice = ("no domain that " + where + " can reach holds a matching pod; a new node never does, so "
                      "the pod waits until a matching pod runs in a reachable domain. Relax "
                      "requiredDuringScheduling to preferred, or let the pool reach the domain of the pods it follows.")
        elif r.constraint == "pod anti-affinity":
            advice = "every reachable domain already holds a pod it must avoid; add domains (zones, nodes) or relax the term."
        else:
            advice = ("placing the pod in any domain " + where + " can reach would break maxSkew; raise maxSkew, "
                      "set whenUnsatisfiable: ScheduleAnyway, or let the pool reach more domains (zones).")
        return f"{field} on {r.key}: {advice}{counts}"
    if r.kind == reason_kind.VOLUME:
        return ("the pod's volumes (PersistentVolumeClaims) are bound to a zone or node the pool cannot launch in; "
                "check the volume's zone against the pool's topology.kubernetes.io/zone requirement.")
    if r.kind == reason_kind.MIN_VALUES:
        return ("the pool's minValues (spec.template.spec.requirements[].minValues) asks for more distinct values "
                "than the instance types left after filtering offer; lower minValues or widen the requirements.")
    if r.kind == reason_kind.UNSUPPORTED:
        return f"this Karpenter version does not support it ({r.text}); upgrade Karpenter or drop the constraint."
    if r.kind == reason_kind.NODE_FILTER:
        parts = [f"{n} {why}" for why, n in (r.counts or {}).items()]
        nodes = f"of {r.total} nodes, " if r.total is not None else ""
        return "no existing node fits: " + nodes + "; ".join(parts) + "." if parts else r.text
    return r.text


def with_plain(parsed: Parsed) -> Parsed:
    pools = tuple(replace(p, reasons=tuple(replace(r, plain=reason_plain(r, p, parsed.source)) for r in p.reasons))
                  for p in parsed.pools)
    reasons = tuple(replace(r, plain=reason_plain(r, None, parsed.source)) for r in parsed.reasons)
    return replace(parsed, pools=pools, reasons=reasons)


def item_plain(item: Item) -> str:
    p = item.parsed
    who = f"Pod {p.pod}" if p.pod else "The pod"
    if item.workload:
        who += f" ({item.workload})"
    if p.event == "Nominated":
        return f"{who}: Karpenter found room for it and nominated {p.nominated}; it should bind once that node is ready."
    sentences: list[str] = []
    if p.source == KUBE_SCHEDULER:
        sentences.append(f"{who} could not be placed on any existing node (kube-scheduler).")
    elif p.source == CLUSTER_AUTOSCALER:
        sentences.append(f"{who} did not make cluster-autoscaler add a node: no node group's template node would take it.")
    else:
        sentences.append(f"{who} could not be scheduled by Karpenter"
                         + (f" ({p.dialect} log)" if p.dialect else "") + ".")
    for pool in p.pools:
        for r in pool.reasons:
            sentences.append(_capital(r.plain or reason_plain(r, pool)))
        if not pool.reasons:
            sentences.append(f"{_pool_name(pool)}: the reason was cut off in the log.")
    for r in p.reasons:
        if r.kind == reason_kind.TAINT and p.source != "karpenter":
            continue
        sentences.append(_capital(r.plain or reason_plain(r, None, p.source)))
    if p.source != "karpenter":
        taints = [r for r in p.reasons if r.kind == reason_kind.TAINT]
        if taints:
            sentences.append("Untolerated taints: " + ", ".join(_taint_text(t) for t in taints)
                             + "; add tolerations to spec.tolerations only if the pod may run on those nodes"
                             + (" (eks.amazonaws.com/compute-type=fargate marks Fargate nodes: a Fargate profile, not a toleration, puts a pod there)"
                                if any("fargate" in (t.value or "") or "fargate" in (t.key or "") for t in taints) else "")
                             + ".")
    if p.unparsed:
        sentences.append("Not understood: " + "; ".join(u[:160] for u in p.unparsed) + ".")
    if item.count > 1:
        sentences.append(f"(Seen {item.count} times, lines {item.line}-{item.last_line}.)")
    return " ".join(sentences)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
