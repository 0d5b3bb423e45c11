"""explain on the second sweep of session 20: messages pasted in public issue threads, none cited elsewhere in
tests/, each with the cause its thread established. The sweep's gaps were cluster-autoscaler's filter-out-schedulable
line (a pending pod CA counts onto a node it has or awaits, so it adds none: unrecognised before), Azure's
SubnetIsFull (unrecognised), and 'Node not registered with cluster' worded with EKS causes only; beside them,
kube-scheduler's newer messages (untolerated taint(s) with no taint named, the DRA clause 'no new claims to
deallocate') and EBS volume zones on EKS, which it already read.

Every message is copied as its thread shows it (a line the thread's excerpt cut is cut there too). `says` are words
the answer must contain for the established cause; `never` the misdiagnosis or misreading a reader would take.
"""

from __future__ import annotations

import pytest
from explain_pastes import Paste, check_new_threads, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader
from karpplan.explain.report import explain_text

PASTES: dict[str, Paste] = {
    # cluster-autoscaler on EKS: a node group failing to scale from zero; its upcoming node never came and CA kept
    # counting the pending pods onto it instead of scaling another group (the reporter's analysis, kind/bug)
    'ca-pod-counted-onto-an-upcoming-node': Paste(
        'https://github.com/kubernetes/autoscaler/issues/5000',
        'Pod <POD_NAME> marked as unschedulable can be scheduled on node template-node-for-<NODE_GROUP_NAME>-2ec0b963-'
        '133a-9b47-a987-3da95b997693-1506438233109712238-upcoming-5\n',
        {'node-filter'}, ('node group <NODE_GROUP_NAME>-2ec0b963-133a-9b47-a987-3da95b997693 it already asked for',
                          'upcoming, not registered yet', '--max-node-provision-time', 'backs the group off'),
        ('existing node', 'Insufficient')),
    # cluster-autoscaler on EKS (us-east-2) beside a custom scheduler that counts limits: CA's simulation fits the pod
    # on an existing node, the pod's own scheduler does not, so no node is ever added (the reporter's finding)
    'ca-and-a-custom-scheduler-disagree': Paste(
        'https://github.com/neondatabase/autoscaling/issues/64',
        'cluster-autoscaler-76fdd8b4d-tb49v cluster-autoscaler I0223 15:23:21.970141       1 filter_out_schedulable.go'
        ':118] Pod default.compute-node-ep-curly-snowflake-209252-66c8479797-jxrtm marked as unschedulable can be sche'
        'duled on node ip-10-6-93-124.us-east-2.compute.internal (based on\n hinting). Ignoring in scale up.\n',
        {'node-filter'}, ('Pod default/compute-node-ep-curly-snowflake-209252-66c8479797-jxrtm',
                          'existing node ip-10-6-93-124.us-east-2.compute.internal', "spec.schedulerName"),
        ('upcoming', 'max size')),
    # kube-scheduler of a DRA-era release: the taint is not named and a DRA clause precedes preemption; the paste's
    # `kubectl describe node | grep Taint` shows infra=true:NoSchedule, and the fix was a toleration of it (the PR's)
    'scheduler-untolerated-taints-unnamed-with-dra-clause': Paste(
        'https://github.com/kubernetes/k8s.io/pull/9761',
        "  Warning  FailedScheduling  3m24s (x239 over 19h)  default-scheduler  0/6 nodes are available: 2 node(s) di"
        "dn't match Pod's node affinity/selector, 4 node(s) had untolerated taint(s). no new claims to deallocate, pre"
        "emption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.\n[root@raji-x86-workspace1 ~]"
        "# kubectl describe node infra-0 | grep Taint\nTaints:             infra=true:NoSchedule\n[root@raji-x86-work"
        "space1 ~]#\n",
        {'node-filter'}, ('does not name the taints', 'The pasted node description shows the taints: '
                          'infra=true:NoSchedule', 'add it only if the pod belongs there'),
        ('ResourceClaim', 'DeviceClass', 'DRA')),
    # self-hosted Karpenter on Azure: the VM refused for a full subnet - the one Karpenter launches into, which the
    # reporter took for the node pools' subnet with ~1900 free addresses
    'azure-subnet-is-full': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/734',
        'RESPONSE 400: 400 Bad Request\nERROR CODE: SubnetIsFull\n----------------------------------------------------'
        '----------------------------\nSubnetIsFull: Subnet /subscriptions/<sub-id>/resourceGroups/<RG>/providers/Micr'
        'osoft.Network/virtualNetworks/<VNetwork>/subnets/one with address prefix 10.0.0.0/20 does not have enough cap'
        'acity for 1 IP addresses\n',
        {'no-instance-type'}, ('SubnetIsFull', 'the subnet one (10.0.0.0/20)',
                               'need not be the subnet your other node pools use', 'orphaned NICs'),
        ('EC2', 'quota', 'InsufficientFreeAddressesInSubnet')),
    # Karpenter on AKS (Azure CNI node subnet, Calico): NodeClaims whose VMs never registered (kubectl get nodeclaim
    # -o yaml); the words are Karpenter core's, the causes the VM's bootstrap and network path
    'azure-nodeclaim-node-not-registered': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/571',
        "- lastTransitionTime: '2024-11-11T18:25:14Z'\n  message: Node not registered with cluster\n  reason: NodeNotFo"
        "und\n  status: Unknown\n  type: Initialized\n- lastTransitionTime: '2024-11-11T18:25:14Z'\n  message: ''\n  r"
        "eason: Launched\n  status: 'True'\n  type: Launched\n",
        {'no-instance-type'}, ("with Karpenter's Azure provider", 'boot diagnostics', 'Nothing on the pod is wrong'),
        ('Insufficient', 'fits the pod')),
    # the EKS workshop's StatefulSet lab: EBS volumes provisioned Immediately landed in zones the pods' nodes were not
    # in; the fix was volumeBindingMode: WaitForFirstConsumer
    'eks-workshop-volume-zone-immediate-binding': Paste(
        'https://github.com/aws-samples/eks-workshop/issues/1135',
        'Warning FailedScheduling 28s (x5 over 6m16s) default-scheduler 0/3 nodes are available: 1 Insufficient pods, '
        '2 node(s) had volume node affinity conflict.\n',
        {'node-filter', 'volume'}, ('volume node affinity conflict', 'WaitForFirstConsumer',
                                    'kubectl get pv -o wide', 'maxPods'),
        ('Insufficient cpu',)),
    # harbor's jobservice mounts two EBS-backed PVs that an Immediate StorageClass put in two zones: no node fits
    'two-ebs-volumes-in-two-zones': Paste(
        'https://github.com/vmware-tanzu/community-edition/pull/5501',
        '  Warning  FailedScheduling  8m47s (x4 over 8m55s)  default-scheduler  0/6 nodes are available: 6 pod has unbou'
        "nd immediate PersistentVolumeClaims.\n  Warning  FailedScheduling  28s (x10 over 8m39s)   default-scheduler  0/"
        "6 nodes are available: 3 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate, 3"
        " node(s) had volume node affinity conflict.\n",
        {'node-filter', 'volume', 'taint'}, ('several EBS volumes needs them all in one zone',
                                             'volumeBindingMode: WaitForFirstConsumer'),
        ('Insufficient',)),
}


@pytest.fixture(scope="module")
def load() -> CatalogFor:
    return catalog_loader(None, None)


@pytest.mark.parametrize("name", sorted(PASTES))
def test_real_paste(name: str, load: CatalogFor) -> None:
    check_paste(PASTES[name], load)


def test_the_sweep_cites_threads_not_cited_before() -> None:
    """Each thread once, and none the earlier sweeps cite."""
    check_new_threads(PASTES.values(), __file__)


def test_a_pod_judged_by_its_sibling_points_at_the_siblings_line() -> None:
    """cluster-autoscaler judges one pod of a controller for all of them: the answer says where the node is named
    (kubernetes/autoscaler#1049's log, cited for the line only)."""
    line = ("I0117 09:44:09.269800       1 utils.go:128] Pod pubsub-subscriber-69955d646b-88prm marked as unschedulable "
            "can be scheduled (based on simulation run for other pod owned by the same controller). Ignoring in scale up.")
    [item] = explain_text(line).item_list()
    assert item.parsed.pod == "pubsub-subscriber-69955d646b-88prm"
    assert "another pending pod of the same controller" in item.plain and "'can be scheduled on' line" in item.plain


def test_an_azure_nodeclaim_not_registered_gets_azure_causes_only() -> None:
    """Where the paste shows Karpenter's Azure provider (the NodeClaim's labels), the EKS causes are not claimed."""
    yaml = ("  labels:\n    karpenter.azure.com/sku-name: Standard_D2ps_v5\n    karpenter.sh/capacity-type: spot\n"
            + PASTES['azure-nodeclaim-node-not-registered'].text)
    [item] = explain_text(yaml).item_list()
    assert "VM was created but its node never registered" in item.plain and "az vm boot-diagnostics" in item.plain
    assert "access entry" not in item.plain and "EC2" not in item.plain


def test_the_condition_timestamp_lines_are_context() -> None:
    explanation = explain_text(PASTES['azure-nodeclaim-node-not-registered'].text)
    assert explanation.summary()["context"] == 2
    assert not any("lastTransitionTime" in text for _, text in explanation.unrecognised_lines)
