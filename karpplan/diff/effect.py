"""What a NodePool does, whichever API wrote it: the settings a migration from a v1alpha5 `Provisioner` (or a
v1beta1 NodePool) to a karpenter.sh/v1 `NodePool` must carry over, in one vocabulary, so that a reviewer sees
what the migration changes in effect rather than every moved field (`spec.requirements` ->
`spec.template.spec.requirements`, `ttlSecondsUntilExpired` -> `expireAfter`).

- requirements: as the planner reads them (`model/build_pools.py`: a Provisioner's v0.27 webhook defaults
  applied), less the pool's own name (`karpenter.sh/nodepool`, `karpenter.sh/provisioner-name`);
- labels, taints, startup taints, weight, kubelet settings (the pool's over its node class's);
- limits, quantities compared by amount (`1k` is `1000`);
- disruption, in v1 terms: v1alpha5 `consolidation.enabled: true` is `WhenEmptyOrUnderutilized` after 0s,
  `ttlSecondsAfterEmpty: N` is `WhenEmpty` after Ns, neither is no consolidation (`consolidateAfter: Never`);
  `ttlSecondsUntilExpired` is `expireAfter` (Never without it); `consolidateAfter: Never` is no consolidation
  whatever the policy; v1beta1's `WhenUnderutilized` is
  `WhenEmptyOrUnderutilized` and its `spec.disruption.expireAfter` moved to `spec.template.spec.expireAfter`;
  a NodePool without budgets has Karpenter's default `nodes: 10%`, a Provisioner none (v0.x had no budgets);
- the node class: its AMI family (a v1alpha1 AWSNodeTemplate's default is AL2; a v1 alias `al2023@latest` is
  AL2023) and root volume sizes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karpplan.consolidate.cron import go_duration
from karpplan.model.pools import KubeletConfig, NodeClass, NodePool
from karpplan.model.quantity import QuantityError
from karpplan.model.resources import Resources

POOL_NAME_KEYS = ("karpenter.sh/nodepool", "karpenter.sh/provisioner-name")
OS_KEY = "kubernetes.io/os"
DEFAULT_BUDGET = "nodes: 10%"
DEFAULT_EXPIRY = "720h"


def duration_text(value: object) -> str:
    """A Go duration (or v1alpha5 seconds) in one spelling: `2592000` and `720h0m0s` are both `720h`."""
    if value is None:
        return "Never"
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    else:
        text = str(value).strip()
        span = None if text == "Never" else go_duration(text)
        if span is None:
            return text
        seconds = int(span.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs else ""]
    return "".join(parts) or "0s"


def _spec(body: Mapping[str, Any], *path: str) -> Any:
    here: Any = body.get("spec")
    for key in path:
        here = here.get(key) if isinstance(here, Mapping) else None
    return here


def _amounts(raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        return {}
    try:
        return Resources.parse({k: v for k, v in raw.items() if v is not None}).formatted()
    except (QuantityError, ValueError, TypeError):
        return {str(k): str(v) for k, v in raw.items()}


def _limits(body: Mapping[str, Any]) -> dict[str, str]:
    limits = _spec(body, "limits")
    if body.get("kind") == "Provisioner" and isinstance(limits, Mapping):
        limits = limits.get("resources")
    return _amounts(limits)


def _provisioner_disruption(body: Mapping[str, Any]) -> dict[str, Any]:
    consolidation = _spec(body, "consolidation")
    empty_after = _spec(body, "ttlSecondsAfterEmpty")
    if isinstance(consolidation, Mapping) and consolidation.get("enabled") is True:
        policy, after = "WhenEmptyOrUnderutilized", "0s"
    elif empty_after is not None:
        policy, after = "WhenEmpty", duration_text(empty_after)
    else:
        policy, after = "none", "Never"
    return {"consolidationPolicy": policy, "consolidateAfter": after, "budgets": ["none (v1alpha5 has no budgets)"],
            "expireAfter": duration_text(_spec(body, "ttlSecondsUntilExpired"))}


def _listed(value: object) -> str:
    return f"[{' '.join(str(v) for v in value)}]" if isinstance(value, list) else str(value)


def _budgets(raw: Any) -> list[str]:
    if not isinstance(raw, list) or not raw:
        return [DEFAULT_BUDGET]
    out = []
    for budget in raw:
        if isinstance(budget, Mapping):
            out.append(", ".join(f"{k}: {_listed(budget[k])}" for k in ("nodes", "reasons", "schedule", "duration")
                                 if budget.get(k) is not None))
    return out


def _pool_disruption(body: Mapping[str, Any]) -> dict[str, Any]:
    disruption = _spec(body, "disruption")
    disruption = disruption if isinstance(disruption, Mapping) else {}
    policy = str(disruption.get("consolidationPolicy") or "WhenEmptyOrUnderutilized")
    if policy == "WhenUnderutilized":  # v1beta1's name; its consolidateAfter applied to WhenEmpty only
        policy, after = "WhenEmptyOrUnderutilized", "0s"
    else:
        after = duration_text(disruption.get("consolidateAfter", "0s"))
    if after == "Never":  # no consolidation whatever the policy, as a Provisioner with neither setting
        policy = "none"
    template = _spec(body, "template", "spec")
    template = template if isinstance(template, Mapping) else {}
    expire = template.get("expireAfter", disruption.get("expireAfter", DEFAULT_EXPIRY))  # v1, else v1beta1
    out = {"consolidationPolicy": policy, "consolidateAfter": after, "budgets": _budgets(disruption.get("budgets")),
           "expireAfter": duration_text(expire)}
    if template.get("terminationGracePeriod") is not None:
        out["terminationGracePeriod"] = duration_text(template["terminationGracePeriod"])
    return out


def _kubelet(config: KubeletConfig | None) -> dict[str, Any]:
    if config is None:
        return {}
    out: dict[str, Any] = {"maxPods": config.max_pods, "podsPerCore": config.pods_per_core,
                           "kubeReserved": config.kube_reserved.formatted() if config.kube_reserved else None,
                           "systemReserved": config.system_reserved.formatted() if config.system_reserved else None,
                           "evictionHard": dict(config.eviction_hard) if config.eviction_hard else None}
    return {k: v for k, v in out.items() if v is not None}


def _node_class(node_class: NodeClass | None) -> dict[str, Any]:
    if node_class is None:
        return {}
    family = node_class.ami_family or ("AL2" if node_class.kind == "AWSNodeTemplate" else None)  # v1alpha1's default
    sizes = [f"{d.device_name or 'root'}: {d.volume_bytes // 2**30}Gi" for d in node_class.storage.block_devices
             if d.volume_bytes is not None]
    out: dict[str, Any] = {"amiFamily": family, "blockDevices": sizes or None}
    return {k: v for k, v in out.items() if v is not None}


def _inline_provider(body: Mapping[str, Any]) -> dict[str, Any]:
    """A v1alpha5 Provisioner's inline `spec.provider` (before providerRef): its AMI family, AL2 by default."""
    provider = _spec(body, "provider") if body.get("kind") == "Provisioner" else None
    if not isinstance(provider, Mapping):
        return {}
    return {"amiFamily": str(provider.get("amiFamily") or "AL2")}


def pool_effect(pool: NodePool, body: Mapping[str, Any], node_class: NodeClass | None) -> dict[str, Any]:
    """The pool's settings in effect, in v1 terms (see the module docstring)."""
    requirements = {key: str(pool.requirements[key])[len(key) + 1:] for key in sorted(pool.requirements)
                    if key not in POOL_NAME_KEYS}
    family = node_class.ami_family if node_class is not None else None
    if OS_KEY not in requirements and family is not None:  # the AMI family's OS is what the pool launches
        requirements[OS_KEY] = "In [windows]" if family.lower().startswith("windows") else "In [linux]"
    kubelet = (node_class.kubelet if node_class is not None and node_class.kubelet else KubeletConfig()).merged(
        pool.kubelet)
    disruption = _provisioner_disruption(body) if pool.kind == "Provisioner" else _pool_disruption(body)
    return {"requirements": requirements,
            "labels": {k: v for k, v in sorted(pool.labels.items()) if k not in POOL_NAME_KEYS},
            "taints": sorted(str(t) for t in pool.taints), "startupTaints": sorted(str(t) for t in pool.startup_taints),
            "weight": pool.weight, "limits": _limits(body), "kubelet": _kubelet(kubelet), "disruption": disruption,
            "nodeClass": _node_class(node_class) or _inline_provider(body)}


def aligned(base: Mapping[str, Any], head: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two effects with a requirement only one side restricts shown as `(any value)` on the other, so the
    change reads `requirements[k]: In [c m r] -> (any value)` rather than `requirements[k] removed`."""
    out = dict(base), dict(head)
    keys = set(base.get("requirements", {})) | set(head.get("requirements", {}))
    for side in out:
        side["requirements"] = {k: side.get("requirements", {}).get(k, "(any value)") for k in sorted(keys)}
    return out


def _template_spec(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """A workload's pod spec (`spec.template.spec`, a CronJob's `spec.jobTemplate.spec.template.spec`, a Pod's
    `spec`)."""
    spec = body.get("spec")
    for path in (("jobTemplate", "spec", "template", "spec"), ("template", "spec"), ()):
        here: Any = spec
        for key in path:
            here = here.get(key) if isinstance(here, Mapping) else None
        if isinstance(here, Mapping) and (path or "containers" in here):
            return here
    return {}


def selects_provisioner(body: Mapping[str, Any]) -> bool:
    """Whether a workload's pods select `karpenter.sh/provisioner-name` (a nodeSelector, or a required node
    affinity term): a label only v1alpha5 Provisioners' nodes carry, and one Karpenter refuses since v0.33
    (aws/karpenter-provider-aws#5645: "ignoring pod, label karpenter.sh/provisioner-name is restricted")."""
    spec = _template_spec(body)
    selector = spec.get("nodeSelector")
    if isinstance(selector, Mapping) and POOL_NAME_KEYS[1] in selector:
        return True
    affinity = spec.get("affinity")
    node = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node, Mapping) else None
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    return isinstance(terms, list) and any(
        isinstance(e, Mapping) and e.get("key") == POOL_NAME_KEYS[1]
        for t in terms if isinstance(t, Mapping) for e in (t.get("matchExpressions") or []))


def migrated(base: Mapping[str, Any], head: Mapping[str, Any]) -> str | None:
    """`Provisioner (karpenter.sh/v1alpha5) -> NodePool (karpenter.sh/v1)` when the two documents are of another
    kind or API version (a migration), else None."""
    was = (str(base.get("kind", "")), str(base.get("apiVersion", "")))
    now = (str(head.get("kind", "")), str(head.get("apiVersion", "")))
    if was == now:
        return None
    return f"{was[0]} ({was[1]}) -> {now[0]} ({now[1]})"
