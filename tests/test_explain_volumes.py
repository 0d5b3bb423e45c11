"""explain --manifests on volume topology: the pod's PVs, their zones and binding modes, and fixes on the volumes.

The log line has the shape of aws/karpenter-provider-aws#4407 (zone DoesNotExist against every Provisioner);
the manifests are our own: a StatefulSet pod whose two bound EBS volumes sit in different zones, and a pod
whose claim waits on an Immediate StorageClass.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from karpplan.cli.main import app

runner = CliRunner()
LOG = ('Could not schedule pod, incompatible with provisioner "zonal", incompatible requirements, key '
       "topology.kubernetes.io/zone, topology.kubernetes.io/zone DoesNotExist not in topology.kubernetes.io/zone In "
       '[us-east-1a]; incompatible with provisioner "general", incompatible requirements, key topology.kubernetes.io/zone, '
       "topology.kubernetes.io/zone DoesNotExist not in topology.kubernetes.io/zone In [us-east-1a us-east-1b]"
       '\t{"commit": "abc", "pod": "db/pg-0"}\n')
MANIFESTS = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: ebs}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-wal}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ebs
  claimRef: {namespace: db, name: wal-pg-0}
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}]
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-data}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ebs
  claimRef: {namespace: db, name: data-pg-0}
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-2}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1b]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: wal-pg-0, namespace: db}
spec: {accessModes: [ReadWriteOnce], storageClassName: ebs, volumeName: pv-wal, resources: {requests: {storage: 5Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-pg-0, namespace: db}
spec: {accessModes: [ReadWriteOnce], storageClassName: ebs, volumeName: pv-data, resources: {requests: {storage: 5Gi}}}
---
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: {name: zonal}
spec:
  requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}]
---
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: {name: general}
spec:
  requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: pg, namespace: db}
spec:
  replicas: 1
  serviceName: pg
  selector: {matchLabels: {app: pg}}
  template:
    metadata: {labels: {app: pg}}
    spec:
      containers:
        - name: pg
          image: postgres
          resources: {requests: {cpu: "1", memory: 2Gi}}
  volumeClaimTemplates:
    - metadata: {name: wal}
      spec: {accessModes: [ReadWriteOnce], storageClassName: ebs, resources: {requests: {storage: 5Gi}}}
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], storageClassName: ebs, resources: {requests: {storage: 5Gi}}}
"""


def test_volumes_in_two_zones_are_named_and_fixed_on_the_volumes(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text(LOG)
    (tmp_path / "m.yaml").write_text(MANIFESTS)
    result = runner.invoke(app, ["explain", str(tmp_path / "log.txt"), "--manifests", str(tmp_path / "m.yaml"),
                                 "--region", "us-east-1", "-o", "json"])
    assert result.exit_code == 0, result.output
    (item,) = json.loads(result.stdout)["items"]
    plain = item["plain"]
    assert "PV pv-wal in us-east-1a" in plain and "PV pv-data in us-east-1b" in plain and "No zone holds them all" in plain
    assert "widen the pool" not in plain.lower() and plain.count("can run in no zone at all") == 1
    fixes = item["fixes"]
    assert fixes and all(f["object"].startswith("PersistentVolume/") for f in fixes[:2])
    assert {f["line"] for f in fixes[:2]} == {16, 30}  # each PV's spec.nodeAffinity
    assert not any("nodeSelector" in f["action"] or "node affinity" in f["action"] for f in fixes)
    assert all(isinstance(f["hourlyCostDelta"], float) for f in fixes)


def test_unbound_claim_on_an_immediate_class_is_named(tmp_path: Path) -> None:
    manifests = MANIFESTS.replace("volumeBindingMode: WaitForFirstConsumer", "volumeBindingMode: Immediate").replace(
        "volumeName: pv-data, ", "")
    manifests = manifests.replace("claimRef: {namespace: db, name: data-pg-0}", "claimRef: {namespace: db, name: other}")
    log = ("  Warning  FailedScheduling  2m  default-scheduler  0/3 nodes are available: 3 pod has unbound immediate "
           "PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.\n")
    (tmp_path / "log.txt").write_text("Name:         pg-0\nNamespace:    db\n" + log)
    (tmp_path / "m.yaml").write_text(manifests)
    result = runner.invoke(app, ["explain", str(tmp_path / "log.txt"), "--manifests", str(tmp_path / "m.yaml"),
                                 "-o", "json"])
    (item,) = json.loads(result.stdout)["items"]
    assert item["workload"] == "StatefulSet/pg" and "volume" in {r["kind"] for r in item["reasons"]}
    assert "PVC data-pg-0 is unbound and StorageClass ebs binds Immediately" in item["plain"]
    assert "WaitForFirstConsumer" in item["plain"]
