"""KPL407: aws/karpenter-provider-aws examples/v1/windows2022.yaml has no taint, so a Linux workload with no OS
selector may be given a Windows node (a new user's plan put Cassandra and Argo CD's redis there)."""

from __future__ import annotations

from pathlib import Path

from karpplan.lint.run import LintOptions, lint

WINDOWS_EXAMPLE = """\
# This example NodePool will provision instances running Windows Server 2022
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: windows2022
  annotations:
    kubernetes.io/description: "General purpose NodePool for Windows workloads"
spec:
  template:
    spec:
      requirements:
        - key: kubernetes.io/os
          operator: In
          values: ["windows"]
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
        - key: karpenter.k8s.aws/instance-generation
          operator: Gt
          values: ["2"]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: windows2022
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: windows2022
  annotations:
    kubernetes.io/description: "Nodes running Windows Server 2022"
spec:
  role: "KarpenterNodeRole-${CLUSTER_NAME}" # replace with your cluster name
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: "${CLUSTER_NAME}" # replace with your cluster name
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: "${CLUSTER_NAME}" # replace with your cluster name
  amiSelectorTerms:
    - alias: windows2022@latest # Windows does not support pinning
  metadataOptions:
    httpProtocolIPv6: disabled
    httpTokens: required"""

CASSANDRA = """\
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: cassandra, namespace: data}}
spec:
  replicas: 3
  serviceName: cassandra
  selector: {{matchLabels: {{app: cassandra}}}}
  template:
    metadata: {{labels: {{app: cassandra}}}}
    spec:
{selector}      containers: [{{name: c, image: cassandra:4.1, resources: {{requests: {{cpu: "1", memory: 2Gi}}}}}}]
"""


def _windows_findings(tmp_path: Path, selector: str) -> list[tuple[int, str]]:
    path = tmp_path / "all.yaml"
    path.write_text(WINDOWS_EXAMPLE.replace("${CLUSTER_NAME}", "demo").rstrip("\n") + "\n" + CASSANDRA.format(selector=selector))
    report = lint(LintOptions(paths=(str(path),)))
    return [(f.line, f.message) for f in report.findings if f.code == "KPL407"]


def test_a_linux_workload_without_an_os_selector_is_named_on_the_untainted_windows_pool(tmp_path: Path) -> None:
    ((line, message),) = _windows_findings(tmp_path, "")
    assert line == 11  # the pool's spec.template.spec
    assert "NodePool windows2022" in message and "StatefulSet/data/cassandra" in message


def test_a_workload_that_selects_linux_is_not_named(tmp_path: Path) -> None:
    assert _windows_findings(tmp_path, "      nodeSelector: {kubernetes.io/os: linux}\n") == []
