"""Capacity → allocatable, against kubelet-reserved.md's worked examples and all 1,363 Karpenter figures."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karpplan.catalog import allocatable
from karpplan.catalog.embedded import embedded_data
from karpplan.catalog.types import InstanceShape
from karpplan.model.pools import KubeletConfig
from karpplan.model.resources import CPU, EPHEMERAL, MEMORY, PODS, Resources

MIB = 2**20
GIB = 2**30
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
INSTANCE_CSV = SHARED_DATA / "ec2-instance-types.csv"


def shape(vcpu: int, mib: int, arch: str, enis: int, ips: int) -> InstanceShape:
    return InstanceShape(vcpu=vcpu, memory_mib=mib, arch=arch, eni_pods=allocatable.eni_limited_pods(enis, ips))


# kubelet-reserved.md "Worked examples": type, vCPU, MiB, arch, ENIs, IPs, pods, cpu alloc (m), mem alloc (Mi)
WORKED = [
    ("m5.large", 2, 8192, "amd64", 3, 10, 29, 1930, 6903),
    ("c5.large", 2, 4096, "amd64", 3, 10, 29, 1930, 3114),
    ("m5.xlarge", 4, 16384, "amd64", 4, 15, 58, 3920, 14162),
    ("m5.2xlarge", 8, 32768, "amd64", 4, 15, 58, 7910, 29317),
    ("t3.medium", 2, 4096, "amd64", 3, 6, 17, 1930, 3246),
    ("r5.large", 2, 16384, "amd64", 3, 10, 29, 1930, 14481),
    ("m7g.large", 2, 8192, "arm64", 3, 10, 29, 1930, 6844),
    ("c6g.medium", 1, 2048, "arm64", 2, 4, 8, 940, 1392),
    ("m5.24xlarge", 96, 393216, "amd64", 15, 50, 737, 95690, 355262),
]


@pytest.mark.parametrize(("name", "vcpu", "mib", "arch", "enis", "ips", "pods", "cpu_m", "mem_mi"), WORKED)
def test_worked_examples(
    name: str, vcpu: int, mib: int, arch: str, enis: int, ips: int, pods: int, cpu_m: int, mem_mi: int
) -> None:
    node = allocatable.compute(shape(vcpu, mib, arch, enis, ips))
    assert node.allocatable == Resources({CPU: cpu_m, MEMORY: mem_mi * MIB, PODS: pods, EPHEMERAL: 17 * GIB})
    assert node.capacity[EPHEMERAL] == 20 * GIB


def test_m5_large_step_by_step() -> None:
    m5 = shape(2, 8192, "amd64", 3, 10)
    assert allocatable.capacity_memory_mib(8192, "amd64") == 7577
    assert allocatable.kube_reserved(2000, 29) == Resources({CPU: 70, MEMORY: 574 * MIB, EPHEMERAL: GIB})
    assert allocatable.eviction_threshold(7577 * MIB, 20 * GIB, None) == Resources(
        {MEMORY: 100 * MIB, EPHEMERAL: 2 * GIB}
    )
    assert allocatable.compute(m5).capacity == Resources({CPU: 2000, MEMORY: 7577 * MIB, PODS: 29, EPHEMERAL: 20 * GIB})


@pytest.mark.parametrize(
    ("vcpu", "reserved"),
    [(1, 60), (2, 70), (4, 80), (8, 90), (16, 110), (32, 150), (48, 190), (64, 230), (96, 310), (192, 550)],
)
def test_cpu_ladder(vcpu: int, reserved: int) -> None:
    assert allocatable.cpu_reserved_millis(vcpu * 1000) == reserved


def _csv_rows() -> list[dict[str, str]]:
    if not INSTANCE_CSV.exists():
        pytest.skip("../shared/data is not available")
    with INSTANCE_CSV.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_all_types_match_karpenter_figures() -> None:
    rows = _csv_rows()
    assert len(rows) == 1363
    embedded = {t.name: t for t in embedded_data().types}
    mismatches = []
    for row in rows:
        alloc = embedded[row["name"]].allocatable
        expected = (
            int(row["karpenter_alloc_cpu_m"]),
            int(row["karpenter_alloc_memory_mib"]) * MIB,
            int(row["karpenter_pods"]),
            17 * GIB,
        )
        got = (alloc[CPU], alloc[MEMORY], alloc[PODS], alloc[EPHEMERAL])
        if got != expected:
            mismatches.append((row["name"], got, expected))
    assert mismatches == []


def test_embedded_data_is_regenerated_from_shared_data(tmp_path: Path) -> None:
    """The checked-in data file is exactly what scripts/build_catalog.py makes from ../shared/data."""
    _csv_rows()
    import importlib.util

    script = Path(__file__).resolve().parents[1] / "scripts" / "build_catalog.py"
    spec = importlib.util.spec_from_file_location("build_catalog", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--data", str(SHARED_DATA), "--check"]) == 0
    out = tmp_path / "c.json.gz"
    assert module.main(["--data", str(SHARED_DATA), "--out", str(out)]) == 0
    assert out.stat().st_size < 300_000


# ------------------------------------------------------------------------------------------ kubelet settings
M5 = shape(2, 8192, "amd64", 3, 10)


def test_max_pods_on_al2023_keeps_eni_memory_overhead() -> None:
    node = allocatable.compute(M5, KubeletConfig(max_pods=110), "AL2023")
    assert node.allocatable[PODS] == 110
    assert node.capacity[PODS] == 110
    assert node.allocatable[MEMORY] == 6903 * MIB  # still 11·29+255


def test_max_pods_on_bottlerocket_uses_configured_pods() -> None:
    node = allocatable.compute(M5, KubeletConfig(max_pods=110), "Bottlerocket")
    assert node.allocatable[PODS] == 110
    assert node.allocatable[MEMORY] == (7577 - (11 * 110 + 255) - 100) * MIB  # 6012Mi


def test_pods_per_core() -> None:
    al2023 = allocatable.compute(M5, KubeletConfig(pods_per_core=4), "AL2023")
    assert al2023.allocatable[PODS] == 8
    assert al2023.allocatable[MEMORY] == 6903 * MIB
    bottlerocket = allocatable.compute(M5, KubeletConfig(pods_per_core=4), "bottlerocket@latest")
    assert bottlerocket.allocatable[PODS] == 29  # podsPerCore is not honoured on Bottlerocket


def test_kube_and_system_reserved_overrides() -> None:
    node = allocatable.compute(
        M5,
        KubeletConfig(
            kube_reserved=Resources({CPU: 100}),
            system_reserved=Resources({MEMORY: 100 * MIB, CPU: 50}),
        ),
    )
    assert node.allocatable[CPU] == 2000 - 100 - 50
    assert node.allocatable[MEMORY] == (6903 - 100) * MIB  # kube-reserved memory keeps its default


def test_eviction_hard_percentages_and_quantities() -> None:
    node = allocatable.compute(M5, KubeletConfig(eviction_hard={"memory.available": "5%", "nodefs.available": "1Gi"}))
    capacity_memory = 7577 * MIB
    expected_eviction = -(-capacity_memory * 5 // 100)
    assert node.allocatable[MEMORY] == capacity_memory - 574 * MIB - expected_eviction
    assert node.allocatable[EPHEMERAL] == 20 * GIB - GIB - GIB


def test_windows_has_110_pods_and_50gi_root() -> None:
    node = allocatable.compute(M5, None, "Windows2022")
    assert node.allocatable[PODS] == 110
    assert node.capacity[EPHEMERAL] == 50 * GIB
    assert node.allocatable[MEMORY] == (7577 - (11 * 110 + 255) - 100) * MIB


def test_extended_resources_pass_through_to_allocatable() -> None:
    node = allocatable.compute(M5, None, None, {"vpc.amazonaws.com/pod-eni": 9, "nvidia.com/gpu": 1})
    assert node.capacity["nvidia.com/gpu"] == 1
    assert node.allocatable["nvidia.com/gpu"] == 1
    assert node.allocatable["vpc.amazonaws.com/pod-eni"] == 9


def test_invalid_kubelet_settings_are_reported() -> None:
    problems = allocatable.validate_kubelet(KubeletConfig(eviction_hard={"memory.available": "150%"}, max_pods=-1))
    assert len(problems) == 2


def test_derive_from_capacity_uses_capacity_pods() -> None:
    capacity = Resources({CPU: 4000, MEMORY: 4 * GIB, PODS: 5})
    node = allocatable.derive_from_capacity(capacity)
    assert node.allocatable == Resources({CPU: 3920, MEMORY: (4096 - (11 * 5 + 255) - 100) * MIB, PODS: 5})
    with_max = allocatable.derive_from_capacity(capacity, KubeletConfig(max_pods=20))
    assert with_max.allocatable[PODS] == 20
    assert with_max.allocatable[MEMORY] == (4096 - (11 * 20 + 255) - 100) * MIB


@given(
    vcpu=st.integers(1, 448),
    mib=st.integers(512, 24 * 1024 * 1024),
    arch=st.sampled_from(["amd64", "arm64"]),
    enis=st.integers(1, 16),
    ips=st.integers(2, 64),
    max_pods=st.one_of(st.none(), st.integers(1, 1000)),
    family=st.sampled_from([None, "AL2023", "Bottlerocket", "Windows2022"]),
)
def test_allocatable_never_exceeds_capacity(
    vcpu: int, mib: int, arch: str, enis: int, ips: int, max_pods: int | None, family: str | None
) -> None:
    node = allocatable.compute(shape(vcpu, mib, arch, enis, ips), KubeletConfig(max_pods=max_pods), family)
    for resource, amount in node.allocatable.items():
        assert 0 <= amount <= node.capacity[resource]
    assert node.capacity[CPU] - node.allocatable[CPU] == allocatable.cpu_reserved_millis(vcpu * 1000)
    if max_pods is not None:
        assert node.allocatable[PODS] == max_pods


@given(pods=st.integers(1, 500), more=st.integers(1, 500))
def test_more_bottlerocket_pods_never_leave_more_memory(pods: int, more: int) -> None:
    big = shape(64, 262144, "amd64", 8, 30)
    fewer = allocatable.compute(big, KubeletConfig(max_pods=pods), "Bottlerocket").allocatable[MEMORY]
    larger = allocatable.compute(big, KubeletConfig(max_pods=pods + more), "Bottlerocket").allocatable[MEMORY]
    assert larger < fewer
