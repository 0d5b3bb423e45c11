"""`--preferences honour|drop` (issue 24, item 1): by default the optimal plan keeps every preference that
Karpenter keeps, so its saving is quoted like for like; `drop` plans without them and says what that saves.

The shape is karpenter-blueprints' `ha-az-nodes` (ScheduleAnyway spreads on hostname and zone): Karpenter
launches a node per replica, so an honest plan does too, instead of one big node for every replica.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from karpplan.catalog import load_catalog
from karpplan.model.build import load_inventory
from karpplan.model.enforced_preferences import enforce_preferences
from karpplan.model.pods import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY
from karpplan.plan import Plan, PreferencePolicy
from karpplan.planner import PlanOptions, make_plan

from planner_helpers import FAKE_CATALOG, POOL, deployment

SPREADS = """\
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway,
         labelSelector: {matchLabels: {app: ha}}}
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway,
         labelSelector: {matchLabels: {app: ha}}}
"""
HA = POOL + deployment("ha", 6, cpu="500m", extra=SPREADS)


def _plan(tmp_path: Path, manifests: str, preferences: PreferencePolicy = "honour", engine: str = "optimal") -> Plan:
    path = tmp_path / "manifests.yaml"
    path.write_text(textwrap.dedent(manifests))
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(textwrap.dedent(FAKE_CATALOG))
    inventory = load_inventory([str(path)])
    options = PlanOptions(engine=engine, time_limit=5.0, preferences=preferences)  # type: ignore[arg-type]
    return make_plan(inventory, load_catalog(None, str(catalog)), options)


def _pods_per_node(plan: Plan) -> Counter[str]:
    return Counter(p.node for p in plan.pods if p.node)


def test_honour_keeps_the_spreads_karpenter_keeps(tmp_path: Path) -> None:
    plan = _plan(tmp_path, HA)
    karpenter = _plan(tmp_path, HA, engine="karpenter")
    assert set(_pods_per_node(plan).values()) == {1}, "one replica per node, as Karpenter launches them"
    zones = Counter(n.zone for n in plan.nodes if n.new)
    assert sorted(zones.values()) == [2, 2, 2]
    assert plan.summary.hourly_cost == karpenter.summary.hourly_cost
    assert plan.summary.preferences is not None
    assert plan.summary.preferences.to_document() == {"policy": "honour", "kept": 2, "relaxed": 0, "relaxedPreferences": []}
    assert not any("is not honoured" in w for w in plan.warnings)


def test_drop_plans_without_them_and_says_what_that_saves(tmp_path: Path) -> None:
    honour = _plan(tmp_path, HA)
    drop = _plan(tmp_path, HA, "drop")
    assert drop.summary.hourly_cost < honour.summary.hourly_cost
    assert max(_pods_per_node(drop).values()) > 1
    outcome = drop.summary.preferences
    assert outcome is not None and outcome.policy == "drop"
    assert outcome.honoured_cost == honour.summary.hourly_cost
    assert "dropping them saves $" in outcome.describe(drop.summary.hourly_cost)
    assert drop.to_document()["summary"]["preferences"]["honouredHourlyCost"] == round(honour.summary.hourly_cost, 6)


def test_a_preference_karpenter_must_relax_stays_a_preference(tmp_path: Path) -> None:
    # Two nodes at most: Karpenter relaxes the hostname spread for the third and fourth replica, so
    # must the plan, or it would leave them out.
    limited = POOL.replace("      requirements: []", "      requirements: []\n  limits: {nodes: 2}")
    plan = _plan(tmp_path, limited + deployment("ha", 4, cpu="500m", extra=SPREADS))
    assert plan.summary.scheduled == 4 and not plan.unschedulable
    outcome = plan.summary.preferences
    assert outcome is not None and outcome.relaxed, "the relaxed preference is named"
    assert all("Deployment/ha: preferred spread (ScheduleAnyway" in r for r in outcome.relaxed)
    assert "relaxed in Karpenter's plan: " in outcome.describe(plan.summary.hourly_cost)


def test_no_preferences_no_policy_line(tmp_path: Path) -> None:
    plan = _plan(tmp_path, POOL + deployment("plain", 3))
    assert plan.summary.preferences is None
    assert plan.to_document()["summary"]["preferences"] is None


def test_kept_preferences_become_their_required_forms(tmp_path: Path) -> None:
    anti = """\
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 50
            preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app: ha}}
""" + SPREADS
    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(deployment("ha", 2, extra=anti)))
    pods = load_inventory([str(path)]).pods
    template = pods[0].template
    node_pref = template.affinity.preferred[0]
    anti_term = template.pod_anti_affinity.preferred[0].term
    zone_spread = template.spread[1]
    kept = {id(template): {id(node_pref), id(anti_term), id(zone_spread)}}
    enforced, count = enforce_preferences(pods, kept)
    assert count == 3
    new = enforced[0].template
    assert enforced[1].template is new, "replicas keep sharing one template (one group)"
    assert [c.when_unsatisfiable for c in new.spread] == [SCHEDULE_ANYWAY, DO_NOT_SCHEDULE]
    assert new.pod_anti_affinity.required == (anti_term,) and not new.pod_anti_affinity.preferred
    assert new.affinity.node_selector.matches({"disk": "ssd"}) and not new.affinity.node_selector.matches({})
    assert not new.affinity.preferred


def test_a_cluster_without_nodepools_has_no_karpenter_baseline(tmp_path: Path) -> None:
    # Pods on an existing node only: no NodePool, so no Karpenter plan to compare with (not "Karpenter: 0").
    node = """
---
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {kubernetes.io/hostname: node-1, topology.kubernetes.io/zone: zone-a}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
"""
    plan = _plan(tmp_path, node + deployment("web", 2))
    assert plan.summary.scheduled == 2
    assert plan.summary.karpenter_cost is None
    assert plan.to_document()["summary"]["karpenter"] is None


def test_a_relaxed_hostname_spread_says_a_new_node_is_the_emptiest_domain(tmp_path: Path) -> None:
    plan = _plan(tmp_path, HA, "drop")
    spread = [w for w in plan.warnings if "preferred spread" in w and "kubernetes.io/hostname" in w]
    assert spread and all("matching pods, where a new node would hold 0" in w for w in spread)


def test_honour_simulates_karpenter_once_and_quotes_its_own_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Karpenter's plan keeps every preference it kept, so it is already a plan of the problem with them
    # required: carried over, not simulated again (half the simulation time of a large plan), and the
    # baseline quoted beside the optimal plan is the very plan `--engine karpenter` shows.
    import karpplan.engines.karpenter_simulation as simulation

    runs: list[int] = []
    real = simulation.solve_karpenter

    def counted(*args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(simulation, "solve_karpenter", counted)
    manifests = HA + deployment("web", 5, cpu="700m")
    plan = _plan(tmp_path, manifests)
    assert len(runs) == 1
    karpenter = _plan(tmp_path, manifests, engine="karpenter")
    assert plan.summary.preferences is not None and plan.summary.preferences.kept == 2
    assert plan.summary.karpenter_cost == karpenter.summary.hourly_cost
    assert plan.summary.karpenter_new_nodes == karpenter.summary.new_nodes
    assert plan.summary.karpenter_batches == karpenter.summary.batches
    assert plan.summary.scheduled == 11 and plan.summary.hourly_cost <= karpenter.summary.hourly_cost


def test_a_plan_is_carried_over_only_onto_nodes_the_enforced_pods_may_use(tmp_path: Path) -> None:
    from karpplan.engines.karpenter_simulation import solve_karpenter
    from karpplan.planner import prepare
    from karpplan.preference_policy import carried_over
    from karpplan.verify import verify

    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(HA))
    inventory = load_inventory([str(path)])
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(textwrap.dedent(FAKE_CATALOG))
    cat = load_catalog(None, str(catalog))
    before = prepare(inventory, cat).problem
    greedy, _ = solve_karpenter(before, time_limit=5.0)
    template = inventory.pending[0].template
    enforced, _ = enforce_preferences(inventory.pods, {id(template): {id(c) for c in template.spread}})
    after = prepare(replace(inventory, pods=enforced), cat).problem
    carried = carried_over(greedy, after)
    assert carried is not None and not verify(after, carried)
    assert [(n.name, n.option and n.option.key, [p.key for _, p in n.pods]) for n in carried.nodes] == \
        [(n.name, n.option and n.option.key, [p.key for _, p in n.pods]) for n in greedy.nodes]
    assert all(g is after.groups[g.index] for n in carried.nodes for g, _ in n.pods)
    # A pod whose enforced node affinity rules out the zone Karpenter chose cannot be carried over.
    zone = greedy.nodes[0].option.zone if greedy.nodes[0].option else ""
    narrowed = textwrap.dedent(HA).replace("      topologySpreadConstraints:",
                                           f"      nodeSelector: {{topology.kubernetes.io/zone: {zone}}}\n"
                                           "      topologySpreadConstraints:")
    path.write_text(narrowed)
    assert carried_over(greedy, prepare(load_inventory([str(path)]), cat).problem) is None


SPLIT_POOL = POOL.replace("requirements: []",
                          'requirements: [{key: capacity-spread, operator: In, values: ["2", "3", "4", "5"]}]')
SPLIT = SPLIT_POOL + deployment("split", 8, cpu="500m", extra="""\
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: capacity-spread, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: split}}}
""") + deployment("ha", 3, cpu="500m", extra=SPREADS)


def test_a_carried_over_node_keeps_its_custom_domain(tmp_path: Path) -> None:
    # karpenter-blueprints' od-spot-split: a NodePool requirement on a custom key with several values gives one
    # launch option per value. Carried over under --preferences honour, each node must keep the value its spread
    # counted it in; before, every node took the last value's option, the plan broke the spread, and the zone
    # repair that followed made the optimal plan dearer than Karpenter's.
    from karpplan.engines.karpenter_simulation import solve_karpenter
    from karpplan.planner import prepare
    from karpplan.preference_policy import carried_over
    from karpplan.verify import verify

    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(SPLIT))
    inventory = load_inventory([str(path)])
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(textwrap.dedent(FAKE_CATALOG))
    cat = load_catalog(None, str(catalog))
    greedy, _ = solve_karpenter(prepare(inventory, cat).problem, time_limit=5.0)
    ha = next(p for p in inventory.pending if p.key.startswith("default/ha")).template
    enforced, _ = enforce_preferences(inventory.pods, {id(ha): {id(c) for c in ha.spread}})
    after = prepare(replace(inventory, pods=enforced), cat).problem
    carried = carried_over(greedy, after)
    assert carried is not None and not verify(after, carried)
    assert [n.option and n.option.labels.get("capacity-spread") for n in carried.nodes] == \
        [n.option and n.option.labels.get("capacity-spread") for n in greedy.nodes]
    assert len({n.option.labels.get("capacity-spread") for n in carried.nodes if n.option}) > 1
    plan = _plan(tmp_path, SPLIT)
    karpenter = _plan(tmp_path, SPLIT, engine="karpenter")
    assert plan.summary.hourly_cost <= karpenter.summary.hourly_cost + 1e-9
