"""Label selectors (null vs {}), node selector terms, node affinity and tolerations (kube-scheduler.md §3-§5)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karpplan.model.inventory import Inventory
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.selectors import LabelSelector, NodeAffinity, NodeSelectorTerm, selector_matches
from karpplan.model.taints import EFFECTS, Taint, Toleration, tolerates, untolerated

from conftest import pod_manifest

LABELS = st.dictionaries(st.sampled_from(("app", "tier", "zone")), st.sampled_from(("a", "b", "")), max_size=3)


# ------------------------------------------------------------------------------------------ label selectors
@given(LABELS)
def test_null_selector_matches_nothing_and_empty_matches_everything(labels: dict[str, str]) -> None:
    assert not selector_matches(None, labels)
    assert selector_matches(LabelSelector(), labels)
    assert not selector_matches(LabelSelector(valid=False), labels)


def test_builder_keeps_null_and_empty_selectors_apart(build: Callable[..., Inventory]) -> None:
    inventory = build(
        pod_manifest(
            """
            containers: [{name: a}]
            topologySpreadConstraints:
            - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
            - {maxSkew: 1, topologyKey: host, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}
            - maxSkew: 1
              topologyKey: rack
              whenUnsatisfiable: DoNotSchedule
              labelSelector: {matchLabels: {app: p}, matchExpressions: [{key: tier, operator: NotIn, values: [db]}]}
            """
        )
    )
    null, empty, given_selector = inventory.pods[0].template.spread
    assert null.label_selector is None
    assert empty.label_selector is not None and empty.label_selector.is_empty()
    assert given_selector.label_selector is not None
    assert given_selector.label_selector.matches({"app": "p"})
    assert not given_selector.label_selector.matches({"app": "p", "tier": "db"})


def test_match_label_keys_merge_the_pods_own_values() -> None:
    from karpplan.model.pods import TopologySpreadConstraint

    constraint = TopologySpreadConstraint(
        max_skew=1, topology_key="zone", label_selector=LabelSelector(), match_label_keys=("rev", "missing")
    )
    merged = constraint.selector_for({"rev": "7", "app": "x"})
    assert merged is not None
    assert merged.matches({"rev": "7"}) and not merged.matches({"rev": "8"})


# ------------------------------------------------------------------------------------------ node affinity
def _term(*reqs: Requirement) -> NodeSelectorTerm:
    return NodeSelectorTerm(Requirements(reqs))


def test_required_terms_are_ored_and_empty_terms_match_nothing() -> None:
    affinity = NodeAffinity(
        required=(NodeSelectorTerm(empty=True), _term(Requirement.of("zone", "In", ["b"])))
    )
    assert affinity.matches({"zone": "b"})
    assert not affinity.matches({"zone": "a"})
    assert not NodeAffinity(required=(NodeSelectorTerm(empty=True),)).matches({})


def test_node_selector_and_required_affinity_must_both_pass() -> None:
    affinity = NodeAffinity(
        node_selector=Requirements.from_labels({"disk": "ssd"}),
        required=(_term(Requirement.of("zone", "In", ["a"])),),
    )
    assert affinity.matches({"disk": "ssd", "zone": "a"})
    assert not affinity.matches({"zone": "a"})


def test_match_fields_select_node_names() -> None:
    term = NodeSelectorTerm(field_names=(("In", "node-1"),))
    assert term.matches({}, "node-1")
    assert not term.matches({}, "node-2")
    assert NodeSelectorTerm(field_names=(("NotIn", "node-1"),)).matches({}, "node-2")


def test_unparseable_terms_match_nothing_but_other_terms_count(build: Callable[..., Inventory]) -> None:
    inventory = build(
        pod_manifest(
            """
            containers: [{name: a}]
            affinity:
              nodeAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions: [{key: zone, operator: Foo, values: [a]}]
                  - matchExpressions: [{key: gen, operator: Gt, values: ["1.5"]}]
                  - matchExpressions: [{key: zone, operator: In, values: []}]
                  - {}
                  - matchExpressions: [{key: failure-domain.beta.kubernetes.io/zone, operator: In, values: [b]}]
                  - matchFields: [{key: metadata.name, operator: In, values: [n1]}]
            """
        )
    )
    affinity = inventory.pods[0].template.affinity
    assert affinity.required is not None
    assert [t.valid for t in affinity.required] == [False, False, False, True, True, True]
    assert affinity.required[3].empty
    # Deprecated alias normalised to the current key.
    assert affinity.matches({"topology.kubernetes.io/zone": "b"}, "x")
    assert affinity.matches({}, "n1")
    assert not affinity.matches({"zone": "a", "gen": "2"}, "x")


# ------------------------------------------------------------------------------------------ tolerations
KEYS = st.sampled_from(("", "dedicated", "gpu"))
VALUES = st.sampled_from(("", "a", "b"))
TAINTS = st.builds(Taint, st.sampled_from(("dedicated", "gpu")), VALUES, st.sampled_from(EFFECTS))
TOLERATIONS = st.builds(
    Toleration, KEYS, st.sampled_from(("Equal", "Exists")), VALUES, st.sampled_from(("", *EFFECTS))
)


@given(TAINTS)
def test_empty_key_with_exists_tolerates_everything(taint: Taint) -> None:
    assert Toleration(key="", operator="Exists").tolerates(taint)


@given(TAINTS, st.sampled_from(("Equal", "Exists")))
def test_empty_effect_matches_every_effect(taint: Taint, operator: str) -> None:
    value = taint.value if operator == "Equal" else ""
    assert Toleration(taint.key, operator, value, "").tolerates(taint)


@given(TOLERATIONS, TAINTS)
def test_toleration_rules(toleration: Toleration, taint: Taint) -> None:
    expected = (
        (not toleration.effect or toleration.effect == taint.effect)
        and (toleration.key == taint.key or (not toleration.key and toleration.operator == "Exists"))
        and (toleration.operator == "Exists" or toleration.value == taint.value)
    )
    assert toleration.tolerates(taint) == expected


def test_equal_needs_the_same_value_and_empty_equals_empty() -> None:
    assert Toleration("k", "Equal", "", "NoSchedule").tolerates(Taint("k", "", "NoSchedule"))
    assert not Toleration("k", "Equal", "", "NoSchedule").tolerates(Taint("k", "v", "NoSchedule"))
    assert not Toleration("", "Equal", "", "").tolerates(Taint("k", "", "NoSchedule"))


def test_prefer_no_schedule_never_filters() -> None:
    taints = [Taint("a", "", "PreferNoSchedule"), Taint("b", "", "NoSchedule"), Taint("c", "", "NoExecute")]
    assert untolerated([], taints, ("NoSchedule", "NoExecute")) == taints[1:]
    assert tolerates([Toleration("b", "Exists")], taints[1])


@pytest.mark.parametrize(("operator", "taint_value", "expected"), [("Lt", "3", True), ("Gt", "3", False)])
def test_comparison_operators_compare_integers(operator: str, taint_value: str, expected: bool) -> None:
    assert Toleration("k", operator, "5").tolerates(Taint("k", taint_value)) is expected
