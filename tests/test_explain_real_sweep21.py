"""explain on the sweep of session 21: messages pasted in public issue threads, none cited elsewhere in tests/, each
with the cause its thread established. The sweep's gaps were a topology spread blocked by tainted or cordoned nodes
(the nodeTaintsPolicy deadlock said last, or not tied to the cordoned node at all), Karpenter v0.3x's consistency
check `can't drain node, PDB ... is blocking evictions` and fargate-scheduler's `Pod provisioning timed out (will
retry)` (both unrecognised), v0.37's `resolving ec2nodeclass, object is awaiting reconciliation` (read as EC2 refusing
the launch), cluster-autoscaler's pod-affinity mismatch on a template node (no word on why a new node cannot
satisfy it), a per-node reason quoted alone (`1 node(s) had untolerated taint(s)`: unrecognised), a Karpenter line
wrapped after `daemonset overhead=` (read as cut off), v0.3x's `Scheduling simulation failed to schedule all pods`,
pre-v1.1's `doesn't contain both a node and a nodeclaim` on a node group's node, the PersistentVolume controller's
`waiting for a volume to be created, either by external provisioner ...` (unrecognised; EKS 1.23+ without the EBS CSI
driver), Karpenter's `FailedDraining` event (unrecognised), a FitError cut mid-reason read as if its counts covered
every node, and cluster-autoscaler's `Scale-up timed out` / backoff / `not ready for scaleup` lines (unrecognised).

Every message is copied as its thread shows it (a line the thread's excerpt cut is cut there too). `says` are words
the answer must contain for the established cause; `never` the misdiagnosis or misreading a reader would take.
"""

from __future__ import annotations

import pytest
from explain_pastes import Paste, check_new_threads, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader
from karpplan.explain.report import explain_text

_HONOR = "Set nodeTaintsPolicy: Honor on the constraint"

PASTES: dict[str, Paste] = {
    # a cordoned node is still a domain of the hostname spread (0 pods), so the fifth replica fits no other node
    # (kubernetes/kubernetes#106127 and KEP-3094: nodeTaintsPolicy: Honor leaves it out)
    'spread-over-a-cordoned-node': Paste(
        'https://github.com/kubernetes/kubernetes/issues/106396',
        'I1113 07:29:12.824680       1 factory.go:449] "Unable to schedule pod; no fit; waiting" pod="redis/proxy-redi'
        's-5" err="0/8 nodes are available: 1 node(s) were unschedulable, 3 node(s) didn\'t match node selector, 4 nod'
        'e(s) didn\'t match pod topology spread constraints."\n',
        {'topology'}, ('The spread is what blocks it', 'a cordoned node', _HONOR),
        ('nothing on the pod causes it',)),
    # the tainted node keeps the global minimum at 0: maxSkew 1 forbids a second pod on either regular node
    'spread-over-a-tainted-node': Paste(
        'https://github.com/kubernetes/kubernetes/issues/107464',
        '  Warning  FailedScheduling  3m1s (x12 over 11m)  default-scheduler  0/3 nodes are available: 2 node(s) didn'
        '\'t match pod topology spread constraints, 1 node(s) had taint {node_group: special}, that the pod didn\'t tole'
        'rate.\n',
        {'topology', 'taint'}, ('The spread is what blocks it', _HONOR), ('Insufficient',)),
    # kops' CoreDNS hostname spread counted the tainted control-plane node as an empty domain; the fix (kops#18535)
    # set nodeTaintsPolicy: Honor
    'coredns-spread-over-the-control-plane': Paste(
        'https://github.com/kubernetes/kops/pull/17472',
        '0/2 nodes are available: \n1 node(s) didn\'t match pod topology spread constraints, \n1 node(s) had untolerate'
        'd taint {node-role.kubernetes.io/control-plane: }. \npreemption: 0/2 nodes are available: \n1 Preemption is n'
        'ot helpful for scheduling, \n1 node(s) didn\'t match pod topology spread constraints.\n',
        {'topology', 'taint'}, ('a control-plane node', _HONOR), ('Insufficient',)),
    # the PR's own cause: nodeTaintsPolicy left unset, so the tainted nodes counted in the node spread's skew
    'canary-spread-over-untolerated-taints': Paste(
        'https://github.com/zimmertr/Kubernetes-Manifests/pull/498',
        'FailedScheduling  0/6 nodes are available:\n  3 node(s) didn\'t match pod topology spread constraints,\n  3 no'
        'de(s) had untolerated taint(s).\n',
        {'topology'}, ('The spread is what blocks it', _HONOR), ('Insufficient',)),
    # v0.3x's consistency check: the drain of a node being replaced waits on istiod's PDB (one replica,
    # minAvailable 1), so the node and its NodeClaim stay
    'consistency-check-drain-blocked-by-a-pdb': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/1121',
        '> kube-system/karpenter-6465666966-4q49j[controller]: {"level":"INFO","time":"2024-03-19T02:48:43.298Z","logg'
        'er":"controller","message":"Starting workers","commit":"2c8f2a5","controller":"state.daemonset","controllerG'
        'roup":"apps","controllerKind":"DaemonSet","worker count":10}\n> kube-system/karpenter-6465666966-4q49j[contro'
        'ller]: {"level":"ERROR","time":"2024-03-19T02:48:43.312Z","logger":"controller.nodeclaim.consistency","messag'
        'e":"**check failed, can\'t drain node, PDB \\"istio-system/istiod\\" is blocking evictions**","commit":"2c8f2'
        'a5","nodeclaim":"eks-unmanaged-amd64-dcg87"}\n',
        set(), ('PodDisruptionBudget "istio-system/istiod"', 'kubectl get pdb -n istio-system istiod',
                                'run one more replica'),
        ('could not be scheduled', 'EC2')),
    # required pod affinity to a DaemonSet's pod: cluster-autoscaler's template node has no such pod, so no group is
    # grown (the reporter's analysis; the DaemonSet's node selection is what to require instead)
    'ca-pod-affinity-to-a-daemonset': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1520',
        'I1220 23:52:25.618948       1 scale_up.go:152] Scale-up predicate failed: MatchInterPodAffinity predicate mis'
        'match, cannot put default/h2-zwq56-1824281309 on template-node-for-m4_2xlarge-7056460638582648182, reason: no'
        'de(s) didn\'t match pod affinity/anti-affinity,node(s) didn\'t match pod affinity rules\n',
        {'node-filter'}, ('template node is a new node', 'DaemonSet', 'preferredDuringSchedulingIgnoredDuringExecution'),
        ('Insufficient', 'max size reached')),
    # Hetzner: the cloud controller manager was not installed right, so the uninitialized taint stayed (the
    # maintainer's answer; removing the taint by hand "fixed" scheduling but no load balancer came up)
    'uninitialized-taint-no-ccm': Paste(
        'https://github.com/mysticaltech/terraform-hcloud-kube-hetzner/issues/9',
        "> 0/4 nodes are available: 4 node(s) had taint {node.cloudprovider.kubernetes.io/uninitialized: true}, that "
        "the pod didn't tolerate.\n",
        {'taint'}, ('cloud controller manager removes by itself', 'do not add a toleration'), ('Insufficient',)),
    # the same taint on every node that joins, as the cluster grows: the CCM never initialised them
    'uninitialized-taint-as-nodes-join': Paste(
        'https://github.com/hetznercloud/csi-driver/issues/288',
        "`Warning  FailedScheduling  3m6s  default-scheduler  0/1 nodes are available: 1 node(s) had taint {node.cloud"
        "provider.kubernetes.io/uninitialized: true}, that the pod didn't tolerate.\n  Warning  FailedScheduling  113s"
        "  default-scheduler  0/2 nodes are available: 2 node(s) had taint {node.cloudprovider.kubernetes.io/uniniti"
        "alized: true}, that the pod didn't tolerate.\n  Warning  FailedScheduling  23s   default-scheduler  0/4 nodes"
        " are available: 4 node(s) had taint {node.cloudprovider.kubernetes.io/uninitialized: true}, that the pod didn"
        "'t tolerate.`\n",
        {'taint'}, ('the component that should remove it is failing',), ('Insufficient',)),
    # an all-private cluster on Fargate: the profile's subnets had no way out (no NAT gateway / endpoints), so
    # CoreDNS's Fargate pods never started (eksctl#1774: no NAT gateway or the Fargate limit)
    'fargate-provisioning-timed-out': Paste(
        'https://github.com/eksctl-io/eksctl/issues/2690',
        '> kubectl get events -n kube-system\nLAST SEEN   TYPE      REASON              OBJECT                         '
        '         MESSAGE\n14m         Warning   FailedScheduling    pod/coredns-rs-pod-ID1                  Pod provis'
        'ioning timed out (will retry) for pod: kube-system/coredns-rs-pod-ID1\n13m         Warning   FailedScheduling'
        '    pod/coredns-rs-pod-ID1                  Pod provisioning timed out (will retry) for pod: kube-system/cor'
        'edns-rs-pod-ID1\n11m         Warning   FailedScheduling    pod/coredns-rs-pod-ID1                  Pod provisi'
        'oning timed out (will retry) for pod: kube-system/coredns-rs-pod-ID1\n',
        {'unsupported'}, ('NAT gateway', 'VPC endpoints', 'Fargate vCPU quota'), ('refuses', 'Insufficient')),
    # eksctl 0.19-rc.1 failed to patch CoreDNS for Fargate ("the server could not find the requested resource"),
    # so its pods kept the ec2 compute-type annotation and waited for a node
    'fargate-coredns-left-on-ec2': Paste(
        'https://github.com/eksctl-io/eksctl/issues/2169',
        'NAMESPACE     LAST SEEN   TYPE      REASON              OBJECT                                  MESSAGE\nkube-'
        'system   78s         Warning   FailedScheduling    pod/coredns-8568c98b77-45t4v            no nodes available '
        'to schedule pods\nkube-system   78s         Warning   FailedScheduling    pod/coredns-8568c98b77-m2xfs       '
        '     no nodes available to schedule pods\n',
        {'node-filter'}, ('eks.amazonaws.com/compute-type: ec2 annotation', 'kubectl patch deployment coredns'),
        ('Insufficient',)),
    # the event Karpenter emitted for nodes it does not manage until v1.1 (this PR): noise on a node group's node
    'half-known-node-of-a-node-group': Paste(
        'https://github.com/kubernetes-sigs/karpenter/pull/1644',
        '_"Cannot disrupt Node: state node doesn\'t contain both a node and a nodeclaim"_\n',
        set(), ('noise, nothing to fix', 'before v1.1'), ('could not be scheduled',)),
    # v0.37 added a Ready condition to the EC2NodeClass: with the old CRDs it never came, and no NodeClaim launched
    # (aws/karpenter-provider-aws#6288 then called out the CRD upgrade)
    'nodeclass-awaiting-reconciliation': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/1288',
        '{"level":"ERROR","time":"2024-05-29T12:23:15.877Z","logger":"controller","message":"Reconciler error","commit'
        '":"490ef94","controller":"nodeclaim.lifecycle","controllerGroup":"karpenter.sh","controllerKind":"NodeClaim",'
        '"NodeClaim":{"name":"default-9rqkc"},"namespace":"","name":"default-9rqkc","reconcileID":"f4112d99-60ad-4a87-'
        '9af3-3f45b81f2ed2","error":"launching nodeclaim, resolving ec2nodeclass, object is awaiting reconciliation"}\n'
        '```\n\nNodeclaim Object status:\n```yaml\nStatus:\n  Conditions:\n    Last Transition Time:  2024-05-29T12:22:4'
        '3Z\n    Message:               Node not launched\n    Reason:                NotLaunched\n    Status:         '
        '       False\n    Type:                  Initialized\n    Last Transition Time:  2024-05-29T12:22:43Z\n    Mes'
        'sage:               resolving ec2nodeclass, object is awaiting reconciliation\n    Reason:                Laun'
        'chFailed\n    Status:                False\n    Type:                  Launched\n',
        {'no-instance-type'}, ('no Ready status condition', 'upgrade the CRDs with the controller'),
        ('EC2 refused', 'iam:PassRole')),
    # a DRA claim pinned the session pods to one node, which is tainted llm-workload=true:NoSchedule; the fix
    # tolerates the taint (the PR's own account)
    'bare-untolerated-taints-quoted': Paste(
        'https://github.com/joryirving/home-ops/pull/10281',
        'Session pods were Pending: `1 node(s) had untolerated taint(s)`. The DRA claim pins placement to skirk but sk'
        'irk is tainted `llm-workload=true:NoSchedule`.\n',
        {'node-filter'}, ('kubectl describe node shows each node\'s Taints', 'add a toleration only if the pod may run'),
        ('Insufficient',)),
    # a GitLab runner's pod waits while the autoscaler's new node is not Ready yet; the runner gave up first (the PR
    # adds a poll timeout)
    'runner-waits-for-a-new-node': Paste(
        'https://github.com/DeimosCloud/terraform-kubernetes-gitlab-runner/pull/16',
        '\tUnschedulable: "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory."\nWaiting for pod gitlab'
        '-runner-namespace/runner-eebxo6ax-project-12739762-concurrent-3zzpmw to be running, status is Pending\n\tUnsc'
        'hedulable: "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 node(s) had taint {node.kub'
        'ernetes.io/not-ready: }, that the pod didn\'t tolerate."\nWaiting for pod gitlab-runner-namespace/runner-eebx'
        'o6ax-project-12739762-concurrent-3zzpmw to be running, status is Pending\n\tUnschedulable: "0/2 nodes are ava'
        'ilable: 1 Insufficient cpu, 1 Insufficient memory, 1 node(s) had taint {node.kubernetes.io/not-ready: }, that'
        ' the pod didn\'t tolerate."\n',
        {'taint', 'node-filter'}, ('it is transient, so do not add a toleration', 'The pod lands once the taint is gone'),
        ('add tolerations to spec.tolerations',)),
    # before this PR the event did not say which pod; after it, `not all pods would schedule, <pod> => would schedule
    # against uninitialized nodeclaim/...`
    'simulation-failed-to-schedule-all-pods': Paste(
        'https://github.com/kubernetes-sigs/karpenter/pull/1233',
        '  Type    Reason             Age    From       Message\n  ----    ------             ----   ----       ------'
        '-\n  Normal  DisruptionBlocked  2s     karpenter  Cannot disrupt NodeClaim: Scheduling simulation failed to sc'
        'hedule all pods\n',
        set(), ('not all of them would find a place', 'a node still initializing'),
        ('could not be scheduled', 'Karpenter keeps this node for now:')),
    # trn1.32xlarge: 512Gi, but Karpenter's 7.5% VM memory overhead estimate leaves less than the pod asks; the node
    # it launched once the request was lowered had much more allocatable (the reporter's numbers)
    'vm-memory-overhead-hand-wrapped': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/6509',
        'Failed to schedule pod, incompatible with nodepool "trn1.32x", daemonset overhead=\n{"cpu":"280m","memory":"3'
        '76Mi","pods":"7"}, no instance type satisfied resources\n{"aws.amazon.com/neuron":"16","cpu":"124280m","memor'
        'y":"498431899Ki","pods":"8"} and requirements\nkarpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepo'
        'ol In [trn1.32x], kubernetes.io/arch In [amd64],\nkubernetes.io/os In [linux], node.kubernetes.io/instance-typ'
        'e In [trn1.32xlarge], nodepool In [trn1.32x] \n(no instance type has enough resources)\n',
        {'no-instance-type'}, ('trn1.32xlarge has 512Gi memory', 'settings.vmMemoryOverheadPercent'),
        ('cut off', 'Not understood', ',.')),
    # scale from zero: cluster-autoscaler's template for the group lacked kubernetes.io/os, the pod's only selector
    # (the maintainer's reading)
    'ca-template-lacks-os-label': Paste(
        'https://github.com/kubernetes/autoscaler/issues/3733',
        "1 pod_schedulable.go:165] Pod somepod can't be scheduled on correct-nodegroup, predicate failed: GeneralPredic"
        "ates predicate mismatch, reason: node(s) didn't match node selector,\n",
        {'node-filter'}, ('for a group at zero nodes', 'kubernetes.io/os'), ('selector,.', 'Insufficient')),
    # OpenShift's own node-exporter (behind kube-rbac-proxy) already held 9100 on the node; the Helm chart's
    # node-exporter DaemonSet pod could not take it (the reporter's finding)
    'node-exporter-port-held-by-the-platforms': Paste(
        'https://github.com/dell/csm/issues/1783',
        'Events:\n  Type     Reason            Age                  From               Message\n  ----     ------       '
        '     ----                 ----               -------\n  Warning  FailedScheduling  11m (x539 over 18h)  defa'
        'ult-scheduler  0/4 nodes are available: 1 node(s) didn\'t have free ports for the requested pod ports. preem'
        'ption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, 3 Preemption is not helpful '
        'for scheduling..\n',
        {'node-filter'}, ('two monitoring stacks each running node-exporter on 9100', 'Find the holder'),
        ('Insufficient', 'lower the pod')),
    # EKS: another pod on every node held node-exporter's 9100 (the maintainer's question; the reporter fixed it)
    'node-exporter-port-taken-on-every-node': Paste(
        'https://github.com/Thakurvaibhav/k8s/issues/11',
        "Logs: 0/3 nodes are available: 2 node(s) didn't match node selector, 3 node(s) didn't have free ports for the "
        "requested pod ports.\n",
        {'node-filter'}, ('Every node saying so points at a DaemonSet', 'give the pod or the holder another port'),
        ('Insufficient',)),
    # KubeSphere's node-exporter: 9100 already taken on the nodes (the maintainer's answer: free it or change the
    # exporter's port)
    'kubesphere-node-exporter-port': Paste(
        'https://github.com/kubesphere/kubesphere/issues/2162',
        "node-exporter tips:\n0/4 nodes are available: 1 node(s) didn't match node selector, 3 node(s) didn't have free"
        " ports for the requested pod ports.\n",
        {'node-filter'}, ('node-exporter on 9100', 'give the pod or the holder another port'), ('Insufficient',)),
    # EKS 1.23+: the gp2 class's provisioner goes to ebs.csi.aws.com, and without the EBS CSI driver add-on the
    # kubecost claims never bound (the analysis; kubecost/docs#479 documents the same fix)
    'claim-waits-for-the-ebs-csi-driver': Paste(
        'https://github.com/awslabs/cdk-eks-blueprints/issues/561',
        'kubectl describe pvc kubecost-cost-analyzer -n kubecost | grep "ebs.csi.aws.com"\n               volume.beta.k'
        'ubernetes.io/storage-provisioner: ebs.csi.aws.com\n               volume.kubernetes.io/storage-provisioner: e'
        'bs.csi.aws.com\n  Normal  ExternalProvisioning  2m7s (x2222 over 9h)  persistentvolume-controller  waiting for'
        ' a volume to be created, either by external provisioner "ebs.csi.aws.com" or manually created by system admin'
        'istrator\n',
        {'volume'}, ('aws-ebs-csi-driver add-on', 'AmazonEBSCSIDriverPolicy', 'not bound'),
        ('could not be placed', 'scheduler persistentvolume-controller', 'Insufficient')),
    # the same event after an upgrade to EKS 1.23, where the EBS CSI driver is not installed by default (the
    # reporter's own finding)
    'claim-waits-after-an-eks-1-23-upgrade': Paste(
        'https://github.com/jonashackt/tekton-argocd-eks/issues/118',
        ' Normal  ExternalProvisioning  14s (x8 over 101s)  persistentvolume-controller  waiting for a volume to be crea'
        'ted, either by external provisioner "ebs.csi.aws.com" or manually created by system administrator\n',
        {'volume'}, ('EKS 1.23 and later', 'install the aws-ebs-csi-driver add-on'), ('could not be placed',)),
    # expireAfter set very low: the nodes' drains waited on pods their PDBs would not let go (the maintainer's
    # reading: "pods blocked by PDBs")
    'drain-waits-on-evictions': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5806',
        'Kind: Node\nName: ip-10-0-37-11.ec2.internal\nReason: FailedDraining\nCluster: bubbles-khxtgznb\nMessages: Fa'
        'iled to drain node, 4 pods are waiting to be evicted\n',
        set(), ('4 pods have not left yet', 'ALLOWED DISRUPTIONS 0', 'terminationGracePeriod'),
        ('could not be scheduled', 'Karpenter keeps this node for now:')),
    # a new GPU node advertises no nvidia.com/gpu until the device plugin's DaemonSet pod runs there (~90 s): the pod
    # waited on it (the issue's own analysis). The paste is cut mid-reason: 3 of 9 nodes accounted for, so no claim
    # that "every other node" is ruled out
    'gpu-before-the-device-plugin-registers': Paste(
        'https://github.com/NVIDIA/k8s-device-plugin/issues/291',
        'Events:\n  Type     Reason               Age                    From               Message\n  ----     -----'
        '-               ----                   ----               -------\n  Warning  FailedScheduling     3m17s (x3 '
        'over 3m20s)  default-scheduler  0/9 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had taint '
        '{ocrOnly: true}, that the pod didn\'t tolerate, 1 node(s) had taint {tritonOnly: true}, that th\n',
        {'node-filter', 'taint'}, ('a node advertises it only when its device plugin', 'must come up and be ready first'),
        ('Only one node is short of room',)),
    # v0.5: the Provisioner put the custom label dwh in spec.requirements, where only well-known labels counted then
    # (the maintainer's answer), so it offered no value of dwh at all
    'v05-custom-label-only-in-requirements': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/1225',
        '2022-01-26T16:07:43.841Z\tDEBUG\tcontroller.selection\tCould not schedule pod, matched 0/1 provisioners, tried'
        ' provisioner/provisioner-test: invalid nodeSelector "dwh", [yes-dwh] not in []\t{"commit": "5047f3c", "pod":'
        ' "dwh-dev/karpenter-test-4vgnb"}\n',
        {'requirement-conflict'}, ('gives its nodes no dwh label at all', 'spec.labels'),
        ('cut off', 'Not understood')),
    # a g4dn.4xlarge group: the scale-up's instance never registered (low availability of the type, the commenter's
    # reading; deleting the unregistered node cleared it), so cluster-autoscaler timed out and backed off the group
    'ca-scale-up-timed-out-then-backoff': Paste(
        'https://github.com/kubernetes/autoscaler/issues/6128',
        'I0313 12:34:34.470823       1 executor.go:147] Scale-up: setting group eks-mli_inference_g4dn4xl-02c6fc6f-788b'
        '-c2ae-e9d5-647dfa039598 size to 7\nI0313 12:34:34.470926       1 auto_scaling_groups.go:265] Setting asg eks-ml'
        'i_inference_g4dn4xl-02c6fc6f-788b-c2ae-e9d5-647dfa039598 size to 7\n...\nW0313 12:49:40.563382       1 clusters'
        'tate.go:266] Scale-up timed out for node group eks-mli_inference_g4dn4xl-02c6fc6f-788b-c2ae-e9d5-647dfa039598 '
        'after 15m5.500491908s\nW0313 12:49:40.584456       1 clusterstate.go:297] Disabling scale-up for node group '
        'eks-mli_inference_g4dn4xl-02c6fc6f-788b-c2ae-e9d5-647dfa039598 until 2024-03-13 12:54:40.13918732 +0000 UTC m'
        '=+2030.419314682; errorClass=Other; errorCode=timeout\nW0313 12:50:01.422358       1 orchestrator.go:582] Node'
        ' group eks-mli_inference_g4dn4xl-02c6fc6f-788b-c2ae-e9d5-647dfa039598 is not ready for scaleup - backoff\n',
        {'node-filter'}, ('no new node registered within', 'InsufficientInstanceCapacity', 'never joined the cluster'),
        ('Insufficient cpu', 'lower the pod')),
    # "not ready for scaleup": a recent scale-up of the group failed (backoff) or it has unhealthy nodes - the
    # maintainer's reading, checked in the cluster-autoscaler-status ConfigMap
    'ca-group-not-ready-for-scale-up': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1184',
        'W0824 14:01:35.660707       1 scale_up.go:105] Node group cr-k8s-dev-team-CASE20180822120533398900000002 is n'
        'ot ready for scaleup\n',
        {'node-filter'}, ('a recent scale-up of it failed (backoff)', 'cluster-autoscaler-status'),
        ('Insufficient', 'max size')),
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


def test_the_spread_deadlock_is_said_first() -> None:
    """The nodeTaintsPolicy sentence leads the per-node hints (it was last, after the taint's own long hint)."""
    [item] = explain_text(PASTES['canary-spread-over-untolerated-taints'].text).item_list()
    assert item.plain.index("The spread is what blocks it") < item.plain.index("This form of the message")


def test_a_spread_beside_full_nodes_is_not_asserted_as_the_cause() -> None:
    """With a node short of room the spread's minimum may sit there: the sentence is conditional."""
    text = ("0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints, "
            "1 node(s) had untolerated taint {dedicated: gpu}.")
    [item] = explain_text(text).item_list()
    assert "If the spread is what blocks it" in item.plain and "The spread is what blocks it" not in item.plain


def test_a_wrapped_overhead_value_is_one_record() -> None:
    """`daemonset overhead=` / `{...}` across lines joins with no space (a space broke the overhead's value)."""
    explanation = explain_text(PASTES['vm-memory-overhead-hand-wrapped'].text)
    [item] = explanation.item_list()
    assert explanation.summary()["unrecognised"] == 0
    assert all(r.kind == "no-instance-type" for r in item.all_reasons())


@pytest.mark.parametrize("name", ['consistency-check-drain-blocked-by-a-pdb', 'half-known-node-of-a-node-group',
                                  'simulation-failed-to-schedule-all-pods', 'drain-waits-on-evictions'])
def test_disruption_lines_are_a_nodes_not_a_pods(name: str) -> None:
    """A node Karpenter will not remove, read as DisruptionBlocked: no pod failed to schedule."""
    [item] = explain_text(PASTES[name].text).item_list()
    assert item.parsed.event == "DisruptionBlocked" and item.parsed.pod is None


def test_redacted_counts_are_read_and_shown_as_redacted() -> None:
    """`0/X nodes are available: X node(s) had ...` (a paste with its counts hidden, as kedacore/keda#6340's): the
    reason is read and worded, and the count stays X - not 0, not a number the paste did not give."""
    text = ("0/X nodes are available: X node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}. "
            "preemption: 0/X nodes are available: X Preemption is not helpful for scheduling.")
    [item] = explain_text(text).item_list()
    assert {r.kind for r in item.all_reasons()} >= {"taint"}
    assert "X node(s) had untolerated taint" in item.plain and "0 node(s)" not in item.plain
    assert "a Fargate profile, not a toleration, puts a pod there" in item.plain
