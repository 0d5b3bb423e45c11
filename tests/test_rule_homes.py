"""House rule: each rule counts in one place, its counting core in `karpplan/constraints/`.

A spread's maxSkew and minDomains, a NodePool's limits and the host-port clash test are read only by
the constraint kinds and their cores (`constraints/spread_counts.py`, `pool_headroom.py`,
`port_conflicts.py`); every engine asks those. Outside them, only the places listed below may read the
fields, each for a reason that is not counting (parsing, display, rewriting a manifest in a fix). A new
reader elsewhere is a second copy of a rule's arithmetic: route it through the core instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from karpplan.constraints.pool_headroom import Headroom
from karpplan.constraints.spread_counts import (
    ConstraintSkew,
    global_minimum,
    least_domain_count,
    next_domains,
    node_cap,
    skew_limit,
)

PACKAGE = Path(__file__).resolve().parent.parent / "karpplan"

# What is forbidden outside constraints/, and where it is allowed anyway (path under karpplan/: reason).
RULE_READS: dict[str, tuple[re.Pattern[str], dict[str, str]]] = {
    "max_skew": (re.compile(r"\.max_skew\b"), {
        "scheduling/topology.py": "SpreadRule exposes its constraint's maxSkew (the `Skew` the cores read)",
        "render/inventory_view.py": "shows the manifest's maxSkew",
        "render/constraint_text.py": "says the manifest's maxSkew in words (inventory's constraint lines)",
        "explain/fix_candidates.py": "a fix rewrites the manifest's maxSkew (+1)",
        "lint/rules/capacity.py": "quotes the manifest's maxSkew in a finding; the counting asks spread_counts",
    }),
    "min_domains": (re.compile(r"\.min_domains\b"), {
        "model/pods.py": "TopologySpreadConstraint.effective_min_domains: 1 when the manifest has none",
        "scheduling/topology.py": "SpreadRule exposes minDomains in effect (the `Skew` the cores read)",
        "render/inventory_view.py": "shows the manifest's minDomains",
        "render/constraint_text.py": "says the manifest's minDomains in words (inventory's constraint lines)",
        "gap_cause.py": "whether the manifest sets minDomains, to name it as a rule the bounds count weakly; counts nothing",
        "lint/rules/capacity.py": "whether the manifest sets minDomains, and its value quoted; the counting asks spread_counts",
    }),
    "pool limits": (re.compile(r"\.(limits|node_limit)\b"), {
        "scheduling/static_pools.py": "static pools: limits.nodes caps the replicas Karpenter keeps, not headroom",
        "render/inventory_view.py": "shows the pool's limits",
        "explain/fix_candidates.py": "a fix rewrites the pool's spec.limits",
        "explain/wording.py": "PoolFields.limits is a field path in wording, not the pool's limits",
        "explain/enrich.py": "PoolFields.limits is a field path in wording, not the pool's limits",
        "explain/related.py": "the words 'spec.limits' in advice",
        "explain/advice.py": "the field path 'spec.limits.resources' names the node class era in advice",
        "explain/dialects/launch.py": "the words 'spec.limits' in a launch failure's advice",
        "lint/rules/pool_limits.py": "the field path 'spec.limits' of a finding",
    }),
    "conflicts(": (re.compile(r"\bconflicts\("), {
        "model/pods.py": "HostPort.conflicts: the pairwise test port_conflicts.ports_clash asks",
        "model/requirements.py": "Requirements.conflicts: the label algebra, not host ports",
        "scheduling/pool_admission.py": "Requirements.conflicts of a pod and a pool (label algebra), not host ports",
    }),
}


def _sources() -> list[tuple[str, str]]:
    return sorted((str(p.relative_to(PACKAGE)), p.read_text()) for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("what", sorted(RULE_READS))
def test_rules_are_read_only_where_they_count(what: str) -> None:
    pattern, allowed = RULE_READS[what]
    readers = {path for path, text in _sources() if not path.startswith("constraints/") and pattern.search(text)}
    assert readers <= set(allowed), (
        f"{what} read outside constraints/ in {sorted(readers - set(allowed))}: ask the rule's counting core "
        "(constraints/spread_counts.py, pool_headroom.py, port_conflicts.py) instead")
    # The allowlist names only places that still read it: a stale entry is a hole for a new copy.
    assert set(allowed) <= readers, f"{what}: allowlisted but no longer read in {sorted(set(allowed) - readers)}"


def test_no_engine_reaches_into_a_kind_privately() -> None:
    private = re.compile(r"\b[A-Z_]{4,}\._[a-z]\w*")  # TOPOLOGY_SPREAD._eligible and the like
    offenders = [path for path, text in _sources() if not path.startswith("constraints/") and private.search(text)]
    assert offenders == []


# The cores themselves, on Karpenter's own examples (topologygroup.go, the spread docs).

def test_global_minimum_is_zero_below_min_domains() -> None:
    rule = ConstraintSkew(max_skew=1, min_domains=3)
    # Two zones with 2 pods each and minDomains 3: the minimum is 0, so neither zone takes a third pod.
    assert global_minimum(rule, [2, 2]) == 0
    assert next_domains(rule, {"a": 2, "b": 2}, ["a", "b"], own=1) == set()
    assert next_domains(rule, {"a": 2, "b": 2, "c": 2}, ["a", "b", "c"], own=1) == {"a", "b", "c"}


def test_next_domains_keeps_the_pod_within_max_skew_of_the_emptiest() -> None:
    rule = ConstraintSkew(max_skew=1, min_domains=1)
    assert next_domains(rule, {"a": 3, "b": 2}, ["a", "b", "c"], own=1) == {"c"}
    # A pod the selector does not match does not raise the count it lands in.
    assert next_domains(rule, {"a": 1, "b": 0}, ["a", "b"], own=0) == {"a", "b"}


def test_a_new_node_caps_hostname_spreads_at_max_skew() -> None:
    assert node_cap(ConstraintSkew(max_skew=2, min_domains=1)) == 2
    assert skew_limit(ConstraintSkew(max_skew=2, min_domains=1), 3) == 5


def test_least_domain_count_is_what_max_skew_forces_into_every_domain() -> None:
    # 7 pods over 3 zones within maxSkew 1: 2, 2, 3 at best, so every zone holds at least 2.
    assert least_domain_count(ConstraintSkew(max_skew=1, min_domains=1), 7, 3) == 2
    assert least_domain_count(ConstraintSkew(max_skew=5, min_domains=1), 4, 3) <= 0


def test_headroom_counts_nodes_and_only_the_limited_resources() -> None:
    from karpplan.model.resources import Resources

    room = Headroom(Resources({"cpu": 4000}), 2)
    assert room.admits(Resources({"cpu": 4000, "memory": 10**12}))
    assert not room.admits(Resources({"cpu": 4001}))
    after = room.charged(Resources({"cpu": 3000}), 2)
    assert not after.admits(Resources({"cpu": 1}))  # limits.nodes is spent
    assert room.excess(Resources({"cpu": 5000}), 3) == {"nodes": 1, "cpu": 1000}
