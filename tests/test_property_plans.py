"""Property: every plan of every engine keeps every scheduling rule (issue 14, "done when").

Hypothesis writes realistic manifests as YAML text (NodePools with requirements, taints, weights and limits;
existing nodes, some owned by a pool, with bound pods; Deployments with node selectors, tolerations, zone and
hostname spread, pod (anti-)affinity), plans them with both engines on a small fake catalog, and checks each
solution with the independent verifier (`karpplan.verify`): limits, fit, taints, affinity, spread. Pods that
match a Fargate profile are checked against the Fargate rules on the assembled plan.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from karpplan.catalog import load_catalog
from karpplan.catalog.types import Catalog
from karpplan.engines.result import Solution
from karpplan.model.build import load_inventory
from karpplan.model.fargate import profile_for
from karpplan.model.inventory import Inventory
from karpplan.planner import PlanOptions, make_plan, make_problem, solve
from karpplan.scheduling.problem import Problem
from karpplan.verify import Violation, verify

from planner_helpers import deployment as deployment_yaml
from planner_helpers import plan_json

ZONES = ("zone-a", "zone-b", "zone-c")
TYPES = ("small", "medium", "large", "xlarge")
# name -> (cpu, memory Gi, pods, on-demand price); spot is 40% cheaper and offered in two zones only.
SHAPES = {"small": (2, 2, 8, 0.10), "medium": (4, 8, 16, 0.19), "large": (8, 16, 29, 0.37),
          "xlarge": (16, 32, 58, 0.72)}
NODE_CPU_MILLI = {"small": 1900, "medium": 3900, "large": 7800, "xlarge": 15700}


def fake_catalog() -> str:
    lines = ["apiVersion: karpplan.io/v1alpha1", "kind: InstanceCatalog", "metadata: {name: property}",
             f"zones: [{', '.join(ZONES)}]", "instanceTypes:"]
    for name, (cpu, mem, pods, price) in SHAPES.items():
        lines += [f"  - name: {name}", "    arch: amd64", "    os: linux",
                  f'    capacity: {{cpu: "{cpu}", memory: {mem}Gi, pods: "{pods}"}}',
                  f'    allocatable: {{cpu: {NODE_CPU_MILLI[name]}m, memory: {mem * 1024 - 300}Mi, pods: "{pods}"}}',
                  f"    labels: {{size: {name}}}", "    offerings:"]
        for zone in ZONES:
            lines.append(f"      - {{zone: {zone}, capacityType: on-demand, price: {price}}}")
        for zone in ZONES[:2]:
            lines.append(f"      - {{zone: {zone}, capacityType: spot, price: {round(price * 0.6, 4)}}}")
    return "\n".join(lines) + "\n"


CATALOG = fake_catalog()


@dataclass(frozen=True)
class Flavour:
    """The instance types and zones manifests name: the fake catalog's, or some of the embedded AWS one's."""

    zones: tuple[str, ...]
    shapes: dict[str, tuple[int, int, int]]  # instance type -> (cpu, memory Gi, pods) of an existing node

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(self.shapes)


FAKE = Flavour(ZONES, {name: shape[:3] for name, shape in SHAPES.items()})
AWS = Flavour(("us-east-1a", "us-east-1b", "us-east-1c"),
              {"m5.large": (2, 8, 29), "m5.xlarge": (4, 16, 58), "c5.large": (2, 4, 29), "r5.large": (2, 16, 29)})


# ------------------------------------------------------------------------------------------- generator
def _subset(draw: st.DrawFn, values: tuple[str, ...]) -> list[str]:
    return sorted(draw(st.sets(st.sampled_from(values), min_size=1, max_size=len(values))))


@st.composite
def nodepool(draw: st.DrawFn, name: str, flavour: Flavour) -> str:
    reqs: list[str] = []
    if draw(st.booleans()):
        reqs.append(f"{{key: node.kubernetes.io/instance-type, operator: In, values: [{', '.join(_subset(draw, flavour.types))}]}}")
    if draw(st.booleans()):
        reqs.append(f"{{key: topology.kubernetes.io/zone, operator: In, values: [{', '.join(_subset(draw, flavour.zones))}]}}")
    if draw(st.booleans()):
        types = _subset(draw, ("on-demand", "spot"))
        reqs.append(f"{{key: karpenter.sh/capacity-type, operator: In, values: [{', '.join(types)}]}}")
    taints = ""
    if draw(st.integers(0, 3)) == 0:
        taints = f"\n      taints: [{{key: dedicated, value: {name}, effect: NoSchedule}}]"
    weight = f"\n  weight: {draw(st.integers(1, 100))}" if draw(st.booleans()) else ""
    limits: list[str] = []
    if draw(st.booleans()):
        if draw(st.booleans()):
            limits.append(f'cpu: "{draw(st.sampled_from([2, 4, 6, 8, 12, 16, 24, 40, 100]))}"')
        if draw(st.booleans()):
            limits.append(f"memory: {draw(st.sampled_from([4, 8, 16, 32, 64, 200]))}Gi")
        if draw(st.booleans()):
            limits.append(f"nodes: \"{draw(st.integers(1, 6))}\"")
    limit_text = f"\n  limits: {{{', '.join(limits)}}}" if limits else ""
    return f"""
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec:
  template:
    metadata:
      labels: {{pool: {name}}}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements: [{', '.join(reqs)}]{taints}{weight}{limit_text}
"""


@st.composite
def existing_node(draw: st.DrawFn, name: str, pools: list[str], apps: list[str], flavour: Flavour) -> str:
    size = draw(st.sampled_from(flavour.types))
    cpu, mem, pods = flavour.shapes[size]
    zone = draw(st.sampled_from(flavour.zones))
    labels = [f"kubernetes.io/hostname: {name}", f"topology.kubernetes.io/zone: {zone}",
              f"node.kubernetes.io/instance-type: {size}", "karpenter.sh/capacity-type: on-demand"]
    owner = draw(st.none() | st.sampled_from(pools))
    if owner is not None:
        labels += [f"karpenter.sh/nodepool: {owner}", f"pool: {owner}"]
    text = f"""
---
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{{', '.join(labels)}}}
status:
  capacity: {{cpu: "{cpu}", memory: {mem}Gi, pods: "{pods}"}}
  allocatable: {{cpu: {cpu * 1000 - 100 * (1 + cpu // 4)}m, memory: {mem * 1024 - 300}Mi, pods: "{pods}"}}
"""
    for i in range(draw(st.integers(0, 3))):
        app = draw(st.sampled_from(apps))
        request = draw(st.sampled_from(["100m", "250m", "500m"]))
        text += f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}-{app}-{i}, labels: {{app: {app}}}}}
spec:
  nodeName: {name}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: {request}, memory: 128Mi}}}}}}]
"""
    return text


def _selector(app: str) -> str:
    return f"{{matchLabels: {{app: {app}}}}}"


@st.composite
def deployment(draw: st.DrawFn, name: str, pools: list[str], apps: list[str], fargate: bool) -> str:
    replicas = draw(st.integers(1, 30))
    cpu = draw(st.sampled_from(["100m", "250m", "500m", "1", "1500m", "3"]))
    memory = draw(st.sampled_from(["64Mi", "256Mi", "1Gi", "3Gi"]))
    spec: list[str] = []
    labels = ""
    if fargate and draw(st.integers(0, 3)) == 0:
        labels += ", compute: fargate"
    if draw(st.integers(0, 2)) == 0:
        key = draw(st.sampled_from(["pool", "karpenter.sh/nodepool"]))
        spec.append(f"nodeSelector: {{{key}: {draw(st.sampled_from(pools))}}}")
    if draw(st.booleans()):
        tolerated = draw(st.sampled_from(pools))
        spec.append(draw(st.sampled_from([
            f"tolerations: [{{key: dedicated, operator: Equal, value: {tolerated}, effect: NoSchedule}}]",
            "tolerations: [{key: dedicated, operator: Exists}]",
        ])))
    spread: list[str] = []
    if draw(st.booleans()):
        hard = draw(st.booleans())
        min_domains = f", minDomains: {draw(st.integers(2, 3))}" if hard and draw(st.booleans()) else ""
        spread.append(f"{{maxSkew: {draw(st.integers(1, 2))}, topologyKey: topology.kubernetes.io/zone, "
                      f"whenUnsatisfiable: {'DoNotSchedule' if hard else 'ScheduleAnyway'}, "
                      f"labelSelector: {_selector(name)}{min_domains}}}")
    if draw(st.integers(0, 3)) == 0:
        hard = draw(st.booleans())
        spread.append(f"{{maxSkew: {draw(st.integers(1, 2))}, topologyKey: kubernetes.io/hostname, "
                      f"whenUnsatisfiable: {'DoNotSchedule' if hard else 'ScheduleAnyway'}, "
                      f"labelSelector: {_selector(name)}}}")
    if spread:
        spec.append(f"topologySpreadConstraints: [{', '.join(spread)}]")
    affinity: list[str] = []
    anti = draw(st.sampled_from([None, "required", "preferred"]))
    if anti is not None:
        key = draw(st.sampled_from(["kubernetes.io/hostname", "topology.kubernetes.io/zone"]))
        term = f"{{labelSelector: {_selector(name)}, topologyKey: {key}}}"
        if anti == "required":
            affinity.append(f"podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{term}]}}")
        else:
            affinity.append("podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                            f"[{{weight: 50, podAffinityTerm: {term}}}]}}")
    if draw(st.integers(0, 3)) == 0:
        target = draw(st.sampled_from(apps))
        affinity.append("podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                        f"[{{labelSelector: {_selector(target)}, topologyKey: topology.kubernetes.io/zone}}]}}")
    if affinity:
        spec.append(f"affinity: {{{', '.join(affinity)}}}")
    extra = "".join(f"\n      {line}" for line in spec)
    return deployment_yaml(name, replicas, cpu, extra, labels=labels, memory=memory)


FARGATE_PROFILE = """
---
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: property}
fargateProfiles:
  - name: fp
    selectors: [{namespace: default, labels: {compute: fargate}}]
"""


@st.composite
def manifests(draw: st.DrawFn, flavour: Flavour = FAKE) -> str:
    pools = [f"pool-{i}" for i in range(draw(st.integers(1, 3)))]
    apps = [f"app-{i}" for i in range(draw(st.integers(1, 4)))]
    fargate = draw(st.integers(0, 4)) == 0
    text = "".join(draw(nodepool(p, flavour)) for p in pools)
    text += "".join(draw(existing_node(f"node-{i}", pools, apps, flavour)) for i in range(draw(st.integers(0, 3))))
    text += "".join(draw(deployment(a, pools, apps, fargate)) for a in apps)
    if fargate:
        text += FARGATE_PROFILE
    return text


# ------------------------------------------------------------------------------------------- checks
@dataclass
class Planned:
    inventory: Inventory
    catalog: Catalog
    problem: Problem
    solutions: dict[str, Solution]  # "optimal", "karpenter" (the optimal run's greedy is the same simulation)


def plan_all(tmp_path: Path, text: str, catalog_text: str | None = CATALOG, region: str | None = None,
             time_limit: float = 1.0) -> Planned:
    (tmp_path / "manifests.yaml").write_text(text)
    catalog_file = None
    if catalog_text is not None:
        (tmp_path / "catalog.yaml").write_text(catalog_text)
        catalog_file = str(tmp_path / "catalog.yaml")
    inventory = load_inventory([str(tmp_path / "manifests.yaml")])
    catalog = load_catalog(region or inventory.region, catalog_file)
    profiles = inventory.fargate_profiles
    # Pods matching a Fargate profile run on Fargate only (plan_fargate.split_fargate); the engines get the rest.
    ec2 = [p for p in inventory.pending if not (profiles and profile_for(profiles, p.namespace, p.labels))]
    problem = make_problem(inventory, catalog, ec2)
    solutions: dict[str, Solution] = {}
    best, _, greedy = solve(problem, PlanOptions(engine="optimal", time_limit=time_limit, seed=0, workers=1))
    solutions["optimal"] = best
    solutions["optimal-greedy"] = greedy
    karpenter, _, again = solve(problem, PlanOptions(engine="karpenter", time_limit=time_limit))
    assert karpenter is again
    solutions["karpenter"] = karpenter
    return Planned(inventory, catalog, problem, solutions)


def karpenter_guarantees(violation: Violation, solution: Solution) -> bool:
    """Whether the Karpenter simulation promises to keep this rule.

    Karpenter checks a topology spread rule only when placing a pod that carries it, so its plan can end past
    a zone's maxSkew once every pod is counted (karpenter-scheduler.md; an open decision of issue 14), and its
    batch checks `limits.nodes` only against nodes that existed before the batch (`exceeds_node_limits`).
    Every other rule it keeps like the optimal engine, which is checked in full.
    """
    if violation.kind == "topology-spread":
        return False
    return not (violation.kind == "pool-limits" and solution.exceeds_node_limits and "limits.nodes" in violation.message)


def check(planned: Planned) -> None:
    problem = planned.problem
    pending = {p.key for g in problem.groups for p in g.group.pods}
    for engine, solution in planned.solutions.items():
        placed = [pod.key for node in solution.nodes for _, pod in node.pods]
        unplaced = [pod.key for _, pod in solution.unplaced]
        assert len(placed) == len(set(placed)), f"{engine}: a pod placed twice"
        assert Counter(placed + unplaced) == Counter(pending), f"{engine}: pods neither placed nor reported"
        violations = verify(problem, solution)
        if engine != "optimal":
            violations = [v for v in violations if karpenter_guarantees(v, solution)]
        assert violations == [], f"{engine}: " + "; ".join(map(str, violations))


def check_fargate(planned: Planned) -> None:
    """Fargate rules on the assembled plan: a matching pod runs alone on its own Fargate node or is reported,
    never on EC2; nothing else runs on Fargate."""
    inventory = planned.inventory
    profiles = inventory.fargate_profiles
    if not profiles:
        return
    plan = make_plan(inventory, planned.catalog, PlanOptions(engine="karpenter", time_limit=1.0))
    on = {key: node for node in plan.nodes for key in node.pods}
    unschedulable = {u.pod for u in plan.unschedulable}
    for pod in inventory.pending:
        node = on.get(pod.key)
        if profile_for(profiles, pod.namespace, pod.labels) is not None:
            assert (node is None) == (pod.key in unschedulable), pod.key
            assert node is None or (node.capacity_type == "fargate" and node.pods == (pod.key,)), pod.key
        else:
            assert node is None or node.capacity_type != "fargate", pod.key


def _pool(limits: str, taint: str = "", requirements: str = "") -> str:
    taints = f"\n      taints: [{taint}]" if taint else ""
    limit_text = f"\n  limits: {{{limits}}}" if limits else ""
    return f"""
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: pool-0}}
spec:
  template:
    metadata:
      labels: {{pool: pool-0}}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements: [{requirements}]{taints}{limit_text}
"""


# Found by hypothesis: the model's fluid packing fits 3.7 vCPU of pods in two small nodes (4Gi, all that
# limits.memory allows), whole pods do not, and the decoder opened a third node past the limit.
_TOLERATE = "\n      tolerations: [{key: dedicated, operator: Equal, value: pool-0, effect: NoSchedule}]"
_NEAR_APP_0 = ("\n      affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
               "[{labelSelector: {matchLabels: {app: app-0}}, topologyKey: topology.kubernetes.io/zone}]}}")
DECODER_PAST_MEMORY_LIMIT = (
    _pool("memory: 4Gi", "{key: dedicated, value: pool-0, effect: NoSchedule}")
    + deployment_yaml("app-0", 1, "100m", "\n      nodeSelector: {pool: pool-0}" + _TOLERATE)
    + deployment_yaml("app-1", 1, "500m", "\n      nodeSelector: {pool: pool-0}" + _TOLERATE + _NEAR_APP_0)
    + deployment_yaml("app-2", 1, "100m", "\n      nodeSelector: {pool: pool-0}" + _NEAR_APP_0)
    + deployment_yaml("app-3", 6, "500m", _TOLERATE + _NEAR_APP_0)
)

# Found by hypothesis: within limits.cpu 4 the model packs app-1 (1.5 vCPU) next to one of app-2's
# hostname-anti-affine pods on a small node; whole pods do not fit, the decoder left app-1 out and kept
# app-0, whose required zone affinity needed app-1.
_ON_POOL_0 = "\n      nodeSelector: {pool: pool-0}"
DECODER_DROPS_AFFINITY_PARTNER = (
    _pool('cpu: "4"')
    + deployment_yaml("app-0", 1, "100m", _ON_POOL_0 + _NEAR_APP_0.replace("app-0", "app-1"))
    + deployment_yaml("app-1", 1, "1500m", _ON_POOL_0)
    + deployment_yaml("app-2", 2, "500m", _ON_POOL_0 + "\n      affinity: {podAntiAffinity: "
                  "{requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: app-2}}, "
                  "topologyKey: kubernetes.io/hostname}]}}")
)

_NODE_0 = """
---
apiVersion: v1
kind: Node
metadata:
  name: node-0
  labels: {kubernetes.io/hostname: node-0, topology.kubernetes.io/zone: zone-a, node.kubernetes.io/instance-type: small}
status:
  capacity: {cpu: "2", memory: 2Gi, pods: "8"}
  allocatable: {cpu: 1900m, memory: 1748Mi, pods: "8"}
"""
_HOSTNAME_SPREAD = ("\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, "
                    "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: app-1}}}]")

# Found by hypothesis: app-1 (hostname spread, maxSkew 1) fits only on node-0, the pools being tainted; the
# model counted as hostname domains only the new nodes app-1 may use, so it put both replicas on node-0 next
# to a new pool-0 node, which counts as an empty domain (nodeTaintsPolicy Ignore): skew 2.
_TAINTED = "{key: dedicated, value: pool-0, effect: NoSchedule}"
SPREAD_BESIDE_TAINTED_NEW_NODE = (
    _pool("", _TAINTED) + _pool("", _TAINTED.replace("pool-0", "pool-1")).replace("pool-0", "pool-1")
    + _NODE_0 + deployment_yaml("app-0", 1, "100m", _ON_POOL_0 + _TOLERATE + _NEAR_APP_0)
    + deployment_yaml("app-1", 2, "100m", _HOSTNAME_SPREAD + _NEAR_APP_0)
)

# Found by hypothesis: Karpenter's greedy order puts app-1's three replicas (hostname spread, maxSkew 1) on
# node-0 before app-0 opens a new node, an empty hostname domain: skew 3 once every pod is counted. The
# optimal engine chose that (re-packed) plan over CP-SAT's dearer valid one.
WARM_START_PAST_HOSTNAME_SKEW = (
    _pool("") + _NODE_0 + deployment_yaml("app-0", 1, "100m", _ON_POOL_0 + _NEAR_APP_0)
    + deployment_yaml("app-1", 3, "100m", _HOSTNAME_SPREAD).replace("memory: 64Mi", "memory: 256Mi")
)

# Found by hypothesis: the model packs four 1Gi pods of app-1 (zone spread) into pool-1's two small zone-b
# nodes (all its limits.memory allows); whole pods fit one per node, the decoder left one out, and zone-a then
# held one more than the zone spread allows.
_ZONE_SPREAD = ("\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
                "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: app-1}}}]")
DECODER_DROP_BREAKS_ZONE_SPREAD = (
    _pool("") + _pool("memory: 4Gi").replace("pool-0", "pool-1").replace("  limits:", "  weight: 1\n  limits:")
    + _NODE_0.replace("small", "medium").replace('cpu: "2", memory: 2Gi, pods: "8"', 'cpu: "4", memory: 8Gi, pods: "16"')
    .replace('cpu: 1900m, memory: 1748Mi, pods: "8"', 'cpu: 3900m, memory: 7892Mi, pods: "16"')
    + deployment_yaml("app-0", 3, "100m", _HOSTNAME_SPREAD.replace("app-1", "app-0")
                  + "\n      affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 50, "
                  "podAffinityTerm: {labelSelector: {matchLabels: {app: app-0}}, topologyKey: topology.kubernetes.io/zone}}]}}")
    .replace("memory: 64Mi", "memory: 1Gi")
    + deployment_yaml("app-1", 7, "100m", _ZONE_SPREAD).replace("memory: 64Mi", "memory: 1Gi")
)


# Karpenter places app-1's three zone-spread pods one per zone, then app-2's four pods, which carry no rule but
# app-1's label, follow their preference into zone-a: 5 against 1 once every matching pod is counted. The
# optimal engine moves pods between zones until the spread holds (engines/zone_repair.py).
_PREFER_ZONE_A = ("\n      affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, "
                  "preference: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]}}]}}")
SAME_LABEL_PAST_ZONE_SKEW = (
    _pool("") + deployment_yaml("app-1", 3, "1500m", _ZONE_SPREAD.replace("app: app-1", "tier: web"), labels=", tier: web")
    + deployment_yaml("app-2", 4, "100m", _PREFER_ZONE_A, labels=", tier: web")
)

@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(text=manifests())
@example(text=DECODER_PAST_MEMORY_LIMIT)
@example(text=DECODER_DROPS_AFFINITY_PARTNER)
@example(text=SPREAD_BESIDE_TAINTED_NEW_NODE)
@example(text=WARM_START_PAST_HOSTNAME_SKEW)
@example(text=DECODER_DROP_BREAKS_ZONE_SPREAD)
@example(text=SAME_LABEL_PAST_ZONE_SKEW)
def test_every_plan_of_every_engine_keeps_every_rule(tmp_path: Path, text: str) -> None:
    planned = plan_all(tmp_path, text)
    check(planned)
    check_fargate(planned)


@settings(max_examples=8, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(text=manifests(AWS))
def test_plans_on_the_embedded_aws_catalog_keep_every_rule(tmp_path: Path, text: str) -> None:
    planned = plan_all(tmp_path, text, catalog_text=None, region="us-east-1")
    check(planned)
    check_fargate(planned)


# ------------------------------------------------------------------------------------------- issue 14 item 1
LIMITED_POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [xlarge]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  limits: {cpu: "100"}
---
apiVersion: v1
kind: Node
metadata:
  name: default-medium-1
  labels: {kubernetes.io/hostname: default-medium-1, topology.kubernetes.io/zone: zone-a,
           node.kubernetes.io/instance-type: medium, karpenter.sh/capacity-type: on-demand,
           karpenter.sh/nodepool: default}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "16"}
  allocatable: {cpu: 3900m, memory: 7892Mi, pods: "16"}
---
apiVersion: v1
kind: Pod
metadata: {name: busy, labels: {app: busy}}
spec:
  nodeName: default-medium-1
  containers: [{name: c, image: x, resources: {requests: {cpu: 3800m, memory: 1Gi}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 60
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - {name: app, image: nginx, resources: {requests: {cpu: 1500m, memory: 256Mi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: sidecar}
spec:
  replicas: 8
  selector: {matchLabels: {app: sidecar}}
  template:
    metadata: {labels: {app: sidecar}}
    spec:
      containers:
      - {name: app, image: nginx, resources: {requests: {cpu: 500m, memory: 256Mi}}}
"""


@pytest.mark.parametrize("engine", ["optimal", "karpenter"])
def test_a_pools_cpu_limit_holds_its_existing_and_new_nodes(tmp_path: Path, engine: str) -> None:
    """Issue 14 item 1: with `limits: {cpu: "100"}` and more demand than fits, the optimal engine's model
    kept its node counts within the limit but its decoder opened a seventh 16-vCPU node when whole pods did
    not fit the model's fluid packing (112 vCPU). The pool's existing node (4 vCPU) counts too."""
    (tmp_path / "manifests.yaml").write_text(LIMITED_POOL)
    (tmp_path / "catalog.yaml").write_text(CATALOG)
    plan = plan_json(tmp_path / "manifests.yaml", "--catalog", str(tmp_path / "catalog.yaml"), "--engine", engine,
                     time_limit="3")
    pool_nodes = [n for n in plan["nodes"] if n["nodePool"] == "default"]
    assert any(not n["new"] for n in pool_nodes)
    capacity = sum(SHAPES[n["instanceType"]][0] for n in pool_nodes)
    assert capacity <= 100, f"{engine}: the pool's nodes total {capacity} vCPU over limits.cpu 100"
    assert plan["summary"]["unschedulable"] > 0  # more demand than the limit lets in
    assert plan["summary"]["scheduled"] + plan["summary"]["unschedulable"] == 68
