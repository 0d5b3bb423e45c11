"""The node-affinity mask lint's (and plan's) pool checks read is exactly `NodeAffinity.matches` per launch
option, though it asks once per distinct combination of the label values the affinity reads."""

from __future__ import annotations

from karpplan.inputs.loader import parse_documents
from karpplan.model.build import build_inventory
from karpplan.planner import catalog_for, prepare
from karpplan.scheduling.candidates import OptionTable

POOLS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    metadata: {labels: {team: a}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: arm}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [arm64]}
"""
AFFINITIES = [
    "nodeSelector: {team: a}",
    "nodeSelector: {team: b}",
    "nodeSelector: {kubernetes.io/arch: arm64, topology.kubernetes.io/zone: us-east-1a}",
    "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
    "{matchExpressions: [{key: team, operator: DoesNotExist}]},"
    "{matchExpressions: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: ['15']},"
    " {key: karpenter.sh/capacity-type, operator: NotIn, values: [spot]}]}]}}}",
    "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
    "{matchExpressions: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, c6g]},"
    " {key: team, operator: Exists}]}]}}}",
    "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
    "{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]}}}",
    "nodeSelector: {karpenter.k8s.aws/instance-memory: '16384', kubernetes.io/os: linux}",
]


def pod(index: int, placement: str) -> str:
    return f"""\
---
apiVersion: v1
kind: Pod
metadata: {{name: p{index}}}
spec:
  {placement}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: 100m}}}}}}]
"""


def test_affinity_mask_is_matches_per_option() -> None:
    text = POOLS + "".join(pod(i, a) for i, a in enumerate(AFFINITIES))
    inventory = build_inventory(parse_documents(text, "in.yaml"))
    options = prepare(inventory, catalog_for(inventory, None, None)).problem.options
    table = OptionTable(options)
    assert table.size > 1000
    seen = 0
    for p in inventory.pods:
        affinity = p.template.affinity
        expected = [affinity.matches(o.labels) for o in options]
        assert table.affinity_mask(affinity).tolist() == expected, p.name
        seen += any(expected) and not all(expected)
    assert seen >= 4  # the affinities tell options apart
