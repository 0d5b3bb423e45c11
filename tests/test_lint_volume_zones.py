"""A pod's zone can come from its volumes (a StorageClass's allowedTopologies, a bound PV's nodeAffinity): their
placeholders are unrendered-placeholder findings that keep the capacity rules from judging the pods (as the
pod's own placeholders do), and a zone no NodePool launches in is reported at the volume's line, not at the
pod's `resources`. The StorageClass is shaped like aws-samples/karpenter-blueprints blueprints/stateful/storage.yaml."""

from __future__ import annotations

import io

from karpplan.lint.core import Severity
from karpplan.lint.report import LintReport
from karpplan.lint.rules.examples import NODEPOOL, deployment
from karpplan.lint.run import LintOptions, lint

ZONED_POOL = NODEPOOL.replace(
    "values: [c, m, r]}\n",
    "values: [c, m, r]}\n        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}\n")

CLAIM_VOLUME = """\
      volumes:
        - name: data
          persistentVolumeClaim: {claimName: ebs-claim}
"""


def storage_class(zone: str) -> str:
    return f"""\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: storage-gp3
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions:
  - key: topology.ebs.csi.aws.com/zone
    values: ["{zone}"]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ebs-claim
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: storage-gp3
  resources: {{requests: {{storage: 4Gi}}}}
---
"""


def bound_volume(zone: str) -> str:
    return f"""\
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-data
spec:
  capacity: {{storage: 4Gi}}
  accessModes: [ReadWriteOnce]
  csi: {{driver: ebs.csi.aws.com, volumeHandle: vol-0123}}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions:
            - key: topology.kubernetes.io/zone
              operator: In
              values: ["{zone}"]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ebs-claim
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: pv-data
  resources: {{requests: {{storage: 4Gi}}}}
---
"""


def lint_text(text: str) -> LintReport:
    return lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))


def errors(report: LintReport) -> list[tuple[str, int, str]]:
    return [(f.rule, f.line, f.object) for f in report.findings if f.severity is Severity.error]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_placeholder_zone_in_a_storage_class_is_reported_and_its_pods_are_skipped() -> None:
    text = NODEPOOL + storage_class("<<AVAILABILITY_ZONE>>") + deployment(CLAIM_VOLUME)
    report = lint_text(text)
    assert errors(report) == [("unrendered-placeholder", line_of(text, "<<AVAILABILITY_ZONE>>"),
                               "StorageClass/storage-gp3")]
    skipped = {s.rule: s for s in report.skipped}
    assert "no-pool-can-launch" in skipped and skipped["no-pool-can-launch"].object == "Deployment/default/web"
    assert "StorageClass storage-gp3" in skipped["no-pool-can-launch"].reason


def test_a_placeholder_zone_in_a_bound_volume_is_reported_and_its_pods_are_skipped() -> None:
    text = NODEPOOL + bound_volume("${AZ}") + deployment(CLAIM_VOLUME)
    report = lint_text(text)
    assert errors(report) == [("unrendered-placeholder", line_of(text, "${AZ}"), "PersistentVolume/pv-data")]
    assert {s.object for s in report.skipped if s.rule == "no-pool-can-launch"} == {"Deployment/default/web"}


def test_a_storage_class_zone_no_pool_launches_in_is_reported_at_the_storage_class() -> None:
    text = ZONED_POOL + storage_class("us-east-1b") + deployment(CLAIM_VOLUME)
    (finding,) = [f for f in lint_text(text).findings if f.severity is Severity.error]
    assert (finding.rule, finding.object) == ("no-pool-can-launch", "StorageClass/storage-gp3")
    assert line_of(text, "allowedTopologies") < finding.line <= line_of(text, "us-east-1b")
    assert finding.message.startswith("Deployment/default/web: ")
    assert "StorageClass storage-gp3, zone us-east-1b" in finding.message
    assert "allowedTopologies" not in finding.fix or "StorageClass storage-gp3" in finding.fix


def test_a_bound_volume_in_a_zone_no_pool_launches_in_is_reported_at_the_volume() -> None:
    text = ZONED_POOL + bound_volume("us-east-1c") + deployment(CLAIM_VOLUME)
    (finding,) = [f for f in lint_text(text).findings if f.severity is Severity.error]
    assert (finding.rule, finding.object) == ("no-pool-can-launch", "PersistentVolume/pv-data")
    assert line_of(text, "nodeAffinity") < finding.line <= line_of(text, "us-east-1c")


def test_volumes_in_a_zone_the_pool_launches_in_are_fine() -> None:
    assert errors(lint_text(ZONED_POOL + storage_class("us-east-1a") + deployment(CLAIM_VOLUME))) == []
    assert errors(lint_text(ZONED_POOL + bound_volume("us-east-1a") + deployment(CLAIM_VOLUME))) == []


def test_a_pod_refused_for_its_own_fields_is_still_reported_at_them() -> None:
    text = ZONED_POOL + storage_class("us-east-1a") + deployment(
        CLAIM_VOLUME + "      nodeSelector: {karpenter.k8s.aws/instance-category: t}\n")
    (finding,) = [f for f in lint_text(text).findings if f.severity is Severity.error]
    assert (finding.object, finding.line) == ("Deployment/default/web", line_of(text, "instance-category: t"))


def test_the_volume_finding_obeys_the_workloads_ignore_annotation() -> None:
    annotated = deployment(CLAIM_VOLUME).replace(
        "  name: web\n", "  name: web\n  annotations: {karpplan.io/lint-ignore: no-pool-can-launch}\n", 1)
    assert errors(lint_text(ZONED_POOL + storage_class("us-east-1b") + annotated)) == []
