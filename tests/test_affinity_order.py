"""Required pod affinity is checked when each pod is placed (kube-scheduler; Karpenter's "first empty topology domain
only"): a plan of self-affine pods in two domains, each pod with a partner beside it, is one no scheduler reaches, and
a workload whose partners already run elsewhere cannot open a domain of its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from karpplan.constraints.affinity_order import unreachable

from planner_helpers import POOL, plan_text

HOST = "kubernetes.io/hostname"


@dataclass(frozen=True)
class _Term:
    topology_key: str
    selects: str  # the label value `tier` the term selects


@dataclass(frozen=True)
class _Affinity:
    required: tuple[_Term, ...] = ()


@dataclass(frozen=True)
class _Template:
    name: str
    pod_affinity: _Affinity = field(default_factory=_Affinity)


@dataclass(frozen=True)
class _Pod:
    key: str
    tier: str
    template: _Template


@dataclass(frozen=True)
class _Node:
    name: str
    fargate: bool = False

    def domain(self, key: str) -> str | None:
        return self.name if key == HOST else None


def _matches(pod: _Pod, other: _Pod) -> bool:
    return all(t.selects == other.tier for t in pod.template.pod_affinity.required)


def _pods(template: _Template, tier: str, count: int, start: int = 0) -> list[_Pod]:
    return [_Pod(f"default/{template.name}-{i}", tier, template) for i in range(start, start + count)]


SELF = _Template("web", _Affinity((_Term(HOST, "web"),)))


def _unreachable(placed: list[tuple[_Node, _Pod, bool]]) -> list[str]:
    return sorted(p.key for _, p in unreachable(placed, _matches))  # type: ignore[arg-type]


def test_self_affine_pods_on_two_nodes_are_not_reachable_one_by_one() -> None:
    a, b = _Node("a"), _Node("b")
    pods = _pods(SELF, "web", 10)
    placed = [(a, p, True) for p in pods[:6]] + [(b, p, True) for p in pods[6:]]
    assert _unreachable(placed) == sorted(p.key for p in pods[6:])  # the larger group opened the domain


def test_self_affine_pods_on_one_node_are_reachable() -> None:
    a = _Node("a")
    assert _unreachable([(a, p, True) for p in _pods(SELF, "web", 5)]) == []


def test_a_bound_partner_elsewhere_leaves_no_domain_to_open() -> None:
    a, b = _Node("a"), _Node("b")
    bound = _pods(SELF, "web", 1, start=100)
    pending = _pods(SELF, "web", 4)
    placed = [(a, p, False) for p in bound] + [(b, p, True) for p in pending]
    assert _unreachable(placed) == sorted(p.key for p in pending)
    assert _unreachable([(a, p, False) for p in bound] + [(a, p, True) for p in pending]) == []


def test_partners_without_affinity_seed_domains_and_chains_settle() -> None:
    cache = _Template("cache")
    web = _Template("web", _Affinity((_Term(HOST, "cache"),)))
    api = _Template("api", _Affinity((_Term(HOST, "web"),)))
    n1, n2, n3 = _Node("n1"), _Node("n2"), _Node("n3")
    placed = ([(n1, p, True) for p in _pods(cache, "cache", 1)] + [(n1, p, True) for p in _pods(web, "web", 2)]
              + [(n1, p, True) for p in _pods(api, "api", 2)] + [(n2, p, True) for p in _pods(cache, "cache", 1, 5)]
              + [(n2, p, True) for p in _pods(web, "web", 1, 5)])
    assert _unreachable(placed) == []
    lonely = _pods(web, "web", 1, 9)
    assert _unreachable(placed + [(n3, p, True) for p in lonely]) == [lonely[0].key]  # web does not select itself


def test_workloads_that_select_only_each_other_never_start() -> None:
    a = _Template("a", _Affinity((_Term(HOST, "b"),)))
    b = _Template("b", _Affinity((_Term(HOST, "a"),)))
    n = _Node("n")
    placed = [(n, p, True) for p in _pods(a, "a", 1) + _pods(b, "b", 1)]
    assert _unreachable(placed) == ["default/a-0", "default/b-0"]


MANIFESTS = POOL + """---
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: zone-a, node.kubernetes.io/instance-type: small,
           karpenter.sh/nodepool: default, karpenter.sh/capacity-type: on-demand, kubernetes.io/arch: amd64,
           kubernetes.io/os: linux}
status:
  capacity: {cpu: "2", memory: 2Gi, pods: "5"}
  allocatable: {cpu: 1900m, memory: 2038Mi, pods: "5"}
---
apiVersion: v1
kind: Pod
metadata: {name: first, labels: {security: s2}}
spec:
  nodeName: n1
  nodeSelector: {topology.kubernetes.io/zone: zone-a}
  containers: [{name: app, image: pause, resources: {requests: {cpu: 100m}}}]
status: {phase: Running}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: s}
spec:
  replicas: 6
  selector: {matchLabels: {security: s2}}
  template:
    metadata: {labels: {security: s2}}
    spec:
      containers: [{name: app, image: pause, resources: {requests: {cpu: 100m}}}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-b, zone-c]}]
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {labelSelector: {matchLabels: {security: s2}}, topologyKey: kubernetes.io/hostname}
"""


def test_a_partner_in_a_zone_the_pods_may_not_use_keeps_every_replica_out(tmp_path: Path) -> None:
    """topology_test.go "should respect self pod affinity for first empty topology domain only (hostname/constrained
    zones)": the bound pod in zone-a is the only node the replicas may join, and they may not run there."""
    for engine in ("optimal", "karpenter"):
        plan = plan_text(tmp_path, MANIFESTS, engine=engine)  # type: ignore[arg-type]
        assert plan.summary.scheduled == 0, engine
        assert plan.summary.unschedulable == 6, engine
        assert not [n for n in plan.nodes if n.new], engine
