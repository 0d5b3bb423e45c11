"""Thousands of Deployments, each spreading over its own labels (issue 16): what a repo of Helm charts
looks like. Every selector-against-template question is answered through indexes (`SelectorIndex`,
`PlanTally`'s label-set index, class-set blocks for option dominance), so the work grows with the
Deployments, not with their square. These tests check the indexes give the answers brute force gives,
and count the selector tests a plan makes (no wall-clock timing: bench/ measures time)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karpplan.constraints.view import PlanTally
from karpplan.engines.bound import distinct_rows, superset_blocks
from karpplan.engines.result import Solution
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.selectors import LabelIndex, LabelSelector, SelectorIndex, required_pairs
from karpplan.scheduling.topology import SpreadRule
from karpplan.verify import verify

from planner_helpers import plan_text

KEYS = ("app", "tier", "team")
VALUES = ("a", "b", "c")
LABELS = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)


@st.composite
def requirement(draw: st.DrawFn) -> Requirement:
    key = draw(st.sampled_from(KEYS))
    op = draw(st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist")))
    values = draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=2)) if op in ("In", "NotIn") else []
    return Requirement.of(key, op, values)


SELECTORS = st.one_of(
    st.none(),
    st.just(LabelSelector(valid=False)),
    st.lists(requirement(), max_size=3).map(lambda rs: LabelSelector(Requirements(rs))),
)


@given(st.lists(st.tuples(st.sampled_from(("ns1", "ns2", None)), SELECTORS), max_size=12), LABELS,
       st.sampled_from(("ns1", "ns2")))
def test_selector_index_finds_every_selector_that_matches(filed: list[tuple[str | None, LabelSelector | None]],
                                                         labels: dict[str, str], namespace: str) -> None:
    index: SelectorIndex[int] = SelectorIndex()
    for i, (ns, selector) in enumerate(filed):
        index.add(i, ns, selector)
    found = list(index.candidates(namespace, labels))
    assert found == sorted(set(found))  # in the order filed, once each
    truth = {i for i, (ns, selector) in enumerate(filed)
             if ns in (namespace, None) and selector is not None and selector.matches(labels)}
    assert truth <= set(found)


@given(st.lists(st.tuples(st.sampled_from(("ns1", "ns2")), LABELS), max_size=12), SELECTORS,
       st.sampled_from(("ns1", "ns2")))
def test_label_index_finds_every_label_map_a_selector_matches(filed: list[tuple[str, dict[str, str]]],
                                                             selector: LabelSelector | None, namespace: str) -> None:
    index: LabelIndex[int] = LabelIndex()
    for i, (ns, labels) in enumerate(filed):
        index.add(i, ns, labels)
    found = index.candidates(namespace, selector)
    assert found == sorted(set(found))
    truth = {i for i, (ns, labels) in enumerate(filed)
             if ns == namespace and selector is not None and selector.matches(labels)}
    assert truth <= set(found) and all(filed[i][0] == namespace for i in found)


@given(st.lists(requirement(), max_size=3), LABELS)
def test_a_matching_label_map_holds_one_of_the_required_pairs(reqs: list[Requirement], labels: dict[str, str]) -> None:
    selector = LabelSelector(Requirements(reqs))
    pairs = required_pairs(selector)
    if pairs is not None and selector.matches(labels):
        assert any(labels.get(k) == v for k, v in pairs)


@settings(max_examples=60)
@given(st.lists(st.lists(st.booleans(), min_size=9, max_size=9), min_size=1, max_size=30))
def test_option_blocks_hold_exactly_the_superset_pairs(rows: list[list[bool]]) -> None:
    member = np.array(rows, dtype=np.bool_)
    pattern_of, packed = distinct_rows(member)
    assert (np.unpackbits(packed, axis=1)[:, :member.shape[1]][pattern_of] == member).all()
    _, blocks = superset_blocks(member)
    seen = sorted(int(i) for rows_a, _ in blocks for i in rows_a)
    assert seen == list(range(len(member)))
    for rows_a, cols in blocks:
        for i in rows_a:
            assert list(cols) == [j for j in range(len(member)) if not (member[i] & ~member[j]).any()]


def _apps(n: int, pools: int = 4) -> str:
    """n Deployments of 2 replicas, each spreading over zones by its own `app` label, in `pools` NodePools
    chosen by nodeSelector (the lint benchmark's shape)."""
    docs = [f"""
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: pool-{p}}}
spec:
  template:
    metadata: {{labels: {{team: t{p}}}}}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements: []
""" for p in range(pools)]
    docs += [f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app-{i}, namespace: ns-{i % 3}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: app-{i}}}}}
  template:
    metadata: {{labels: {{app: app-{i}}}}}
    spec:
      nodeSelector: {{team: t{i % pools}}}
      topologySpreadConstraints:
        - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
            labelSelector: {{matchLabels: {{app: app-{i}}}}}}}
      containers: [{{name: app, image: nginx, resources: {{requests: {{cpu: 300m, memory: 256Mi}}}}}}]
""" for i in range(n)]
    return "---".join(docs)


def test_a_plan_of_many_deployments_tests_each_template_against_its_own_selectors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    counts = SpreadRule.counts

    def counting(self: SpreadRule, namespace: str, labels: dict[str, str]) -> bool:
        nonlocal calls
        calls += 1
        return counts(self, namespace, labels)

    monkeypatch.setattr(SpreadRule, "counts", counting)
    n = 150
    plan = plan_text(tmp_path, _apps(n), time_limit=5.0)
    assert plan.summary.scheduled == 2 * n and plan.summary.unschedulable == 0
    # Every rule was asked of every template once before the index: n * n = 22,500 calls in the
    # simulation's counts alone. Now a handful per Deployment.
    assert calls < 40 * n, calls


def test_many_deployments_plan_is_valid_with_both_engines(tmp_path: Path) -> None:
    from karpplan.catalog import load_catalog
    from karpplan.engines.karpenter_simulation import solve_karpenter
    from karpplan.model.build import load_inventory
    from karpplan.planner import PlanOptions, make_plan, prepare

    path = tmp_path / "apps.yaml"
    path.write_text(_apps(60, pools=3))
    inventory = load_inventory([str(path)])
    problem = prepare(inventory, load_catalog("us-east-1", None)).problem
    greedy, _ = solve_karpenter(problem)
    assert not greedy.unplaced and not verify(problem, greedy)
    plan = make_plan(inventory, load_catalog("us-east-1", None), PlanOptions(engine="optimal", time_limit=5.0))
    assert plan.summary.unschedulable == 0
    assert plan.summary.hourly_cost <= greedy.cost + 1e-9


def test_plan_tally_counts_selector_matches_as_brute_force_does(tmp_path: Path) -> None:
    from karpplan.catalog import load_catalog
    from karpplan.engines.karpenter_simulation import solve_karpenter
    from karpplan.model.build import load_inventory
    from karpplan.planner import prepare

    path = tmp_path / "apps.yaml"
    path.write_text(_apps(30, pools=2))
    problem = prepare(load_inventory([str(path)]), load_catalog("us-east-1", None)).problem
    solution: Solution = solve_karpenter(problem)[0]
    tally = PlanTally(solution)
    selectors = [LabelSelector(Requirements([Requirement.of("app", "In", [f"app-{i}"])])) for i in range(0, 30, 7)]
    selectors += [LabelSelector(Requirements([Requirement.of("app", "Exists")])), LabelSelector(),
                  LabelSelector(valid=False)]
    for selector in selectors:
        for namespace in ("ns-0", "ns-1"):
            brute = [sum(1 for _, pod in node.pods if pod.namespace == namespace and selector.matches(pod.labels))
                     for node in solution.nodes]
            assert tally.matching_counts(namespace, selector) == brute


def test_a_cut_after_a_long_build_names_the_limit_that_lets_the_optimiser_finish() -> None:
    from karpplan.engines.optimiser import CLOCK_CUT_WARNING, TIME_LIMIT_SHORT_WARNING, _cut_note

    note = _cut_note(7.4, 10.0)
    assert note.startswith(TIME_LIMIT_SHORT_WARNING) and "7.4 s of the 10 s limit" in note
    assert "--time-limit 30 or more" in note
    # A cut with most of the limit left for the optimiser is the machine's speed, as before.
    assert _cut_note(0.8, 10.0) == CLOCK_CUT_WARNING
