"""Topology wording: a pod's spread constraint or pod (anti-)affinity, as kube-scheduler and Karpenter report it
(the field it is in, the domains counted, what to relax)."""

from __future__ import annotations

import re

from karpplan.explain.empty_domain import (
    deprecated_key_plain,
    empty_domain_plain,
    has_empty_domain,
    keyless_plain,
    shown,
)
from karpplan.explain.structure import Reason
from karpplan.model.labels import ZONE


def topology_plain(r: Reason, where: str, source: str) -> str:
    field = {"topology spread": "spec.topologySpreadConstraints",
             "pod affinity": "spec.affinity.podAffinity",
             "pod anti-affinity": "spec.affinity.podAntiAffinity"}.get(r.constraint or "", "the pod")
    if source != "karpenter":
        if "affinity/anti-affinity" in r.text:  # kube-scheduler's umbrella: it does not say which of the two
            return (f"{r.text}: either the pod's required spec.affinity.podAffinity finds no pod it must run next "
                    "to on those nodes, or anti-affinity keeps it away (its own spec.affinity.podAntiAffinity, or "
                    "that of a pod already there - often another replica of the same workload); the pod's spec "
                    "says which terms it has.")
        if "missing required label" in r.text:
            return (f"{r.text}: those nodes lack the label the constraint's topologyKey names, so they are in no "
                    f"domain of its {field} and a DoNotSchedule constraint keeps the pod off them. Use a key every "
                    "node carries (topology.kubernetes.io/zone, kubernetes.io/hostname - check the spelling), or "
                    "label the nodes (the node group's or NodePool's labels) with it.")
        if r.constraint == "pod anti-affinity":
            return (f"{r.text}: those nodes already run a pod this pod's required {field} (or that pod's own "
                    "anti-affinity) keeps it away from - often another replica of the same workload; it needs "
                    "another node or zone.")
        if r.constraint == "pod affinity":
            return f"{r.text}: no pod the pod's required {field} asks to run next to runs on those nodes."
        return (f"{r.text}: placing the pod on those nodes would break maxSkew of its {field}. Every constraint must "
                "hold on the chosen node at once: a zone spread and a kubernetes.io/hostname spread together can leave "
                "no node at all (zones with unequal node counts) though each alone would fit - add nodes in the "
                "emptier zones, or make one of them whenUnsatisfiable: ScheduleAnyway.")
    if r.key is None:
        return keyless_plain(field)
    counts = ""
    if r.counts:
        more = max(len(r.counts) - 6, 0) + (r.others or 0)
        counts = (" (pods per domain now: " + ", ".join(f"{shown(k)}={v}" for k, v in list(r.counts.items())[:6])
                  + (f", and {more} other domain{'' if more == 1 else 's'}" if more > 0 else "") + ")")
    if has_empty_domain(r):
        return empty_domain_plain(r, field, counts)
    if (renamed := deprecated_key_plain(r, field, counts)) is not None:
        return renamed
    if r.constraint == "pod affinity":
        advice = ("no domain that " + where + " can reach holds a matching pod" + counts + "; a new node never does, "
                  "so the pod waits until a matching pod runs in a reachable domain. Relax "
                  "requiredDuringScheduling to preferred, or let the pool reach the domain of the pods it follows.")
    elif r.constraint == "pod anti-affinity":
        advice = ("every reachable domain already holds a pod it must avoid" + counts + "; add domains (zones, nodes) "
                  "or relax the term.")
    elif r.counts == {} and not r.others:
        # `counts = ,`: Karpenter knew no domain of the key at all, so no placement could keep the spread; the
        # pod's maxSkew is not what to change (kubernetes-sigs/karpenter#2785).
        return (f"the pod's {field} on {r.key}: Karpenter counted no {r.key} domain at all (counts is empty), so "
                "it had nowhere to place the pod; this is not the pod's maxSkew. Karpenter v1.8.1 (karpenter-provider-"
                "aws 1.8.4) filtered a spread's domains by the pod's node selector and left none when the NodePool "
                "the pod selects had no nodes yet (kubernetes-sigs/karpenter#2785, reverted in v1.8.2): on that "
                "version, upgrade. Otherwise check that a NodePool the pod may use offers the key at all (its "
                "instance types' offerings in your zones, the EC2NodeClass's subnets, a custom key among its "
                "requirements or labels).")
    else:
        pinned = pinned_domains(r)
        if pinned is not None:
            return _pinned_spread_plain(r, field, pinned, counts)
        advice = ("placing the pod in any domain " + where + " can reach would break maxSkew" + counts + "; raise "
                  "maxSkew, set whenUnsatisfiable: ScheduleAnyway, or let the pool reach more domains (zones).")
    return f"the pod's {field} on {r.key}: {advice}"


def _domain_values(text: str | None, key: str | None) -> tuple[str, ...] | None:
    """The values of `<key> In [a b]` (None for Exists, DoesNotExist or anything else)."""
    if not text or not key:
        return None
    m = re.match(re.escape(key) + r" In \[(?P<v>[^\]]*)\]", text.strip())
    return tuple(m.group("v").split()) if m is not None else None


def pinned_domains(r: Reason) -> tuple[str, ...] | None:
    """The domains a topology-spread pod is itself restricted to, when they are fewer than the domains the
    spread counts (Karpenter's podDomains: the pod's own node selector / affinity and its bound volumes)."""
    pod = _domain_values(r.pod_domains, r.key)
    if not pod:
        return None
    known = set(r.counts or {}) | set(_domain_values(r.node_domains, r.key) or ())
    return pod if set(pod) < known or (r.others and len(pod) < len(known) + r.others) else None


def _pinned_spread_plain(r: Reason, field: str, pinned: tuple[str, ...], counts: str) -> str:
    volume = (" - most often a PersistentVolume it has bound there (an EBS volume never leaves its zone; "
              "kubectl get pv -o wide shows each volume's zone)" if r.key == ZONE else "")
    return (f"the pod's {field} on {r.key} cannot be met, and widening the pool cannot help: the pod itself may only "
            f"run in {', '.join(pinned)} (Karpenter's podDomains), fewer domains than the spread counts{counts}. "
            f"Something on the pod restricts it{volume}, or its own nodeSelector / required node affinity on {r.key}. "
            "Placing it there would break maxSkew (or minDomains, which counts the domains the pod cannot reach). "
            "Fix the restriction: move or recreate the volume so the replicas' volumes spread like the constraint "
            "wants, drop the pod's own pin, or relax the constraint (lower minDomains, raise maxSkew, or "
            "whenUnsatisfiable: ScheduleAnyway).")
