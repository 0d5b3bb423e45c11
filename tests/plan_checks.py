"""Independent checks of a plan's new nodes, and the benchmark's problems, for the engine tests."""

from __future__ import annotations

from pathlib import Path

from bench.workloads import make_inputs, write_inputs
from karpplan.catalog import load_catalog
from karpplan.engines.result import Solution
from karpplan.model.build import load_inventory
from karpplan.model.labels import HOSTNAME
from karpplan.planner import make_problem
from karpplan.scheduling.problem import Problem


def bench_problem(tmp_path: Path, catalog: str, pods: int) -> Problem:
    inputs = make_inputs(catalog, pods, 42)
    manifests, catalog_file = write_inputs(inputs, tmp_path)
    inventory = load_inventory([str(manifests)])
    cat = load_catalog(None, str(catalog_file) if catalog_file else None)
    return make_problem(inventory, cat, list(inventory.pending))


def hostname_violations(problem: Problem, solution: Solution) -> list[str]:
    """Final per-node counts of hard hostname spread and hostname anti-affinity on new nodes."""
    topo = problem.topology
    out = []
    for node in solution.new_nodes:
        for gi, pod in node.pods:
            for rule in topo.rules_for(gi.template):
                if rule.hostname and rule.hard:
                    count = sum(1 for h, _ in node.pods if rule.counts(h.template.namespace, h.template.labels))
                    if count > rule.max_skew:
                        out.append(f"{node.name}: {count} pods match a maxSkew {rule.max_skew} hostname rule")
            anti = topo.anti_affinity.get(id(gi.template))
            for term in anti.terms if anti is not None else []:
                if term.key == HOSTNAME and any(
                        q is not pod and term.matches(h.template.namespace, h.template.labels, problem.namespace_labels)
                        for h, q in node.pods):
                    out.append(f"{node.name}: {pod.key} shares the node with a pod its anti-affinity names")
    return out


def resource_violations(solution: Solution) -> list[str]:
    out = []
    for node in solution.new_nodes:
        assert node.option is not None
        used: dict[str, int] = {}
        for gi, _ in node.pods:
            for name, amount in gi.template.requests.items():
                used[name] = used.get(name, 0) + amount
            if node.option.index not in gi.option_ids:
                out.append(f"{node.name}: {gi.template.namespace}/group {gi.index} may not use {node.option.instance_type.name}")
        out += [f"{node.name}: {name} {amount} > {node.option.free.get(name)}"
                for name, amount in used.items() if amount > node.option.free.get(name)]
    return out


def zone_level_view(problem: Problem, solution: Solution) -> tuple[dict[tuple[int, str, str, str], int], dict[str, str]]:
    """What zone-level rules see: matching pods per (zonal spread rule, pool, zone, capacity type), and
    the zone of every pod that carries a zonal pod (anti-)affinity term."""
    topo = problem.topology
    zonal_rules = [r for rules in topo.spread.values() for r in rules if not r.hostname]
    counts: dict[tuple[int, str, str, str], int] = {}
    zones: dict[str, str] = {}
    for node in solution.new_nodes:
        assert node.option is not None
        where = (node.option.pool.name, node.option.zone, node.option.capacity_type)
        for gi, pod in node.pods:
            tpl = gi.template
            for i, rule in enumerate(zonal_rules):
                if rule.counts(tpl.namespace, tpl.labels):
                    counts[(i, *where)] = counts.get((i, *where), 0) + 1
            terms = [t for a in (topo.affinity.get(id(tpl)), topo.anti_affinity.get(id(tpl))) if a is not None
                     for t in a.terms]
            if any(t.key != HOSTNAME for t in terms):
                zones[pod.key] = node.option.zone
    return counts, zones
