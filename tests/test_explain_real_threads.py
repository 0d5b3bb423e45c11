"""explain on messages from public issue threads, judged by the cause each thread established.

Each row is a line as pasted (the thread is cited), what the answer must say (the cause, the fix) and what it
must never say (the misdiagnoses a reader would act on wrongly). The catalog is the embedded one, as the CLI
uses it without --catalog.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from karpplan.explain.enrich import CatalogFor, catalog_loader, enrich
from karpplan.explain.report import explain_text

_LOWER = "lower the pod's resources.requests"


class Thread(NamedTuple):
    url: str
    text: str
    kinds: set[str]
    says: tuple[str, ...]
    never: tuple[str, ...] = ()


def _q(s: str) -> str:
    return s.replace('"', '\\"')


THREADS = {
    # Karpenter v0.29.2: the pod named is a pending one that fits no provisioner; the simulation counted pending pods
    # then, so it blocked the consolidation of every node (fixed in v0.30 by kubernetes-sigs/karpenter#458)
    "consolidation-blocked-by-pending-pod": Thread(
        "https://github.com/kubernetes-sigs/karpenter/issues/678",
        'Normal   Unconsolidatable         8m58s              karpenter        not all pods would schedule, '
        "fake-sample-service-usw2-dev2/fake-sample-service-deployment-7fb449d879-q95hj => incompatible with "
        'provisioner "custom-provideref", daemonset overhead={"cpu":"490m","memory":"938304768","pods":"9"}, '
        "incompatible requirements, key node.kubernetes.io/instancegroup, node.kubernetes.io/instancegroup In "
        "[fake-sample-service-usw2-dev2-default] not in node.kubernetes.io/instancegroup In [knodes]; incompatible "
        'with provisioner "fake-sample-service-usw2-dev2-default", daemonset overhead={"cpu":"490m","memory":'
        '"938304768","pods":"9"}, no instance type satisfied resources {"cpu":"30490m","memory":"11675723008",'
        '"pods":"10"} and requirements karpenter.k8s.aws/instance-category In [c m r], '
        "karpenter.k8s.aws/instance-generation Exists >5, karpenter.sh/capacity-type In [on-demand]",
        set(), ("Pending", "every node", "v0.30",
                "kubectl get pod -n fake-sample-service-usw2-dev2 fake-sample-service-deployment-7fb449d879-q95hj"),
        ("Some pods on this node", "consolidation keeps it")),
    # the reporter's fix: the 3 node groups the pod fits are at their max size
    "ca-max-node-group": Thread(
        "https://github.com/kubernetes/autoscaler/issues/5692",
        "pod didn't trigger scale-up: 12 node(s) didn't match Pod's node affinity/selector, 3 max node group size reached.",
        {"node-filter", "limits"}, ("maximum size", "node group"), (_LOWER, "no existing node fits")),
    # the PV sits in a zone where no node is; Karpenter nominated a node in another zone
    "volume-node-affinity": Thread(
        "https://github.com/aws/karpenter-provider-aws/issues/2971",
        "Warning  FailedScheduling  2m28s (x8 over 9m3s)  default-scheduler  0/6 nodes are available: 1 node(s) had "
        "volume node affinity conflict, 2 node(s) didn't match Pod's node affinity/selector, 3 Insufficient cpu.",
        {"node-filter", "volume"}, ("PersistentVolume", "zone", "WaitForFirstConsumer"), ("add tolerations",)),
    # Karpenter of the time did not count pod ENIs without its setting; security groups for pods
    "pod-eni": Thread(
        "https://github.com/aws/karpenter-provider-aws/issues/2217",
        '2022-07-29T09:01:00.525Z        ERROR   controller.provisioning Could not schedule pod, incompatible with '
        'provisioner "default", no instance type satisfied resources {"pods":"1","vpc.amazonaws.com/pod-eni":"1"} and '
        "requirements kubernetes.io/arch In [amd64], karpenter.sh/capacity-type In [on-demand], "
        "karpenter.sh/provisioner-name In [default], kubernetes.io/os In [linux]",
        {"no-instance-type"}, ("vpc.amazonaws.com/pod-eni", "ENABLE_POD_ENI", "aws.enablePodENI"),
        (_LOWER, "spec.template.spec.requirements")),
    # 2 GPUs asked of a pool that allows only 1-GPU g4dn sizes
    "two-gpus-on-one-gpu-types": Thread(
        "https://github.com/aws/karpenter-provider-aws/issues/8064",
        '{"level":"ERROR","time":"2025-05-12T11:28:27.068Z","logger":"controller.provisioner","message":"Could not '
        + _q('schedule pod, incompatible with nodepool "nodepool-code-analyzer", daemonset overhead={"cpu":"185m",'
             '"memory":"240Mi","pods":"4"}, no instance type satisfied resources {"cpu":"17185m","ephemeral-storage":'
             '"32Gi","memory":"33008Mi","nvidia.com/gpu":"2","pods":"5"} and requirements codeanalyzer/taint In [code], '
             "karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [nodepool-code-analyzer], "
             "node.kubernetes.io/instance-family In [g4dn], node.kubernetes.io/instance-type In [g4dn.2xlarge "
             "g4dn.4xlarge] (no instance type has enough resources)") + '","pod":"ns/analyzer-0"}',
        {"no-instance-type"}, ("2 of nvidia.com/gpu", "g4dn.12xlarge"), (_LOWER,)),
    # huge pages: no instance type reports them before the node is up (Karpenter feature request)
    "hugepages": Thread(
        "https://github.com/aws/karpenter-provider-aws/issues/3315",
        'Failed to schedule pod, incompatible with provisioner "gaudi", no instance type satisfied resources '
        '{"cpu":"24","habana.ai/gaudi":"8","hugepages-2Mi":"21000Mi","pods":"1"} and requirements kubernetes.io/os In '
        "[linux], karpenter.sh/capacity-type In [on-demand], node.kubernetes.io/instance-type In [dl1.24xlarge]",
        {"no-instance-type"}, ("hugepages-2Mi", "pre-allocates", "NodeOverlay (karpenter.sh/v1alpha1, Karpenter v1.7+)"),
        (_LOWER,)),
    # the overhead estimate makes the 8-vCPU type too small: here lowering the request is right, with figures
    "overhead-too-small": Thread(
        "https://github.com/aws/karpenter-provider-aws/issues/5676",
        '{"level":"ERROR","time":"2024-02-15T11:10:12.564Z","logger":"controller.provisioner","message":"Could not '
        + _q('schedule pod, incompatible with nodepool "x-master", daemonset overhead={"cpu":"480m","memory":'
             '"812700032","pods":"5"}, no instance type satisfied resources {"cpu":"6480m","memory":"30877471104",'
             '"pods":"6"} and requirements x-server-role In [x], karpenter.k8s.aws/instance-cpu In [8], '
             "karpenter.k8s.aws/instance-family In [m6a], karpenter.k8s.aws/instance-hypervisor In [nitro], "
             "karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [x-master], kubernetes.io/arch In "
             "[amd64], kubernetes.io/os In [linux], topology.kubernetes.io/zone In [eu-west-1a] (no instance type which "
             "had enough resources and the required offering met the scheduling requirements)") + '"}',
        {"no-instance-type"}, ("m6a.2xlarge", "allocatable", "VM_MEMORY_OVERHEAD_PERCENT", "Lower the pod's")),
    # tzneal: EBS volumes in three zones; one zone requirement per volume, empty intersection = DoesNotExist
    "zone-does-not-exist-volumes": Thread(
        "https://github.com/aws/karpenter-provider-aws/issues/4192",
        'karpenter-f8c94f455-w6gw5 controller 2023-07-03T21:13:23.572Z\tERROR\tcontroller.provisioner\tCould not '
        'schedule pod, incompatible with provisioner "default", no instance type satisfied resources {"cpu":"2",'
        '"memory":"6Gi","pods":"1"} and requirements karpenter.sh/provisioner-name In [default], kubernetes.io/os In '
        "[linux], kubernetes.io/arch In [amd64], karpenter.k8s.aws/instance-category In [c m r], "
        "topology.kubernetes.io/zone DoesNotExist, karpenter.k8s.aws/instance-generation Exists >2, "
        "karpenter.sh/capacity-type In [on-demand spot] (no instance type met the scheduling requirements or had a "
        'required offering){"commit": "698f22f-dirty", "pod": "xxx/xxx"}',
        {"no-instance-type"}, ("PersistentVolume", "WaitForFirstConsumer", "empty set of zones"),
        (_LOWER, "would qualify", "spec.template")),
    # the same empty zone set, v1 dialect (listed with #4192 in issue 25)
    "zone-does-not-exist-requirement": Thread(
        "https://github.com/kubernetes-sigs/karpenter/issues/2438",
        '{"error":"no instance type met the scheduling requirements or had a required offering, requirements=coder In '
        "[workspace], karpenter.k8s.aws/ec2nodeclass In [default-bottlerocket], karpenter.k8s.aws/instance-category "
        "NotIn [t], karpenter.k8s.aws/instance-cpu Exists >4, karpenter.sh/capacity-type In [on-demand spot], "
        "karpenter.sh/nodepool In [coder-workspace], kubernetes.io/arch In [amd64], kubernetes.io/os In [linux], "
        'topology.kubernetes.io/zone DoesNotExist, resources={\\"cpu\\":\\"4180m\\",\\"memory\\":\\"6264Mi\\",\\"pods\\":\\"7\\"}"}]}',
        {"no-instance-type"}, ("empty set of zones", "PersistentVolume"), (_LOWER, "would qualify")),
    # fargate-scheduler: privileged container and an s3fs (FUSE) volume
    "fargate-privileged-volume": Thread(
        "https://github.com/freegroup/kube-s3/issues/14",
        "  Warning  FailedScheduling  2m2s  fargate-scheduler  Pod not supported on Fargate: invalid SecurityContext "
        "fields: Privileged, volumes not supported: mntdatas3fs is of an unsupported volume Type",
        {"unsupported"}, ("Privileged", "mntdatas3fs", "profile's selectors", "does not fall back to EC2")),
    # the pod execution role could not be assumed
    "fargate-profile-role": Thread(
        "https://github.com/aws-samples (tutorial note quoting the fargate-scheduler event)",
        "Misconfigured Fargate Profile: fargate profile alb-test-cluster blocked for new launches due to: Failed to "
        "assume PodExecutionRole; Please make sure the role exists and trusts the eks-fargate-pods.amazonaws.com "
        "service principal",
        {"unsupported"}, ("pod execution role", "alb-test-cluster")),
    # cluster-autoscaler's verbose line: a GPU pod against a CPU node group
    "ca-predicate-gpu": Thread(
        "https://github.com/kubernetes/autoscaler (cloudprovider docs example log)",
        "Pod default/nginx-deployment-5bfb4984cc-fdrzr can't be scheduled on 0d530c5a-b9ca-42ba-b5fb-6078e309667c/small, "
        "predicate checking error: Insufficient nvidia.com/gpu; predicateName=NodeResourcesFit; reasons: Insufficient "
        "nvidia.com/gpu; debugInfo=",
        {"node-filter"}, ("Node group 0d530c5a-b9ca-42ba-b5fb-6078e309667c/small", "node-template/resources/nvidia.com/gpu"),
        ("predicateName", "debugInfo")),
    # the same clause for several Provisioners: said once, naming them all (the thread pasted 9 of them)
    "same-label-many-provisioners": Thread(
        "https://github.com/kubernetes-sigs/karpenter/issues/2304",
        '2025-06-12T06:58:42.083Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner '
        '"karpenter-dev-provisioner-helper", daemonset overhead={"cpu":"736m","memory":"1452Mi","pods":"11"}, '
        'incompatible requirements, label "project" does not have known values; incompatible with provisioner '
        '"karpenter-dev-provisioner-primary", daemonset overhead={"cpu":"736m","memory":"1452Mi","pods":"11"}, '
        'incompatible requirements, label "project" does not have known values\t{"commit": "30fa8f3-dirty", "pod": '
        '"upgrade-eks-123/upgrade-test-deployment-7858cbd888-9c7cq"}',
        {"unknown-label"}, ('each of Provisioners "karpenter-dev-provisioner-helper" and '
                            '"karpenter-dev-provisioner-primary"', "spec.labels"),
        ("spec.template",)),
    # v0.15 restricted the Provisioner label in pod selectors (the reporter quotes it next to the v0.16 error)
    "restricted-label-v015": Thread(
        "https://github.com/aws/karpenter-provider-aws/issues/2383",
        "\tcontroller.provisioning\tIgnoring pod, label karpenter.sh/provisioner-name is restricted; specify a well "
        "known label",
        {"unsupported"}, ("restricted", "v0.16", "spec.labels"), (_LOWER, "spec.template")),
    # a node that stopped reporting: not a toleration to add
    "unreachable-taint": Thread(
        "https://github.com/hystax/optscale/issues/568",
        "39h         Warning   FailedScheduling          pod/ohsu-7ffd6bcb7f-mnsjf          0/1 nodes are available: 1 "
        "node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: 0/1 nodes are available: 1 "
        "Preemption is not helpful for scheduling.",
        {"node-filter", "taint"}, ("removes by itself", "do not add a toleration"), ("add tolerations to spec.tolerations",)),
}


@pytest.fixture(scope="module")
def load() -> CatalogFor:
    return catalog_loader(None, None)


@pytest.mark.parametrize("name", sorted(THREADS))
def test_thread(name: str, load: CatalogFor) -> None:
    thread = THREADS[name]
    explanation = explain_text(thread.text + "\n")
    enrich(explanation, load)
    (item,) = explanation.item_list()
    kinds = {r.kind for r in item.all_reasons()}
    assert thread.kinds <= kinds, (thread.url, kinds)
    told = item.plain
    for words in thread.says:
        assert words in told, (thread.url, words, told)
    assert max(told.count(s) for s in told.split(". ") if len(s) > 20) == 1, told  # nothing said twice
    for words in thread.never:
        assert words.lower() not in told.lower(), (thread.url, words, told)


def test_retries_of_one_pod_are_one_item() -> None:
    """kube-scheduler retries a pod and its counts drift (5 nodes, then 6): the same reason, told once."""
    line = ("  Warning  FailedScheduling  {age}  default-scheduler  0/{n} nodes are available: {k} Insufficient cpu, "
            "3 node(s) didn't match Pod's node affinity/selector.")
    text = "\n".join(line.format(age=a, n=n, k=n - 3) for a, n in (("5m", 5), ("1m", 6), ("10s", 7))) + "\n"
    (item,) = explain_text(text).item_list()
    assert item.count == 3 and (item.line, item.last_line) == (1, 3)
    assert item.plain.count("No existing node fits") == 1
