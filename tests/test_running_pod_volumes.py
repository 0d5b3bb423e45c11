"""A running pod's zonal volume keeps it in its zone when consolidation moves it (Karpenter adds the volumes'
requirements to every pod it simulates: "adding requirements derived from pod volumes", kubernetes-sigs/karpenter
#2458). A new user's snapshot had consolidation delete every zonal node of a Cassandra StatefulSet, its pods
"moving" away from their EBS volumes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SNAPSHOT = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.2xlarge]}
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {karpenter.sh/nodepool: general, karpenter.sh/capacity-type: on-demand, node.kubernetes.io/instance-type: m5.2xlarge,
           topology.kubernetes.io/zone: us-east-1a, kubernetes.io/hostname: node-a, karpenter.sh/initialized: "true", karpenter.sh/registered: "true"}
status: {allocatable: {cpu: 7910m, memory: 29317Mi, pods: "58"}}
---
apiVersion: v1
kind: Node
metadata:
  name: node-b
  labels: {karpenter.sh/nodepool: general, karpenter.sh/capacity-type: on-demand, node.kubernetes.io/instance-type: m5.2xlarge,
           topology.kubernetes.io/zone: us-east-1b, kubernetes.io/hostname: node-b, karpenter.sh/initialized: "true", karpenter.sh/registered: "true"}
status: {allocatable: {cpu: 7910m, memory: 29317Mi, pods: "58"}}
---
apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: data, ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, controller: true, uid: u1}]}
spec:
  nodeName: node-a
  containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data-db-0}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  nodeName: node-b
  containers: [{name: c, image: x, resources: {requests: {cpu: 3, memory: 1Gi}}}]
status: {phase: Running}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-db-0, namespace: data}
spec: {accessModes: [ReadWriteOnce], storageClassName: gp3, volumeName: pv-db-0, resources: {requests: {storage: 10Gi}}}
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-db-0}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  claimRef: {namespace: data, name: data-db-0}
  storageClassName: gp3
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.ebs.csi.aws.com/zone, operator: In, values: [us-east-1a]}]
"""


def _actions(path: Path) -> list[dict[str, object]]:
    out = subprocess.run([sys.executable, "-m", "karpplan", "consolidate", str(path), "-o", "json"],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode in (0, 1), out.stderr
    doc = json.loads(out.stdout)
    assert not any("claim" in str(w) for w in doc["warnings"]), doc["warnings"]
    return doc["actions"]  # type: ignore[no-any-return]


def test_a_node_holding_a_pod_with_a_zonal_volume_is_replaced_in_that_zone_not_deleted(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.yaml"
    path.write_text(SNAPSHOT)
    actions = _actions(path)
    on_a = [a for a in actions if "node-a" in a["nodes"]]  # type: ignore[operator]
    assert on_a, actions
    for action in on_a:
        # db-0's volume is in us-east-1a: node-a goes only if a node in us-east-1a takes db-0.
        zones = [r["zone"] for r in action["replacements"]]  # type: ignore[attr-defined]
        assert zones == ["us-east-1a"], action


def test_claims_a_snapshot_does_not_hold_say_nothing(tmp_path: Path) -> None:
    # `kubectl get nodes,pods -o yaml` without pv,pvc: a running pod's claims exist, nothing to warn about,
    # and the pod moves as if it had no volume (the snapshot cannot say its zone).
    path = tmp_path / "snapshot.yaml"
    path.write_text(SNAPSHOT.split("---\napiVersion: v1\nkind: PersistentVolumeClaim")[0])
    actions = _actions(path)
    assert any("node-a" in a["nodes"] for a in actions)  # type: ignore[operator]


def test_consolidate_on_input_with_no_node_is_bad_input_not_a_verdict(tmp_path: Path) -> None:
    # A new user ran `karpplan consolidate apps/windows/iis.yaml` and read "No consolidation applies" as a verdict.
    path = tmp_path / "deployment.yaml"
    path.write_text(SNAPSHOT.split("---\napiVersion: v1\nkind: Pod\n")[0].split("---\napiVersion: v1\nkind: Node")[0])
    out = subprocess.run([sys.executable, "-m", "karpplan", "consolidate", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(f"{path}: no Node in the input") and "karpplan plan" in out.stderr
