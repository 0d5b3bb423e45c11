"""Shared pieces of the rules' bad and good examples (each example is a complete, lintable stream)."""

NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
---
"""

# The EC2NodeClass NODEPOOL refers to (no `---` before it: it follows a stream that ends with one).
NODE_CLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"""

# An eksctl ClusterConfig whose Fargate profile takes the examples' namespace, `default`.
FARGATE_CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: demo, region: us-east-1}
fargateProfiles:
  - name: apps
    selectors: [{namespace: default}]
---
"""


def deployment(pod_spec: str, *, name: str = "web", replicas: int = 1, labels: str = "{app: web}") -> str:
    """A Deployment whose pod spec is `pod_spec` (indented by 6 spaces already)."""
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {labels}}}
  template:
    metadata:
      labels: {labels}
    spec:
{pod_spec}      containers:
        - name: app
          image: nginx
          resources: {{requests: {{cpu: 500m, memory: 512Mi}}}}
"""


ZONE_SPREAD = """\
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: DoNotSchedule
          labelSelector: {matchLabels: {app: web}}
"""
