"""EC2NodeClass storage decides how much ephemeral-storage a node offers (issue 14, item 4).

`blockDeviceMappings` and `instanceStorePolicy: RAID0` change every node's ephemeral-storage capacity, so
pods with large ephemeral-storage requests go to nodes that really have the room, or are reported
unschedulable when none does. Karpenter's `ephemeralStorage()` (pkg/providers/instancetype/types.go) is the
rule; allocatable then loses 1Gi kube-reserved and the 10% nodefs eviction threshold.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from karpplan.catalog import allocatable
from karpplan.catalog.types import InstanceShape
from karpplan.model.pools import BlockDevice, NodeStorage
from karpplan.model.quantity import parse_quantity

from planner_helpers import plan_json

DATA = Path(__file__).parent / "data" / "manifests"
GIB = 2**30
SHAPE = InstanceShape(vcpu=4, memory_mib=16384, arch="amd64", eni_pods=58, local_storage_gb=237)




def _bytes(text: str) -> int:
    return parse_quantity(text).value()


def _pods_by_node(plan: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for pod in plan["pods"]:
        if pod.get("node"):
            out.setdefault(pod["node"], []).append(pod)
    return out


def test_raid0_instance_store_is_the_nodes_ephemeral_storage() -> None:
    plan = plan_json(DATA / "instance-store-raid0.yaml")
    assert plan["unschedulable"] == []
    placed = _pods_by_node(plan)
    assert sum(len(p) for p in placed.values()) == 3
    for node in plan["nodes"]:
        storage = _bytes(node["allocatable"]["ephemeral-storage"])
        asked = sum(_bytes(p["requests"]["ephemeral-storage"]) for p in placed[node["name"]])
        assert asked <= storage
        # Only types with local NVMe disks can hold 150Gi: the disks (decimal GB) minus 10% and 1Gi.
        assert storage > 20 * GIB


def test_without_raid0_the_same_workload_cannot_be_placed(tmp_path: Path) -> None:
    text = (DATA / "instance-store-raid0.yaml").read_text().replace("  instanceStorePolicy: RAID0\n", "")
    path = tmp_path / "no-raid.yaml"
    path.write_text(text)
    plan = plan_json(path)
    assert len(plan["unschedulable"]) == 3
    assert "ephemeral-storage" in json.dumps(plan["unschedulable"])


def test_block_device_mappings_size_root_and_bottlerocket_data_volumes() -> None:
    plan = plan_json(DATA / "block-device-mappings.yaml")
    assert plan["unschedulable"] == []
    storage_by_pool = {n["nodePool"]: n["allocatable"]["ephemeral-storage"] for n in plan["nodes"]}
    # 100Gi root volume: 100 - 1 (kube-reserved) - 10 (nodefs.available 10%) = 89Gi.
    assert _bytes(storage_by_pool["al2023-large-root"]) == 89 * GIB
    # Bottlerocket keeps pods on its data volume (/dev/xvdb, 200Gi), not the 4Gi OS volume.
    assert _bytes(storage_by_pool["bottlerocket"]) == 179 * GIB
    # 60Gi pods fit one per 89Gi node.
    placed = _pods_by_node(plan)
    per_node = [len(placed[n["name"]]) for n in plan["nodes"] if n["nodePool"] == "al2023-large-root"]
    assert sorted(per_node) == [1, 1, 1, 1]


def test_an_unknown_instance_store_policy_is_refused_at_its_line(tmp_path: Path) -> None:
    text = (DATA / "instance-store-raid0.yaml").read_text().replace("instanceStorePolicy: RAID0", "instanceStorePolicy: RAID1")
    path = tmp_path / "raid1.yaml"
    path.write_text(text)
    line = text.splitlines().index("  instanceStorePolicy: RAID1") + 1
    result = subprocess.run(
        [sys.executable, "-m", "karpplan.cli.main", "plan", str(path)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"{path}:{line}: spec.instanceStorePolicy: Unsupported value: \"RAID1\"")


def _storage(*devices: BlockDevice, raid0: bool = False) -> NodeStorage:
    return NodeStorage(tuple(devices), raid0)


@pytest.mark.parametrize(
    ("family", "storage", "expected"),
    [
        ("AL2023", None, 20 * GIB),
        ("Windows2022", None, 50 * GIB),
        ("AL2023", _storage(raid0=True), 237 * 10**9),
        ("AL2023", _storage(BlockDevice("/dev/xvda", 80 * GIB)), 80 * GIB),
        ("AL2023", _storage(BlockDevice("/dev/xvdz", 80 * GIB)), 20 * GIB),  # not the ephemeral device
        ("AL2023", _storage(BlockDevice("/dev/xvdz", 80 * GIB, root_volume=True)), 80 * GIB),
        ("Bottlerocket", _storage(BlockDevice("/dev/xvda", 4 * GIB), BlockDevice("/dev/xvdb", 64 * GIB)), 64 * GIB),
        ("Custom", _storage(BlockDevice("/dev/xvda", 30 * GIB), BlockDevice("/dev/sdf", 90 * GIB)), 90 * GIB),
        ("Custom", _storage(BlockDevice("/dev/xvda", 30 * GIB), BlockDevice("/dev/sdf", None)), 20 * GIB),
        ("Windows2022", _storage(BlockDevice("/dev/sda1", 120 * GIB)), 120 * GIB),
        # RAID0 wins over any mapping when the type has local disks.
        ("AL2023", _storage(BlockDevice("/dev/xvda", 80 * GIB), raid0=True), 237 * 10**9),
    ],
)
def test_ephemeral_storage_follows_karpenters_precedence(family: str, storage: NodeStorage | None, expected: int) -> None:
    flags = allocatable.ami_family_flags(family)
    assert allocatable.ephemeral_storage_bytes(SHAPE, flags, storage) == expected


def test_raid0_without_local_disks_keeps_the_root_volume() -> None:
    shape = InstanceShape(vcpu=2, memory_mib=8192, arch="amd64", eni_pods=29)
    flags = allocatable.ami_family_flags("AL2023")
    assert allocatable.ephemeral_storage_bytes(shape, flags, _storage(raid0=True)) == 20 * GIB
    node = allocatable.compute(shape, storage=_storage(BlockDevice("/dev/xvda", 100 * GIB)))
    assert node.allocatable["ephemeral-storage"] == 89 * GIB
