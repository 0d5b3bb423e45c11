"""Spread constraints the API server accepts that do not do what they say, and replicas with no spread."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from karpplan.errors import Origin
from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict
from karpplan.lint.context import LintContext, templates
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.locate import value_at
from karpplan.lint.rules.examples import NODEPOOL, ZONE_SPREAD, deployment
from karpplan.model.fargate import profile_for
from karpplan.model.labels import HOSTNAME, ZONE
from karpplan.model.prometheus_operator import is_operator_resource
from karpplan.model.shared_claims import FIX as SHARED_CLAIM_FIX
from karpplan.model.strimzi import is_strimzi_resource, rack_key

_SPREAD_KEYS = frozenset({HOSTNAME, ZONE, "failure-domain.beta.kubernetes.io/zone", "topology.k8s.aws/zone-id"})
_REPLICATED = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "ReplicationController", "Rollout"})


def _labels_text(labels: dict[str, str]) -> str:
    shown = {k: v for k, v in labels.items() if k != "pod-template-hash"}
    return ", ".join(f"{k}={v}" for k, v in sorted(shown.items())) or "(none)"


@lint_rule("spread-selector-misses-own-pods", "KPL201", Severity.warning,
           fix="make the labelSelector match the pod template's labels",
           bad=NODEPOOL + deployment(ZONE_SPREAD.replace("{matchLabels: {app: web}}", "{matchLabels: {app: frontend}}")),
           good=NODEPOOL + deployment(ZONE_SPREAD))
def SELECTOR_MISSES_OWN_PODS(ctx: LintContext) -> Iterator[Hit]:
    """The spread labelSelector does not select the template's own labels.

    A topologySpreadConstraint counts the pods its labelSelector selects. When the selector does not select
    the workload's own pods (a copy-paste from another workload, a renamed label), the constraint balances
    someone else's pods and this workload is not spread at all. The API server accepts it.
    """
    for doc, spec_path, pod_template in templates(ctx):
        for index, c in enumerate(pod_template.spread):
            selector = c.selector_for(pod_template.labels)
            if selector is None or selector.matches(pod_template.labels):
                continue
            path = f"{spec_path}.topologySpreadConstraints[{index}].labelSelector"
            yield Hit(
                doc, path,
                f"the labelSelector ({selector}) does not select this workload's own pods "
                f"(labels {_labels_text(dict(pod_template.labels))}): the constraint counts other pods and does not "
                f"spread these",
                "make the labelSelector match the pod template's labels",
            )


@lint_rule("spread-selector-missing", "KPL202", Severity.warning,
           fix="add a labelSelector matching the pod template's labels",
           bad=NODEPOOL + deployment(ZONE_SPREAD.replace("          labelSelector: {matchLabels: {app: web}}\n", "")),
           good=NODEPOOL + deployment(ZONE_SPREAD))
def SELECTOR_MISSING(ctx: LintContext) -> Iterator[Hit]:
    """A spread constraint without labelSelector: it matches no pod, the constraint is a no-op.

    kube-scheduler treats a null labelSelector as selecting nothing: every domain counts 0, so the
    constraint never spreads anything (Karpenter before v0.33 treated it as match-all, so the two disagree).
    Name the pods to spread.
    """
    for doc, spec_path, pod_template in templates(ctx):
        for index, c in enumerate(pod_template.spread):
            if c.label_selector is None:
                yield Hit(
                    doc, f"{spec_path}.topologySpreadConstraints[{index}]",
                    "no labelSelector: a null selector matches no pod, so this constraint counts nothing and "
                    "spreads nothing",
                    "add a labelSelector matching the pod template's labels",
                )


def _has_spread(spec: object) -> bool:
    if not isinstance(spec, dict):
        return False
    if isinstance(spec.get("topologySpreadConstraints"), list) and spec["topologySpreadConstraints"]:
        return True
    affinity = spec.get("affinity")
    anti = affinity.get("podAntiAffinity") if isinstance(affinity, dict) else None
    if not isinstance(anti, dict):
        return False
    terms: list[object] = []
    required = anti.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, list):
        terms.extend(required)
    preferred = anti.get("preferredDuringSchedulingIgnoredDuringExecution")
    if isinstance(preferred, list):
        terms.extend(p.get("podAffinityTerm") for p in preferred if isinstance(p, dict))
    return any(isinstance(t, dict) and t.get("topologyKey") in _SPREAD_KEYS for t in terms)


def _operator_replicas(doc: Document) -> bool:
    """A prometheus-operator resource run as `spec.replicas` pods (not a PrometheusAgent in mode DaemonSet)."""
    spec = doc.body.get("spec")
    return is_operator_resource(doc) and not (isinstance(spec, dict) and spec.get("mode") == "DaemonSet")


@lint_rule("replicas-without-spread", "KPL301", Severity.warning,
           fix="add a topologySpreadConstraint on topology.kubernetes.io/zone",
           bad=NODEPOOL + deployment("", replicas=3),
           good=NODEPOOL + deployment(ZONE_SPREAD, replicas=3))
def REPLICAS_WITHOUT_SPREAD(ctx: LintContext) -> Iterator[Hit]:
    """A workload with 2+ replicas and neither spread nor anti-affinity on hostname or zone.

    Without a topologySpreadConstraint or pod anti-affinity on kubernetes.io/hostname or
    topology.kubernetes.io/zone, the scheduler and Karpenter pack replicas where it is cheapest: one node or
    zone failure takes all of them down. Replicas that all mount one ReadWriteOnce (or ReadWriteOncePod)
    claim are the exception: they can only run on one node (the volume attaches to one), so the finding says
    that instead, with what to change.
    """
    planned = Counter(p.origin for p in ctx.inventory.pods)  # replicas as planned: a HorizontalPodAutoscaler's too
    # Replicas sharing a ReadWriteOnce(Pod) claim can only run on one node: spreading them is the wrong advice.
    one_node = {c.origin: c for c in ctx.inventory.shared_claims}
    strimzi = _strimzi_replicas(ctx, planned)
    by_workload = Counter((p.origin, p.workload) for p in ctx.inventory.pods)
    fargate_only = _all_on_fargate(ctx)
    for doc, spec_path in ctx.pod_documents():
        spec = doc.body.get("spec")
        written = spec.get("replicas", 1) if isinstance(spec, LineDict) else 1
        if is_strimzi_resource(doc):
            yield from _strimzi_without_spread(ctx, doc, spec_path, strimzi)
            continue
        derived = ctx.derived_document(doc, spec_path)
        if derived is not None and derived.replicas_at:
            yield from _derived_without_spread(ctx, doc, spec_path, by_workload)
            continue
        if doc.kind in _REPLICATED:
            replicas = planned.get(doc.origin) or written
        elif _operator_replicas(doc):
            replicas = written  # per shard: the pods of all shards are planned, each shard's replicas spread
        else:
            continue
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 2:
            continue
        shared = one_node.get(doc.origin)
        if shared is not None:
            yield Hit(doc, "spec.replicas", shared.detail, SHARED_CLAIM_FIX)
            continue
        pod_spec = value_at(doc.body, spec_path)
        if pod_spec is None or _has_spread(pod_spec):  # None: the template is another's (a Rollout's workloadRef)
            continue
        if doc.origin in fargate_only:
            continue
        scaler = _autoscaler_of(ctx, doc) if written != replicas else ""
        # Replicas an autoscaler sets: the finding sits where the fix goes, the pod spec, not at an absent field.
        written_here = isinstance(spec, LineDict) and "replicas" in spec
        yield Hit(
            doc, "spec.replicas" if written_here or not scaler else spec_path,
            f"{replicas} replicas with neither a topologySpreadConstraint nor pod anti-affinity on hostname or zone: "
            f"all of them may land on one node or in one zone{scaler}",
            "add a topologySpreadConstraint on topology.kubernetes.io/zone (and kubernetes.io/hostname)",
        )


def _all_on_fargate(ctx: LintContext) -> set[Origin]:
    """The workloads (by origin) a Fargate profile takes every pod of, read in one pass over the pods (not a
    scan of every pod per workload): each runs on a node of its own, so "all on one node" cannot happen, and
    Fargate's scheduler places them in the profile's subnets itself (a spread constraint is not what decides
    their zones)."""
    profiles = ctx.inventory.fargate_profiles
    if not profiles:
        return set()
    on: dict[Origin, bool] = {}
    for p in ctx.inventory.pods:
        on[p.origin] = on.get(p.origin, True) and profile_for(profiles, p.namespace, p.labels, p.template.annotations) is not None
    return {origin for origin, all_on in on.items() if all_on}


def _autoscaler_of(ctx: LintContext, doc: Document) -> str:
    """` (replicas set by HorizontalPodAutoscaler NAME at FILE:LINE)` for a workload an HPA in the input scales."""
    for other in ctx.documents:
        if other.kind not in ("HorizontalPodAutoscaler", "ScaledObject") or other.namespace != doc.namespace:
            continue
        spec = other.body.get("spec")
        target = spec.get("scaleTargetRef") if isinstance(spec, dict) else None
        kind = (target.get("kind") or ("Deployment" if other.kind == "ScaledObject" else "")) if isinstance(
            target, dict) else ""
        if isinstance(target, dict) and kind == doc.kind and target.get("name") == doc.name:
            return f" (replicas set by {other.kind} {other.name} at {other.origin})"
    return ""


def _strimzi_without_spread(ctx: LintContext, doc: Document, spec_path: str,
                            strimzi: dict[Origin, dict[str, int]]) -> Iterator[Hit]:
    """Pods of a Kafka's pools, ZooKeeper, Connect: as planned, judged as Strimzi creates them; the template may
    not be written at all. Rack awareness spreads nothing: Strimzi 0.49 and later add only a node affinity on the
    rack key (strimzi/proposals 123 removed the preferred anti-affinity older operators added)."""
    if spec_path not in strimzi.get(doc.origin, {}):
        return
    replicas = strimzi[doc.origin][spec_path]
    replicas_path = spec_path.removesuffix("template.pod") + "replicas"
    if replicas < 2 or _has_spread(ctx.pod_spec(doc, spec_path)) or _has_spread(value_at(doc.body, spec_path)):
        return
    rack = rack_key(doc, spec_path, ctx.documents)
    racked = (f": rack awareness ({rack}) tells Kafka each pod's zone but does not spread the pods (Strimzi 0.49 "
              "and later add only a node affinity requiring the key; the preferred anti-affinity of older "
              "operators is gone)") if rack else ""
    yield Hit(
        doc, replicas_path,
        f"{replicas} replicas with neither a topologySpreadConstraint nor pod anti-affinity on hostname or zone in "
        f"template.pod{racked}; all of them may land on one node or in one zone",
        f"add topologySpreadConstraints on topology.kubernetes.io/zone (and kubernetes.io/hostname) to {spec_path}"
        + ("" if rack else _rack_fix(doc, spec_path)),
    )


def _rack_fix(doc: Document, spec_path: str) -> str:
    """Where rack awareness is set for these pods (so that Kafka places partition replicas by zone too): a Kafka's
    brokers (its KafkaNodePools' too) on the Kafka's spec.kafka.rack, Connect and MirrorMaker 2 on their own
    spec.rack; ZooKeeper has none."""
    if spec_path == "spec.zookeeper.template.pod":
        return ""
    if doc.kind == "KafkaNodePool":
        return ", and set spec.kafka.rack.topologyKey on the Kafka resource of this pool's cluster"
    if spec_path.startswith("spec.kafka."):
        return ", and set spec.kafka.rack.topologyKey"
    return ", and set spec.rack.topologyKey"


def _derived_without_spread(ctx: LintContext, doc: Document, spec_path: str,
                            by_workload: Counter[tuple[Origin, str]]) -> Iterator[Hit]:
    """A CloudNativePG Cluster's instances, an ECK node set: the pods as planned, spread as the operator writes
    them (its default anti-affinity included), reported where the resource sets how many they are."""
    derived = ctx.derived_document(doc, spec_path)
    if derived is None:
        return
    replicas = by_workload.get((doc.origin, f"{derived.kind}/{derived.name}"), 0)
    if replicas >= 2 and not _has_spread(ctx.pod_spec(doc, spec_path)):
        yield Hit(doc, derived.replicas_at,
                  f"{replicas} replicas with neither a topologySpreadConstraint nor pod anti-affinity on hostname or "
                  "zone: all of them may land on one node or in one zone",
                  derived.spread_fix or "add a topologySpreadConstraint on topology.kubernetes.io/zone")


def _strimzi_replicas(ctx: LintContext, planned: Counter[Origin]) -> dict[Origin, dict[str, int]]:
    """Per Strimzi resource document: where each derived pod template is written -> its most planned pods."""
    by_workload = Counter((p.origin, p.workload) for p in ctx.inventory.pods)
    out: dict[Origin, dict[str, int]] = {}
    for derived in ctx.inventory.derived:
        for workload, at in derived.pod_specs:
            count = by_workload.get((derived.origin, workload), 0)
            paths = out.setdefault(derived.origin, {})
            paths[at] = max(paths.get(at, 0), count)
    return {origin: paths for origin, paths in out.items() if planned.get(origin)}


RULES = (SELECTOR_MISSES_OWN_PODS, SELECTOR_MISSING, REPLICAS_WITHOUT_SPREAD)
