"""lint on real manifests not swept before (session 18), read as a CI user reads the findings: each finding at
the line the user edits, its fix one that works when applied. Excerpts cite their sources."""

from __future__ import annotations

import io

from karpplan.lint.core import Finding, Severity
from karpplan.lint.run import LintOptions, lint

# aws-samples/eks-workshop-v2 manifests/modules/autoscaling/compute/karpenter/nodepool/nodepool.yaml and
# nodeclass.yaml, rendered (envsubst) as the workshop applies them.
WORKSHOP_POOL = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2023
  amiSelectorTerms:
  - alias: al2023@latest
  role: KarpenterNodeRole-eks-workshop
  securityGroupSelectorTerms:
  - tags:
      karpenter.sh/discovery: eks-workshop
  subnetSelectorTerms:
  - tags:
      karpenter.sh/discovery: eks-workshop
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    metadata:
      labels:
        type: karpenter
    spec:
      requirements:
        - key: "karpenter.sh/capacity-type"
          operator: In
          values: ["on-demand"]
        - key: "node.kubernetes.io/instance-type"
          operator: In
          values: ["c5.large", "m5.large", "r5.large", "m5.xlarge"]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      expireAfter: 72h
  limits:
    cpu: "1000"
    memory: 1000Gi
---
"""

# manifests/base-application/catalog (abridged) with the patch of
# manifests/modules/fundamentals/mng/spot/deployment/deployment.yaml: the managed node group lesson's selector.
CATALOG = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: catalog
  namespace: catalog
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: catalog
  template:
    metadata:
      labels:
        app.kubernetes.io/name: catalog
    spec:
      containers:
        - name: catalog
          image: "public.ecr.aws/aws-containers/retail-store-sample-catalog:1.2.1"
          resources:
            limits:
              memory: 512Mi
            requests:
              cpu: 250m
              memory: 512Mi
      nodeSelector:
        eks.amazonaws.com/capacityType: SPOT
"""


def findings(text: str) -> list[Finding]:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    return [f for f in report.findings if f.severity is not Severity.info]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_managed_node_group_capacity_label_is_told_its_karpenter_label() -> None:
    text = WORKSHOP_POOL + CATALOG
    found = findings(text)
    assert [(f.rule, f.line) for f in found] == [("no-pool-can-launch", line_of(text, "capacityType: SPOT"))]
    fix = found[0].fix
    assert "karpenter.sh/capacity-type: spot" in fix and "EKS managed node group" in fix
    assert "let a NodePool allow spot" in fix  # the workshop's pool is on-demand only


def test_the_fix_works_karpenters_label_and_a_pool_allowing_spot() -> None:
    fixed = (WORKSHOP_POOL.replace('values: ["on-demand"]', 'values: ["on-demand", "spot"]')
             + CATALOG.replace("eks.amazonaws.com/capacityType: SPOT", "karpenter.sh/capacity-type: spot"))
    assert findings(fixed) == []


def test_an_on_demand_node_group_label_maps_to_on_demand_and_needs_no_other_pool() -> None:
    text = WORKSHOP_POOL + CATALOG.replace("SPOT", "ON_DEMAND")
    found = findings(text)
    assert len(found) == 1
    assert "karpenter.sh/capacity-type: on-demand" in found[0].fix
    assert "let a NodePool allow" not in found[0].fix


# stefanprodan/podinfo kustomize/ (deployment.yaml and hpa.yaml, abridged): no replicas written, the HPA keeps 2.
PODINFO = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: podinfo
spec:
  minReadySeconds: 3
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      app: podinfo
  template:
    metadata:
      labels:
        app: podinfo
    spec:
      containers:
      - name: podinfod
        image: ghcr.io/stefanprodan/podinfo:6.9.2
        resources:
          limits:
            cpu: 2000m
            memory: 512Mi
          requests:
            cpu: 100m
            memory: 64Mi
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: podinfo
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: podinfo
  minReplicas: 2
  maxReplicas: 4
"""


def test_replicas_an_hpa_sets_are_reported_where_the_spread_goes_and_name_the_hpa() -> None:
    text = WORKSHOP_POOL + PODINFO
    found = [f for f in findings(text) if f.rule == "replicas-without-spread"]
    assert len(found) == 1
    # No spec.replicas to point at: the pod spec, where the topologySpreadConstraint is added.
    template_spec = [i for i, line in enumerate(text.splitlines(), 1) if line == "    spec:"][-1]
    assert (found[0].field, found[0].line) == ("spec.template.spec", template_spec)
    hpa_line = line_of(text, "kind: HorizontalPodAutoscaler") - 1
    assert found[0].message.startswith("2 replicas with neither")
    assert found[0].message.endswith(f"(replicas set by HorizontalPodAutoscaler podinfo at <stdin>:{hpa_line})")
    spread = ("      topologySpreadConstraints:\n      - maxSkew: 1\n        topologyKey: topology.kubernetes.io/zone\n"
              "        whenUnsatisfiable: ScheduleAnyway\n        labelSelector: {matchLabels: {app: podinfo}}\n")
    fixed = WORKSHOP_POOL + PODINFO.replace("    spec:\n      containers:", "    spec:\n" + spread + "      containers:")
    assert [f for f in findings(fixed) if f.rule == "replicas-without-spread"] == []


# grafana/mimir's Helm production docs give zoneAwareReplication zones a nodeSelector of GCP zones
# (`topology.kubernetes.io/zone: us-central1-a`); mimir-distributed renders it into each zone's ingester
# StatefulSet (operations/helm/tests/*-generated ingester-statefulset.yaml, abridged).
INGESTER_ZONE_A = """\
---
# Source: mimir-distributed/templates/ingester/ingester-statefulset.yaml
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: mimir-ingester-zone-a
  namespace: mimir
spec:
  podManagementPolicy: Parallel
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/component: ingester
      rollout-group: ingester
      zone: zone-a
  serviceName: mimir-ingester-headless
  template:
    metadata:
      labels:
        app.kubernetes.io/component: ingester
        rollout-group: ingester
        zone: zone-a
    spec:
      nodeSelector:
        topology.kubernetes.io/zone: us-central1-a
      containers:
        - name: ingester
          image: grafana/mimir:2.16.0
          resources:
            requests:
              cpu: 100m
              memory: 512Mi
"""

THREE_ZONES = WORKSHOP_POOL.replace(
    '          values: ["on-demand"]\n',
    '          values: ["on-demand"]\n        - key: topology.kubernetes.io/zone\n          operator: In\n'
    '          values: ["us-east-1a", "us-east-1b", "us-east-1c"]\n')


def test_a_zone_of_another_cloud_is_said_to_be_one_with_the_zones_to_use() -> None:
    text = THREE_ZONES + INGESTER_ZONE_A
    found = findings(text)
    assert [(f.rule, f.line) for f in found] == [("no-pool-can-launch", line_of(text, "zone: us-central1-a"))]
    assert found[0].source == "mimir-distributed/templates/ingester/ingester-statefulset.yaml"
    assert "us-central1-a is not a zone of us-east-1" in found[0].fix
    assert "select one of us-east-1a, us-east-1b, us-east-1c" in found[0].fix
    assert findings(THREE_ZONES + INGESTER_ZONE_A.replace("us-central1-a", "us-east-1a")) == []


def test_a_zone_of_the_region_no_pool_launches_in_names_the_pool_side_too() -> None:
    found = findings(THREE_ZONES + INGESTER_ZONE_A.replace("us-central1-a", "us-east-1d"))
    assert len(found) == 1
    assert "no NodePool launches in us-east-1d" in found[0].fix
    assert "add us-east-1d to a NodePool's topology.kubernetes.io/zone requirement" in found[0].fix
