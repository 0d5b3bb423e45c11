"""A pod template's scheduling constraints in words, one line each, as `karpplan inventory` shows them (and where
Fargate takes its pods): selectors and node affinity the way Karpenter prints requirements (`key In [a b]`),
tolerations, spreads and pod (anti-)affinity terms."""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.model.cluster import FargateProfile
from karpplan.model.fargate import profile_for
from karpplan.model.pods import PodAffinityTerm, PodTemplate, TopologySpreadConstraint
from karpplan.model.selectors import LabelSelector, NodeSelectorTerm
from karpplan.model.taints import Toleration


def describe_selector(selector: LabelSelector | None) -> str:
    """`null` (matches nothing), `{}` (matches everything), or the requirements."""
    if selector is None:
        return "null"
    if not selector.valid:
        return "invalid"
    return str(selector)


def describe_term(term: NodeSelectorTerm) -> str:
    if term.empty:
        return "(empty term: matches nothing)"
    if not term.valid:
        return "(unparseable term: matches nothing)"
    parts = [str(term.requirements)] if term.requirements else []
    parts += [f"metadata.name {op} [{name}]" for op, name in term.field_names]
    return ", ".join(parts)


def describe_toleration(toleration: Toleration) -> str:
    """`key=value:effect`, `key Exists`, `* Exists` (everything), `key Gt 5:NoSchedule`."""
    key = toleration.key or "*"
    if toleration.operator == "Exists":
        text = f"{key} Exists"
    elif toleration.operator in ("", "Equal"):
        text = f"{key}={toleration.value}"
    else:
        text = f"{key} {toleration.operator} {toleration.value}"
    return f"{text}:{toleration.effect}" if toleration.effect else text


def describe_spread(constraint: TopologySpreadConstraint) -> str:
    text = (
        f"{constraint.topology_key} maxSkew={constraint.max_skew} {constraint.when_unsatisfiable} "
        f"selector={describe_selector(constraint.label_selector)}"
    )
    if constraint.min_domains is not None:
        text += f" minDomains={constraint.min_domains}"
    if constraint.match_label_keys:
        text += f" matchLabelKeys=[{' '.join(constraint.match_label_keys)}]"
    for name, value in (("nodeAffinityPolicy", constraint.node_affinity_policy), ("nodeTaintsPolicy", constraint.node_taints_policy)):
        if value is not None:
            text += f" {name}={value}"
    return text


def describe_affinity_term(term: PodAffinityTerm) -> str:
    text = f"{term.topology_key} selector={describe_selector(term.label_selector)}"
    if term.namespaces:
        text += f" namespaces=[{' '.join(sorted(term.namespaces))}]"
    if term.namespace_selector is not None:
        text += f" namespaceSelector={describe_selector(term.namespace_selector)}"
    if term.match_label_keys:
        text += f" matchLabelKeys=[{' '.join(term.match_label_keys)}]"
    if term.mismatch_label_keys:
        text += f" mismatchLabelKeys=[{' '.join(term.mismatch_label_keys)}]"
    return text


def constraint_lines(template: PodTemplate, *, fargate: bool = False) -> list[str]:
    """One human line per scheduling constraint of a template (Fargate refusals when `fargate`)."""
    lines: list[str] = []
    affinity = template.affinity
    if affinity.node_selector:
        lines.append(f"nodeSelector: {affinity.node_selector}")
    if affinity.required is not None:
        lines.append("node affinity: " + " OR ".join(describe_term(t) for t in affinity.required))
    lines += [f"preferred node affinity ({p.weight}): {describe_term(p.term)}" for p in affinity.preferred]
    if template.tolerations:
        lines.append("tolerates: " + "; ".join(describe_toleration(t) for t in template.tolerations))
    lines += [f"spread: {describe_spread(c)}" for c in template.spread]
    for label, group in (("pod affinity", template.pod_affinity), ("pod anti-affinity", template.pod_anti_affinity)):
        lines += [f"{label}: {describe_affinity_term(t)}" for t in group.required]
        lines += [f"preferred {label} ({w.weight}): {describe_affinity_term(w.term)}" for w in group.preferred]
    if template.host_ports:
        lines.append("host ports: " + ", ".join(f"{p.port}/{p.protocol}" for p in template.host_ports))
    if template.runtime_class:
        lines.append(f"runtimeClass: {template.runtime_class}")
    if template.priority:
        lines.append(f"priority: {template.priority}")
    if fargate:
        lines += [f"not on Fargate: {reason} ({path})" for path, reason in template.fargate.refusals]
    return lines


def fargate_line(template: PodTemplate, profiles: Sequence[FargateProfile]) -> list[str]:
    """Where Fargate takes a workload's pods: its profile, or why that profile's pods cannot run there."""
    profile = profile_for(profiles, template.namespace, template.labels, template.annotations)
    if profile is None:
        return []
    if template.fargate.refusals:
        return [f"Fargate profile {profile.name} selects its pods, which Fargate refuses (below)"]
    return [f"on Fargate: profile {profile.name} takes its pods"]
