"""The zone-indexed configuration LP bound (karpplan/engines/patterns/zone_instance.py, zone_lp.py): never above a
real plan's cost, equal to the optimum where it is known by hand, stronger than the global configuration LP
where zone spread forces pods into zones, and declining where the zones are interchangeable."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_bound import deployment, placed, problem_of
from test_render_plan import table_text

from karpplan.engines.patterns import pattern_lower_bound, zone_lower_bound
from karpplan.engines.patterns.zone_instance import interchangeable, zone_instance
from karpplan.model.labels import HOSTNAME, ZONE
from karpplan.planner import PlanOptions, solve
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

from planner_helpers import POOL, plan_text

ZONES = ("zone-a", "zone-b", "zone-c")


def zonal_catalog(types: Sequence[tuple[str, int, int, Sequence[float]]]) -> str:
    """(name, cpu millicores, memory MiB, price per zone of ZONES) per type, on-demand, 20 pods."""
    entries = [{"name": n, "arch": "amd64", "os": "linux",
                "capacity": {"cpu": f"{c}m", "memory": f"{m}Mi", "pods": "20"},
                "allocatable": {"cpu": f"{c}m", "memory": f"{m}Mi", "pods": "20"},
                "offerings": [{"zone": z, "capacityType": "on-demand", "price": p}
                              for z, p in zip(ZONES, prices, strict=True)]}
               for n, c, m, prices in types]
    return yaml.safe_dump({"apiVersion": "karpplan.io/v1alpha1", "kind": "InstanceCatalog",
                           "metadata": {"name": "z"}, "zones": list(ZONES), "instanceTypes": entries})


def zone_spread(doc: dict[str, Any], skew: int = 1, selector: dict[str, str] | None = None) -> dict[str, Any]:
    """The Deployment with a hard zone spread constraint (its own pods by default) added."""
    spec = doc["spec"]["template"]["spec"]
    spec.setdefault("topologySpreadConstraints", []).append(
        {"maxSkew": skew, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": selector or {"app": doc["metadata"]["name"]}}})
    return doc


def anti(doc: dict[str, Any], selector: dict[str, str]) -> dict[str, Any]:
    doc["spec"]["template"]["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": selector}, "topologyKey": HOSTNAME}]}}
    return doc


EVEN = zonal_catalog([("small", 2000, 4096, (0.1, 0.1, 0.1)), ("large", 8000, 16384, (0.35, 0.35, 0.35))])
UNEVEN = zonal_catalog([("small", 2000, 4096, (0.1, 0.2, 0.3)), ("large", 8000, 16384, (0.35, 0.7, 1.05))])


def zone_of(problem: Problem, force: bool = False, required: dict[int, int] | None = None) -> float:
    result = zone_lower_bound(problem, required, time_limit=5.0, force=force)
    assert result is not None
    return result.cost


def pattern_of(problem: Problem) -> float:
    result = pattern_lower_bound(problem, time_limit=5.0)
    assert result is not None
    return result.cost


# ---------------------------------------------------------------------------------------- known optima
def test_one_pod_per_zone_needs_a_node_per_zone() -> None:
    # Three 250m pods spread over three zones (maxSkew 1): one in each, so one node in each. The global LP
    # puts them on one node.
    problem = problem_of([zone_spread(deployment("web", 3, cpu="250m"))], catalog=EVEN)
    assert pattern_of(problem) == pytest.approx(0.1, rel=1e-4)
    assert zone_of(problem) == pytest.approx(0.3, rel=1e-5)
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=3.0, workers=1))
    assert plan.cost == pytest.approx(0.3)
    assert plan.lower_bound == pytest.approx(0.3, rel=1e-5)
    # CP-SAT proves it too; so does the configuration LP raised by whole nodes per zone (combinatorial_bound.py),
    # and whole nodes per zone alone, asked first on a small plan (small_plans.whole_node_bounds).
    assert plan.status == "optimal" and plan.bound_source in ("cp-sat", "zone-lp", "configuration-lp", "whole-nodes")


def test_spread_pays_the_dear_zones() -> None:
    # Six 1-CPU pods, two per zone: the global LP buys the cheap zone's nodes only; every plan needs one
    # small node in each zone (two pods fit one), 0.1 + 0.2 + 0.3.
    problem = problem_of([zone_spread(deployment("web", 6, cpu="1", memory="1Gi"))], catalog=UNEVEN)
    assert pattern_of(problem) == pytest.approx(0.3, rel=1e-4)
    assert zone_of(problem) == pytest.approx(0.6, rel=1e-5)
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=3.0, workers=1))
    assert plan.cost == pytest.approx(0.6)
    assert plan.lower_bound == pytest.approx(0.6, rel=1e-5)


def test_pods_counted_but_not_owning_the_rule_are_balanced_too() -> None:
    # 'spread' (3 pods, label t=x, maxSkew 1) counts the 'generic' pods of t=x too: a domain receiving a
    # spread pod holds at most the emptiest domain's count + 1, so the generic pods cannot all sit in the
    # cheap zone.
    docs = [zone_spread(deployment("spread", 3, cpu="1", labels={"t": "x"}), selector={"t": "x"}),
            deployment("generic", 9, cpu="1", labels={"t": "x"})]
    problem = problem_of(docs, catalog=UNEVEN)
    zone = zone_of(problem)
    assert zone > pattern_of(problem) + 1e-3
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=4.0, workers=1))
    assert not verify(problem, plan)
    assert zone <= plan.cost + 1e-9


def test_fewer_zones_than_min_domains_cap_every_zone_at_max_skew() -> None:
    # Six 500m pods, maxSkew 2, minDomains 5 over three zones: the global minimum is 0, so every zone holds
    # at most two of them, so exactly two: a small node in each zone, 0.1 + 0.2 + 0.3 (CP-SAT proves it).
    doc = zone_spread(deployment("web", 6, cpu="500m"), 2)
    doc["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["minDomains"] = 5
    problem = problem_of([doc], catalog=UNEVEN)
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=3.0, workers=1))
    assert plan.status == "optimal" and not plan.unplaced and not verify(problem, plan)
    assert plan.cost == pytest.approx(0.6)
    assert pattern_of(problem) == pytest.approx(0.15, rel=1e-4)
    assert zone_of(problem) == pytest.approx(0.6, rel=1e-5)
    g = problem.groups[0]
    zi = zone_instance(problem, [g], {g.index: g.size})
    assert zi is not None and sorted(zi.rows.node_row) == list(ZONES)


def _with_min_domains(doc: dict[str, Any], min_domains: int) -> dict[str, Any]:
    doc["spec"]["template"]["spec"]["topologySpreadConstraints"][-1]["minDomains"] = min_domains
    return doc


def _in_zones(doc: dict[str, Any], zones: Sequence[str]) -> dict[str, Any]:
    doc["spec"]["template"]["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": list(zones)}]}]}}}
    return doc


def _existing(name: str, zone: str, labels: dict[str, str], pods: int) -> list[dict[str, Any]]:
    """A running 2-CPU node in `zone` with `pods` bound 250m pods carrying `labels`."""
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOSTNAME: name, ZONE: zone, "kubernetes.io/os": "linux",
                                                  "kubernetes.io/arch": "amd64"}},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "20"}}}
    bound = [{"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": f"{name}-{i}", "namespace": "default", "labels": labels},
              "spec": {"nodeName": name, "containers": [{"name": "c", "image": "x",
                                                         "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}]},
              "status": {"phase": "Running"}} for i in range(pods)]
    return [node, *bound]


# Small cases with fewer zones than minDomains, each with CP-SAT's proven optimum (cost, as it stands).
MIN_DOMAINS_CASES: dict[str, tuple[list[dict[str, Any]], str]] = {
    # two zones allowed, minDomains 3, maxSkew 1: one 1-CPU pod per zone, the dear zones' nodes.
    "two-zones": ([_with_min_domains(_in_zones(zone_spread(deployment("web", 2, cpu="1")), ZONES[1:]), 3)], UNEVEN),
    # bound pods of the rule in zone-a: its room there is 2 - 1, so zone-b and zone-c take the rest.
    "base-counts": ([*_existing("old", "zone-a", {"app": "web"}, 1),
                     _with_min_domains(zone_spread(deployment("web", 5, cpu="900m"), 2), 4)], UNEVEN),
    # other pods counted by the rule (t=x) but not owning it, and a second deployment owning it too.
    "counted": ([_with_min_domains(zone_spread(deployment("a", 3, cpu="500m", labels={"t": "x"}), 2,
                                               selector={"t": "x"}), 4),
                 _with_min_domains(zone_spread(deployment("b", 2, cpu="1500m", labels={"t": "x"}), 2,
                                               selector={"t": "x"}), 4),
                 deployment("c", 1, cpu="250m", labels={"t": "x"})], UNEVEN),
}


@pytest.mark.parametrize("case", sorted(MIN_DOMAINS_CASES))
def test_min_domains_rows_never_exceed_a_proven_optimum(case: str) -> None:
    docs, catalog = MIN_DOMAINS_CASES[case]
    problem = problem_of(docs, catalog=catalog)
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=4.0, workers=1))
    assert not plan.unplaced and not verify(problem, plan)
    assert plan.status == "optimal", (case, plan.cost, plan.lower_bound, plan.bound_source)
    result = zone_lower_bound(problem, placed(plan), time_limit=3.0, force=True)
    assert result is not None
    assert result.cost <= plan.cost + 1e-9, (case, result, plan.cost)
    assert result.cost >= pattern_of(problem) * (1 - 1e-3) - 1e-9


# ---------------------------------------------------------------------------------------- declines
def test_interchangeable_zones_with_enough_forced_nodes_decline() -> None:
    # Equal zones and 6 anti-affinity pods (6 nodes >= 3 zones): averaging the global optimum over the zones
    # meets every zone row, so the zone LP cannot be stronger; it declines (and computes the same when forced).
    docs = [zone_spread(deployment("web", 6, cpu="500m")), anti(deployment("db", 6, cpu="300m"), {"app": "db"})]
    problem = problem_of(docs, catalog=EVEN)
    groups = problem.groups
    assert interchangeable(problem, groups, {g.index: g.size for g in groups})
    assert zone_lower_bound(problem, time_limit=5.0) is None
    assert zone_of(problem, force=True) == pytest.approx(pattern_of(problem), rel=1e-3)


def test_fractional_nodes_too_few_for_the_zones_do_not_decline() -> None:
    # Equal zones and five 250m pods, at most two per node (hostname spread maxSkew 2): every plan needs
    # ceil(5 / 2) = 3 nodes, but the global LP 2.5, fewer than the zones. The zone LP needs a node in each
    # zone (5 pods over 3 zones, maxSkew 1): 0.30, CP-SAT's proven optimum, above the global LP's 0.25.
    problem = problem_of([zone_spread(deployment("web", 5, cpu="250m", spread=(2, {"app": "web"})))], catalog=EVEN)
    groups = problem.groups
    assert not interchangeable(problem, groups, {g.index: g.size for g in groups})
    assert pattern_of(problem) == pytest.approx(0.25, rel=1e-4)
    assert zone_of(problem) == pytest.approx(0.3, rel=1e-5)
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=3.0, workers=1))
    assert plan.status == "optimal" and plan.cost == pytest.approx(0.3)


def test_min_domains_above_the_zones_does_not_decline() -> None:
    # As the declining case above, with maxSkew 2 and minDomains 4 over three zones: the global minimum is
    # 0, so each zone holds at most two web pods, which averaging the global LP does not respect.
    docs = [_with_min_domains(zone_spread(deployment("web", 6, cpu="500m"), 2), 4),
            anti(deployment("db", 6, cpu="300m"), {"app": "db"})]
    problem = problem_of(docs, catalog=EVEN)
    groups = problem.groups
    assert not interchangeable(problem, groups, {g.index: g.size for g in groups})


def test_without_a_zone_spread_rule_there_is_nothing_to_add() -> None:
    problem = problem_of([deployment("web", 3, cpu="250m")], catalog=UNEVEN)
    assert zone_lower_bound(problem, time_limit=5.0, force=True) is None


def test_only_plans_placing_every_pod_are_covered() -> None:
    problem = problem_of([zone_spread(deployment("web", 3, cpu="250m"))], catalog=EVEN)
    assert zone_lower_bound(problem, {problem.groups[0].index: 2}, time_limit=5.0) is None


def test_implied_rows() -> None:
    # 7 owners over 3 zones, maxSkew 1: every zone holds at least ceil((7 - 2) / 3) = 2 of the counted pods.
    problem = problem_of([zone_spread(deployment("web", 7, cpu="250m"))], catalog=EVEN)
    g = problem.groups[0]
    zi = zone_instance(problem, [g], {g.index: g.size})
    assert zi is not None
    lows = [b for b, kind in zip(zi.rows.rhs, zi.rows.kinds, strict=True) if kind == "low"]
    assert lows == [2.0, 2.0, 2.0]
    assert sorted(zi.rows.node_row) == list(ZONES)
    assert len(zi.rows.of_m) == 1


# ---------------------------------------------------------------------------------------- against the engines
def _random_docs(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(rng.randint(2, 4)):
        d = deployment(f"d{i}", rng.randint(1, 5), cpu=f"{rng.choice([250, 500, 900, 1500])}m",
                       memory=f"{rng.choice([256, 1024, 3072])}Mi", labels={"t": rng.choice("xy")})
        kind = rng.choice(["spread", "spread-label", "anti", "plain"])
        if kind == "spread":
            zone_spread(d, rng.choice([1, 2]))
        elif kind == "spread-label":
            zone_spread(d, 1, selector={"t": d["spec"]["template"]["metadata"]["labels"]["t"]})
        elif kind == "anti":
            anti(d, {"app": f"d{i}"})
        docs.append(d)
    return docs


@pytest.mark.parametrize("seed", range(6))
def test_never_above_a_verified_plan(seed: int) -> None:
    problem = problem_of(_random_docs(seed), catalog=UNEVEN if seed % 2 else EVEN)
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=3.0, workers=1))
    assert not verify(problem, plan)
    if plan.unplaced:
        return
    result = zone_lower_bound(problem, placed(plan), time_limit=3.0, force=True)
    if result is None:
        assert not any(r.key == ZONE for rules in problem.topology.spread.values() for r in rules if r.hard)
        return
    assert result.cost <= plan.cost + 1e-9, (seed, result, plan.cost, plan.status)
    # The zone LP restricts the global one (summing its zones gives a global point): never below it.
    assert result.cost >= pattern_of(problem) * (1 - 1e-3) - 1e-9, (seed, result, pattern_of(problem))


# ---------------------------------------------------------------------------------------- the plan's summary
def test_the_plan_names_its_binding_bound(tmp_path: Path) -> None:
    docs = [zone_spread(deployment("web", 6, cpu="1", memory="1Gi"))]
    manifests = "\n---\n".join([POOL, *(yaml.safe_dump(d) for d in docs)])
    plan = plan_text(tmp_path, manifests, catalog=UNEVEN, time_limit=3.0)
    s = plan.summary
    assert s.lower_bound == pytest.approx(0.6, rel=1e-5)
    # (the configuration LP raised by whole nodes per zone, or whole nodes per zone alone: `whole-nodes`)
    assert s.bound_source in ("cp-sat", "zone-lp", "configuration-lp", "whole-nodes")
    assert plan.to_document()["summary"]["boundSource"] == s.bound_source
    text = table_text(plan)
    words = {"cp-sat": "(proven by CP-SAT)", "zone-lp": "(from the zone-by-zone configuration LP)",
             "configuration-lp": "(from the configuration LP)",
             "whole-nodes": "(from the whole nodes its spreads need in every domain)"}[s.bound_source]
    assert words in next(line for line in text.splitlines() if "Lower bound" in line)
    karpenter = plan_text(tmp_path, manifests, catalog=UNEVEN, engine="karpenter")
    assert karpenter.summary.bound_source is None
    assert karpenter.to_document()["summary"]["boundSource"] is None
