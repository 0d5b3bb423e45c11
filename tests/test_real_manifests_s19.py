"""`plan` on real manifests, session 19: requests and node room as kube-scheduler and Karpenter compute them.

Each test names its source: fixtures/real/ (each with its URL), or the upstream code whose arithmetic it pins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from karpplan.cli.main import app

from conftest import FIXTURES

REAL = FIXTURES / "real"
ZONE = ["--zones", "us-east-1a"]


def _plan(tmp_path: Path, *texts: str, paths: tuple[Path, ...] = (), code: int = 0,
          args: tuple[str, ...] = ()) -> dict[str, Any]:
    files = [str(p) for p in paths]
    for i, text in enumerate(texts):
        f = tmp_path / f"in{i}.yaml"
        f.write_text(text)
        files.append(str(f))
    result = CliRunner().invoke(app, ["plan", *files, *ZONE, "--engine", "karpenter", "-o", "json", *args])
    assert result.exit_code == code, result.stderr + result.stdout[-2000:]
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _deployment(name: str, replicas: int, spec: str) -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
{spec}"""


def _pool(types: str) -> str:
    return f"""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: default}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
        - {{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}
        - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
---
"""


# ------------------------------------------------------------------------------------- pod-level resources
# kubernetes/kubernetes pkg/apis/core/v1/defaults.go `defaultPodRequests`: a pod-level limit without a pod-level
# request defaults the request to the containers' aggregate request when a container requests the resource, and
# to the limit only when none does (https://kubernetes.io/docs/tasks/configure-pod-container/assign-pod-level-resources/).
def test_a_pod_level_limit_is_not_the_request_when_the_containers_request(tmp_path: Path) -> None:
    spec = """\
      resources: {limits: {cpu: "4", memory: 4Gi}}
      containers:
      - {name: app, image: nginx, resources: {requests: {cpu: 500m, memory: 512Mi}}}
      - {name: sidecar, image: envoy, resources: {requests: {cpu: 500m}}}
"""
    plan = _plan(tmp_path, _pool("m5.large, m5.xlarge") + _deployment("web", 2, spec))
    assert {p["name"]: p["requests"] for p in plan["pods"]}["web-0"] == {"cpu": "1", "memory": "512Mi"}
    # both on one m5.xlarge (3920m): read as the 4-CPU limit, neither would fit any type the pool allows
    assert plan["summary"]["unschedulable"] == 0
    assert [n["instanceType"] for n in plan["nodes"]] == ["m5.xlarge"]


def test_a_pod_level_limit_is_the_request_when_no_container_requests(tmp_path: Path) -> None:
    spec = """\
      resources: {limits: {cpu: "3", memory: 2Gi}}
      containers:
      - {name: app, image: nginx}
"""
    plan = _plan(tmp_path, _pool("m5.large, m5.xlarge") + _deployment("web", 1, spec))
    assert {p["name"]: p["requests"] for p in plan["pods"]}["web-0"] == {"cpu": "3", "memory": "2Gi"}
    assert [n["instanceType"] for n in plan["nodes"]] == ["m5.xlarge"]


# ------------------------------------------------------------------------------------- huge pages
# https://github.com/aws/karpenter-provider-aws/blob/main/website/content/en/docs/concepts/nodeoverlays.md (the
# hugepages overlay); kubernetes-sigs/karpenter pkg/cloudprovider/types.go `computeAllocatable` (v1.7+) takes an
# overlay's huge pages out of the type's allocatable memory.
HUGE_OVERLAY = """\
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: hugepage-overlay}
spec:
  requirements:
  - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge, m5.2xlarge]}
  capacity:
    hugepages-2Mi: 2Gi
---
"""
DATABASE = _deployment("db", 1, """\
      containers:
      - name: postgres
        image: postgres
        resources:
          requests: {cpu: "1", memory: 13Gi, hugepages-2Mi: 1Gi}
          limits: {memory: 13Gi, hugepages-2Mi: 1Gi}
""")


def test_huge_pages_an_overlay_adds_come_out_of_allocatable_memory(tmp_path: Path) -> None:
    plan = _plan(tmp_path, HUGE_OVERLAY + _pool("m5.xlarge, m5.2xlarge") + DATABASE)
    # m5.xlarge has 14162Mi allocatable, 12114Mi once its 2Gi of huge pages are taken: 13Gi needs an m5.2xlarge
    assert [n["instanceType"] for n in plan["nodes"]] == ["m5.2xlarge"]
    assert plan["nodes"][0]["allocatable"]["memory"] == "27269Mi"  # 29317Mi - 2Gi
    note = next(w for w in plan["warnings"] if "hugepage-overlay" in w)
    assert "capacity hugepages-2Mi=2Gi; its huge pages come out of the nodes' allocatable memory" in note


def test_without_an_overlay_no_node_has_huge_pages_and_the_reason_says_how_to_give_them(tmp_path: Path) -> None:
    plan = _plan(tmp_path, _pool("m5.xlarge, m5.2xlarge") + DATABASE, code=1)
    reason = plan["unschedulable"][0]["reasons"][0]
    assert "short of hugepages-2Mi" in reason
    assert ("no instance type this NodePool allows offers hugepages-2Mi: Karpenter knows huge pages only from a "
            "NodeOverlay (karpenter.sh/v1alpha1, Karpenter v1.7+)") in reason


# ------------------------------------------------------------------------------------- ephemeral-storage
SCRATCH = _deployment("scratch", 3, """\
      containers:
      - name: c
        image: x
        resources: {requests: {cpu: "1", memory: 2Gi, ephemeral-storage: 200Gi}}
""")


# https://github.com/aws/karpenter-provider-aws/blob/main/examples/v1/general-purpose.yaml: no blockDeviceMappings
def test_ephemeral_storage_beyond_the_default_root_volume_names_the_node_class_setting(tmp_path: Path) -> None:
    plan = _plan(tmp_path, SCRATCH, paths=(REAL / "karpenter-example-general-purpose.yaml",), code=1)
    reason = plan["unschedulable"][0]["reasons"][0]
    assert ("no node of this NodePool has 200Gi of ephemeral-storage for the pod (at most 17Gi free): EC2NodeClass "
            '"default" (') in reason
    assert ("gives /dev/xvda no volumeSize, so it is the 20Gi AL2023 default; set blockDeviceMappings /dev/xvda "
            "ebs.volumeSize to 224Gi or more") in reason
    # the fix it names is enough: 224Gi leaves 200.6Gi (224 - 1Gi kube-reserved - 10% nodefs eviction)
    text = (REAL / "karpenter-example-general-purpose.yaml").read_text().replace(
        "  amiSelectorTerms:", "  blockDeviceMappings:\n    - deviceName: /dev/xvda\n      ebs: {volumeSize: 224Gi}\n"
        "  amiSelectorTerms:")
    fixed = _plan(tmp_path, text, SCRATCH)
    assert fixed["summary"]["unschedulable"] == 0 and len(fixed["nodes"]) == 3


# https://github.com/aws/karpenter-provider-aws/blob/main/examples/v1/bottlerocket.yaml: the data volume decides
def test_on_bottlerocket_the_data_volume_is_the_one_to_grow(tmp_path: Path) -> None:
    plan = _plan(tmp_path, SCRATCH, paths=(REAL / "karpenter-example-bottlerocket.yaml",), code=1)
    reason = plan["unschedulable"][0]["reasons"][0]
    assert "a node's ephemeral-storage is the 20Gi /dev/xvdb volume of EC2NodeClass \"bottlerocket\"" in reason
    assert "set blockDeviceMappings /dev/xvdb ebs.volumeSize to 224Gi or more" in reason


# https://github.com/aws/karpenter-provider-aws/blob/main/examples/v1/instance-store-ephemeral-storage.yaml: RAID0
# makes the local NVMe disks (instance-local-nvme Gt 300 GB) the nodes' ephemeral-storage
def test_instance_store_raid0_gives_the_nodes_their_local_disks(tmp_path: Path) -> None:
    plan = _plan(tmp_path, SCRATCH, paths=(REAL / "karpenter-example-instance-store.yaml",))
    assert plan["summary"]["unschedulable"] == 0
    # c6id.4xlarge's 950 GB NVMe disk, less 1Gi kube-reserved and the 10% nodefs eviction threshold, holds all three
    assert [(n["instanceType"], n["allocatable"]["ephemeral-storage"]) for n in plan["nodes"]] == [
        ("c6id.4xlarge", str(950 * 10**9 - 2**30 - 95 * 10**9))]
    huge = _deployment("scratch", 1, """\
      containers:
      - {name: c, image: x, resources: {requests: {cpu: "1", ephemeral-storage: 30Ti}}}
""")
    refused = _plan(tmp_path, huge, paths=(REAL / "karpenter-example-instance-store.yaml",), code=1)
    assert ("with instanceStorePolicy: RAID0 a node's ephemeral-storage is its instance type's local NVMe disks: "
            "allow types with more of it") in refused["unschedulable"][0]["reasons"][0]


# ------------------------------------------------------------------------------------- RuntimeClass scheduling
# fixtures/real/kata-deploy-runtimeclass-qemu.yaml; kubernetes/kubernetes plugin/pkg/admission/runtimeclass
# (`setScheduling`, `setOverhead`): the class's nodeSelector and tolerations are merged into its pods at admission.
KATA_POOLS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: kata}
spec:
  template:
    metadata:
      labels: {katacontainers.io/kata-runtime: "true"}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.metal, c5.metal]}
---
"""
SANDBOXED = _deployment("sandboxed", 2, """\
      runtimeClassName: kata-qemu
      containers:
      - {name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}
""")
KATA = REAL / "kata-deploy-runtimeclass-qemu.yaml"


def test_a_runtime_class_node_selector_sends_its_pods_to_the_nodes_with_the_runtime(tmp_path: Path) -> None:
    plan = _plan(tmp_path, KATA_POOLS + SANDBOXED, paths=(KATA,))
    # not the cheap general pool: the class pins its pods to katacontainers.io/kata-runtime=true nodes
    assert {n["nodePool"] for n in plan["nodes"]} == {"kata"}
    assert {p["name"]: p["requests"] for p in plan["pods"]}["sandboxed-0"] == {"cpu": "1250m", "memory": "1184Mi"}
    # a pool no node of which carries the label cannot take them, and the reason says which label
    alone = _plan(tmp_path, KATA_POOLS.split("---")[0] + "---\n" + SANDBOXED, paths=(KATA,), code=1)
    assert "katacontainers.io/kata-runtime" in alone["unschedulable"][0]["reasons"][0]


def test_a_pod_whose_node_selector_contradicts_its_runtime_class_is_refused(tmp_path: Path) -> None:
    conflicting = SANDBOXED.replace("      runtimeClassName: kata-qemu\n", "      runtimeClassName: kata-qemu\n"
                                    '      nodeSelector: {katacontainers.io/kata-runtime: "false"}\n')
    plan = _plan(tmp_path, KATA_POOLS + conflicting, paths=(KATA,))
    assert plan["summary"]["pods"] == 0
    note = next(w for w in plan["warnings"] if "Deployment/sandboxed" in w)
    assert ("the API server refuses them (conflict: runtimeClass.scheduling.nodeSelector[katacontainers.io/kata-runtime]"
            " = true; pod.spec.nodeSelector[katacontainers.io/kata-runtime] = false)") in note


def test_a_runtime_class_missing_from_the_input_is_said(tmp_path: Path) -> None:
    plan = _plan(tmp_path, KATA_POOLS + SANDBOXED)
    note = next(w for w in plan["warnings"] if "runtimeClassName" in w)
    assert "Deployment/sandboxed: runtimeClassName kata-qemu names no RuntimeClass in the input" in note
    assert not [w for w in _plan(tmp_path, KATA_POOLS + SANDBOXED, paths=(KATA,))["warnings"] if "runtimeClassName" in w]


# ------------------------------------------------------------------------------------- security groups for pods
# fixtures/real/eks-security-groups-for-pods.yaml; aws/amazon-vpc-resource-controller-k8s webhooks/core/pod_webhook.go
# adds vpc.amazonaws.com/pod-eni: 1 to every pod a SecurityGroupPolicy selects; Karpenter gives each type its
# branch-interface limit of it (m5.large 9, t3 none).
SGP = REAL / "eks-security-groups-for-pods.yaml"
M5_OR_T3 = _pool("m5.large, t3.large")


def test_pods_a_security_group_policy_selects_take_a_branch_interface_each(tmp_path: Path) -> None:
    plan = _plan(tmp_path, M5_OR_T3, paths=(SGP,))
    # 20 pods of 50m / 64Mi: one t3.large holds them all, but t3 has no branch interfaces and m5.large only 9
    assert sorted((n["instanceType"], len(n["pods"])) for n in plan["nodes"]) == [
        ("m5.large", 2), ("m5.large", 9), ("m5.large", 9)]
    assert {p["name"]: p["requests"] for p in plan["pods"]}["my-deployment-0"]["vpc.amazonaws.com/pod-eni"] == "1"
    note = next(w for w in plan["warnings"] if "SecurityGroupPolicy" in w)
    assert ("SecurityGroupPolicy my-security-group-policy in namespace my-namespace selects 20 pod(s) of "
            "Deployment/my-deployment") in note
    # pods it does not select (another role) are planned as written
    other = SGP.read_text().replace("        role: my-role\n    spec:", "        role: other\n    spec:")
    plain = _plan(tmp_path, other, M5_OR_T3)
    assert [(n["instanceType"], len(n["pods"])) for n in plain["nodes"]] == [("t3.large", 20)]
    assert not [w for w in plain["warnings"] if "SecurityGroupPolicy" in w]


def test_a_service_account_selector_matches_the_pods_service_account(tmp_path: Path) -> None:
    by_account = SGP.read_text().replace(
        "  podSelector:\n    matchLabels:\n      role: my-role\n",
        "  serviceAccountSelector:\n    matchLabels:\n      sg: restricted\n").replace(
        "      terminationGracePeriodSeconds: 120\n", "      serviceAccountName: web\n")
    account = ("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: web, namespace: my-namespace, "
               "labels: {sg: restricted}}\n---\n")
    plan = _plan(tmp_path, account + by_account, M5_OR_T3)
    assert len(plan["nodes"]) == 3 and {n["instanceType"] for n in plan["nodes"]} == {"m5.large"}
    unlabelled = _plan(tmp_path, account.replace("sg: restricted", "sg: open") + by_account, M5_OR_T3)
    assert [n["instanceType"] for n in unlabelled["nodes"]] == ["t3.large"]


# ------------------------------------------------------------------------------------- Windows IPAM addresses
# fixtures/real/karpenter-example-windows-2022.yaml; aws/amazon-vpc-resource-controller-k8s pod_webhook.go gives each
# pod with a kubernetes.io/os: windows nodeSelector vpc.amazonaws.com/PrivateIPv4Address: 1; aws/karpenter-provider-aws
# pkg/providers/instancetype/types.go gives a Windows type IPv4 per interface - 1 of it (m5.large 9, m5.xlarge 14).
WINDOWS = REAL / "karpenter-example-windows-2022.yaml"
IIS = _deployment("iis", 20, """\
      nodeSelector: {kubernetes.io/os: windows}
      containers:
      - name: iis
        image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
        resources: {requests: {cpu: 100m, memory: 256Mi}}
""")


def test_a_windows_node_takes_as_many_pods_as_it_has_ipam_addresses(tmp_path: Path) -> None:
    pool = WINDOWS.read_text().replace('          values: ["c", "m", "r"]', '          values: ["m"]').replace(
        '          values: ["2"]', '          values: ["4"]\n        - key: karpenter.k8s.aws/instance-family\n'
        '          operator: In\n          values: ["m5"]\n        - key: karpenter.k8s.aws/instance-size\n'
        '          operator: In\n          values: ["large", "xlarge"]')
    plan = _plan(tmp_path, pool, IIS)
    # 20 pods of 100m / 256Mi would fit one m5.xlarge's 110 pod slots; its 14 addresses take 14 of them
    assert sorted((n["instanceType"], len(n["pods"]), n["allocatable"]["vpc.amazonaws.com/PrivateIPv4Address"])
                  for n in plan["nodes"]) == [("m5.large", 6, "9"), ("m5.xlarge", 14, "14")]
    note = next(w for w in plan["warnings"] if "Windows pod(s)" in w)
    assert "20 Windows pod(s) of Deployment/iis request vpc.amazonaws.com/PrivateIPv4Address: 1 each" in note


def test_a_windows_node_that_reports_no_addresses_is_not_limited_by_them(tmp_path: Path) -> None:
    node = """\
apiVersion: v1
kind: Node
metadata:
  name: win-1
  labels: {kubernetes.io/os: windows, kubernetes.io/arch: amd64, topology.kubernetes.io/zone: us-east-1a,
           node.kubernetes.io/instance-type: m5.xlarge, kubernetes.io/hostname: win-1}
status:
  allocatable: {cpu: 3920m, memory: 14Gi, pods: "110"}
---
"""
    plan = _plan(tmp_path, node + IIS)
    assert [(n["name"], len(n["pods"])) for n in plan["nodes"]] == [("win-1", 20)]
