"""explain on the third sweep of session 20: messages pasted in public issue threads (Karpenter on AWS first), none
cited elsewhere in tests/, each with the cause its thread established. The sweep's gaps were the attach-detach
controller's Multi-Attach error (a bound pod whose ReadWriteOnce volume is still attached elsewhere: unrecognised), a
Karpenter line a user wrapped by hand after `daemonset overhead={...},` (read as three broken items), v0.5-v0.6's
bin-packing line `Failed to compute packing, pod(s) [..] did not fit in instance type option(s) [..]`
(unrecognised), a cluster-autoscaler line wrapped inside its parenthesis, and a pod-eni request before v0.32 that
sent the reader to the pool's limits before Karpenter's own pod-ENI setting.

Every message is copied as its thread shows it. `says` are words the answer must contain for the established cause;
`never` the misdiagnosis or misreading a reader would take.
"""

from __future__ import annotations

import pytest
from explain_pastes import Paste, check_new_threads, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader, enrich
from karpplan.explain.report import explain_text

_EXCLUSIVE = "Volume is already exclusively attached to one node and can't be attached to another"

PASTES: dict[str, Paste] = {
    # a bootstrap pod kept the ReadWriteOnce claim the Job's pod needs; deleting it after use let the Job run (the
    # reporter's fix)
    'multi-attach-held-by-a-bootstrap-pod': Paste(
        'https://github.com/jaroslawhartman/withings-sync/issues/248',
        '`Multi-Attach error for volume "pvc-......" Volume is already used by pod(s) bootstrap-withings-sync`\n',
        {'volume'}, ('pod(s) bootstrap-withings-sync still use it', 'ReadWriteOnce', 'delete or scale down what holds it'),
        ('Insufficient', 'NodePool', 'could not be scheduled')),
    # a node rebooted or shut down: the rescheduled pod waits while the old pod, on the dead node, still holds the
    # volume (the issue's own analysis)
    'multi-attach-old-pod-on-a-shut-down-node': Paste(
        'https://github.com/openebs/openebs/issues/2536',
        '  Warning  FailedAttachVolume  17m               attachdetach-controller                            Multi-Attac'
        'h error for volume "pvc-ec895697-ee1b-11e8-af5c-061beeeea362" Volume is already used by pod(s) percona-58bd'
        'fcd4df-sg7rs\n',
        {'volume'}, ('pod(s) percona-58bdfcd4df-sg7rs', 'stuck Terminating on a node that was shut down',
                     'node.kubernetes.io/out-of-service'),
        ('Insufficient', 'could not be scheduled')),
    # a pod moved to another node: the warning until the old node's detach finished, then SuccessfulAttachVolume
    # (the issue shows both events; the request was only to tell the two FailedAttachVolume kinds apart)
    'multi-attach-while-the-old-node-detaches': Paste(
        'https://github.com/kubernetes/kubernetes/issues/96142',
        '  Warning  FailedAttachVolume      71s   attachdetach-controller  Multi-Attach error for volume "pvc-7a81d56f-'
        f'1cf9-11eb-8295-b6961e0a47ed" {_EXCLUSIVE}\n',
        {'volume'}, ('still attached to another node', 'kubectl get volumeattachment',
                     'the volume detaches once that pod is gone'),
        ('Insufficient', 'NodePool')),
    # EKS: the node under the pod was terminated; the EBS volume, detached in EC2, stayed attached in Kubernetes
    # until the controller's 6-minute force-detach (the reporter's timing: ~7 minutes)
    'multi-attach-after-the-node-was-terminated': Paste(
        'https://github.com/kubernetes-sigs/aws-ebs-csi-driver/issues/542',
        '  Warning  FailedAttachVolume  15s   attachdetach-controller  Multi-Attach error for volume "pvc-16293fb9-4a67'
        f'-4508-b112-178e5c4455cd" {_EXCLUSIVE}\n',
        {'volume'}, ('force-detaches after 6 minutes', 'EBS'), ('Insufficient', 'could not be scheduled')),
    # a rolling instance group: the drained node's EBS volume stays in use until the 6-minute force-detach (the
    # issue's analysis)
    'multi-attach-while-a-node-drains': Paste(
        'https://github.com/kubernetes-sigs/aws-ebs-csi-driver/issues/1107',
        'multi attach error -  FailedAttachVolume  15s   attachdetach-controller  Multi-Attach error for volume "pvc-xxx'
        f'" {_EXCLUSIVE}\n',
        {'volume'}, ('drained, terminated or shut down', 'force-detaches after 6 minutes'), ('Insufficient',)),
    # an ASG instance refresh: the pod cannot start on the new instance until the old VolumeAttachment is deleted or
    # the wait ends (the reporter's workaround: delete the VolumeAttachment, or wait a couple of minutes)
    'multi-attach-after-an-asg-refresh': Paste(
        'https://github.com/aws/aws-node-termination-handler/issues/1124',
        'Multi-Attach error for volume "pvc-xxxx". Volume is already exclusively attached to one node and can\'t be '
        'attached\n',
        {'volume'}, ('kubectl get volumeattachment | grep pvc-xxxx', 'force-detaches'), ('Insufficient',)),
    # AKS: the notebook's disk could not be detached from the old node (a VM extension error in its Detach Error),
    # so the controller's event, reissued on the Notebook, repeats (the thread's k9s view)
    'multi-attach-reissued-on-a-notebook': Paste(
        'https://github.com/StatCan/aaw/issues/1583',
        '1.6783916437612605e+09\tDEBUG\tevents\tWarning\t{"object": {"kind":"Notebook","namespace":"deil-lode","name":"o'
        'dbiz-more-ram","uid":"6d28d10a-aad4-4392-b0bc-139e99b1c989","apiVersion":"kubeflow.org/v1beta1","resourceVer'
        'sion":"2737771268"}, "reason": "FailedAttachVolume", "message": "Reissued from pod/odbiz-more-ram-0: Multi-At'
        'tach error for volume \\"pvc-011a6924-f1cc-4f04-b414-c07dfbac6274\\" Volume is already exclusively attached '
        'to one node and can\'t be attached to another"}\n',
        {'volume'}, ('Pod odbiz-more-ram-0', 'still attached to another node', 'Azure'), ('Insufficient',)),
    # a Deployment's replacement pod was placed (the Scheduled line) but its volume is held by the other replica:
    # the events in order, the Multi-Attach one last
    'multi-attach-beside-a-scheduled-line': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/260',
        'sag-whalechain-1680295256825605-1            40m         Normal    Scheduled                        pod/chai'
        'nlet-77867f88d8-hfx6f                       Successfully assigned saga-whalechain-1680295256825605-1/chainl'
        'et-77867f88d8-hfx6f to ip-172-16-85-212.us-west-2.compute.internal\nsag-whalechain-1680295256825605-1     '
        '       40m         Warning   FailedAttachVolume               pod/chainlet-77867f88d8-hfx6f                 '
        '      Multi-Attach error for volume "pvc-517fda86-15de-4087-9698-ffc7cc2d8a89" Volume is already used by pod'
        '(s) chainlet-77867f88d8-lk9vb\n',
        {'volume'}, ('pod(s) chainlet-77867f88d8-lk9vb still use it', 'strategy: Recreate'),
        ('Insufficient',)),
    # the gitlab webservice asks 16.4 vCPUs with the DaemonSets: no 16-vCPU type the Provisioner allows holds it,
    # a 32-vCPU one does (the reporter's finding); the user broke Karpenter's line after each clause's comma
    'hand-wrapped-line-pod-too-big-for-16-vcpu-types': Paste(
        'https://github.com/spack/spack-infrastructure/pull/819',
        'incompatible with provisioner "gitlab", \ndaemonset overhead={"cpu":"315m","memory":"825829120","pods":"7"}, '
        '\nno instance type satisfied resources {"cpu":"16415m","memory":"15325829120","pods":"8"}\nand requirements k'
        'arpenter.sh/capacity-type In [on-demand], karpenter.sh/provisioner-name In [gitlab], kubernetes.io/arch In ['
        'amd64],\nkubernetes.io/os In [linux], node.kubernetes.io/instance-type In [c5.4xlarge m5.4xlarge m5.xlarge t'
        '3.xlarge],\nspack.io/node-pool In [gitlab] (no instance type which had enough resources and the required off'
        'ering met the scheduling requirements); \n',
        {'no-instance-type'}, ('The pod is too big for every type the requirements allow',
                               'the pod asks for 16415m', 'widen spec.requirements to larger types'),
        ('the reason was cut off', 'no capacity for them')),
    # Karpenter v0.6.1: a 350Gi Prometheus pod fit no r5.12xlarge (384GiB) once the reservations and DaemonSets were
    # counted; an r5.16xlarge took it (the reporter's test)
    'v06-packing-did-not-fit-the-one-type': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/1306',
        '2022-02-09T20:11:34.749Z\tERROR\tcontroller.provisioning\tFailed to compute packing, pod(s) [monitoring/prometh'
        'eus-infrastructure-0] did not fit in instance type option(s) [r5.12xlarge]\t{"commit": "df57892", "provision'
        'er": "prometheus"}\n',
        {'no-instance-type'}, ('Pod monitoring/prometheus-infrastructure-0', "a type's allocatable is its EC2 size less",
                               'Allow a larger type'),
        ('limits', 'offering')),
    # Karpenter v0.13.2 with security groups for pods: m5.large and m5a.large offer pod-eni, yet none satisfied it;
    # the same message on the same release was Karpenter's AWS_ENABLE_POD_ENI left unset
    # (aws/karpenter-provider-aws#2217, a maintainer's answer the reporter confirmed)
    'pod-eni-before-v032-karpenter-setting': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/2602',
        '2022-10-05T00:17:01.724Z        ERROR   controller.provisioning Could not schedule pod, incompatible with provis'
        'ioner "default", no instance type satisfied resources {"cpu":"300m","memory":"150Mi","pods":"1","vpc.amazona'
        'ws.com/pod-eni":"1"} and requirements kubernetes.io/arch In [amd64], karpenter.sh/provisioner-name In [defau'
        'lt], karpenter.sh/capacity-type In [on-demand spot], node.kubernetes.io/instance-type In [m5.large m5a.large'
        ']   {"commit": "062a029", "pod": "redacted/coder-6fcc5c4f86-fqrfb"}\n',
        {'no-instance-type'}, ('AWS_ENABLE_POD_ENI', 'check it first'), ('too big',)),
    # EC2 during an AWS outage: InsufficientInstanceCapacity beside UnfulfillableCapacity on CreateFleet; it cleared
    # with the outage (the reporter's account)
    'fleet-ice-and-unfulfillable-capacity': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/8686',
        'creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do '
        'not have sufficient g5.4xlarge capacity in the Availability Zone you requested (us-east-1b). Our system will'
        ' be working on provisioning additional capacity. You can currently get g5.4xlarge capacity by not specifying'
        ' an Availability Zone in your request or choosing us-east-1a, us-east-1c, us-east-1d, us-east-1f.; Unfulfill'
        'ableCapacity: Unable to fulfill capacity due to your request configuration. Please adjust your request and '
        'try again. (aws-error-code=UnfulfillableCapacity, aws-operation-name=CreateFleet, aws-request-id=xxx, aws-se'
        'rvice-name=EC2, aws-status-code=200)\n',
        {'no-instance-type'}, ('no g5.4xlarge capacity in us-east-1b', 'clears on its own'), ('too big', 'limits')),
    # Karpenter v0.5 with a custom launch template that had no AMI: Karpenter's docs require the template to name one
    # (a maintainer's answer, the reporter's confirmation)
    'launch-template-without-an-ami-v05': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/1138',
        "2022-01-12T21:27:00.145Z\tERROR\tcontroller.provisioning\tCould not launch node, launching instances, creating "
        "fleet InvalidParameterValue: Parameter 'amiIdList' cannot be empty.\n",
        {'no-instance-type'}, ("'amiIdList' cannot be empty", 'names no AMI', 'must set one (ImageId)'),
        ('too big', 'capacity', 'quota')),
    # v0.29: the launch template of an EKS managed node group (which may not name an AMI) given to Karpenter
    'managed-node-group-launch-template-on-a-machine': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4357',
        '2023-07-31T17:38:00.634Z\tERROR\tcontroller\tReconciler error\t{"commit": "34d50bf-dirty", "controller": "ma'
        'chine.lifecycle", "controllerGroup": "karpenter.sh", "controllerKind": "Machine", "Machine": {"name":"gpu-47gf'
        'h"}, "namespace": "", "name": "gpu-47gfh", "reconcileID": "8af39500-12d6-4244-a6d4-58e5de1af7c3", "error": "'
        "creating machine, creating instance, creating fleet InvalidParameterValue: Parameter 'amiIdList' cannot be emp"
        'ty.\\n\\tstatus code: 400, request id: f6506f26-5d40-426a-ae26-859b692bb7a4 (f6506f26-5d40-426a-ae26-859b692'
        'bb7a4)"}\n',
        {'no-instance-type'}, ('gpu-47gfh', 'EKS managed node group', 'names no AMI'), ('status code', 'capacity')),
    # v0.10: Karpenter kept launching with a cached name of its own launch template after the template was deleted;
    # restarting the leader pod fixed it (the reporter's resolution)
    'karpenter-launch-template-deleted-under-its-cache': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/1964',
        'ERROR\tcontroller\tLaunching node, creating cloud provider machine, creating fleet InvalidLaunchTemplateName.N'
        'otFoundException: The specified launch template, with template name Karpenter-eks-us-west-2-72255360311791677'
        '81, does not exist.\n',
        {'no-instance-type'}, ('The launch template is gone', 'restart the Karpenter controller'),
        ('capacity', 'quota', 'too big')),
    # v0.27 GPU nodes whose nvidia.com/gpu never registered (the NVIDIA device plugin DaemonSet was not running there:
    # the maintainers' answer to the same check in aws/karpenter-provider-aws#3862 and #1914); the check's words
    # begin with a capital in the inflight-check logger
    'inflight-check-gpu-never-registered': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/3794',
        '023-04-21T06:05:00.044Z\tINFO\tcontroller.inflightchecks\tInflight check failed for node, Expected resource "n'
        'vidia.com/gpu" didn\'t register on the node\t{"commit": "beb0a64-dirty", "node": "ip-172-24-37-21.us-west-2.co'
        'mpute.internal"}\n2023-04-21T06:14:22.629Z\tINFO\tcontroller.inflightchecks\tInflight check failed for node, '
        'Expected resource "nvidia.com/gpu" didn\'t register on the node\t{"commit": "beb0a64-dirty", "node": "ip-172-2'
        '4-33-78.us-west-2.compute.internal"}\n',
        {'no-instance-type'}, ('never advertised nvidia.com/gpu', 'NVIDIA device plugin'), ('too big', 'capacity')),
    # v0.2x: nodes whose kubelet registered 50 pods where Karpenter planned 234 (its own max-pods figure), logged every
    # ten minutes on the nodes that were never deprovisioned
    'inflight-check-fewer-pods-than-planned': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/3576',
        '2023-03-10 05:14:02.817\t2023-03-10T10:14:02.817Z\tINFO\tcontroller.inflightchecks\tInflight check failed f'
        'or node, Expected 234 of resource pods, but found 50 (21.4% of expected)\t{"commit": "dc3af1a", "node": "NODE_'
        'NAME_HERE"}\n',
        {'no-instance-type'}, ('registered 50 of pods, where Karpenter planned with 234', '--max-pods',
                               'kubelet maxPods'), ('capacity', 'quota')),
    # v0.24: a 200Gi blockDeviceMapping the kubelet never saw (it reports the 20Gi default): the check's event on the
    # nodes that stayed (the reporter's `kubectl describe nodes | grep FailedInflightCheck`)
    'inflight-check-ephemeral-storage-on-another-volume': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/3910',
        '  Warning  FailedInflightCheck  5m8s (x30 over 4h55m)  karpenter  Expected 200Gi of resource ephemeral-storage,'
        ' but found 20959212Ki (10.0% of expected)\n',
        {'no-instance-type'}, ('blockDeviceMappings (200Gi)', 'deviceName'), ('capacity', 'quota')),
    # Karpenter v0.30 beside Cilium's cluster-pool IPAM: a /25 per node (126 addresses) under an m6i.2xlarge's 234
    # maxPods; past ~128 pods the rest stayed ContainerCreating and Karpenter, counting maxPods, added no node (the
    # reporter's figures)
    'cilium-pod-cidr-smaller-than-max-pods': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4557',
        'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "4d0e21b994a'
        '06cec32a644f427eb559da250246b2dced95d2a8adffb493532b6": plugin type="cilium-cni" name="cilium" failed (add): un'
        'able to allocate IP via local cilium agent: [POST /ipam][502] postIpamFailure range is full\n',
        {'unsupported'}, ('no IP address', 'a /25 gives 126 addresses', 'maxPods at or below it'),
        ('Insufficient', 'could not be scheduled', 'NodePool "')),
    # Karpenter 1.0.6 on the VPC CNI: every address of the x2iedn.4xlarge's ENIs was assigned (the reporter counted
    # 8 primary + 232 secondary) while pods kept being placed there
    'vpc-cni-node-out-of-addresses': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/7318',
        'Warning  FailedCreatePodSandBox  2m47s (x1642 over 6h)  kubelet  (combined from similar events): Failed to cr'
        'eate pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "71ef22cdaf65163adca4c9'
        '7ed66df6a7cdcdcbe7c011d0ff62a77648cba5b46b": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: faile'
        'd to assign an IP address to container\n',
        {'unsupported'}, ('(aws-cni)', 'ipamd.log', 'prefix delegation'), ('Insufficient', 'could not be scheduled')),
    # kops on AWS with Cilium: nodes with CPU and memory left kept getting pods after their addresses ran out (the
    # reporter's finding: the maximum number of pods had been scheduled)
    'cilium-no-address-left-on-the-node': Paste(
        'https://github.com/kubernetes/kops/issues/16064',
        '  Warning  FailedCreatePodSandBox  2s    kubelet            Failed to create pod sandbox: rpc error: code = Un'
        'known desc = failed to setup network for sandbox "0f06846efa22ac25671ad6657f3540a4f4f9879c345b4ebeb7331769fff'
        'dd24f": plugin type="cilium-cni" name="cilium" failed (add): unable to allocate IP via local cilium agent: [POS'
        'T /ipam][502] postIpamFailure \n',
        {'unsupported'}, ('neither sees a full node', 'ENI mode'), ('Insufficient',)),
    # v1.2: the thread is titled "Unable to use g4dn" while the NodePool's requirement allows g4ad, the family with
    # AMD GPUs (amd.com/gpu), and the pod asks for nvidia.com/gpu (the paste itself shows the mix-up; a g5.2xlarge
    # worked)
    'nvidia-gpu-asked-of-an-amd-gpu-family': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/7754',
        '{"error":"incompatible with nodepool \\"gpu\\", daemonset overhead={\\"cpu\\":\\"690m\\",\\"memory\\":\\"843'
        '162368\\",\\"pods\\":\\"11\\"}, no instance type satisfied resources {\\"cpu\\":\\"1690m\\",\\"memory\\":'
        '\\"1916904192\\",\\"nvidia.com/gpu\\":\\"1\\",\\"pods\\":\\"12\\"} and requirements karpenter.k8s.aws/ec2no'
        'declass In [gpu], karpenter.k8s.aws/instance-family In [g4ad] minValues 1, karpenter.k8s.aws/instance-size In '
        '[2xlarge] minValues 1, karpenter.sh/capacity-type In [on-demand spot], karpenter.sh/nodepool In [gpu], kubernet'
        'es.io/arch In [amd64], kubernetes.io/os In [linux], nvidia.com/gpu In [true] (no instance type has enough reso'
        'urces)"},{"error":"incompatible with nodepool \\"enrichment-service\\", daemonset overhead={\\"cpu\\":\\"690m'
        '\\",\\"memory\\":\\"843162368\\",\\"pods\\":\\"10\\"}\n',
        {'no-instance-type'}, ('carry amd.com/gpu instead (g4ad.2xlarge)', 'g4dn.xlarge'),
        ('vmMemoryOverheadPercent', 'too big')),
    # EKS with security groups for pods: Karpenter launched an r8a.xlarge the cluster's VPC resource controller did not
    # list yet, so it never had a trunk ENI and the pod-eni pods stayed Pending (the reporter's analysis, filed in
    # both Karpenter repositories)
    'vpc-resource-controller-unsupported-type': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/2863',
        '`Unsupported: The instance type r8a.xlarge is not supported yet by the vpc resource controller`\n\nAs a result,'
        ' pods requiring Pod ENIs could not be scheduled and remained **Pending** with:\n\n`FailedScheduling: Insufficie'
        'nt vpc.amazonaws.com/pod-eni`\n',
        {'unsupported'}, ('does not support r8a.xlarge yet', 'karpenter.k8s.aws/instance-family NotIn [r8a]'),
        ('The pod:', 'ENABLE_POD_ENI')),
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


def test_a_multi_attach_item_is_a_kube_component_volume_reason() -> None:
    """cli-contract's sources: the attach-detach controller has none of its own; the item goes under kube-scheduler
    (a Kubernetes component's event on a pod) with a `volume` reason keyed by the volume."""
    [item] = explain_text(PASTES['multi-attach-held-by-a-bootstrap-pod'].text).item_list()
    assert item.parsed.source == "kube-scheduler" and item.parsed.event == "FailedAttachVolume"
    [reason] = item.all_reasons()
    assert reason.kind == "volume" and reason.key == "pvc-......"


def test_a_ca_line_wrapped_inside_its_parenthesis_is_one_record() -> None:
    """cluster-autoscaler's `(based on` / `hinting). Ignoring in scale up.` (neondatabase/autoscaling#64's paste,
    cited for the line by sweep 20b): the continuation is read with its line, not left unrecognised."""
    text = ('I0223 15:23:21.970141       1 filter_out_schedulable.go:118] Pod default.web-66c8479797-jxrtm marked as '
            'unschedulable can be scheduled on node ip-10-6-93-124.us-east-2.compute.internal (based on\n hinting). '
            'Ignoring in scale up.\n')
    explanation = explain_text(text)
    assert explanation.summary()["unrecognised"] == 0 and len(explanation.item_list()) == 1


def test_a_pod_eni_request_on_v1_is_not_sent_to_the_removed_setting_first() -> None:
    """From v0.32 Karpenter always counts pod-eni: a v1 log's answer does not lead with the setting."""
    line = ('{"level":"ERROR","message":"could not schedule pod","error":"incompatible with nodepool \\"default\\", daemo'
            'nset overhead={\\"cpu\\":\\"200m\\",\\"memory\\":\\"200Mi\\",\\"pods\\":\\"3\\"}, no instance type satisfied '
            'resources {\\"cpu\\":\\"1200m\\",\\"memory\\":\\"1200Mi\\",\\"pods\\":\\"4\\",\\"vpc.amazonaws.com/pod-eni\\":'
            '\\"1\\"} and requirements node.kubernetes.io/instance-type In [m5.large m5.xlarge] (no instance type has '
            'enough resources)"}')
    explanation = explain_text(line)
    enrich(explanation, catalog_loader(None, None))
    [item] = explanation.item_list()
    assert "check it first" not in item.plain
