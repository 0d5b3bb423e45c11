"""Manifests for the diff tests: a one-zone m5.large NodePool and Deployments, written as files."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: node.kubernetes.io/instance-type, operator: In, values: [%s]}
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"""


def pool(instance_type: str = "m5.large") -> str:
    return POOL % instance_type


def deployment(name: str, replicas: int, *, cpu: str = "1", zone: str | None = None, namespace: str = "shop") -> str:
    selector = f"\n              nodeSelector: {{topology.kubernetes.io/zone: {zone}}}" if zone else ""
    return textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: {name}, namespace: {namespace}}}
        spec:
          replicas: {replicas}
          selector: {{matchLabels: {{app: {name}}}}}
          template:
            metadata: {{labels: {{app: {name}}}}}
            spec:
              topologySpreadConstraints:
                - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway,
                   labelSelector: {{matchLabels: {{app: {name}}}}}}}{selector}
              containers:
                - name: app
                  image: public.ecr.aws/nginx/nginx:1.27
                  resources: {{requests: {{cpu: "{cpu}", memory: 1Gi}}}}
        """)


def write(path: Path, *documents: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\n".join(documents))
    return path


def karpplan(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "karpplan", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=env)
