"""Persistent volume claims decide where a pod can run (issue 14, item 6).

Fargate mounts only EFS: a pod whose claim is EBS (a StorageClass on ebs.csi.aws.com or kubernetes.io/aws-ebs,
a PV on the EBS CSI driver or awsElasticBlockStore, or a claim that falls to EKS's default gp2) is refused,
in the same words as the fargate-scheduler (`volumes not supported: <volume> not supported because: ...`).
A claim's zone is a placement requirement, as in the kube-scheduler's VolumeBinding/VolumeZone filters: a
bound PV's `nodeAffinity`, else the StorageClass's `allowedTopologies`; both are ANDed with the pod's own node
affinity. End-to-end checks go through the CLI's JSON (the contract); the rest through the model builder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from karpplan.inputs.loader import parse_documents
from karpplan.model.build import build_inventory, load_inventory
from karpplan.model.inventory import Inventory
from karpplan.model.labels import ZONE
from karpplan.model.pod_volumes import VolumePlacement, with_volumes
from karpplan.model.pods import PodTemplate
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.resources import Resources
from karpplan.model.selectors import NodeAffinity, NodeSelectorTerm

DATA = Path(__file__).parent / "data" / "manifests"
POOL = DATA / "karpenter-general-nodepool.yaml"


def _plan(*paths: Path, engine: str = "optimal") -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "karpplan.cli.main", "plan", *map(str, paths), "-o", "json", "--time-limit", "5",
         "--engine", engine],
        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode in (0, 1), result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _zones(plan: dict[str, Any]) -> dict[str, str]:
    """Pod key -> zone of the node it is placed on."""
    zone_of = {n["name"]: n["zone"] for n in plan["nodes"]}
    return {f"{p['namespace']}/{p['name']}": zone_of[p["node"]] for p in plan["pods"] if p.get("node")}


def _reasons(plan: dict[str, Any]) -> dict[str, list[str]]:
    return {u["pod"]: u["reasons"] for u in plan["unschedulable"]}


# ------------------------------------------------------------------------------------------ Fargate
def test_a_statefulset_with_ebs_volume_claim_templates_is_refused_by_fargate() -> None:
    plan = _plan(DATA / "statefulset-ebs-fargate.yaml")
    reasons = _reasons(plan)
    assert sorted(reasons) == ["web/web-0", "web/web-1", "web/web-2"]
    for pod_reasons in reasons.values():
        refusal = pod_reasons[0]
        assert refusal.startswith("Fargate refuses spec.volumeClaimTemplates[0]: volumes not supported: www ")
        assert "StorageClass gp3 (ebs.csi.aws.com)" in refusal and "EBS" in refusal
        assert "does not fall back to EC2" in pod_reasons[-1]
    # The stateless Deployment in the same namespace still runs on Fargate; nothing EBS-backed does.
    fargate = [n for n in plan["nodes"] if n["capacityType"] == "fargate"]
    assert sorted(p for n in fargate for p in n["pods"]) == ["web/frontend-0", "web/frontend-1"]


def test_an_efs_claim_stays_on_fargate() -> None:
    plan = _plan(DATA / "efs-static-fargate.yaml")
    assert plan["unschedulable"] == []
    [node] = plan["nodes"]
    assert node["capacityType"] == "fargate" and node["pods"] == ["default/app"]
    assert node["fargate"]["capacityProvisioned"] == "0.25vCPU 1GB"


def test_a_claim_without_a_class_and_no_default_class_is_assumed_ebs_and_says_so() -> None:
    plan = _plan(DATA / "pvc-no-default-class-fargate.yaml", POOL)
    [refusal, fallback] = _reasons(plan)["monitoring/grafana-0"]
    assert refusal.startswith(
        "Fargate refuses spec.template.spec.volumes[1].persistentVolumeClaim: volumes not supported: storage "
        "not supported because: PVC grafana names no StorageClass"
    )
    assert "gp2" in refusal and "EBS" in refusal and "profile 'monitoring'" in fallback
    assert any("PVC grafana" in w and "gp2" in w for w in plan["warnings"])


def test_the_inputs_default_class_decides_for_a_claim_without_one(tmp_path: Path) -> None:
    efs_default = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: efs
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: efs.csi.aws.com
parameters: {provisioningMode: efs-ap, fileSystemId: fs-0123456789abcdef0, directoryPerms: "700"}
"""
    path = tmp_path / "efs-default.yaml"
    path.write_text(efs_default)
    plan = _plan(DATA / "pvc-no-default-class-fargate.yaml", path, POOL)
    assert plan["unschedulable"] == [] and plan["warnings"] == []
    assert [n["capacityType"] for n in plan["nodes"]] == ["fargate"]


# ------------------------------------------------------------------------------------------ zones
def test_allowed_topologies_keep_a_statefulset_in_its_zone() -> None:
    plan = _plan(DATA / "statefulset-ebs-allowed-topologies.yaml")
    zones = _zones(plan)
    assert sorted(zones) == ["databases/postgres-0", "databases/postgres-1", "databases/postgres-2"]
    assert set(zones.values()) == {"us-east-1b"}
    assert plan["unschedulable"] == []


def test_bound_pvs_pin_each_ordinal_to_its_volumes_zone_in_both_engines() -> None:
    expected = {"web/web-0": "us-east-1a", "web/web-1": "us-east-1b", "web/web-2": "us-east-1c"}
    for engine in ("optimal", "karpenter"):
        plan = _plan(DATA / "statefulset-bound-pvs.yaml", POOL, engine=engine)
        assert _zones(plan) == expected, engine


def test_immediate_binding_without_a_pv_adds_no_zone_and_says_so() -> None:
    plan = _plan(DATA / "pvc-immediate-binding.yaml", POOL)
    assert plan["unschedulable"] == []
    assert any("redis-data" in w and "Immediate" in w and "zone is unknown" in w for w in plan["warnings"])


def test_a_pvs_zone_is_anded_with_the_pods_own_node_affinity(tmp_path: Path) -> None:
    text = (DATA / "statefulset-bound-pvs.yaml").read_text().replace(
        "        containers:\n",
        "        nodeSelector:\n          topology.kubernetes.io/zone: us-east-1b\n        containers:\n",
        1,
    )
    path = tmp_path / "sts.yaml"
    path.write_text(text)
    plan = _plan(path, POOL)
    assert _zones(plan) == {"web/web-1": "us-east-1b"}
    assert sorted(_reasons(plan)) == ["web/web-0", "web/web-2"]


# ------------------------------------------------------------------------------------------ model
def _inventory(*names: str) -> Inventory:
    return load_inventory([str(DATA / n) for n in names])


def test_statefulset_replicas_share_a_template_unless_their_volumes_zones_differ() -> None:
    shared = _inventory("statefulset-ebs-allowed-topologies.yaml")
    assert len(shared.pending_groups()) == 1
    [group] = shared.pending_groups()
    assert group.size == 3 and group.template.affinity.matches({ZONE: "us-east-1b"})
    assert not group.template.affinity.matches({ZONE: "us-east-1a"})

    pinned = _inventory("statefulset-bound-pvs.yaml")
    groups = pinned.pending_groups()
    assert [g.size for g in groups] == [1, 1, 1]
    for group, zone in zip(groups, ("us-east-1a", "us-east-1b", "us-east-1c"), strict=True):
        assert [z for z in ("us-east-1a", "us-east-1b", "us-east-1c") if group.template.affinity.matches({ZONE: z})] \
            == [zone]


def test_storage_documents_are_read_not_skipped() -> None:
    inventory = _inventory("statefulset-bound-pvs.yaml", "efs-static-fargate.yaml")
    kinds = {s.kind for s in inventory.skipped}
    assert not kinds & {"StorageClass", "PersistentVolume", "PersistentVolumeClaim"}


def test_volume_terms_are_anded_with_every_required_term() -> None:
    own = (
        NodeSelectorTerm(Requirements([Requirement("kubernetes.io/arch", frozenset({"amd64"}))])),
        NodeSelectorTerm(Requirements([Requirement("kubernetes.io/arch", frozenset({"arm64"}))])),
    )
    template = PodTemplate("ns", {}, Resources(), affinity=NodeAffinity(required=own))
    zone = NodeSelectorTerm(Requirements([Requirement(ZONE, frozenset({"z1"}))]))
    placed = with_volumes(template, VolumePlacement(terms=((zone,),)))
    affinity = placed.affinity
    assert affinity.required is not None and len(affinity.required) == 2
    assert affinity.matches({"kubernetes.io/arch": "arm64", ZONE: "z1"})
    assert not affinity.matches({"kubernetes.io/arch": "arm64", ZONE: "z2"})
    assert with_volumes(template, VolumePlacement()) is template


# ------------------------------------------------------------------------------------------ property
_ZONES = ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d")
_ZONE_KEYS = ("topology.ebs.csi.aws.com/zone", "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
_PROVISIONERS = {"ebs.csi.aws.com": True, "kubernetes.io/aws-ebs": True, "efs.csi.aws.com": False,
                 "fsx.csi.aws.com": True}


def _documents(*bodies: dict[str, Any]) -> str:
    return "\n---\n".join(json.dumps(b) for b in bodies)


@settings(max_examples=40, deadline=None)
@given(
    allowed=st.lists(st.sampled_from(_ZONES), unique=True, max_size=3),
    key=st.sampled_from(_ZONE_KEYS),
    provisioner=st.sampled_from(sorted(_PROVISIONERS)),
    mode=st.sampled_from(["Immediate", "WaitForFirstConsumer", None]),
    bound_zone=st.one_of(st.none(), st.sampled_from(_ZONES)),
    pv_key=st.sampled_from(_ZONE_KEYS[:2]),
    replicas=st.integers(1, 4),
)
def test_claims_zones_and_fargate_refusals_follow_their_class_and_volume(
    allowed: list[str], key: str, provisioner: str, mode: str | None, bound_zone: str | None, pv_key: str,
    replicas: int,
) -> None:
    storage_class: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                     "metadata": {"name": "sc"}, "provisioner": provisioner}
    if mode:
        storage_class["volumeBindingMode"] = mode
    if allowed:
        storage_class["allowedTopologies"] = [{"matchLabelExpressions": [{"key": key, "values": allowed}]}]
    statefulset = {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "data"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                           "spec": {"storageClassName": "sc", "accessModes": ["ReadWriteOnce"],
                                                    "resources": {"requests": {"storage": "1Gi"}}}}]},
    }
    bodies = [storage_class, statefulset]
    if bound_zone is not None:  # ordinal 0's claim exists and is bound to a PV in one zone
        bodies.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                       "metadata": {"name": "data-db-0", "namespace": "data"},
                       "spec": {"storageClassName": "sc", "volumeName": "pv-0", "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "1Gi"}}}})
        bodies.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-0"},
                       "spec": {"capacity": {"storage": "1Gi"}, "storageClassName": "sc",
                                "csi": {"driver": provisioner, "volumeHandle": "vol-1"},
                                "claimRef": {"namespace": "data", "name": "data-db-0"},
                                "nodeAffinity": {"required": {"nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": pv_key, "operator": "In",
                                                           "values": [bound_zone]}]}]}}}})
    inventory = build_inventory(parse_documents(_documents(*bodies), "gen.yaml"))
    pods = sorted(inventory.pending, key=lambda p: p.name)
    assert [p.name for p in pods] == [f"db-{i}" for i in range(replicas)]
    class_zones = set(allowed) if allowed else set(_ZONES)
    for index, pod in enumerate(pods):
        zones = {bound_zone} if index == 0 and bound_zone is not None else class_zones
        assert {z for z in _ZONES if pod.template.affinity.matches({ZONE: z})} == zones
        refused = [path for path, _ in pod.template.fargate.refusals]
        assert refused == (["spec.volumeClaimTemplates[0]"] if _PROVISIONERS[provisioner] else [])
    # Replicas with the same placement share one template (a bound PV's refusal names the PV's driver).
    same = bound_zone is None or ({bound_zone} == class_zones and not _PROVISIONERS[provisioner])
    expected_groups = 1 if replicas == 1 or same else 2
    assert len(inventory.pending_groups()) == expected_groups
