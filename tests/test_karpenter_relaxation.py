"""The Karpenter engine's requirements per attempt (karpenter-scheduler.md §3, §9.4, §10): required
node-affinity terms tried one at a time (term[0] first, dropped while another follows, before any
preference), and the first-pod rule of pod affinity counted within the domains the pod may use."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from planner_helpers import POOL, bound_pod, existing_node, plan_text
from planner_helpers import deployment as base_deployment

ZONE = "topology.kubernetes.io/zone"
TYPE = "node.kubernetes.io/instance-type"

# One instance type, zone-a dearer than zone-b and zone-c.
ZONE_PRICED = """
apiVersion: karpplan.io/v1alpha1
kind: InstanceCatalog
metadata: {name: test}
zones: [zone-a, zone-b, zone-c]
instanceTypes:
  - name: small
    arch: amd64
    os: linux
    capacity: {cpu: "2", memory: 2Gi, pods: "5"}
    allocatable: {cpu: 1900m, memory: 2038Mi, pods: "5"}
    offerings:
      - {zone: zone-a, capacityType: on-demand, price: 0.9}
      - {zone: zone-b, capacityType: on-demand, price: 0.4}
      - {zone: zone-c, capacityType: on-demand, price: 0.4}
"""


def deployment(name: str, replicas: int, spec: str, cpu: str = "100m") -> str:
    """A Deployment whose pod spec carries `spec` (YAML lines indented for the pod spec)."""
    return base_deployment(name, replicas, cpu=cpu, extra=spec)


def required_terms(*terms: tuple[str, str]) -> str:
    """Required node affinity with one ORed term per (key, value)."""
    lines = ["      affinity:", "        nodeAffinity:", "          requiredDuringSchedulingIgnoredDuringExecution:",
             "            nodeSelectorTerms:"]
    for key, value in terms:
        lines.append(f"            - matchExpressions: [{{key: {key}, operator: In, values: [{value}]}}]")
    return "\n".join(lines) + "\n"


def zones_of(plan: object, app: str) -> Counter[str]:
    zone = {n.name: n.zone for n in plan.nodes}  # type: ignore[attr-defined]
    return Counter(zone[p.node] for p in plan.pods if p.node and p.key.startswith(f"default/{app}-"))  # type: ignore[attr-defined]


def new_types(plan: object) -> Counter[str]:
    return Counter(n.instance_type for n in plan.nodes if n.new)  # type: ignore[attr-defined]


# ------------------------------------------------------------------------ required node-affinity terms
def test_karpenter_launches_the_first_terms_instance_type_though_the_second_is_cheaper(tmp_path: Path) -> None:
    # term[0] asks for `large` (0.7), term[1] for `small` (0.4): Karpenter tries term[0] alone first.
    web = deployment("web", 2, required_terms((TYPE, "large"), (TYPE, "small")))
    plan = plan_text(tmp_path, POOL + web, engine="karpenter")
    assert plan.summary.scheduled == 2
    assert new_types(plan) == Counter({"large": 1})


def test_karpenter_launches_in_the_first_terms_zone_though_the_second_is_cheaper(tmp_path: Path) -> None:
    web = deployment("web", 2, required_terms((ZONE, "zone-a"), (ZONE, "zone-b")))
    plan = plan_text(tmp_path, POOL + web, catalog=ZONE_PRICED, engine="karpenter")
    assert plan.summary.scheduled == 2
    assert zones_of(plan, "web") == Counter({"zone-a": 2})


@pytest.mark.parametrize("first", ["zone-x", "zone-a"])
def test_karpenter_falls_back_to_the_next_term_when_the_first_cannot_launch(tmp_path: Path, first: str) -> None:
    # zone-x has no offering; a zone-a pod is refused by the pool's requirements: either way the
    # relaxation drops term[0] and the pods land per term[1].
    pool = POOL.replace("requirements: []", f"requirements: [{{key: {ZONE}, operator: NotIn, values: [zone-a]}}]")
    web = deployment("web", 3, required_terms((ZONE, first), (ZONE, "zone-c")))
    plan = plan_text(tmp_path, pool + web, engine="karpenter")
    assert plan.summary.scheduled == 3 and not plan.unschedulable
    assert zones_of(plan, "web") == Counter({"zone-c": 3})


def test_karpenter_drops_a_required_term_before_a_preferred_node_affinity(tmp_path: Path) -> None:
    # The preferred zone-c contradicts term[0] (zone-a) but not term[1] (zone-b or zone-c): Karpenter
    # relaxes the required term first and keeps the preference.
    spec = required_terms((ZONE, "zone-a"), (ZONE, "zone-b")).replace("[zone-b]", "[zone-b, zone-c]")
    spec += f"""          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 10
            preference: {{matchExpressions: [{{key: {ZONE}, operator: In, values: [zone-c]}}]}}
"""
    plan = plan_text(tmp_path, POOL + deployment("web", 2, spec), engine="karpenter")
    assert plan.summary.scheduled == 2
    assert zones_of(plan, "web") == Counter({"zone-c": 2})


def test_karpenter_skips_an_existing_node_only_a_later_term_admits(tmp_path: Path) -> None:
    # node-1 (zone-b, room to spare) matches term[1] only. Karpenter checks existing nodes against the
    # same requirements as new ones, so the first attempt (term[0], zone-a) launches a node.
    web = deployment("web", 2, required_terms((ZONE, "zone-a"), (ZONE, "zone-b")))
    plan = plan_text(tmp_path, POOL + existing_node("node-1", "zone-b", cpu="4") + web, engine="karpenter")
    assert plan.summary.scheduled == 2
    assert plan.summary.new_nodes == 1
    assert zones_of(plan, "web") == Counter({"zone-a": 2})


def test_karpenter_spread_minimum_is_taken_over_the_terms_own_zones(tmp_path: Path) -> None:
    # A zone spread (maxSkew 1): on the first attempt the pod's podDomains are term[0]'s (zone-a alone),
    # so the minimum is zone-a's own count and every replica fits there; the other zones never hold it.
    spec = required_terms((ZONE, "zone-a"), (ZONE, "zone-b")).replace("[zone-b]", "[zone-b, zone-c]")
    spec += f"""      topologySpreadConstraints:
      - {{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}}}
"""
    plan = plan_text(tmp_path, POOL + deployment("web", 3, spec), engine="karpenter")
    assert plan.summary.scheduled == 3
    assert zones_of(plan, "web") == Counter({"zone-a": 3})


# ------------------------------------------------------------------------ pod affinity: the first pod
CACHE_AFFINITY = f"""        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {{topologyKey: {ZONE}, labelSelector: {{matchLabels: {{app: cache}}}}}}
"""


def self_affine(zones: str) -> str:
    """Required zone self-affinity of `cache`, restricted to these zones by required node affinity."""
    return required_terms((ZONE, zones)) + CACHE_AFFINITY


def test_karpenter_opens_a_zone_when_the_only_matching_pod_is_in_a_zone_the_pod_cannot_use(tmp_path: Path) -> None:
    # A `cache` pod runs in zone-b; the pending replicas may only use zone-a or zone-c. Karpenter counts
    # matching pods within the pod's own domains (none), so the first replica opens a zone and the others
    # join it.
    cluster = existing_node("node-1", "zone-b", cpu="1") + bound_pod("old-cache", "cache", "node-1")
    plan = plan_text(tmp_path, POOL + cluster + deployment("cache", 3, self_affine("zone-a, zone-c"), cpu="1"),
                     catalog=ZONE_PRICED, engine="karpenter")
    assert plan.summary.scheduled == 3 and not plan.unschedulable
    assert zones_of(plan, "cache") == Counter({"zone-c": 3})


def test_karpenter_joins_a_matching_pod_in_a_zone_the_pod_may_use(tmp_path: Path) -> None:
    # The matching pod is in zone-a this time, which the replicas may use: they must join it there,
    # though zone-c is cheaper.
    cluster = existing_node("node-1", "zone-a", cpu="100m") + bound_pod("old-cache", "cache", "node-1")
    plan = plan_text(tmp_path, POOL + cluster + deployment("cache", 3, self_affine("zone-a, zone-c"), cpu="1"),
                     catalog=ZONE_PRICED, engine="karpenter")
    assert plan.summary.scheduled == 3
    assert zones_of(plan, "cache") == Counter({"zone-a": 3})


def test_karpenter_first_pod_rule_follows_the_attempts_term(tmp_path: Path) -> None:
    # The matching pod is in zone-b, which only term[1] allows: on the first attempt (term[0], zone-a)
    # no matching pod is within the pod's domains, so it opens zone-a.
    cluster = existing_node("node-1", "zone-b", cpu="1") + bound_pod("old-cache", "cache", "node-1")
    spec = required_terms((ZONE, "zone-a"), (ZONE, "zone-b")) + CACHE_AFFINITY
    plan = plan_text(tmp_path, POOL + cluster + deployment("cache", 2, spec), engine="karpenter")
    assert plan.summary.scheduled == 2
    assert zones_of(plan, "cache") == Counter({"zone-a": 2})
