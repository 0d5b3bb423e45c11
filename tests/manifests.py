"""Manifests for tests, as YAML text: a Karpenter NodePool, its EC2NodeClass and Deployments, built by small
functions so that each test says only what differs (a pool's requirements, a workload's requests, a spread).

Every builder returns one document without a `---` separator; join documents with `"---\n".join(...)`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"

ON_DEMAND: Mapping[str, Sequence[str]] = {CAPACITY_TYPE: ("on-demand",)}

def nodepool(name: str = "default", *, requirements: Mapping[str, Sequence[str]] = ON_DEMAND) -> str:
    """A karpenter.sh/v1 NodePool on the EC2NodeClass `default`, each requirement `key: values` an `In`."""
    lines = ["apiVersion: karpenter.sh/v1", "kind: NodePool", f"metadata: {{name: {name}}}", "spec:",
             "  template:", "    spec:",
             "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}",
             "      requirements:"]
    lines += [f"        - {{key: {key}, operator: In, values: [{', '.join(values)}]}}"
              for key, values in requirements.items()]
    return "\n".join(lines) + "\n"


def ec2nodeclass(discovery: str = "demo") -> str:
    """The EC2NodeClass `default`, finding its subnets and security groups by the `karpenter.sh/discovery` tag."""
    return f"""\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: default}}
spec:
  role: KarpenterNodeRole-{discovery}
  amiSelectorTerms: [{{alias: al2023@latest}}]
  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: {discovery}}}}}]
  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: {discovery}}}}}]
"""


def deployment(name: str, replicas: int, *, namespace: str | None = None, kind: str = "Deployment",
               cpu: str = "1", memory: str = "1Gi", container: str = "c", image: str = "nginx",
               spread: tuple[str, str] | None = None, zone: str | None = None) -> str:
    """A workload (`kind`: Deployment, StatefulSet, ...) of `replicas` pods labelled app=`name`, one container
    requesting `cpu` and `memory`; `spread` = (topologyKey, whenUnsatisfiable) spreads the pods with maxSkew 1,
    `zone` pins them there by a nodeSelector."""
    metadata = f"{{name: {name}, namespace: {namespace}}}" if namespace else f"{{name: {name}}}"
    lines = ["apiVersion: apps/v1", f"kind: {kind}", f"metadata: {metadata}", "spec:", f"  replicas: {replicas}",
             f"  selector: {{matchLabels: {{app: {name}}}}}", "  template:",
             f"    metadata: {{labels: {{app: {name}}}}}", "    spec:"]
    if spread:
        lines += ["      topologySpreadConstraints:",
                  f"        - {{maxSkew: 1, topologyKey: {spread[0]}, whenUnsatisfiable: {spread[1]},",
                  f"           labelSelector: {{matchLabels: {{app: {name}}}}}}}"]
    if zone:
        lines.append(f"      nodeSelector: {{{ZONE}: {zone}}}")
    lines += ["      containers:", f"        - name: {container}", f"          image: {image}",
              f"          resources: {{requests: {{cpu: \"{cpu}\", memory: {memory}}}}}"]
    return "\n".join(lines) + "\n"
