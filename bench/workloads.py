"""Workloads for the scheduling benchmark, after Karpenter's `scheduling_benchmark_test.go`.

Karpenter's `makeDiversePods(n)` draws every pod independently: CPU from {100m, 250m, 500m, 1000m, 1500m},
memory from {100, 256, 512, 1024, 2048, 4096} Mi, and a label value from a-g. This generator draws the same
way with a seeded RNG, for five classes of n/5 pods each (the remainder generic, as Karpenter does):

* ``generic``: `my-label=<v>`, no constraints.
* ``zone-spread``: `my-label=<v>`, zone topologySpreadConstraint, maxSkew 1, DoNotSchedule.
* ``hostname-spread``: the same on `kubernetes.io/hostname`.
* ``zone-affinity``: `my-affinity=<v>`, required pod affinity to `my-affinity=<v>` on the zone.
* ``hostname-anti-affinity``: all `app=nginx`, required anti-affinity to `app=nginx` on the hostname, so
  every such pod needs a node of its own.

Pods with identical specs (class, label value, CPU, memory) become one Deployment whose replicas are the
number of such pods, so the planner's per-template grouping sees what it would see in a real cluster.

Deviation, on purpose: Karpenter draws a spread or affinity pod's selector value independently of its own
label value. Here a Deployment selects its own pods (as real Deployments do), so a zone-affinity
Deployment is self-affine; `independent_selectors=True` restores Karpenter's independent draws.

The synthetic catalog is Karpenter's `fake.InstanceTypes(400)`: type i has i+1 vCPU, 2(i+1) GiB and
10(i+1) pods, kube-reserved 100m/10Mi, spot offerings in test-zone-1/2 and on-demand in test-zone-1/2/3,
every offering priced 0.1 per vCPU + 0.1 per 1e9 bytes of memory (karpenter-scheduler.md §13, §14).
The fake types also list three operating systems; here they run Linux only (see `synthetic_catalog`).

Two more families have a real cluster's shape rather than Karpenter's uniform draws (`make_family_inputs`):

* ``realistic`` (`realistic_inputs`): Deployments of a few archetypes (web front ends, APIs, workers, caches,
  memory-heavy analytics, critical payments, serverless functions) with the requests and replica counts
  such services have, in several namespaces; four NodePools with weights and limits (spot first, on-demand
  behind it, a tainted memory pool, a tainted on-demand pool for critical pods), a log-agent DaemonSet, and
  an eksctl ClusterConfig whose Fargate profile takes the `serverless` namespace. Zone and hostname spread,
  required and preferred hostname anti-affinity as such services use them.
* ``host-spread`` (`host_spread_inputs`): the seed's example (20 replicas of 1 CPU / 256M, zone maxSkew 5)
  with its hostname maxSkew 1 constraint restored, on ap-northeast-2.
* ``many-deployments`` (`many_deployments_inputs`): thousands of small Deployments, each spreading over
  zones by its own label, in 20 NodePools chosen by nodeSelector (the lint benchmark's tree, planned).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

GENERIC = "generic"
ZONE_SPREAD = "zone-spread"
HOSTNAME_SPREAD = "hostname-spread"
ZONE_AFFINITY = "zone-affinity"
HOSTNAME_ANTI_AFFINITY = "hostname-anti-affinity"
CLASSES = (GENERIC, ZONE_SPREAD, HOSTNAME_SPREAD, ZONE_AFFINITY, HOSTNAME_ANTI_AFFINITY)

CPU_MILLIS = (100, 250, 500, 1000, 1500)
MEMORY_MIB = (100, 256, 512, 1024, 2048, 4096)
LABEL_VALUES = ("a", "b", "c", "d", "e", "f", "g")

SPREAD_LABEL = "my-label"  # Karpenter's randomLabels() key (generic and spread pods)
AFFINITY_LABEL = "my-affinity"  # Karpenter's randomAffinityLabels() key ("my-affininity" there, a typo)
ANTI_AFFINITY_LABELS = {"app": "nginx"}
CLASS_LABEL = "bench.karpplan.io/class"
NAME_LABEL = "app.kubernetes.io/name"
PART_OF_LABEL = "app.kubernetes.io/part-of"

ZONE_KEY = "topology.kubernetes.io/zone"
HOSTNAME_KEY = "kubernetes.io/hostname"

NAMESPACE = "bench"
NODEPOOL_NAME = "default"
SYNTHETIC_ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")
SYNTHETIC_SPOT_ZONES = ("test-zone-1", "test-zone-2")
SYNTHETIC_TYPES = 400
# §13's NodePool limits: large enough never to bind, present so the limit rows and checks run.
LIMIT_CPU = "10000000"
LIMIT_MEMORY = "10000000Gi"

CATALOGS = ("synthetic", "aws")


@dataclass(frozen=True)
class PodDraw:
    """One pod as Karpenter's benchmark would draw it."""

    pod_class: str
    label_value: str  # value of the class's own label (my-label / my-affinity; "nginx" for anti-affinity)
    selector_value: str | None  # value its spread/affinity selector asks for (None: no selector)
    cpu_millis: int
    memory_mib: int


@dataclass(frozen=True)
class DeploymentSpec:
    """Identical pods folded into one Deployment."""

    name: str
    pod_class: str
    label_value: str
    selector_value: str | None
    cpu_millis: int
    memory_mib: int
    replicas: int


@dataclass(frozen=True)
class BenchInputs:
    """Everything one benchmark row reads: manifests (as parsed YAML) and, for the synthetic catalog, a catalog."""

    catalog: str  # "synthetic" | "aws"
    pods: int
    deployments: tuple[DeploymentSpec, ...]
    manifests: tuple[dict[str, Any], ...]  # NodePool, EC2NodeClass, Namespace, Deployments
    catalog_document: dict[str, Any] | None  # InstanceCatalog for "synthetic", None for the embedded catalog
    region: str | None = None  # the embedded catalog's region (None: its default, us-east-1)


# ------------------------------------------------------------------------------------------ drawing
def class_counts(total: int, *, generic_only: bool = False) -> dict[str, int]:
    """Pods per class: total // 5 each, the remainder generic (all generic when `generic_only`)."""
    if total < 0:
        raise ValueError("total must not be negative")
    if generic_only:
        return {cls: (total if cls == GENERIC else 0) for cls in CLASSES}
    share = total // len(CLASSES)
    counts = {cls: share for cls in CLASSES}
    counts[GENERIC] += total - share * len(CLASSES)
    return counts


def draw_pods(
    total: int, seed: int = 42, *, generic_only: bool = False, independent_selectors: bool = False
) -> list[PodDraw]:
    """`total` pods in class order, each with independently drawn sizes and label values."""
    rng = random.Random(seed)
    draws: list[PodDraw] = []
    for cls, count in class_counts(total, generic_only=generic_only).items():
        for _ in range(count):
            if cls == HOSTNAME_ANTI_AFFINITY:
                label, selector = ANTI_AFFINITY_LABELS["app"], ANTI_AFFINITY_LABELS["app"]
            else:
                label = rng.choice(LABEL_VALUES)
                if cls == GENERIC:
                    selector = None
                else:
                    selector = rng.choice(LABEL_VALUES) if independent_selectors else label
            cpu = rng.choice(CPU_MILLIS)
            memory = rng.choice(MEMORY_MIB)
            draws.append(PodDraw(cls, label, selector, cpu, memory))
    return draws


def group_deployments(draws: Iterable[PodDraw]) -> list[DeploymentSpec]:
    """Identical draws become one Deployment, in order of first appearance."""
    counts: dict[PodDraw, int] = {}
    for draw in draws:
        counts[draw] = counts.get(draw, 0) + 1
    specs: list[DeploymentSpec] = []
    for draw, replicas in counts.items():
        parts = [draw.pod_class]
        if draw.pod_class != HOSTNAME_ANTI_AFFINITY:
            parts.append(draw.label_value)
            if draw.selector_value is not None and draw.selector_value != draw.label_value:
                parts.append(f"sel-{draw.selector_value}")
        parts += [f"{draw.cpu_millis}m", f"{draw.memory_mib}mi"]
        specs.append(DeploymentSpec("-".join(parts), draw.pod_class, draw.label_value, draw.selector_value,
                                    draw.cpu_millis, draw.memory_mib, replicas))
    return specs


# ------------------------------------------------------------------------------------------ manifests
def _pod_labels(spec: DeploymentSpec) -> dict[str, str]:
    labels = {NAME_LABEL: spec.name, PART_OF_LABEL: "karpenter-benchmark", CLASS_LABEL: spec.pod_class}
    if spec.pod_class == HOSTNAME_ANTI_AFFINITY:
        labels.update(ANTI_AFFINITY_LABELS)
    elif spec.pod_class == ZONE_AFFINITY:
        labels[AFFINITY_LABEL] = spec.label_value
    else:
        labels[SPREAD_LABEL] = spec.label_value
    return labels


def _constraints(spec: DeploymentSpec) -> dict[str, Any]:
    """The pod-spec fields that carry the class's scheduling constraint."""
    if spec.pod_class in (ZONE_SPREAD, HOSTNAME_SPREAD):
        key = ZONE_KEY if spec.pod_class == ZONE_SPREAD else HOSTNAME_KEY
        return {"topologySpreadConstraints": [{
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {SPREAD_LABEL: spec.selector_value}},
        }]}
    if spec.pod_class == ZONE_AFFINITY:
        return {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": ZONE_KEY,
            "labelSelector": {"matchLabels": {AFFINITY_LABEL: spec.selector_value}},
        }]}}}
    if spec.pod_class == HOSTNAME_ANTI_AFFINITY:
        return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": HOSTNAME_KEY,
            "labelSelector": {"matchLabels": dict(ANTI_AFFINITY_LABELS)},
        }]}}}
    return {}


def deployment_manifest(spec: DeploymentSpec, namespace: str = NAMESPACE) -> dict[str, Any]:
    labels = _pod_labels(spec)
    pod_spec: dict[str, Any] = {
        "containers": [{
            "name": "app",
            "image": "public.ecr.aws/eks-distro/kubernetes/pause:3.7",
            "resources": {"requests": {"cpu": f"{spec.cpu_millis}m", "memory": f"{spec.memory_mib}Mi"}},
        }],
    }
    pod_spec.update(_constraints(spec))
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": spec.name, "namespace": namespace,
                     "labels": {NAME_LABEL: spec.name, PART_OF_LABEL: "karpenter-benchmark"}},
        "spec": {
            "replicas": spec.replicas,
            "selector": {"matchLabels": {NAME_LABEL: spec.name}},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


def nodepool_manifests(catalog: str) -> list[dict[str, Any]]:
    """One NodePool (and its EC2NodeClass) for the catalog.

    Synthetic: every type, spot or on-demand (the scheduling suite's NodePool). AWS: Karpenter's
    getting-started pool, on-demand amd64 c/m/r of generation > 2.
    """
    if catalog not in CATALOGS:
        raise ValueError(f"unknown catalog {catalog!r} (known: {', '.join(CATALOGS)})")
    requirements: list[dict[str, Any]] = [
        {"key": "karpenter.sh/capacity-type", "operator": "In",
         "values": ["spot", "on-demand"] if catalog == "synthetic" else ["on-demand"]},
    ]
    if catalog == "aws":
        requirements += [
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
            {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
            {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
            {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
        ]
    nodepool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": NODEPOOL_NAME},
        "spec": {
            "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": requirements,
            }},
            "limits": {"cpu": LIMIT_CPU, "memory": LIMIT_MEMORY},
        },
    }
    return [nodepool, _nodeclass()]


def fake_price(vcpu: int, memory_bytes: int) -> float:
    """Karpenter's fake.PriceFromResources: 0.1 per vCPU + 0.1 per 1e9 bytes."""
    return round(0.1 * vcpu + 0.1 * memory_bytes / 1e9, 6)


def synthetic_catalog(count: int = SYNTHETIC_TYPES, operating_systems: Sequence[str] = ("linux",)) -> dict[str, Any]:
    """Karpenter's fake.InstanceTypes(count) as an InstanceCatalog document.

    The fake types run linux, windows and darwin; karpplan makes one launch option per OS, which would
    triple the options (6,000 instead of 2,000) without changing any cost, since no benchmark pod selects
    an OS. Linux alone is the default; pass all three to measure that overhead.
    """
    types: list[dict[str, Any]] = []
    for i in range(count):
        vcpu, memory_gib, pods = i + 1, 2 * (i + 1), 10 * (i + 1)
        price = fake_price(vcpu, memory_gib * 2**30)
        large = vcpu > 4 and memory_gib > 8
        labels = {"size": "large" if large else "small", "integer": str(vcpu)}
        if large:
            labels["special"] = "optional"
        offerings = [{"zone": z, "capacityType": "spot", "price": price} for z in SYNTHETIC_SPOT_ZONES]
        offerings += [{"zone": z, "capacityType": "on-demand", "price": price} for z in SYNTHETIC_ZONES]
        types.append({
            "name": f"fake-it-{i}",
            "arch": "amd64",
            "os": list(operating_systems),
            "capacity": {"cpu": str(vcpu), "memory": f"{memory_gib}Gi", "pods": str(pods)},
            # The fake provider's only overhead is kube-reserved 100m CPU and 10Mi memory.
            "allocatable": {"cpu": f"{vcpu * 1000 - 100}m", "memory": f"{memory_gib * 1024 - 10}Mi",
                            "pods": str(pods)},
            "labels": labels,
            "offerings": offerings,
        })
    return {
        "apiVersion": "karpplan.io/v1alpha1",
        "kind": "InstanceCatalog",
        "metadata": {"name": f"karpenter-fake-{count}"},
        "zones": list(SYNTHETIC_ZONES),
        "instanceTypes": types,
    }


def make_inputs(
    catalog: str,
    pods: int,
    seed: int = 42,
    *,
    generic_only: bool = False,
    independent_selectors: bool = False,
    instance_types: int = SYNTHETIC_TYPES,
) -> BenchInputs:
    """The manifests (and synthetic catalog) of one benchmark row."""
    specs = group_deployments(draw_pods(pods, seed, generic_only=generic_only,
                                        independent_selectors=independent_selectors))
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    manifests = [*nodepool_manifests(catalog), namespace, *(deployment_manifest(s) for s in specs)]
    catalog_document = synthetic_catalog(instance_types) if catalog == "synthetic" else None
    return BenchInputs(catalog, pods, tuple(specs), tuple(manifests), catalog_document)


# ------------------------------------------------------------------------------------------ files
def to_yaml(documents: Sequence[Mapping[str, Any]]) -> str:
    return yaml.safe_dump_all(list(documents), sort_keys=False, default_flow_style=False)


def write_inputs(inputs: BenchInputs, directory: Path) -> tuple[Path, Path | None]:
    """Write `workloads.yaml` (and `catalog.yaml`) into `directory`; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    manifests = directory / "workloads.yaml"
    manifests.write_text(to_yaml(inputs.manifests))
    catalog_path: Path | None = None
    if inputs.catalog_document is not None:
        catalog_path = directory / "catalog.yaml"
        catalog_path.write_text(to_yaml([inputs.catalog_document]))
    return manifests, catalog_path


# ------------------------------------------------------------------------------------------ real-world shape
REALISTIC = "realistic"
HOST_SPREAD = "host-spread"
MANY_DEPLOYMENTS = "many-deployments"
MANY_POOLS = 20
FAMILIES = ("diverse", "generic", REALISTIC, HOST_SPREAD, MANY_DEPLOYMENTS)
REALISTIC_REGION = "us-east-1"
HOST_SPREAD_REGION = "ap-northeast-2"
HOST_SPREAD_PODS = 20
FARGATE_NAMESPACE = "serverless"
APP_LABEL = "app"


@dataclass(frozen=True)
class Archetype:
    """A kind of service: where it runs, what it asks, how many replicas, how it is constrained."""

    name: str
    share: int  # relative number of Deployments
    namespaces: tuple[str, ...]
    cpu: tuple[str, ...]
    memory: tuple[str, ...]
    replicas: tuple[int, int]  # inclusive range, before scaling with the cluster's size
    constraint: str  # none | zone-spread | zone-host-spread | host-anti | preferred-host-anti
    node_selector: tuple[tuple[str, str], ...] = ()
    toleration: tuple[str, str] | None = None  # (key, value), effect NoSchedule


ARCHETYPES = (
    Archetype("web", 20, ("storefront", "catalog"), ("250m", "500m"), ("256Mi", "512Mi"), (2, 10),
              "zone-spread"),
    Archetype("api", 25, ("storefront", "catalog", "accounts"), ("500m", "1"), ("512Mi", "1Gi", "2Gi"), (2, 6),
              "preferred-host-anti"),
    Archetype("worker", 20, ("ingest", "jobs"), ("1", "2"), ("1Gi", "2Gi", "4Gi"), (1, 15), "none"),
    Archetype("cache", 8, ("storefront", "accounts"), ("500m", "1"), ("2Gi", "4Gi"), (3, 3), "host-anti"),
    Archetype("analytics", 7, ("data",), ("1", "2"), ("8Gi", "16Gi"), (1, 4), "none",
              node_selector=(("workload", "memory"),), toleration=("workload", "memory")),
    Archetype("payments", 8, ("payments",), ("500m", "1"), ("1Gi", "2Gi"), (3, 6), "zone-host-spread",
              node_selector=(("tier", "critical"),), toleration=("dedicated", "critical")),
    Archetype("function", 12, (FARGATE_NAMESPACE,), ("250m", "500m", "1"), ("512Mi", "1Gi", "2Gi"), (1, 3),
              "none"),
)


@dataclass(frozen=True)
class RealisticDeployment:
    name: str
    namespace: str
    archetype: Archetype
    cpu: str
    memory: str
    replicas: int


def replica_scale(pods: int) -> float:
    """Larger clusters run more replicas per service (√(pods / 1,000), at least 1)."""
    return max(1.0, math.sqrt(pods / 1000))


def draw_realistic(pods: int, seed: int = 42) -> list[RealisticDeployment]:
    """Deployments of the archetypes, drawn until they hold `pods` replicas (the last one trimmed)."""
    rng = random.Random(seed)
    scale = replica_scale(pods)
    weights = [a.share for a in ARCHETYPES]
    out: list[RealisticDeployment] = []
    left = pods
    while left > 0:
        archetype = rng.choices(ARCHETYPES, weights)[0]
        low, high = archetype.replicas
        replicas = min(left, max(1, round(rng.randint(low, high) * scale)))
        namespace = rng.choice(archetype.namespaces)
        out.append(RealisticDeployment(f"{archetype.name}-{len(out):04d}", namespace, archetype,
                                       rng.choice(archetype.cpu), rng.choice(archetype.memory), replicas))
        left -= replicas
    return out


def _spread(key: str, app: str, when: str = "DoNotSchedule") -> dict[str, Any]:
    return {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {APP_LABEL: app}}}


def _realistic_constraints(d: RealisticDeployment) -> dict[str, Any]:
    kind, app = d.archetype.constraint, d.name
    term = {"topologyKey": HOSTNAME_KEY, "labelSelector": {"matchLabels": {APP_LABEL: app}}}
    if kind == "zone-spread":
        return {"topologySpreadConstraints": [_spread(ZONE_KEY, app), _spread(HOSTNAME_KEY, app, "ScheduleAnyway")]}
    if kind == "zone-host-spread":
        return {"topologySpreadConstraints": [_spread(ZONE_KEY, app), _spread(HOSTNAME_KEY, app)]}
    if kind == "host-anti":
        return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    if kind == "preferred-host-anti":
        return {"topologySpreadConstraints": [_spread(ZONE_KEY, app)],
                "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "podAffinityTerm": term}]}}}
    return {}


def realistic_deployment_manifest(d: RealisticDeployment) -> dict[str, Any]:
    labels = {APP_LABEL: d.name, NAME_LABEL: d.name, PART_OF_LABEL: d.namespace,
              CLASS_LABEL: d.archetype.name}
    container: dict[str, Any] = {
        "name": d.archetype.name,
        "image": f"registry.example.com/{d.namespace}/{d.archetype.name}:1.0",
        "resources": {"requests": {"cpu": d.cpu, "memory": d.memory}, "limits": {"memory": d.memory}},
    }
    pod_spec: dict[str, Any] = {"containers": [container]}
    if d.archetype.node_selector:
        pod_spec["nodeSelector"] = dict(d.archetype.node_selector)
    if d.archetype.toleration is not None:
        key, value = d.archetype.toleration
        pod_spec["tolerations"] = [{"key": key, "operator": "Equal", "value": value, "effect": "NoSchedule"}]
    pod_spec.update(_realistic_constraints(d))
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": d.name, "namespace": d.namespace, "labels": {APP_LABEL: d.name}},
        "spec": {"replicas": d.replicas, "selector": {"matchLabels": {APP_LABEL: d.name}},
                 "template": {"metadata": {"labels": labels}, "spec": pod_spec}},
    }


def _millis(cpu: str) -> int:
    return int(cpu[:-1]) if cpu.endswith("m") else int(cpu) * 1000


POOL_CPUS = ("4", "8", "16", "32")  # sizes a platform team allows (no tiny nodes, no metal)


def _pool(name: str, weight: int, capacity_types: Sequence[str], categories: Sequence[str], cpu_limit: int, *,
          arch: Sequence[str] = ("amd64",), labels: Mapping[str, str] | None = None,
          taint: tuple[str, str] | None = None) -> dict[str, Any]:
    template: dict[str, Any] = {"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": [
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(capacity_types)},
            {"key": "kubernetes.io/arch", "operator": "In", "values": list(arch)},
            {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": list(categories)},
            {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5"]},
            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "In", "values": list(POOL_CPUS)},
        ],
    }}
    if labels:
        template["metadata"] = {"labels": dict(labels)}
    if taint is not None:
        template["spec"]["taints"] = [{"key": taint[0], "value": taint[1], "effect": "NoSchedule"}]
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"weight": weight, "template": template,
                     "limits": {"cpu": str(cpu_limit), "memory": f"{cpu_limit * 8}Gi"}}}


def realistic_pools(deployments: Sequence[RealisticDeployment]) -> list[dict[str, Any]]:
    """Four NodePools of 4-32 vCPU types, with limits from the demand: spot first (weight 50, c/m/r, amd64
    or arm64), on-demand behind it (weight 10), a memory pool (r) and a critical on-demand pool (m), both
    tainted. Each limit leaves room for three times its pods' CPU, at least 64 vCPU; the tainted pools
    (whose pods spread one per host) 32 vCPU per pod: Karpenter counts a node being launched at its
    largest possible type, so a tighter limit strands pods."""
    demand: dict[str, int] = {"general": 0, "memory": 0, "critical": 0}
    pods: dict[str, int] = {"general": 0, "memory": 0, "critical": 0}
    for d in deployments:
        if d.namespace == FARGATE_NAMESPACE:
            continue
        pool = {"analytics": "memory", "payments": "critical"}.get(d.archetype.name, "general")
        demand[pool] += _millis(d.cpu) * d.replicas
        pods[pool] += d.replicas

    def cores(millis: float, minimum: int) -> int:
        return max(minimum, math.ceil(millis / 1000))

    return [
        _pool("spot", 50, ["spot"], ["c", "m", "r"], cores(3 * demand["general"], 64), arch=("amd64", "arm64")),
        _pool("on-demand", 10, ["on-demand"], ["c", "m", "r"], cores(3 * demand["general"], 64)),
        _pool("memory", 20, ["spot", "on-demand"], ["r"], cores(32_000 * pods["memory"], 64),
              labels={"workload": "memory"}, taint=("workload", "memory")),
        _pool("critical", 30, ["on-demand"], ["m"], cores(32_000 * pods["critical"], 64),
              labels={"tier": "critical"}, taint=("dedicated", "critical")),
    ]


def _nodeclass() -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "role": "KarpenterNodeRole-bench",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}],
        },
    }


def _log_agent() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "log-agent", "namespace": "observability"},
        "spec": {"selector": {"matchLabels": {APP_LABEL: "log-agent"}},
                 "template": {"metadata": {"labels": {APP_LABEL: "log-agent"}}, "spec": {
                     "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "agent", "image": "fluent/fluent-bit:3.1",
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}},
    }


def realistic_inputs(pods: int, seed: int = 42) -> BenchInputs:
    """The `realistic` family's manifests for `pods` pods (embedded us-east-1 catalog)."""
    deployments = draw_realistic(pods, seed)
    namespaces = sorted({d.namespace for d in deployments} | {"observability"})
    cluster = {
        "apiVersion": "eksctl.io/v1alpha5", "kind": "ClusterConfig",
        "metadata": {"name": "bench-realistic", "region": REALISTIC_REGION},
        "fargateProfiles": [{"name": "serverless", "selectors": [{"namespace": FARGATE_NAMESPACE}]}],
    }
    manifests = [cluster, *realistic_pools(deployments), _nodeclass(),
                 *({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces),
                 _log_agent(), *(realistic_deployment_manifest(d) for d in deployments)]
    specs = tuple(DeploymentSpec(d.name, d.archetype.name, d.namespace, None, _millis(d.cpu), 0, d.replicas)
                  for d in deployments)
    return BenchInputs("aws", pods, specs, tuple(manifests), None, REALISTIC_REGION)


def host_spread_manifests() -> list[dict[str, Any]]:
    """../shared/cases/seed/02-host-spread-zone-only/manifests.yaml (the seed EKS-NodeLess-08 example, whose
    hostname constraint that case removed), with the hostname maxSkew 1 constraint put back."""
    selector = {"matchLabels": {"app": "host-spread"}}
    return [
        {"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner", "metadata": {"name": "default"},
         "spec": {"consolidation": {"enabled": True},
                  "requirements": [{"key": "karpenter.k8s.aws/instance-category", "operator": "In",
                                    "values": ["t", "m", "c"]}],
                  "providerRef": {"name": "default"}}},
        {"apiVersion": "karpenter.k8s.aws/v1alpha1", "kind": "AWSNodeTemplate", "metadata": {"name": "default"},
         "spec": {"subnetSelector": {"karpenter.sh/discovery": "myeks"},
                  "securityGroupSelector": {"karpenter.sh/discovery": "myeks"}}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "host-spread"},
         "spec": {"replicas": HOST_SPREAD_PODS, "selector": selector,
                  "template": {"metadata": {"labels": {"app": "host-spread"}}, "spec": {
                      "containers": [{"image": "public.ecr.aws/eks-distro/kubernetes/pause:3.2", "name": "host-spread",
                                      "resources": {"requests": {"cpu": "1", "memory": "256M"}}}],
                      "topologySpreadConstraints": [
                          {"labelSelector": selector, "maxSkew": 5, "topologyKey": ZONE_KEY,
                           "whenUnsatisfiable": "DoNotSchedule"},
                          {"labelSelector": selector, "maxSkew": 1, "topologyKey": HOSTNAME_KEY,
                           "whenUnsatisfiable": "DoNotSchedule"},
                      ]}}}},
    ]


def host_spread_inputs() -> BenchInputs:
    spec = DeploymentSpec("host-spread", HOST_SPREAD, "host-spread", "host-spread", 1000, 244, HOST_SPREAD_PODS)
    return BenchInputs("aws", HOST_SPREAD_PODS, (spec,), tuple(host_spread_manifests()), None, HOST_SPREAD_REGION)


def many_deployment_pools() -> list[dict[str, Any]]:
    """`MANY_POOLS` NodePools, one per team (`team=t<i>` on its nodes), on-demand, over instance categories
    c, m, r, c+m, m+r in turn, each limited to 1,000 vCPUs (the lint benchmark's tree)."""
    categories = (["c"], ["m"], ["r"], ["c", "m"], ["m", "r"])
    return [
        {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": f"pool-{i}"},
         "spec": {"limits": {"cpu": "1000"},
                  "template": {"metadata": {"labels": {"team": f"t{i}"}},
                               "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                         "name": "default"},
                                        "requirements": [
                                            {"key": "karpenter.sh/capacity-type", "operator": "In",
                                             "values": ["on-demand"]},
                                            {"key": "karpenter.k8s.aws/instance-category", "operator": "In",
                                             "values": categories[i % len(categories)]}]}}}}
        for i in range(MANY_POOLS)]


def many_deployment(i: int) -> dict[str, Any]:
    """Deployment `app-<i>`: 1-3 replicas of 250-450m / 256-640Mi in namespace ns-<i mod 7>, on team
    t<i mod 20>'s pool, spread over zones (maxSkew 1) by its own `app` label, as a chart renders it."""
    selector = {"matchLabels": {"app": f"app-{i}"}}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"app-{i}", "namespace": f"ns-{i % 7}"},
        "spec": {"replicas": 1 + i % 3, "selector": selector,
                 "template": {"metadata": {"labels": {"app": f"app-{i}"}}, "spec": {
                     "nodeSelector": {"team": f"t{i % MANY_POOLS}"},
                     "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": ZONE_KEY,
                                                    "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}],
                     "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {
                         "cpu": f"{250 + 50 * (i % 5)}m", "memory": f"{256 + 128 * (i % 4)}Mi"}}}]}}}}


def many_deployments_inputs(deployments: int) -> BenchInputs:
    """The `many-deployments` family: a repository of charts, `deployments` Deployments each spreading over
    its own label, in `MANY_POOLS` NodePools (what makes every selector question quadratic if asked naively)."""
    manifests = [*many_deployment_pools(), *(many_deployment(i) for i in range(deployments))]
    specs = tuple(DeploymentSpec(f"app-{i}", MANY_DEPLOYMENTS, f"ns-{i % 7}", f"app-{i}", 250 + 50 * (i % 5),
                                 256 + 128 * (i % 4), 1 + i % 3) for i in range(deployments))
    return BenchInputs("aws", sum(s.replicas for s in specs), specs, tuple(manifests), None, REALISTIC_REGION)


def make_family_inputs(family: str, catalog: str, pods: int, seed: int = 42, *,
                       independent_selectors: bool = False) -> BenchInputs:
    """The inputs of one row of any family: `diverse` and `generic` on either catalog (`make_inputs`),
    `realistic`, `host-spread` and `many-deployments` on the embedded catalog (`host-spread` has its own 20
    pods; `many-deployments` reads `pods` as its number of Deployments)."""
    if family in ("diverse", "generic"):
        return make_inputs(catalog, pods, seed, generic_only=family == "generic",
                           independent_selectors=independent_selectors)
    if catalog != "aws":
        raise ValueError(f"the {family} family runs on the aws catalog only")
    if family == REALISTIC:
        return realistic_inputs(pods, seed)
    if family == HOST_SPREAD:
        return host_spread_inputs()
    if family == MANY_DEPLOYMENTS:
        return many_deployments_inputs(pods)  # sized in Deployments (about two pods each)
    raise ValueError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
