"""What a new user's trial in us-west-2 found (session 19: data-on-eks's GPU and Neuron NodePools): the note that
the region's catalog lacks a pool's fitting types is said only where a catalog could change the answer."""

from __future__ import annotations

import json
from pathlib import Path

from explain_pastes import Paste, check_paste
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.explain.enrich import catalog_loader

# eks-workshop-v2's `aiml` pool (inf2/trn1, no neuron-device label) and a `neuron` pool that defines the label;
# us-west-2's embedded price list has neither inf2 nor trn1.
POOLS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: aiml}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [inf2, trn1]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: neuron}
spec:
  template:
    metadata: {labels: {neuron.amazonaws.com/neuron-device: "true"}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [inf2.xlarge]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: v1
kind: Pod
metadata: {name: mistral, namespace: vllm}
spec:
  nodeSelector: {neuron.amazonaws.com/neuron-device: "true"}
  containers:
    - name: vllm
      image: public.ecr.aws/neuron/pytorch-inference-vllm-neuronx
      resources:
        requests: {cpu: "3", memory: 12Gi}
        limits: {aws.amazon.com/neuron: 1}
"""


def test_the_catalog_note_is_said_only_for_a_pool_that_could_take_the_pod(tmp_path: Path) -> None:
    (tmp_path / "all.yaml").write_text(POOLS)
    result = CliRunner().invoke(app, ["plan", str(tmp_path), "--region", "us-west-2", "-o", "json"])
    assert result.exit_code == 1, result.output
    (pod,) = json.loads(result.stdout)["unschedulable"]
    by_pool = {r.split('"')[1]: r for r in pod["reasons"] if r.startswith('nodepool "')}
    # aiml never gets as far as its types: it does not define the label the pod selects
    assert 'label "neuron.amazonaws.com/neuron-device" does not have known values' in by_pool["aiml"]
    assert "no price" not in by_pool["aiml"]
    # neuron would take it on inf2.xlarge, which the us-west-2 catalog lacks: that is said first, with the remedy,
    # and the pool's own reason points at it
    assert "no price here" in by_pool["neuron"]
    lead = pod["reasons"][0]
    assert lead.startswith("no type with a price here fits the pod")
    assert "inf2.xlarge, which the embedded us-west-2 catalog lacks" in lead and "--allow-estimated-prices" in lead


# worldcoin/iris-mpc#1610: a pod asking 123020Mi (about 120 GiB) and pod-eni; the arm64 pool refuses it for its
# arch (so the pod requires amd64), the amd64 pool's types were too small: the PR lowered the requests. explain
# led with the pod-eni paragraph ("not smaller requests") and offered arm64 types (x2gd, x8g, r6g).
IRIS_PODENI = Paste(
    "https://github.com/worldcoin/iris-mpc/pull/1610",
    'Events:\n  Type     Reason            Age                 From               Message\n  ----     ------            ----                ----               -------\n  Warning  FailedScheduling  37m                 default-scheduler  0/4 nodes are available: 2 node(s) had untolerated taint {critical: }, 2 node(s) were unschedulable. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.\n  Warning  FailedScheduling  112s (x7 over 31m)  default-scheduler  0/4 nodes are available: 2 node(s) had untolerated taint {critical: }, 2 node(s) were unschedulable. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.\n  Warning  FailedScheduling  99s (x8 over 37m)   karpenter          Failed to schedule pod, incompatible with nodepool "main-arm64", daemonset overhead={"cpu":"190m","memory":"140Mi","pods":"7"}, incompatible requirements, key kubernetes.io/arch, kubernetes.io/arch In [amd64] not in kubernetes.io/arch In [arm64]; incompatible with nodepool "main-amd64", daemonset overhead={"cpu":"190m","memory":"140Mi","pods":"7"}, no instance type satisfied resources {"cpu":"3690m","memory":"123020Mi","pods":"8","vpc.amazonaws.com/pod-eni":"1"}\n',
    {"no-instance-type", "requirement-conflict"},
    ("or lower the pod's requests if it does not need them",),
    ("x2gd", "x8g", "r6g.", "not smaller requests"))


def test_a_large_pods_answer_keeps_its_arch_and_names_the_requests() -> None:
    check_paste(IRIS_PODENI, catalog_loader(None, None))


def test_consolidate_says_a_node_the_regions_catalog_lacks_is_unpriced_not_free(tmp_path: Path) -> None:
    """A g6e.2xlarge node in us-west-2 (whose 2022 price list lacks g6e): the table showed $0.0000, "Cost now"
    counted it as free, and the warning said "priced $0". It is said unpriced, left out of the total, with the
    remedy; with --allow-estimated-prices it is priced."""
    from test_consolidate_semantics import node, nodepool, pod, write

    snapshot = write(tmp_path, node("gpu-1", itype="g6e.2xlarge", zone="us-west-2a"),
                     node("web-1", itype="m5.large", zone="us-west-2a"),
                     pod("llm", "gpu-1", cpu="2"), pod("web", "web-1", cpu="1"),
                     pools=(nodepool(families=("m5", "g6e")),))
    run = CliRunner().invoke(app, ["--color", "never", "consolidate", str(snapshot), "--region", "us-west-2"],
                             env={"COLUMNS": "120"})
    assert run.exit_code in (0, 1), run.output
    assert "g6e.2xlarge, which the embedded us-west-2 catalog lacks" in run.stderr
    assert "--allow-estimated-prices" in run.stderr and "priced $0" not in run.stderr
    row = next(line for line in run.stdout.splitlines() if line.startswith("│ gpu-1"))
    assert "│      ? │" in row
    assert "(without 1 unpriced node: see the warnings)" in run.stdout
    estimated = CliRunner().invoke(app, ["--color", "never", "consolidate", str(snapshot), "--region", "us-west-2",
                                         "--allow-estimated-prices"], env={"COLUMNS": "120"})
    assert "unpriced" not in estimated.stdout


# aws/karpenter-provider-aws#8068 (EKS Auto Mode, solved: the gpu-nodepool's limits): the device-plugin advice
# told an Auto Mode user to install the NVIDIA plugin, which Auto Mode's GPU nodes run; the types offered were
# priced at the 0.4 x on-demand spot estimate without the `~` every estimate carries.
AUTO_MODE_GPU_LIMITS = Paste(
    "https://github.com/aws/karpenter-provider-aws/issues/8068",
    '  Warning  FailedScheduling  23m (x54 over 4h48m)    default-scheduler  0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.\n  Warning  FailedScheduling  3m50s (x58 over 4h48m)  karpenter          Failed to schedule pod, incompatible with nodepool "spot-pool", daemonset overhead={"cpu":"1566m","memory":"930Mi","pods":"11"}, no instance type has enough resources, requirements=eks.amazonaws.com/instance-category In [c m t], eks.amazonaws.com/nodeclass In [spot-default], karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [spot-pool], kubernetes.io/arch In [amd64], resources={"cpu":"1566m","memory":"930Mi","nvidia.com/gpu":"1","pods":"12"}; all available instance types exceed limits for nodepool (NodePool=gpu-nodepool)\n',
    {"limits", "node-filter"},
    ("has reached its spec.limits", "EKS Auto Mode's GPU nodes run it already", "g4dn.xlarge (~$0.2104/h spot)"),
    ("g4dn.xlarge ($0.2104/h)",))


def test_auto_mode_gpu_answer_is_right_for_auto_mode_and_marks_estimates() -> None:
    check_paste(AUTO_MODE_GPU_LIMITS, catalog_loader(None, None))


GPU_POOL_AND_PINNED_POD = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6e]}
---
apiVersion: v1
kind: Pod
metadata: {name: ray-worker, namespace: raydata}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions:
              - {key: node.kubernetes.io/instance-type, operator: In, values: [g6e.2xlarge]}
  containers:
    - name: ray
      image: rayproject/ray-ml
      resources: {requests: {cpu: "6", memory: 48Gi}, limits: {nvidia.com/gpu: 1}}
"""


def _fixes(tmp_path: Path, region: str) -> list[str]:
    (tmp_path / region).mkdir()
    (tmp_path / region / "all.yaml").write_text(GPU_POOL_AND_PINNED_POD)
    result = CliRunner().invoke(app, ["plan", str(tmp_path / region), "--region", region, "-o", "json"])
    (pod,) = json.loads(result.stdout)["unschedulable"]
    return [f["action"] for f in pod["fixes"]]


def test_no_fix_trades_the_pinned_hardware_for_what_the_catalog_has(tmp_path: Path) -> None:
    """data-on-eks's RayJob pins g6e (L40S); us-west-2's 2022 price list lacks g6e, so the pod is unschedulable
    here, and the first fix offered was to remove the pin (a g5's A10G instead). The reason names the catalog
    gap and its remedy; no fix removes the pin. Where the pin, not the catalog, is what refuses (a pool
    without g6e in us-east-1), removing it is still offered."""
    assert not any("instance-type" in f for f in _fixes(tmp_path, "us-west-2"))
    narrowed = GPU_POOL_AND_PINNED_POD.replace("values: [g5, g6e]", "values: [g5]")
    (tmp_path / "pool-without-g6e").mkdir()
    (tmp_path / "pool-without-g6e" / "all.yaml").write_text(narrowed)
    result = CliRunner().invoke(app, ["plan", str(tmp_path / "pool-without-g6e"), "--region", "us-east-1",
                                      "-o", "json"])
    (pod,) = json.loads(result.stdout)["unschedulable"]
    assert any("remove node.kubernetes.io/instance-type" in f["action"] for f in pod["fixes"])
