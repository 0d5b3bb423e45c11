"""Preferred pod (anti-)affinity: soft in both engines, enforced first and relaxed in Karpenter's order by
the Karpenter simulation (karpenter-scheduler.md §9.4, §10), a weighted penalty in the optimiser."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from planner_helpers import POOL, bound_pod, existing_node, plan_text
from planner_helpers import deployment as base_deployment

BOTH = pytest.mark.parametrize("engine", ["optimal", "karpenter"])
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def deployment(name: str, replicas: int, cpu: str = "100m", affinity: str = "") -> str:
    """A Deployment whose pod spec has `affinity` (lines indented under `affinity:`)."""
    return base_deployment(name, replicas, cpu=cpu, extra="      affinity:\n" + affinity)


def preferred(kind: str, *terms: tuple[int, str, str]) -> str:
    """`kind` (podAffinity / podAntiAffinity) with preferred terms (weight, topology key, app label)."""
    lines = [f"        {kind}:", "          preferredDuringSchedulingIgnoredDuringExecution:"]
    for weight, key, app in terms:
        lines.append(f"          - weight: {weight}")
        lines.append(f"            podAffinityTerm: {{topologyKey: {key}, labelSelector: {{matchLabels: {{app: {app}}}}}}}")
    return "\n".join(lines) + "\n"


def node_preference(weight: int, zone: str) -> str:
    return f"""        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: {weight}
            preference: {{matchExpressions: [{{key: {ZONE}, operator: In, values: [{zone}]}}]}}
"""


def zones_of(plan: object, app: str) -> Counter[str]:
    zone = {n.name: n.zone for n in plan.nodes}  # type: ignore[attr-defined]
    return Counter(zone[p.node] for p in plan.pods if p.node and p.key.startswith(f"default/{app}-"))  # type: ignore[attr-defined]


def nodes_of(plan: object, app: str) -> Counter[str]:
    return Counter(p.node for p in plan.pods if p.node and p.key.startswith(f"default/{app}-"))  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------ Karpenter engine
def test_karpenter_gives_each_replica_a_node_for_a_preferred_hostname_anti_affinity(tmp_path: Path) -> None:
    # Karpenter enforces the preference first: three tiny replicas, three nodes.
    web = deployment("web", 3, affinity=preferred("podAntiAffinity", (50, HOST, "web")))
    plan = plan_text(tmp_path, POOL + web, engine="karpenter")
    assert plan.summary.scheduled == 3
    assert plan.summary.new_nodes == 3
    assert max(nodes_of(plan, "web").values()) == 1


def test_karpenter_relaxes_a_preferred_anti_affinity_rather_than_leave_pods_pending(tmp_path: Path) -> None:
    # The pool's CPU limit allows one node (Karpenter charges the largest candidate, 4 CPUs): the later
    # replicas drop the preference and share it.
    pool = POOL.replace("spec:\n  template:", 'spec:\n  limits: {cpu: "4"}\n  template:', 1)
    web = deployment("web", 3, affinity=preferred("podAntiAffinity", (50, HOST, "web")))
    plan = plan_text(tmp_path, pool + web, engine="karpenter")
    assert plan.summary.scheduled == 3 and not plan.unschedulable
    assert plan.summary.new_nodes == 1


EXISTING_ROOM = existing_node("node-1", "zone-a", cpu="4") + existing_node("node-2", "zone-b", cpu="4")


@pytest.mark.parametrize("key", [HOST, ZONE])
def test_karpenter_launches_a_node_for_a_preferred_anti_affinity_existing_nodes_could_break(
        tmp_path: Path, key: str) -> None:
    # Two existing nodes (two zones) with room for everything; Karpenter tries the preference as a
    # requirement first: one replica per existing node, then a new node for the third.
    web = deployment("web", 3, affinity=preferred("podAntiAffinity", (50, key, "web")))
    plan = plan_text(tmp_path, POOL + EXISTING_ROOM + web, engine="karpenter")
    assert plan.summary.new_nodes == 1
    assert max(nodes_of(plan, "web").values()) == 1


@pytest.mark.parametrize("key", [HOST, ZONE])
def test_optimiser_keeps_a_preferred_anti_affinity_on_existing_nodes_and_spreads_there(
        tmp_path: Path, key: str) -> None:
    # Dropping preferences, cost first: no new node. Then the preference: 2/1 over the two nodes (zones)
    # rather than 3/0. (Honouring them, the plan launches a node as Karpenter does.)
    web = deployment("web", 3, affinity=preferred("podAntiAffinity", (50, key, "web")))
    honoured = plan_text(tmp_path, POOL + EXISTING_ROOM + web)
    karpenter = plan_text(tmp_path, POOL + EXISTING_ROOM + web, engine="karpenter")
    assert honoured.summary.hourly_cost == karpenter.summary.hourly_cost > 0
    plan = plan_text(tmp_path, POOL + EXISTING_ROOM + web, preferences="drop")
    assert plan.summary.new_nodes == 0 and plan.summary.hourly_cost == 0
    assert sorted(nodes_of(plan, "web").values()) == [1, 2]


def test_karpenter_does_not_track_preferred_anti_affinity_inversely(tmp_path: Path) -> None:
    # `big` (placed first: more CPU) prefers no `small` pod on its node, but only `big`'s own placement
    # is constrained: `small` joins big's node. With a required term, `small` would need a node of its own.
    big = deployment("big", 1, cpu="1", affinity=preferred("podAntiAffinity", (100, HOST, "small")))
    small = deployment("small", 1)
    plan = plan_text(tmp_path, POOL + big + small, engine="karpenter")
    assert plan.summary.scheduled == 2
    assert plan.summary.new_nodes == 1
    required = big.replace("preferredDuringSchedulingIgnoredDuringExecution:\n          - weight: 100\n"
                           "            podAffinityTerm:", "requiredDuringSchedulingIgnoredDuringExecution:\n          -")
    plan = plan_text(tmp_path, POOL + required + small, engine="karpenter")
    assert plan.summary.new_nodes == 2


def test_karpenter_keeps_a_preferred_self_affinity_in_the_zone_its_first_replica_opened(tmp_path: Path) -> None:
    # The first replica goes to the existing node (zone-c), which opens that zone (first-pod rule); the
    # others follow it there on new nodes, although zone-a is as cheap and first in order.
    pool = POOL.replace("requirements: []", "requirements: [{key: node.kubernetes.io/instance-type, "
                        "operator: In, values: [small]}]")
    web = deployment("web", 4, cpu="1", affinity=preferred("podAffinity", (10, ZONE, "web")))
    plan = plan_text(tmp_path, pool + existing_node("node-c", "zone-c", cpu="1") + web, engine="karpenter")
    assert plan.summary.scheduled == 4
    assert plan.summary.new_nodes == 3  # one 1-CPU replica per 'small' node
    assert zones_of(plan, "web") == Counter({"zone-c": 4})


RELAXATION_CLUSTER = (existing_node("node-a", "zone-a", cpu="200m") + existing_node("node-b", "zone-b")
                      + bound_pod("a", "a", "node-a") + bound_pod("c", "c", "node-a") + bound_pod("b", "b", "node-b"))


def test_karpenter_drops_preferred_pod_affinity_before_pod_anti_affinity(tmp_path: Path) -> None:
    # Near `a` (zone-a) and away from `c` (also zone-a) cannot both hold. The lighter affinity term
    # is dropped first all the same: the pod stays away from zone-a.
    pod = deployment("web", 1, affinity=preferred("podAffinity", (1, ZONE, "a"))
                     + preferred("podAntiAffinity", (100, ZONE, "c")))
    plan = plan_text(tmp_path, POOL + RELAXATION_CLUSTER + pod, engine="karpenter")
    assert plan.summary.scheduled == 1
    assert "zone-a" not in zones_of(plan, "web")


def test_karpenter_drops_preferred_pod_anti_affinity_before_preferred_node_affinity(tmp_path: Path) -> None:
    # Away from `b` (zone-b) but preferably on a zone-b node: the pod anti-affinity term goes first.
    pod = deployment("web", 1, affinity=preferred("podAntiAffinity", (100, ZONE, "b")) + node_preference(1, "zone-b"))
    plan = plan_text(tmp_path, POOL + RELAXATION_CLUSTER + pod, engine="karpenter")
    assert plan.summary.scheduled == 1
    assert zones_of(plan, "web") == Counter({"zone-b": 1})


def test_karpenter_drops_the_heaviest_preferred_pod_affinity_term_first(tmp_path: Path) -> None:
    # Near `a` (zone-a, weight 100) and near `b` (zone-b, weight 10): Karpenter removes the heaviest term
    # first, so the lighter one decides.
    pod = deployment("web", 1, affinity=preferred("podAffinity", (100, ZONE, "a"), (10, ZONE, "b")))
    plan = plan_text(tmp_path, POOL + RELAXATION_CLUSTER + pod, engine="karpenter")
    assert zones_of(plan, "web") == Counter({"zone-b": 1})


# ------------------------------------------------------------------------------------ both engines
@BOTH
def test_preferred_affinity_to_an_existing_pods_zone_lands_there(tmp_path: Path, engine: str) -> None:
    # Every zone costs the same: the pods join `db`'s zone (its node is full).
    cluster = existing_node("db-node", "zone-b") + bound_pod("db", "db", "db-node")
    web = deployment("web", 2, cpu="1", affinity=preferred("podAffinity", (50, ZONE, "db")))
    plan = plan_text(tmp_path, POOL + cluster + web, engine=engine)
    assert plan.summary.scheduled == 2
    assert zones_of(plan, "web") == Counter({"zone-b": 2})


def test_optimiser_puts_cost_before_a_preferred_zone_then_fills_that_zone_first(tmp_path: Path) -> None:
    # Room for one replica in db's zone (node-2) and for two elsewhere (node-1): no new node, and one
    # replica meets the preference. Karpenter would launch a zone-b node for the second replica.
    cluster = (existing_node("node-1", "zone-a", cpu="2") + existing_node("node-2", "zone-b", cpu="1")
               + existing_node("db-node", "zone-b") + bound_pod("db", "db", "db-node"))
    web = deployment("web", 2, cpu="1", affinity=preferred("podAffinity", (50, ZONE, "db")))
    plan = plan_text(tmp_path, POOL + cluster + web, preferences="drop")
    assert plan.summary.new_nodes == 0
    assert zones_of(plan, "web") == Counter({"zone-a": 1, "zone-b": 1})
    karpenter = plan_text(tmp_path, POOL + cluster + web, engine="karpenter")
    assert karpenter.summary.new_nodes == 1
    assert zones_of(karpenter, "web") == Counter({"zone-b": 2})
    # The replica in zone-a misses the preference: the plan says so, and what Karpenter's plan costs.
    (warning,) = [w for w in plan.warnings if "preferred pod" in w]
    assert warning.endswith(": Deployment/web: preferred pod affinity (weight 50, topologyKey topology.kubernetes.io/zone, "
                            "selector app In [db]) is not honoured for 1 of 2 pod(s): no pod it selects shares their "
                            "topology.kubernetes.io/zone; honouring it as Karpenter's plan does costs $0.4000/h "
                            "(+$0.4000/h)")
    assert not any("preferred pod" in w for w in karpenter.warnings)


@BOTH
def test_preferred_zone_and_hostname_terms_together(tmp_path: Path, engine: str) -> None:
    # Near `db` (zone-b) and one replica per node. Karpenter launches a node per replica in zone-b; a plan
    # that drops preferences packs them onto one node (cost first) and keeps the zone the affinity term prefers.
    cluster = existing_node("db-node", "zone-b") + bound_pod("db", "db", "db-node")
    web = deployment("web", 3, affinity=preferred("podAffinity", (50, ZONE, "db"))
                     + preferred("podAntiAffinity", (50, HOST, "web")))
    plan = plan_text(tmp_path, POOL + cluster + web, engine=engine, preferences="drop")
    assert plan.summary.scheduled == 3
    assert zones_of(plan, "web") == Counter({"zone-b": 3})
    assert plan.summary.new_nodes == (1 if engine == "optimal" else 3)
    dropped = [w.split(": ", 2)[2] for w in plan.warnings if "preferred pod" in w]
    if engine == "karpenter":
        assert dropped == []
    else:  # the hostname term, for all three replicas on the one node
        (warning,) = dropped
        assert warning.startswith("preferred pod anti-affinity (weight 50, topologyKey kubernetes.io/hostname, "
                                  "selector app In [web]) is not honoured for 3 of 3 pod(s): ")


@BOTH
def test_preferred_terms_no_plan_can_meet_never_leave_pods_pending(tmp_path: Path, engine: str) -> None:
    # Affinity to a pod that does not exist, anti-affinity to pods in every zone (and on every node).
    cluster = "".join(existing_node(f"n-{z}", z) + bound_pod(f"x-{z}", "x", f"n-{z}")
                      for z in ("zone-a", "zone-b", "zone-c"))
    web = deployment("web", 3, affinity=preferred("podAffinity", (100, ZONE, "ghost"), (60, HOST, "ghost"))
                     + preferred("podAntiAffinity", (100, ZONE, "x"), (30, HOST, "web")))
    plan = plan_text(tmp_path, POOL + cluster + web, engine=engine)
    assert plan.exit_code == 0
    assert plan.summary.scheduled == 3 and not plan.unschedulable
    # Nor are they reported as dropped: no plan could honour them.
    assert not any("ghost" in w or "selector app In [x]" in w for w in plan.warnings)


@BOTH
def test_an_unschedulable_pods_reasons_come_from_the_relaxed_pod(tmp_path: Path, engine: str) -> None:
    # Too big for any instance type: the reasons name resources, not the preferences it also carries.
    web = deployment("web", 1, cpu="16", affinity=preferred("podAntiAffinity", (50, HOST, "web"))
                     + preferred("podAffinity", (50, ZONE, "ghost")))
    plan = plan_text(tmp_path, POOL + web, engine=engine)
    (failure,) = plan.unschedulable
    assert not any("affinity" in r for r in failure.reasons)
    assert any("cpu" in r or "resources" in r for r in failure.reasons)


@pytest.mark.parametrize(("order", "nodes"), [((ZONE, HOST), 2), ((HOST, ZONE), 1)])
def test_karpenter_drops_schedule_anyway_spreads_in_its_swap_remove_order(
        tmp_path: Path, order: tuple[str, str], nodes: int) -> None:
    # New nodes only in zone-a; a full zone-b node holds the zone minimum at 0, so the second replica
    # breaks the zone spread. Karpenter removes the first ScheduleAnyway constraint by moving the last
    # one into its place: with [zone, hostname] the hostname spread survives (a second node); with
    # [hostname, zone] the zone spread survives, fails again and goes too (one node).
    pool = POOL.replace("requirements: []", f"requirements: [{{key: {ZONE}, operator: In, values: [zone-a]}}]")
    spreads = "".join(f"""      - {{maxSkew: 1, topologyKey: {key}, whenUnsatisfiable: ScheduleAnyway,
         labelSelector: {{matchLabels: {{app: web}}}}}}
""" for key in order)
    web = deployment("web", 2).replace("      affinity:\n", "      topologySpreadConstraints:\n" + spreads)
    cluster = existing_node("node-b", "zone-b") + bound_pod("other", "other", "node-b")
    plan = plan_text(tmp_path, pool + cluster + web, engine="karpenter")
    assert plan.summary.scheduled == 2
    assert plan.summary.new_nodes == nodes


def test_optimiser_breaks_a_cost_tie_with_the_preference(tmp_path: Path) -> None:
    # Every replica needs a node of its own, so any plan costs the same three nodes; only the preferred
    # zone anti-affinity tells plans apart, and the optimiser's plan meets it: one replica per zone.
    affinity = f"""        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {{topologyKey: {HOST}, labelSelector: {{matchLabels: {{app: web}}}}}}
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 50
            podAffinityTerm: {{topologyKey: {ZONE}, labelSelector: {{matchLabels: {{app: web}}}}}}
"""
    plan = plan_text(tmp_path, POOL + deployment("web", 3, affinity=affinity))
    assert plan.summary.new_nodes == 3
    assert sorted(zones_of(plan, "web").values()) == [1, 1, 1]


def test_a_self_affinity_split_over_two_free_nodes_is_reported_for_both_replicas(tmp_path: Path) -> None:
    # Two replicas prefer each other's zone; two existing nodes in different zones have room for one each.
    # Free beats together: the optimiser splits them, and both miss the term (neither finds the other in
    # its zone). Karpenter keeps them together by launching a node, which the warning prices.
    cluster = existing_node("node-a", "zone-a", cpu="1") + existing_node("node-b", "zone-b", cpu="1")
    web = deployment("web", 2, cpu="1", affinity=preferred("podAffinity", (20, ZONE, "web")))
    plan = plan_text(tmp_path, POOL + cluster + web, preferences="drop")
    assert plan.summary.new_nodes == 0
    assert zones_of(plan, "web") == Counter({"zone-a": 1, "zone-b": 1})
    (warning,) = [w for w in plan.warnings if "preferred pod" in w]
    assert warning.endswith(": Deployment/web: preferred pod affinity (weight 20, topologyKey "
                            "topology.kubernetes.io/zone, selector app In [web]) is not honoured for 2 of 2 pod(s): "
                            "no pod it selects shares their topology.kubernetes.io/zone; honouring it as Karpenter's "
                            "plan does costs $0.4000/h (+$0.4000/h)")
    # One replica alone meets its own term (the first pod): nothing to report.
    single = plan_text(tmp_path, POOL + cluster + deployment("web", 1, cpu="1",
                                                             affinity=preferred("podAffinity", (20, ZONE, "web"))))
    assert not any("preferred pod" in w for w in single.warnings)
