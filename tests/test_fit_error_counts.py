"""The `0/N nodes are available: ...` line karpplan writes in kube-scheduler's words counts each node once, for the
first filter plugin that rejects it (`RunFilterPlugins` returns there). A new user's plan printed "0/2 nodes are
available: 2 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated
taint {CriticalAddonsOnly: true}": six counts for two nodes, where kube-scheduler reports the taint alone."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from karpplan.scheduling.filters import aggregate_message, first_failing

TAINT = "node(s) had untolerated taint {CriticalAddonsOnly: true}"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
CPU, MEMORY = "Insufficient cpu", "Insufficient memory"
SPREAD = "node(s) didn't match pod topology spread constraints (missing required label)"
REASONS = [TAINT, AFFINITY, CPU, MEMORY, SPREAD, "node(s) didn't have free ports for the requested pod ports"]


def test_a_tainted_node_is_counted_for_its_taint_only() -> None:
    per_node = {"a": [AFFINITY, TAINT, CPU], "b": [CPU, TAINT, AFFINITY]}
    assert aggregate_message(2, per_node) == f"0/2 nodes are available: 2 {TAINT}."


def test_resources_fit_names_every_resource_short() -> None:
    per_node = {"a": [CPU, MEMORY, SPREAD], "b": [AFFINITY]}
    assert aggregate_message(2, per_node) == f"0/2 nodes are available: 1 {CPU}, 1 {MEMORY}, 1 {AFFINITY}."


@given(st.dictionaries(st.text(min_size=1, max_size=3), st.lists(st.sampled_from(REASONS), min_size=1), max_size=6))
def test_every_node_is_counted_under_one_filter(per_node: dict[str, list[str]]) -> None:
    for reasons in per_node.values():
        kept = first_failing(reasons)
        assert kept and set(kept) <= set(reasons)
        # one plugin's reasons: several only when they are NodeResourcesFit's
        assert len(set(kept)) == 1 or set(kept) <= {CPU, MEMORY}
