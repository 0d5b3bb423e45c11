"""The constraint registry: every kind has its filter, model, verifier and reason parts in its own module,
and the independent verifier catches a plan that breaks each kind's rule."""

from __future__ import annotations

import inspect
import string
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from karpplan.catalog import load_catalog
from karpplan.constraints.base import ConstraintKind
from karpplan.constraints.registry import REGISTRY, STATIC_FILTERS
from karpplan.engines.cpsat import optimal
from karpplan.engines.cpsat.optimal import OptimalModel
from karpplan.engines.result import Solution, SolvedNode
from karpplan.model.build import load_inventory
from karpplan.planner import PlanOptions, make_problem, solve
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

from planner_helpers import FAKE_CATALOG, POOL, deployment, existing_node

KINDS = ["taints", "node-affinity", "host-ports", "resources", "pool-limits", "topology-spread",
         "inter-pod-affinity"]
PARTS = ["filter_node", "add_to_model", "violations"]


def test_the_registry_lists_every_kind_once_in_model_order() -> None:
    assert [k.name for k in REGISTRY] == KINDS
    assert sorted(k.name for k in STATIC_FILTERS) == sorted(KINDS)  # the same kinds, filter order


@pytest.mark.parametrize("kind", REGISTRY, ids=lambda k: k.name)
def test_each_kind_has_its_filter_model_verifier_and_reason_in_its_own_module(kind: ConstraintKind) -> None:
    cls = type(kind)
    module = inspect.getmodule(cls)
    assert module is not None and module.__name__.startswith("karpplan.constraints.")
    for part in PARTS:
        method = getattr(cls, part)
        assert not getattr(method, "__isabstractmethod__", False), part
        assert method.__module__ == module.__name__, f"{kind.name}.{part} is defined in {method.__module__}"
    assert kind.summary and "\n" not in kind.summary
    assert kind.messages
    for key, template in kind.messages.items():
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
        text = kind.reason(key, **{f: f"<{f}>" for f in fields})
        assert "{" not in text and all(f"<{f}>" in text for f in fields)
    modules = [inspect.getmodule(type(k)) for k in REGISTRY]
    assert len(set(modules)) == len(REGISTRY)  # one module per kind


def test_the_model_class_keeps_no_constraint_rows_of_its_own() -> None:
    for gone in ["add_demand", "add_existing_capacity", "add_new_capacity", "add_limits", "add_spread",
                 "_zonal_spread", "_hostname_spread", "_spread_allowed_domains", "add_affinity", "_anti_term",
                 "_affinity_term", "_preferred_affinity_term", "_preferred_anti_term"]:
        assert not hasattr(OptimalModel, gone), gone
    source = inspect.getsource(optimal)
    for rule_word in ["max_skew", "anti_affinity", "nodes_left", "only_enforce_if", "requests.get("]:
        assert rule_word not in source, rule_word
    assert len(source.splitlines()) <= 600


def test_reason_wording_is_the_kinds() -> None:
    from karpplan.scheduling import filters

    assert filters.insufficient("cpu") == "Insufficient cpu"
    assert filters.insufficient("pods") == "Too many pods"
    assert filters.UNSCHEDULABLE == "node(s) were unschedulable"
    assert filters.SPREAD_MISSING_LABEL == ("node(s) didn't match pod topology spread constraints "
                                            "(missing required label)")


# ------------------------------------------------------------------------------ the verifier, broken plans
def _planned(tmp_path: Path, manifests: str, catalog: str = FAKE_CATALOG) -> tuple[Problem, Solution]:
    (tmp_path / "m.yaml").write_text(textwrap.dedent(manifests))
    (tmp_path / "c.yaml").write_text(textwrap.dedent(catalog))
    inventory = load_inventory([str(tmp_path / "m.yaml")])
    problem = make_problem(inventory, load_catalog(None, str(tmp_path / "c.yaml")), list(inventory.pending))
    solution, _, _ = solve(problem, PlanOptions(engine="karpenter"))
    assert not solution.unplaced
    assert verify(problem, solution) == []  # the engine's plan is valid: the broken one below must not be
    return problem, solution


def _moved(solution: Solution, pod_name: str, target: str | SolvedNode) -> Solution:
    """The solution with one pod (by name prefix) moved to another node (by name, or a new node)."""
    nodes = [replace(n, pods=list(n.pods)) for n in solution.nodes]
    if isinstance(target, SolvedNode):
        nodes.append(target)
    entry = next(e for n in nodes for e in n.pods if e[1].name.startswith(pod_name))
    for n in nodes:
        if entry in n.pods:
            n.pods.remove(entry)
    goal = target.name if isinstance(target, SolvedNode) else target
    next(n for n in nodes if n.name == goal).pods.append(entry)
    return replace(solution, nodes=nodes)


def _new_node(problem: Problem, keep: Callable[[LaunchOption], bool], name: str = "extra") -> SolvedNode:
    return SolvedNode(name, None, next(o for o in problem.options if keep(o)), [])


def _new_nodes(solution: Solution) -> list[str]:
    return [n.name for n in solution.new_nodes]


def _kinds(problem: Problem, solution: Solution) -> set[str]:
    return {v.kind for v in verify(problem, solution)}


def test_verifier_catches_a_pod_on_a_tainted_node(tmp_path: Path) -> None:
    tainted = existing_node("tainted", "zone-a", cpu="8").replace(
        "status:", "spec:\n  taints: [{key: dedicated, value: db, effect: NoSchedule}]\nstatus:")
    problem, solution = _planned(tmp_path, POOL + tainted + deployment("web", 1))
    assert _kinds(problem, _moved(solution, "web", "tainted")) == {"taints"}


def test_verifier_catches_an_over_filled_node(tmp_path: Path) -> None:
    problem, solution = _planned(tmp_path, POOL + deployment("web", 3, cpu="1500m"))
    target = _new_nodes(solution)[0]
    broken = solution
    for node in solution.new_nodes[1:]:
        for _, pod in node.pods:
            broken = _moved(broken, pod.name, target)
    assert "resources" in _kinds(problem, broken)


def test_verifier_catches_a_node_selector_mismatch(tmp_path: Path) -> None:
    extra = "      nodeSelector: {topology.kubernetes.io/zone: zone-a}"
    problem, solution = _planned(tmp_path, POOL + deployment("web", 1, extra=extra))
    broken = _moved(solution, "web", _new_node(problem, lambda o: o.zone == "zone-b"))
    assert _kinds(problem, broken) == {"node-affinity"}


def test_verifier_catches_a_host_port_clash(tmp_path: Path) -> None:
    extra = "        ports: [{containerPort: 80, hostPort: 80}]"
    problem, solution = _planned(tmp_path, POOL + deployment("web", 2).replace("memory: 64Mi}}", "memory: 64Mi}}\n" + extra))
    assert len(solution.new_nodes) == 2
    second = solution.new_nodes[1].pods[0][1].name
    assert _kinds(problem, _moved(solution, second, _new_nodes(solution)[0])) == {"host-ports"}


def test_verifier_catches_a_broken_hostname_spread(tmp_path: Path) -> None:
    extra = """      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: web}}}"""
    problem, solution = _planned(tmp_path, POOL + deployment("web", 3, extra=extra))
    second = solution.new_nodes[1].pods[0][1].name
    assert _kinds(problem, _moved(solution, second, _new_nodes(solution)[0])) == {"topology-spread"}


def test_verifier_catches_a_broken_zone_spread(tmp_path: Path) -> None:
    extra = """      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: web}}}"""
    problem, solution = _planned(tmp_path, POOL + deployment("web", 3, cpu="1500m", extra=extra))
    zone_a = next(n for n in solution.new_nodes if n.option is not None and n.option.zone == "zone-a")
    other = next(n for n in solution.new_nodes if n is not zone_a)
    broken = _moved(solution, other.pods[0][1].name, _new_node(problem, lambda o: o.zone == "zone-a"))
    assert _kinds(problem, broken) == {"topology-spread"}


def test_verifier_catches_broken_anti_affinity(tmp_path: Path) -> None:
    extra = """      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}"""
    problem, solution = _planned(tmp_path, POOL + deployment("web", 2, extra=extra))
    second = solution.new_nodes[1].pods[0][1].name
    assert _kinds(problem, _moved(solution, second, _new_nodes(solution)[0])) == {"inter-pod-affinity"}


def test_verifier_catches_broken_pod_affinity(tmp_path: Path) -> None:
    db = deployment("db", 1, extra="      nodeSelector: {topology.kubernetes.io/zone: zone-a}")
    extra = """      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: db}}}"""
    problem, solution = _planned(tmp_path, POOL + db + deployment("web", 1, extra=extra))
    broken = _moved(solution, "web", _new_node(problem, lambda o: o.zone == "zone-b"))
    assert _kinds(problem, broken) == {"inter-pod-affinity"}


def test_verifier_catches_a_pool_over_its_limits(tmp_path: Path) -> None:
    limited = POOL + "  limits: {cpu: 4}\n"
    problem, solution = _planned(tmp_path, limited + deployment("web", 1, cpu="1500m"))
    broken = _moved(solution, "web", _new_node(problem, lambda o: o.instance_type.name == "large"))
    broken = replace(broken, nodes=[*broken.nodes, _new_node(problem, lambda o: o.instance_type.name == "small", "x")])
    assert _kinds(problem, broken) == {"pool-limits"}
