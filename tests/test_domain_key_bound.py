"""Whole nodes in every domain of any spread's key, not only zones (karpplan/engines/combinatorial_bound.py and
zone_node_bound.py): a hard spread over a custom label whose values come from the pools' requirements (the
aws-samples/karpenter-blueprints od-spot-split shape: one on-demand value, several spot ones) forces pods, and
so nodes, into every domain. The bound counts them, never above the exhaustive optimum nor any valid plan, and
proves such a small plan optimal before any slot model or LP."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bound_is_valid import engine_plans, exhaustive_optimum
from test_combinatorial_bound import EXAMPLES, catalog, raised

from karpplan.catalog import load_catalog
from karpplan.constraints.topology_spread import TOPOLOGY_SPREAD
from karpplan.engines.combinatorial_bound import NO_DOMAIN, domain_keys, domain_of, zone_integer_bound
from karpplan.engines.result import Solution, SolvedNode
from karpplan.engines.zone_node_bound import zone_node_bound
from karpplan.model.build import load_inventory
from karpplan.model.labels import ZONE
from karpplan.planner import PlanOptions, make_problem, solve
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

KEY = "capacity-spread"


def split_pool(name: str, values: str, types: str = "", label: str = "") -> str:
    """A pool whose nodes take one of `values` for the custom key (a requirement, as the blueprint writes it),
    or carry `label` as a template label; `values` empty: neither (its nodes have no such label)."""
    requirements = [f"{{key: {KEY}, operator: In, values: [{values}]}}"] if values else []
    if types:
        requirements.append(f"{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}")
    labels = f"\n    metadata: {{labels: {{{KEY}: '{label}'}}}}" if label else ""
    return f"""---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec:
  template:{labels}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements: [{", ".join(requirements)}]
"""


RULES = {
    "none": "",
    "key-spread": f"""\
      topologySpreadConstraints:
      - {{maxSkew: 1, topologyKey: {KEY}, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {{matchLabels: {{app: APP}}}}}}
""",
    "key-spread-skew2": f"""\
      topologySpreadConstraints:
      - {{maxSkew: 2, topologyKey: {KEY}, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {{matchLabels: {{app: APP}}}}}}
""",
    "key-spread-min3": f"""\
      topologySpreadConstraints:
      - {{maxSkew: 1, topologyKey: {KEY}, whenUnsatisfiable: DoNotSchedule, minDomains: 3,
         labelSelector: {{matchLabels: {{app: APP}}}}}}
""",
    "key-anti": f"""\
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {{topologyKey: {KEY}, labelSelector: {{matchLabels: {{app: APP}}}}}}
""",
    "key-and-zone-spread": f"""\
      topologySpreadConstraints:
      - {{maxSkew: 1, topologyKey: {KEY}, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {{matchLabels: {{app: APP}}}}}}
      - {{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {{matchLabels: {{app: APP}}}}}}
""",
}


def deployment(name: str, replicas: int, cpu: str, rule: str) -> str:
    return f"""---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - {{name: c, image: x, resources: {{requests: {{cpu: {cpu}, memory: 256Mi}}}}}}
{RULES[rule].replace("APP", name)}"""


def labelled(problem: Problem) -> Callable[[Solution], bool]:
    """kube-scheduler's PodTopologySpread filter, which the verifier does not apply to new nodes: a pod with a
    hard spread never runs on a node without the spread's key (the engines ban such options too,
    `TopologySpreadKind.exclude`)."""
    keys = {g.index: [r.key for r in problem.topology.rules_for(g.template) if r.hard and not r.hostname]
            for g in problem.groups}

    def accept(plan: Solution) -> bool:
        return all(n.option is None or k in n.option.labels for n in plan.nodes for g, _ in n.pods
                   for k in keys.get(g.index, ()))
    return accept


def optimum_of(problem: Problem) -> float | None:
    return exhaustive_optimum(problem, labelled(problem))


def problem_of(tmp_path: Path, manifests: str, zones: int = 1) -> Problem:
    (tmp_path / "m.yaml").write_text(manifests)
    (tmp_path / "c.yaml").write_text(catalog(zones))
    inventory = load_inventory([str(tmp_path / "m.yaml")])
    return make_problem(inventory, load_catalog(None, str(tmp_path / "c.yaml")), inventory.pending)


# ---------------------------------------------------------------------------------------- by hand
def test_a_spread_over_a_custom_label_buys_a_node_in_each_of_its_domains(tmp_path: Path) -> None:
    # The od-spot-split shape: pool "od" gives value 1, pool "spot" values 2 and 3; six 250m pods, maxSkew 1 over
    # the three values: two pods in each, so a node in each domain (3 small nodes, 0.15), where the LPs share
    # one node's room among them (their 1.5 vCPU fit a medium, 0.09).
    problem = problem_of(tmp_path, split_pool("od", "'1'") + split_pool("spot", "'2', '3'")
                         + deployment("web", 6, "250m", "key-spread"))
    (group,) = problem.groups
    assert domain_keys(problem, [group]) == [ZONE, KEY]
    assert zone_integer_bound(problem).cost == pytest.approx(0.15, rel=1e-5)
    assert zone_node_bound(problem).cost == pytest.approx(0.15, rel=1e-5)
    assert optimum_of(problem) == pytest.approx(0.15)
    lp = raised(problem)
    assert lp is not None and lp == pytest.approx(0.15, rel=1e-5)


def test_the_least_pods_per_domain_decide_the_node_each_needs(tmp_path: Path) -> None:
    # Nine 600m pods over three values, maxSkew 1: three a domain (1.8 vCPU), so a medium (1.9 vCPU free, 0.09) in
    # each, 0.27; fluid over one domain they would fit 2.5 larges' worth.
    problem = problem_of(tmp_path, split_pool("od", "'1'") + split_pool("spot", "'2', '3'")
                         + deployment("web", 9, "600m", "key-spread"))
    assert zone_integer_bound(problem).cost == pytest.approx(0.27, rel=1e-5)


def test_own_anti_affinity_on_a_custom_label_puts_one_pod_in_each_domain(tmp_path: Path) -> None:
    problem = problem_of(tmp_path, split_pool("od", "'1'") + split_pool("spot", "'2', '3'")
                         + deployment("db", 3, "250m", "key-anti"))
    assert zone_integer_bound(problem).cost == pytest.approx(0.15, rel=1e-5)
    assert optimum_of(problem) == pytest.approx(0.15)


def test_a_pool_without_the_label_holds_other_pods_but_none_of_the_spread(tmp_path: Path) -> None:
    # Pool "plain" gives no value of the key: its nodes are in no domain, and a pod with a hard spread over the
    # key never runs there (kube-scheduler: "missing required label"), so the spread's two pods still need a
    # node in each of its domains (two smalls, 0.1) while the other Deployment's may use "plain".
    problem = problem_of(tmp_path, split_pool("od", "'1'") + split_pool("spot", "'2'") + split_pool("plain", "")
                         + deployment("web", 2, "600m", "key-spread") + deployment("api", 2, "600m", "none"))
    bound = zone_integer_bound(problem).cost
    optimum = optimum_of(problem)
    assert optimum is not None and 0.1 - 1e-6 <= bound <= optimum + 1e-6
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=10.0, workers=1))
    assert not plan.unplaced and labelled(problem)(plan) and bound <= plan.cost + 1e-6


def test_the_optimiser_proves_it_by_the_whole_node_bound_alone(tmp_path: Path) -> None:
    problem = problem_of(tmp_path, split_pool("od", "'1'") + split_pool("spot", "'2', '3', '4', '5'")
                         + deployment("web", 10, "250m", "key-spread"))
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=10.0, workers=1))
    assert plan.status == "optimal" and plan.cost == pytest.approx(0.25)  # five small nodes, one a domain
    assert plan.bound_source == "whole-nodes" and plan.lower_bound == pytest.approx(0.25, rel=1e-5)


def test_an_option_without_the_label_is_in_no_domain(tmp_path: Path) -> None:
    problem = problem_of(tmp_path, split_pool("od", "'1'") + split_pool("plain", "")
                         + deployment("web", 1, "250m", "none"))
    assert {domain_of(o, KEY) for o in problem.options} == {"1", NO_DOMAIN}


# ---------------------------------------------------------------------------------------- property
@st.composite
def keyed_problems(draw: st.DrawFn) -> tuple[str, int]:
    """One to three pools giving the custom key's values by requirement (one value or several), by template
    label, or not at all, some restricted to instance types; up to four pods of up to two Deployments with any
    rule of `RULES`; one or two zones."""
    zones = draw(st.integers(1, 2))
    text = ""
    for i in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["one", "several", "label", "none"]))
        types = draw(st.sampled_from(["", "small", "medium, large"]))
        if kind == "one":
            text += split_pool(f"p{i}", f"'{i + 1}'", types)
        elif kind == "several":
            text += split_pool(f"p{i}", ", ".join(f"'{v}'" for v in draw(
                st.lists(st.sampled_from(["1", "2", "3"]), min_size=2, max_size=3, unique=True))), types)
        elif kind == "label":
            text += split_pool(f"p{i}", "", types, label=draw(st.sampled_from(["1", "2"])))
        else:
            text += split_pool(f"p{i}", "", types)
    total = 0
    for name in ("web", "api")[:draw(st.integers(1, 2))]:
        replicas = draw(st.integers(1, 4 - total))
        total += replicas
        text += deployment(name, replicas, draw(st.sampled_from(["250m", "600m", "900m"])),
                           draw(st.sampled_from(sorted(RULES))))
        if total >= 4:
            break
    return text, zones


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=keyed_problems())
def test_the_bound_never_exceeds_the_optimum_nor_a_valid_plan(tmp_path: Path, case: tuple[str, int]) -> None:
    text, zones = case
    problem = problem_of(tmp_path, text, zones)
    optimum = optimum_of(problem)
    if optimum is None:
        return
    whole = zone_integer_bound(problem)
    bounds = {"whole-nodes": whole.cost, "whole-nodes-per-zone": zone_node_bound(problem, whole=whole).cost}
    lp = raised(problem)
    if lp is not None:
        bounds["configuration-lp+whole-nodes"] = lp
    plans = engine_plans(problem)
    kept = {engine: plan.cost for engine, plan in plans.items()
            if not plan.unplaced and not plan.exceeds_node_limits and verify(problem, plan) == []
            and not TOPOLOGY_SPREAD.launch_violations(problem, plan)}
    for engine, plan in plans.items():  # the engines never put a spread's pod off its key
        assert labelled(problem)(plan), f"{engine} placed a pod on a node without its spread's key:\n{text}"
    for name, bound in bounds.items():
        assert bound <= optimum + 1e-6, f"{name} bound {bound} above the optimum {optimum}:\n{text}"
        for engine, cost in kept.items():
            assert bound <= cost + 1e-6, f"{name} bound {bound} above {engine}'s valid plan ({cost}):\n{text}"


def test_the_verifier_refuses_a_spread_pod_on_a_node_without_the_key(tmp_path: Path) -> None:
    """kube-scheduler's PodTopologySpread filter: a pod with a DoNotSchedule spread never runs on a node that lacks
    the spread's key ("missing required label"). The verifier now says so for new nodes too, so the exhaustive
    optimum it accepts is the one `labelled` filtered for before."""
    problem = problem_of(tmp_path, split_pool("od", "'1'") + split_pool("spot", "'2'") + split_pool("plain", "")
                         + deployment("web", 2, "600m", "key-spread"))
    (group,) = problem.groups
    plain = next(o for o in problem.options if o.pool.name == "plain")
    on_plain = Solution("hand", [SolvedNode("plain-1", None, plain, [(group, p) for p in group.group.pods])], [],
                        "feasible")
    assert any("missing required label" in v.message for v in verify(problem, on_plain))
    assert exhaustive_optimum(problem) == pytest.approx(optimum_of(problem) or -1.0)
