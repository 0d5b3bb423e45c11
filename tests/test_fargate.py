"""EKS Fargate domain rules: refusals read from pod specs, sizing (fargate.md F1-F19), prices, profiles."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karpplan.catalog import regions
from karpplan.model.cluster import FargateProfile, FargateSelector
from karpplan.model.fargate import (
    FARGATE_NODE_TAINT,
    FARGATE_SIZES,
    FargateSize,
    fargate_hourly_price,
    fargate_node_labels,
    fargate_traits,
    parse_profile_flag,
    profile_for,
    size_pod,
)
from karpplan.model.fargate_prices import FARGATE_PRICES
from karpplan.model.quantity import parse_quantity
from karpplan.model.taints import Toleration

MIB = 2**20
GIB = 2**30


# ------------------------------------------------------------------------------------------- helpers
def effective_cpu_memory(pod_spec: Mapping[str, Any]) -> tuple[int, int]:
    """Kubernetes effective requests for CPU/memory: max(largest init, sum of apps), limits default requests."""

    def container_requests(container: Mapping[str, Any]) -> tuple[int, int]:
        resources = container.get("resources", {})
        merged = {**resources.get("limits", {}), **resources.get("requests", {})}
        cpu = parse_quantity(merged["cpu"]).milli() if "cpu" in merged else 0
        memory = parse_quantity(merged["memory"]).value() if "memory" in merged else 0
        return cpu, memory

    apps = [container_requests(c) for c in pod_spec.get("containers", [])]
    inits = [container_requests(c) for c in pod_spec.get("initContainers", [])]
    cpu = max(sum(c for c, _ in apps), max((c for c, _ in inits), default=0))
    memory = max(sum(m for _, m in apps), max((m for _, m in inits), default=0))
    return cpu, memory


def app(cpu: str | None = None, memory: str | None = None, *, limits_only: bool = False) -> dict[str, Any]:
    amounts = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    resources = {"limits": amounts} if limits_only else ({"requests": amounts} if amounts else {})
    return {"name": "c", "image": "busybox", "resources": resources}


def pod(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return spec


# ------------------------------------------------------------------------------------ sizing vectors
# fargate.md §2 worked examples: (id, pod spec, eff cpu millis, eff memory MiB, CapacityProvisioned or None).
WORKED_EXAMPLES = [
    ("F1", pod(app()), 0, 0, "0.25vCPU 0.5GB"),
    ("F2", pod(app("500m", "500Mi")), 500, 500, "0.5vCPU 1GB"),
    ("F3", pod(app("250m", "256Mi")), 250, 256, "0.25vCPU 0.5GB"),
    ("F4", pod(app("250m", "257Mi")), 250, 257, "0.25vCPU 1GB"),
    ("F5", pod(app("100m", "1Gi")), 100, 1024, "0.25vCPU 2GB"),
    ("F6", pod(app("1", "7Gi")), 1000, 7168, "1vCPU 8GB"),
    ("F7", pod(app("1", "8Gi")), 1000, 8192, "2vCPU 9GB"),
    ("F8", pod(app("2", "1Gi")), 2000, 1024, "2vCPU 4GB"),
    ("F9", pod(app("250m", "512Mi"), app("250m", "512Mi")), 500, 1024, "0.5vCPU 2GB"),
    ("F10", pod(app("500m", "1Gi"), init=(app("2", "512Mi"),)), 2000, 1024, "2vCPU 4GB"),
    ("F11", pod(app("500m", "1Gi"), init=(app("250m", "3Gi"),)), 500, 3072, "0.5vCPU 4GB"),
    ("F12", pod(app("3", "1Gi")), 3000, 1024, "4vCPU 8GB"),
    ("F13", pod(app("4", "30Gi")), 4000, 30720, "8vCPU 32GB"),
    ("F14", pod(app("5", "8Gi")), 5000, 8192, "8vCPU 16GB"),
    ("F15", pod(app("500m", "3840Mi")), 500, 3840, "0.5vCPU 4GB"),
    ("F16", pod(app("500m", "3841Mi")), 500, 3841, "1vCPU 5GB"),
    ("F17", pod(app("16", "120Gi")), 16000, 122880, None),
    ("F18", pod(app("17", "1Gi")), 17000, 1024, None),
    ("F19", pod(app("1", "2Gi", limits_only=True)), 1000, 2048, "1vCPU 3GB"),
]


@pytest.mark.parametrize(
    ("spec", "eff_cpu", "eff_mib", "provisioned"),
    [case[1:] for case in WORKED_EXAMPLES],
    ids=[case[0] for case in WORKED_EXAMPLES],
)
def test_worked_examples_from_pod_specs(
    spec: dict[str, Any], eff_cpu: int, eff_mib: int, provisioned: str | None
) -> None:
    assert effective_cpu_memory(spec) == (eff_cpu, eff_mib * MIB)
    size = size_pod(eff_cpu, eff_mib * MIB)
    assert (size.capacity_provisioned if size else None) == provisioned
    # Sizing is independent of refusals: none of these pods asks for anything Fargate refuses.
    assert fargate_traits(spec, "spec").refusals == ()


def test_table_has_the_74_documented_combinations() -> None:
    assert len(FARGATE_SIZES) == 74
    per_vcpu: dict[int, list[int]] = {}
    for size in FARGATE_SIZES:
        per_vcpu.setdefault(size.cpu_millis, []).append(
            size.memory_mib // 1024 if size.memory_mib >= 1024 else 0
        )
    assert {cpu: len(mems) for cpu, mems in per_vcpu.items()} == {
        250: 3,
        500: 4,
        1000: 7,
        2000: 13,
        4000: 23,
        8000: 12,
        16000: 12,
    }
    assert per_vcpu[8000] == list(range(16, 61, 4))
    assert per_vcpu[16000] == list(range(32, 121, 8))
    assert tuple(sorted(FARGATE_SIZES)) == FARGATE_SIZES
    assert FARGATE_SIZES[-1].capacity_provisioned == "16vCPU 120GB"


def test_largest_pod_that_still_fits() -> None:
    largest = size_pod(16000, 120 * GIB - 256 * MIB)
    assert largest is not None and largest.capacity_provisioned == "16vCPU 120GB"
    assert size_pod(16000, 120 * GIB - 256 * MIB + 1) is None
    assert size_pod(16001, 0) is None


@pytest.mark.parametrize(
    ("size", "cpu", "memory", "provisioned"),
    [
        (FargateSize(250, 512), "0.25", "512Mi", "0.25vCPU 0.5GB"),
        (FargateSize(500, 1024), "0.5", "1Gi", "0.5vCPU 1GB"),
        (FargateSize(2000, 9216), "2", "9Gi", "2vCPU 9GB"),
        (FargateSize(16000, 122880), "16", "120Gi", "16vCPU 120GB"),
    ],
)
def test_size_texts(size: FargateSize, cpu: str, memory: str, provisioned: str) -> None:
    assert (size.cpu_text, size.memory_text, size.capacity_provisioned) == (cpu, memory, provisioned)


def test_rounding_waste_is_what_rounding_adds_beyond_request_and_overhead() -> None:
    size = size_pod(1000, 8 * GIB)  # F7: 2 vCPU / 9 GB for 1 vCPU / 8 GiB + 256 MiB
    assert size is not None
    assert size.rounding_waste(1000, 8 * GIB) == {"cpu": 1000, "memory": 768 * MIB}
    exact = size_pod(500, 3840 * MIB)  # F15: exact fit
    assert exact is not None and exact.rounding_waste(500, 3840 * MIB) == {}
    assert exact.resources == {"cpu": 500, "memory": 4 * GIB}


requests_cpu = st.integers(min_value=0, max_value=17000)
requests_memory = st.integers(min_value=0, max_value=125 * GIB)


@given(requests_cpu, requests_memory)
def test_chosen_size_fits_and_is_the_cheapest_fit(cpu: int, memory: int) -> None:
    size = size_pod(cpu, memory)
    fitting = [s for s in FARGATE_SIZES if s.cpu_millis >= cpu and s.memory_bytes >= memory + 256 * MIB]
    if size is None:
        assert fitting == []
        return
    assert size.cpu_millis >= cpu and size.memory_bytes >= memory + 256 * MIB
    for region in FARGATE_PRICES:
        prices = [fargate_hourly_price(s, region) or 0.0 for s in fitting]
        assert fargate_hourly_price(size, region) == min(prices)


@given(requests_cpu, requests_memory, st.integers(0, 4000), st.integers(0, 8 * GIB))
def test_size_is_monotone_in_the_request(cpu: int, memory: int, more_cpu: int, more_memory: int) -> None:
    smaller, larger = size_pod(cpu, memory), size_pod(cpu + more_cpu, memory + more_memory)
    if smaller is None:
        assert larger is None
        return
    if larger is not None:
        assert larger.cpu_millis >= smaller.cpu_millis
        assert larger.memory_mib >= smaller.memory_mib
        assert (fargate_hourly_price(larger, "us-east-1") or 0) >= (
            fargate_hourly_price(smaller, "us-east-1") or 0
        )


# ------------------------------------------------------------------------------------------- prices
def test_hourly_prices() -> None:
    half = FargateSize(500, 1024)
    assert fargate_hourly_price(half, "us-east-1") == pytest.approx(0.024685, abs=1e-12)
    assert fargate_hourly_price(half, "ap-northeast-2") == pytest.approx(0.02839, abs=1e-12)
    assert fargate_hourly_price(FargateSize(250, 512), "us-east-1") == pytest.approx(0.0123425, abs=1e-12)
    assert fargate_hourly_price(half, "us-west-2") == fargate_hourly_price(half, "eu-west-1")
    assert fargate_hourly_price(half, "mars-north-1") is None
    # Every region of the embedded catalog has a rate, but Osaka (no published rate found): never $0.
    assert set(regions()) - set(FARGATE_PRICES) == {"ap-northeast-3"}
    assert fargate_hourly_price(half, "ap-northeast-1") == pytest.approx(0.5 * 0.05056 + 0.00553, abs=1e-12)


# ------------------------------------------------------------------------------------------- traits
def reasons(spec: Mapping[str, Any], path: str = "spec") -> dict[str, str]:
    return dict(fargate_traits(spec, path).refusals)


def test_privileged_containers_and_init_containers_are_refused() -> None:
    spec = pod(
        {"name": "a", "securityContext": {"privileged": False}},
        {"name": "b", "securityContext": {"privileged": True}},
        init=({"name": "i", "securityContext": {"privileged": True}},),
    )
    assert reasons(spec, "spec.template.spec") == {
        "spec.template.spec.initContainers[0].securityContext.privileged": "invalid SecurityContext fields: Privileged",
        "spec.template.spec.containers[1].securityContext.privileged": "invalid SecurityContext fields: Privileged",
    }


def test_host_namespaces_are_refused_with_fargates_messages() -> None:
    spec = {**pod(app()), "hostNetwork": True, "hostPID": True, "hostIPC": True}
    assert reasons(spec) == {
        "spec.hostNetwork": "fields not supported: HostNetwork",
        "spec.hostPID": "fields not supported: HostPID",
        "spec.hostIPC": "fields not supported: HostIPC",
    }
    assert reasons({**pod(app()), "hostNetwork": False}) == {}


def test_host_ports_and_host_ips_are_refused() -> None:
    spec = pod(
        {"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 443, "hostPort": 8443}]},
        {"name": "b", "ports": [{"containerPort": 53, "hostIP": "10.0.0.1"}]},
    )
    assert reasons(spec) == {
        "spec.containers[0].ports[1].hostPort": "port contains HostIP or HostPort",
        "spec.containers[1].ports[0].hostIP": "port contains HostIP or HostPort",
    }


def test_volumes_fargate_cannot_mount_are_refused_by_name() -> None:
    spec = {
        **pod(app()),
        "volumes": [
            {"name": "docker", "hostPath": {"path": "/var/run/docker.sock"}},
            {"name": "scratch", "emptyDir": {}},
            {"name": "tls", "csi": {"driver": "csi.cert-manager.io"}},
            {"name": "config", "configMap": {"name": "c"}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "efs"}},
            {"name": "fresh", "ephemeral": {"volumeClaimTemplate": {}}},
        ],
    }
    found = reasons(spec)
    assert set(found) == {"spec.volumes[0].hostPath", "spec.volumes[2].csi", "spec.volumes[5].ephemeral"}
    assert found["spec.volumes[0].hostPath"].startswith("volumes not supported: docker")
    assert found["spec.volumes[2].csi"].startswith("volumes not supported: tls")


def test_gpus_and_extended_resources_are_refused_but_standard_ones_are_not() -> None:
    spec = pod(
        {"name": "a", "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "1", "memory": "1Gi"}}},
        {"name": "b", "resources": {"requests": {"aws.amazon.com/neuron": "2", "ephemeral-storage": "1Gi"}}},
        {
            "name": "c",
            "resources": {"requests": {"example.com/dongle": 1}, "limits": {"example.com/dongle": 1}},
        },
        {"name": "d", "resources": {"limits": {"hugepages-2Mi": "64Mi"}}},
        {"name": "e", "resources": {"limits": {"nvidia.com/gpu": 0}}},
    )
    found = reasons(spec)
    assert set(found) == {
        "spec.containers[0].resources.limits[nvidia.com/gpu]",
        "spec.containers[1].resources.requests[aws.amazon.com/neuron]",
        "spec.containers[2].resources.requests[example.com/dongle]",
        "spec.containers[3].resources.limits[hugepages-2Mi]",
    }
    assert "GPU" in found["spec.containers[0].resources.limits[nvidia.com/gpu]"]
    assert "Neuron" in found["spec.containers[1].resources.requests[aws.amazon.com/neuron]"]


def test_arm64_and_windows_node_selection_is_refused() -> None:
    assert set(reasons({**pod(app()), "nodeSelector": {"kubernetes.io/arch": "arm64"}})) == {
        "spec.nodeSelector[kubernetes.io/arch]"
    }
    assert set(reasons({**pod(app()), "nodeSelector": {"beta.kubernetes.io/os": "windows"}})) == {
        "spec.nodeSelector[beta.kubernetes.io/os]"
    }
    assert set(reasons({**pod(app()), "os": {"name": "windows"}})) == {"spec.os.name"}
    amd64_linux = {"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "team": "a"}
    assert reasons({**pod(app()), "nodeSelector": amd64_linux, "os": {"name": "linux"}}) == {}


def node_affinity(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": exprs} for exprs in terms]
            }
        }
    }


ARM_ONLY = {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}
BOTH_ARCHES = {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64", "amd64"]}
NOT_AMD64 = {"key": "kubernetes.io/arch", "operator": "NotIn", "values": ["amd64"]}
ZONE_A = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]}
WINDOWS = {"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]}


@pytest.mark.parametrize(
    ("terms", "refused"),
    [
        ([[ARM_ONLY]], True),
        ([[NOT_AMD64, ZONE_A]], True),
        ([[WINDOWS]], True),
        ([[ARM_ONLY], [WINDOWS]], True),
        ([[BOTH_ARCHES]], False),
        ([[ARM_ONLY], [ZONE_A]], False),  # terms are ORed: the zone term admits a Fargate node
        ([[{"key": "kubernetes.io/arch", "operator": "Exists"}]], False),
        ([[{"key": "kubernetes.io/arch", "operator": "DoesNotExist"}]], True),
    ],
)
def test_required_node_affinity_that_admits_no_linux_amd64_node_is_refused(
    terms: list[list[dict[str, Any]]], refused: bool
) -> None:
    found = reasons({**pod(app()), "affinity": node_affinity(*terms)})
    path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    assert (path in found) is refused
    assert set(found) <= {path}


def test_limit_above_request_is_flagged_for_a_warning() -> None:
    def flagged(spec: Mapping[str, Any]) -> bool:
        return fargate_traits(spec, "spec").limit_exceeds_requests

    burstable = {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "250m", "memory": "1Gi"}}
    assert flagged(pod({"name": "a", "resources": burstable}))
    assert flagged(
        pod(
            app("1", "1Gi"),
            init=({"name": "i", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}},),
        )
    )
    guaranteed = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1000m", "memory": "1024Mi"}}
    assert not flagged(pod({"name": "a", "resources": guaranteed}))
    assert not flagged(pod(app("1", "2Gi", limits_only=True)))  # requests default to the limits
    assert not flagged(pod(app("1", "2Gi")))  # no limits at all


def test_a_plain_pod_spec_has_no_refusals() -> None:
    spec = {
        **pod({"name": "web", "ports": [{"containerPort": 8080}], "resources": {"requests": {"cpu": "1"}}}),
        "volumes": [{"name": "tmp", "emptyDir": {}}],
        "nodeSelector": {"team": "a"},
    }
    assert fargate_traits(spec, "spec").refusals == ()
    assert fargate_traits(spec, "spec").limit_exceeds_requests is False


scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "x", "1Gi", "arm64", "In"])
odd = st.one_of(
    scalars,
    st.lists(scalars, max_size=2),
    st.dictionaries(st.sampled_from(["a", "cpu", "key"]), scalars, max_size=2),
)


def odd_or(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(odd, strategy)


def odd_mapping(keys: list[str], values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return odd_or(st.dictionaries(st.sampled_from(keys), values, max_size=3))


resource_lists = odd_mapping(["cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi"], scalars)
containers = odd_or(
    st.lists(
        odd_or(
            st.fixed_dictionaries(
                {},
                optional={
                    "securityContext": odd_mapping(["privileged"], scalars),
                    "ports": odd_or(st.lists(odd_mapping(["hostPort", "hostIP"], scalars), max_size=2)),
                    "resources": odd_mapping(["requests", "limits"], resource_lists),
                },
            )
        ),
        max_size=2,
    )
)
expressions = odd_or(st.lists(odd_mapping(["key", "operator", "values"], odd), max_size=2))
affinities = odd_mapping(
    ["nodeAffinity"],
    odd_mapping(
        ["requiredDuringSchedulingIgnoredDuringExecution"],
        odd_mapping(
            ["nodeSelectorTerms"],
            odd_or(st.lists(odd_mapping(["matchExpressions"], expressions), max_size=2)),
        ),
    ),
)
pod_specs = st.fixed_dictionaries(
    {},
    optional={
        "containers": containers,
        "initContainers": containers,
        "volumes": odd_or(st.lists(odd_mapping(["name", "hostPath", "csi"], odd), max_size=2)),
        "nodeSelector": odd_mapping(["kubernetes.io/arch", "kubernetes.io/os"], scalars),
        "affinity": affinities,
        "os": odd_mapping(["name"], scalars),
        "hostNetwork": scalars,
    },
)


@given(pod_specs)
def test_odd_shapes_never_crash(spec: dict[str, Any]) -> None:
    traits = fargate_traits(spec, "spec")
    assert all(path.startswith("spec.") and reason for path, reason in traits.refusals)


def test_non_mapping_spec_has_no_traits() -> None:
    assert fargate_traits(None, "spec").refusals == ()  # type: ignore[arg-type]
    assert (
        fargate_traits({"containers": [{"resources": {"limits": {"nvidia.com/gpu": "x"}}}]}, "spec").refusals
        == ()
    )


# ------------------------------------------------------------------------------------------ profiles
def profile(name: str, *selectors: tuple[str, dict[str, str]]) -> FargateProfile:
    return FargateProfile(name, tuple(FargateSelector(ns, labels) for ns, labels in selectors))


@pytest.mark.parametrize(
    ("pattern", "namespace", "matches"),
    [
        ("prod*", "prod", True),
        ("prod*", "prod-metrics", True),
        ("*dev", "team-dev", True),
        ("value?", "valuea", True),
        ("value?", "value", False),
        ("value?", "value-a", False),
        ("frontend*?", "frontend", False),
        ("frontend*?", "frontend1", True),
        ("study.*", "study-x", False),  # no regex: the dot is literal
        ("default", "default", True),
        ("default", "kube-system", False),
    ],
)
def test_namespace_wildcards(pattern: str, namespace: str, matches: bool) -> None:
    chosen = profile_for([profile("p", (pattern, {}))], namespace, {})
    assert (chosen is not None) is matches


def test_selector_labels_must_all_match_and_may_use_wildcards() -> None:
    profiles = [profile("p", ("apps", {"app": "web-*", "tier?": "front"}))]
    assert profile_for(profiles, "apps", {"app": "web-1", "tier1": "front", "x": "y"}) is not None
    assert profile_for(profiles, "apps", {"app": "web-1"}) is None
    assert profile_for(profiles, "apps", {"app": "api", "tier1": "front"}) is None
    assert profile_for(profiles, "other", {"app": "web-1", "tier1": "front"}) is None
    key_wildcard = [profile("k", ("apps", {"team-*": "*"}))]
    assert profile_for(key_wildcard, "apps", {"team-a": "anything"}) is not None
    assert profile_for(key_wildcard, "apps", {"owner": "a"}) is None


def test_any_selector_of_a_profile_matches() -> None:
    profiles = [profile("p", ("batch", {}), ("apps", {"fargate": "yes"}))]
    assert profile_for(profiles, "batch", {}) is not None
    assert profile_for(profiles, "apps", {"fargate": "yes"}) is not None
    assert profile_for(profiles, "apps", {}) is None


def test_several_matching_profiles_the_first_name_wins() -> None:
    profiles = [
        profile("prod-workload", ("*", {})),
        profile("beta-workload", ("apps", {})),
        profile("zeta", ("apps", {})),
    ]
    chosen = profile_for(profiles, "apps", {})
    assert chosen is not None and chosen.name == "beta-workload"
    other = profile_for(profiles, "batch", {})
    assert other is not None and other.name == "prod-workload"


def test_a_pod_naming_its_profile_must_match_that_profile() -> None:
    profiles = [profile("beta", ("apps", {})), profile("prod", ("apps", {"tier": "prod"}))]
    named = profile_for(profiles, "apps", {"eks.amazonaws.com/fargate-profile": "prod", "tier": "prod"})
    assert named is not None and named.name == "prod"
    assert profile_for(profiles, "apps", {"eks.amazonaws.com/fargate-profile": "prod"}) is None
    assert profile_for(profiles, "apps", {"eks.amazonaws.com/fargate-profile": "missing"}) is None


def test_no_profiles_means_no_fargate() -> None:
    assert profile_for([], "default", {}) is None


def test_parse_profile_flag() -> None:
    parsed = parse_profile_flag("namespace=study-*, app=web ,tier=front?", 2)
    assert parsed.name == "cli-2"
    assert parsed.selectors == (FargateSelector("study-*", {"app": "web", "tier": "front?"}),)
    assert profile_for([parsed], "study-1", {"app": "web", "tier": "front1"}) == parsed
    assert parse_profile_flag("namespace=default", 0).selectors == (FargateSelector("default", {}),)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("", "empty"),
        ("app=web", "needs namespace"),
        ("namespace=", "empty value"),
        ("namespace=a,app", "key=value"),
        ("namespace=a,=web", "empty key"),
        ("namespace=a,,app=web", "empty item"),
        ("namespace=a,namespace=b", "namespace is given twice"),
        ("namespace=a,app=x,app=y", "label app is given twice"),
    ],
)
def test_parse_profile_flag_rejects_malformed_flags(text: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        parse_profile_flag(text, 0)


# --------------------------------------------------------------------------------------------- nodes
def test_fargate_node_labels_and_taint() -> None:
    labels = fargate_node_labels("us-east-1a", "us-east-1", "fargate-ip-10-0-1-2.ec2.internal", "default")
    assert labels["eks.amazonaws.com/compute-type"] == "fargate"
    assert labels["eks.amazonaws.com/fargate-profile"] == "default"
    assert labels["kubernetes.io/hostname"] == "fargate-ip-10-0-1-2.ec2.internal"
    assert labels["topology.kubernetes.io/zone"] == "us-east-1a"
    assert labels["topology.kubernetes.io/region"] == "us-east-1"
    assert (labels["kubernetes.io/arch"], labels["kubernetes.io/os"]) == ("amd64", "linux")
    assert str(FARGATE_NODE_TAINT) == "eks.amazonaws.com/compute-type=fargate:NoSchedule"
    assert Toleration("eks.amazonaws.com/compute-type", "Equal", "fargate", "NoSchedule").tolerates(
        FARGATE_NODE_TAINT
    )


def test_inventory_says_which_profile_takes_a_workload(tmp_path: Path) -> None:
    """`karpplan inventory` said "not on Fargate: ..." for pods a profile refuses but nothing for those it takes (a
    CronJob of the batch namespace showed constraints "-"): it names the profile."""
    from typer.testing import CliRunner

    from karpplan.cli.main import app

    (tmp_path / "all.yaml").write_text(
        "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: prod, region: us-east-1}\n"
        "fargateProfiles:\n  - name: fp-batch\n    selectors: [{namespace: batch}]\n---\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: report, namespace: batch}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers: [{name: r, image: r, resources: {requests: {cpu: 500m}}}]\n")
    result = CliRunner().invoke(app, ["inventory", str(tmp_path)], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "on Fargate: profile fp-batch takes its pods" in result.stdout
