"""What Fargate mounts, said precisely (the EKS user guide: "You can't mount Amazon EBS volumes to Fargate Pods";
EFS file systems, statically provisioned): a refusal of a persistent volume says so and names what does work
(emptyDir, configMap, secret, projected volumes, ephemeral storage), and a pod with only those volumes is not
refused at all."""

from __future__ import annotations

import json
from typing import Any

from karpplan.inputs.loader import parse_documents
from karpplan.model.build import build_inventory

POD_VOLUMES = [
    {"name": "scratch", "emptyDir": {}},
    {"name": "config", "configMap": {"name": "web-config"}},
    {"name": "tls", "secret": {"secretName": "web-tls"}},
    {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
]


def statefulset(claim_class: str | None, volumes: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": 1, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"volumes": volumes,
                              "containers": [{"name": "web", "image": "nginx",
                                              "resources": {"requests": {"cpu": "250m", "memory": "512Mi",
                                                                         "ephemeral-storage": "2Gi"}}}]}},
    }
    if claim_class is not None:
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"},
                                         "spec": {"storageClassName": claim_class, "accessModes": ["ReadWriteOnce"],
                                                  "resources": {"requests": {"storage": "1Gi"}}}}]
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "shop"},
            "spec": spec}


def storage_class(name: str, provisioner: str) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner}


def refusals(*bodies: dict[str, Any]) -> list[str]:
    inventory = build_inventory(parse_documents("\n---\n".join(json.dumps(b) for b in bodies), "gen.yaml"))
    [pod] = inventory.pending
    return [reason for _, reason in pod.template.fargate.refusals]


def test_emptydir_configmap_secret_projected_and_ephemeral_storage_are_no_refusal() -> None:
    assert refusals(statefulset(None, POD_VOLUMES)) == []


def test_a_claim_fargate_cannot_mount_says_what_it_can() -> None:
    [fsx] = refusals(storage_class("fsx", "fsx.csi.aws.com"), statefulset("fsx", POD_VOLUMES))
    assert "StorageClass fsx (fsx.csi.aws.com)" in fsx
    assert ("of persistent volumes, Fargate Pods mount Amazon EFS ones (statically provisioned) and no other "
            "(emptyDir, configMap, secret and projected volumes and ephemeral storage are fine") in fsx
    assert "mounts only EFS" not in fsx
    [ebs] = refusals(storage_class("gp3", "ebs.csi.aws.com"), statefulset("gp3", POD_VOLUMES))
    assert ebs.endswith("StorageClass gp3 (ebs.csi.aws.com): Amazon EBS volumes can't be mounted to Fargate Pods")
    assert refusals(storage_class("efs", "efs.csi.aws.com"), statefulset("efs", POD_VOLUMES)) == []
