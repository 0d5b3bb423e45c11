"""lint on real manifests not swept before (session 19): awslabs/data-on-eks's Spark on EKS stack (its Karpenter
NodePools and SparkApplications, now read as the pods a run creates) and the RabbitMQ cluster operator's examples,
read as a CI user reads the findings: each finding true, at the line the user edits, its fix one that works."""

from __future__ import annotations

import io
import json

from karpplan.lint.core import Finding, Severity
from karpplan.lint.run import LintOptions, lint
from karpplan.lint.sarif import render_sarif

# awslabs/data-on-eks infra/terraform/manifests/karpenter/nodepool-memory-optimized-graviton.yaml and
# nodepool-compute-optimized.yaml (abridged: requirements and labels as written).
POOLS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: memory-optimized-graviton
spec:
  template:
    metadata:
      labels:
        node.kubernetes.io/workload-type: memory-optimized-graviton
        NodeGroupType: SparkGravitonMemoryOptimized
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: ebs-gp3-1000gi-6000iops-1000tp
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
        - key: kubernetes.io/arch
          operator: In
          values: ["arm64"]
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["r"]
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["r6g", "r6gd", "r7g", "r7gd", "r8g", "r8gd", "x8g", "x2gd"]
        - key: karpenter.k8s.aws/instance-size
          operator: In
          values: ["medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge"]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: compute-optimized-x86
spec:
  template:
    metadata:
      labels:
        node.kubernetes.io/workload-type: compute-optimized-x86
        NodeGroupType: SparkComputeOptimized
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: ebs-gp3-1000gi-6000iops-1000tp-x86
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c"]
---
"""

# data-stacks/spark-on-eks/benchmarks/celeborn-benchmarks/tpcds-benchmark-10tb-ebs-celeborn.yaml (abridged): the
# driver pinned to the graviton pool in us-west-2a; the stack's region is us-west-2, which nothing here names.
CELEBORN = """\
apiVersion: "sparkoperator.k8s.io/v1beta2"
kind: SparkApplication
metadata:
  name: tpcds-benchmark-10tb-celeborn
  namespace: spark-team-a
spec:
  type: Scala
  mode: cluster
  sparkVersion: "3.5.3"
  restartPolicy:
    type: Never
  driver:
    cores: 5
    memory: "20g"
    memoryOverhead: "6g"
    serviceAccount: spark-team-a
    nodeSelector:
      NodeGroupType: SparkGravitonMemoryOptimized
      kubernetes.io/arch: arm64
      topology.kubernetes.io/zone: us-west-2a
      karpenter.sh/capacity-type: "on-demand"
  executor:
    cores: 14
    memory: "100g"
    memoryOverhead: "20g"
    instances: 32
    nodeSelector:
      NodeGroupType: SparkGravitonMemoryOptimized
      kubernetes.io/arch: arm64
      topology.kubernetes.io/zone: us-west-2a
      karpenter.sh/capacity-type: "on-demand"
"""

# data-stacks/spark-on-eks/benchmarks/spark-operator-benchmarks/spark-app-without-webhook.yaml (abridged): the
# executor template's toleration key ends in a stray quote.
WITHOUT_WEBHOOK = """\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: load-test-template
  namespace: spark-team-a
spec:
  type: Scala
  sparkVersion: 3.5.3
  driver:
    cores: 1
    coreRequest: "0.1"
    memory: 512m
    memoryOverhead: 0m
    template:
      spec:
        containers:
          - name: spark-kubernetes-driver
        tolerations:
          - key: spark-operator-benchmark-ng
            operator: Exists
            effect: NoSchedule
  executor:
    instances: 5
    cores: 1
    coreRequest: "0.1"
    memory: 256m
    memoryOverhead: 0m
    template:
      spec:
        containers:
          - name: spark-kubernetes-executor
        tolerations:
          - key: spark-operator-benchmark-ng"
            operator: Exists
            effect: NoSchedule
"""

# rabbitmq/cluster-operator docs/examples/production-ready/rabbitmq.yaml (abridged), with the override's
# nodeSelector a platform team adds for dedicated nodes.
RABBIT = """\
apiVersion: rabbitmq.com/v1beta1
kind: RabbitmqCluster
metadata:
  name: production-ready
spec:
  replicas: 3
  resources:
    requests:
      cpu: 4000m
      memory: 10Gi
  override:
    statefulSet:
      spec:
        template:
          spec:
            nodeSelector:
              node-role: messaging
"""


def report(text: str, *args: str) -> list[Finding]:
    region = args[0] if args else None
    found = lint(LintOptions(paths=("-",), stdin=io.StringIO(text), region=region)).findings
    return [f for f in found if f.severity is not Severity.info]


def line_of(text: str, needle: str, after: int = 0) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line and i > after)


def test_a_zone_of_the_unnamed_region_is_blamed_with_the_region_flag_as_the_fix() -> None:
    text = POOLS + CELEBORN
    found = [f for f in report(text) if f.rule == "no-pool-can-launch"]
    driver = line_of(text, "topology.kubernetes.io/zone: us-west-2a")
    executor = line_of(text, "topology.kubernetes.io/zone: us-west-2a", after=driver)
    # The graviton pool is the one the pods were written for: only the zone keeps them out of it (the other
    # pool's NodeGroupType differs too), so the zone is the field to fix, not NodeGroupType.
    assert [(f.field, f.line) for f in found] == [
        ("spec.driver.nodeSelector[topology.kubernetes.io/zone]", driver),
        ("spec.executor.nodeSelector[topology.kubernetes.io/zone]", executor)]
    assert all("lint with --region us-west-2" in f.fix for f in found)
    # No claim that types the us-east-1 catalog lacks would take a pod pinned to another region's zone.
    assert not any("would fit" in f.message for f in found)


def test_the_region_flag_fixes_it() -> None:
    found = report(POOLS + CELEBORN, "us-west-2")
    assert [f for f in found if "zone" in f.field] == []


def test_a_stray_quote_in_an_executor_template_toleration_is_reported_where_it_is_written() -> None:
    text = POOLS + WITHOUT_WEBHOOK
    found = [f for f in report(text) if f.rule == "toleration-invalid"]
    assert [(f.object, f.field, f.line) for f in found] == [(
        "SparkApplication/spark-team-a/load-test-template", "spec.executor.template.spec.tolerations[0].key",
        line_of(text, 'key: spark-operator-benchmark-ng"'))]
    fixed = text.replace('benchmark-ng"', "benchmark-ng")
    assert [f for f in report(fixed) if f.rule == "toleration-invalid"] == []


def test_a_label_no_pool_defines_is_not_said_to_fit_types_the_catalog_lacks() -> None:
    text = POOLS + RABBIT
    found = [f for f in report(text) if f.rule == "no-pool-can-launch"]
    assert [(f.field, f.line) for f in found] == [
        ("spec.override.statefulSet.spec.template.spec.nodeSelector[node-role]", line_of(text, "node-role: messaging"))]
    assert 'label "node-role" does not have known values' in found[0].message
    assert "would fit" not in found[0].message and "3 pod(s)" in found[0].message


def test_sarif_places_the_derived_finding_at_the_applications_line() -> None:
    text = POOLS + CELEBORN
    result = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    sarif = json.loads(render_sarif(result))
    regions = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in sarif["runs"][0]["results"]
               if r["ruleId"] == "no-pool-can-launch"]
    assert regions == [line_of(text, "topology.kubernetes.io/zone: us-west-2a"),
                       line_of(text, "topology.kubernetes.io/zone: us-west-2a",
                               after=line_of(text, "topology.kubernetes.io/zone: us-west-2a"))]


# OT-CONTAINER-KIT/redis-operator example/v1beta2/affinity/clusterd.yaml (abridged)
REDIS = """\
apiVersion: redis.redis.opstreelabs.in/v1beta2
kind: RedisCluster
metadata:
  name: redis-cluster
spec:
  clusterSize: 3
  clusterVersion: v7
  redisLeader:
    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchExpressions:
                - key: app
                  operator: In
                  values:
                    - redis-cluster-leader
            topologyKey: "kubernetes.io/hostname"
"""

# zalando/postgres-operator manifests/minimal-postgres-manifest.yaml (abridged): no pod field written.
# cert-manager docs: a Certificate (it runs no pod; Zalando's postgresql, once the example here, is now planned as
# the Spilo StatefulSet its operator creates: tests/test_zalando_derived.py)
CERTIFICATE = """\
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: example-com
spec:
  secretName: example-com-tls
  dnsNames: [example.com]
  issuerRef: {name: letsencrypt, kind: ClusterIssuer}
"""


def test_a_custom_resource_whose_pods_karpplan_does_not_read_is_said_not_to_be_judged() -> None:
    text = POOLS + REDIS
    found = lint(LintOptions(paths=("-",), stdin=io.StringIO(text))).findings
    notes = [f for f in found if f.object == "RedisCluster/redis-cluster"]
    assert [(f.rule, f.severity, f.line) for f in notes] == [
        ("input-read-differently", Severity.info, line_of(text, "clusterSize: 3") - 1)]
    assert "neither linted nor planned" in notes[0].message and "affinity" in notes[0].message
    # A custom resource writing no pod field is not guessed at.
    quiet = lint(LintOptions(paths=("-",), stdin=io.StringIO(POOLS + CERTIFICATE))).findings
    assert [f for f in quiet if f.object.startswith("Certificate/")] == []


def test_a_karpenter_node_claim_is_no_resource_running_pods() -> None:
    # kubectl get nodeclaims -o yaml (abridged): its spec.resources.requests are a node's
    claim = """\
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-x7k2p
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  requirements:
    - {key: karpenter.sh/nodepool, operator: In, values: [default]}
  resources:
    requests: {cpu: 1150m, memory: 1Gi, pods: "5"}
"""
    found = lint(LintOptions(paths=("-",), stdin=io.StringIO(POOLS + claim))).findings
    assert [f for f in found if f.object.startswith("NodeClaim/")] == []
