"""Independent checks of a plan (thin views of `karpplan.verify`), and the benchmark's problems, for the engine tests."""

from __future__ import annotations

from pathlib import Path

from bench.workloads import make_inputs, write_inputs
from karpplan.catalog import load_catalog
from karpplan.constraints.inter_pod_affinity import INTER_POD_AFFINITY
from karpplan.constraints.resources import capacity_violations
from karpplan.constraints.topology_spread import TOPOLOGY_SPREAD
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
    """The independent verifier's node-level topology findings: hostname spread and pod (anti-)affinity.

    Zone-level counts are left out: Karpenter checks a spread rule only when an owner is placed, so its
    plan (and a re-packing that keeps its zone counts) can end past maxSkew in a zone by final counts."""
    return [v.message for kind in (TOPOLOGY_SPREAD, INTER_POD_AFFINITY) for v in kind.violations(problem, solution)
            if v.key == HOSTNAME]


def resource_violations(solution: Solution) -> list[str]:
    """The verifier's resource findings, and new nodes of launch options their pods' group may not use."""
    out = [v.message for v in capacity_violations(solution)]
    for node in solution.new_nodes:
        assert node.option is not None
        for group_info, _ in node.pods:
            if node.option.index not in group_info.option_ids:
                out.append(f"{node.name}: {group_info.template.namespace}/group {group_info.index} may not use {node.option.instance_type.name}")
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
        for group_info, pod in node.pods:
            pod_template = group_info.template
            for i, rule in enumerate(zonal_rules):
                if rule.counts(pod_template.namespace, pod_template.labels):
                    counts[(i, *where)] = counts.get((i, *where), 0) + 1
            terms = [t for a in (topo.affinity.get(id(pod_template)), topo.anti_affinity.get(id(pod_template))) if a is not None
                     for t in a.terms]
            if any(t.key != HOSTNAME for t in terms):
                zones[pod.key] = node.option.zone
    return counts, zones
