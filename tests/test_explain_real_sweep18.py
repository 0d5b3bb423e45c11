"""explain on a fifth sweep of messages pasted in public issue threads (session 18), none cited elsewhere in tests/,
each with the cause its thread established: Karpenter v1.2-v1.8 JSON lines and NodeClaim conditions, pod events
(Nominated, FailedScheduling from karpenter and default-scheduler), EKS Auto Mode, Fargate, Azure's provider,
kube-scheduler 1.28-1.34 and cluster-autoscaler, in the envelopes they are pasted in.

Every message is copied as its thread shows it. `says` are words the answer must contain for the established cause;
`never` the misdiagnosis or misreading the code before this sweep gave (or one a reader would take for the fix).
"""

from __future__ import annotations

import pytest
from explain_pastes import Paste, check_new_threads, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader, enrich
from karpplan.explain.report import explain_text

PASTES = {
    # BestEffort minValues not relaxed when the pod's bound volume narrows the zone requirement: Karpenter created
    # the NodeClaim with one zone and minValues 2, and the CRD's CEL rule refused it (fixed by PR #3170)
    'nodeclaim-cel-min-values-best-effort': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/2999',
        'NodeClaim.karpenter.sh "monitoring-v8xgc" is invalid: spec.requirements: Invalid value: "array": \n'
        "requirements with 'minValues' must have at least that many values specified in the 'values' field\n",
        {'min-values'}, ('rejected NodeClaim monitoring-v8xgc', 'kubernetes-sigs/karpenter#3170',
                         'remove minValues', 'topology.kubernetes.io/zone'),
        ('lower minValues or widen the requirements', 'Lower the pod')),
    # the NodeClaim CRD of Karpenter before mid-2024 capped spec.requirements at 30; the stack's many template labels each added one (fixed by upgrading / fewer labels)
    'nodeclaim-requirement-cap-two-claims': Paste(
        'https://github.com/Panfactum/stack/issues/42',
        'creating node claim, NodeClaim.karpenter.sh \\"spot-8c7mc\\" is invalid: [spec.requirements: Too many:'
        ' 32: must have at most 30 items, <nil>: Invalid value: \\"null\\": some validation rules were not chec'
        'ked because the object was invalid; correct the existing errors to complete validation]; creating no'
        'de claim, NodeClaim.karpenter.sh \\"burstable-2l6cf\\" is invalid: [spec.requirements: Too many: 33: m'
        'ust have at most 30 items, <nil>: Invalid value: \\"null\\": some validation rules were not checked be'
        'cause the object was invalid; correct the existing errors to complete validation]\n',
        {'unsupported'}, ('32 requirements, above the 30', 'kubernetes-sigs/karpenter#1344', 'CRDs', ),
        ('Lower the pod', )),
    # the same cap quoted bare: the reporter deleted the NodePool's template labels to get under it
    'nodeclaim-requirement-cap-bare-crd-message': Paste(
        'https://github.com/Panfactum/stack/issues/60',
        'spec.requirements: Too many: #: must have at most 30 items\n',
        {'unsupported'}, ('rejected a NodeClaim', 'spec.template.metadata.labels', ),
        ()),
    # a blueprint's nodeSelector named labels its NodePools no longer set: the PR changed the pods' selectors
    'v1-unknown-label-stale-blueprint-selector': Paste(
        'https://github.com/awslabs/ai-on-eks/pull/112',
        '{"level":"ERROR","time":"2025-06-29T01:54:20.657Z","logger":"controller","message":"could not schedu'
        'le pod","commit":"0871602","controller":"provisioner","namespace":"","name":"","reconcileID":"17d376'
        'ac-10c7-4ff5-ab74-a0bc604ccd5c","Pod":{"name":"vllm-llama3-inf2-raycluster-pjskh-head-xszk2","namesp'
        'ace":"vllm"},"error":"incompatible with nodepool \\"x86-cpu-karpenter\\", daemonset overhead={\\"cpu\\":'
        '\\"1576m\\",\\"memory\\":\\"960Mi\\",\\"pods\\":\\"17\\"}, incompatible requirements, label \\"workload\\" does '
        'not have known values; incompatible with nodepool \\"inferentia-inf2\\", daemonset overhead={\\"cpu\\":\\'
        '"1832m\\",\\"memory\\":\\"1088Mi\\",\\"pods\\":\\"17\\"}, did not tolerate aws.amazon.com/neuron=\n',
        {'unknown-label', 'taint'}, ("change the pod's selector to the label they set now", 'aws.amazon.com/neuron', ),
        ()),
    # two NodeClaims nominated 15 minutes apart: the first never became a node (the GPU/inf2 capacity never came); the scheduler's 3 nodes are the old ones
    'renominated-nodeclaims-never-became-nodes': Paste(
        'https://github.com/awslabs/data-on-eks/issues/446',
        'Normal   Nominated          20m                 karpenter           Pod should schedule on: nodeclai'
        'm/default-x9bvr\nNormal   Nominated          4m50s               karpenter           Pod should sched'
        'ule on: nodeclaim/default-shq8s\nWarning  FailedScheduling   20s (x5 over 20m)   default-scheduler   '
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes "
        'are available: 3 Preemption is not helpful for scheduling.\nNormal   NotTriggerScaleUp  6s (x121 over'
        " 20m)  cluster-autoscaler  pod didn't trigger scale-up: 5 node(s) didn't match Pod's node affinity/s"
        'elector\n',
        {'node-filter'}, ('then nodeclaim/default-shq8s', 'never became a node', 'kubectl describe nodeclaim', ),
        ('keeps rejecting the pod (line 3), so the nominated node cannot take it', )),
    # EKS Auto Mode launching a node: DisruptionBlocked 'does not have an associated node' right after Launched is transient (the node was Ready a minute later)
    'auto-mode-disruption-blocked-while-launching': Paste(
        'https://github.com/aws/aws-cdk/pull/33373',
        '20m         Normal    Nominated                 pod/nginx-5869d7778c-52pzg        Pod should schedul'
        'e on: nodeclaim/general-purpose-87brc\n20m         Normal    Launched                  nodeclaim/gene'
        'ral-purpose-87brc   Status condition transitioned, Type: Launched, Status: Unknown -> True, Reason: '
        'Launched\n20m         Normal    DisruptionBlocked         nodeclaim/general-purpose-87brc   Nodeclaim'
        ' does not have an associated node\n19m         Normal    NodeHasSufficientPID      node/i-0322e9d8dd1'
        'b95a51          Node i-0322e9d8dd1b95a51 status is now: NodeHasSufficientPID\n19m         Normal    N'
        'odeAllocatableEnforced   node/i-0322e9d8dd1b95a51          Updated Node Allocatable limit across pod'
        's\n19m         Normal    NodeReady                 node/i-0322e9d8dd1b95a51          Node i-0322e9d8d'
        'd1b95a51 status is now: NodeReady\n19m         Normal    Ready                     node/i-0322e9d8dd1'
        'b95a51          Status condition transitioned, Type: Ready, Status: False -> True, Reason: KubeletRe'
        'ady, Message: kubelet is posting ready status\n',
        set(), ('has no Node yet', 'nothing to fix', ),
        ('not a Karpenter node', )),
    # a StatefulSet pod with 28 PVCs: every node, new ones too, exceeds its attach limit; Karpenter kept adding nodes
    'volumes-above-attach-limit-new-nodes-too': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/1857',
        '  Warning  FailedScheduling  45s (x2 over 55s)      default-scheduler  0/27 nodes are available: 21 '
        'node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}, 6 node(s) exceed max volume'
        ' count. preemption: 0/27 nodes are available: 21 Preemption is not helpful for scheduling, 6 No pree'
        'mption victims found for incoming pod.\n',
        {'node-filter', 'volume'}, ('by itself mounts more volumes', 'split the volumes', ),
        ()),
    # AKS NAP: the NodePool's status conditions say NodeClassReady False, NodeClassNotFound: its nodeClassRef names no AKSNodeClass, so it launches nothing
    'nodepool-status-nodeclass-not-found': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/1280',
        "status:\n  conditions:\n    - lastTransitionTime: '2025-12-02T17:01:18Z'\n      message: object is awai"
        'ting reconciliation\n      observedGeneration: 3\n      reason: AwaitingReconciliation\n      status: U'
        "nknown\n      type: NodeRegistrationHealthy\n    - lastTransitionTime: '2025-12-02T17:01:18Z'\n      me"
        "ssage: ''\n      observedGeneration: 3\n      reason: ValidationSucceeded\n      status: 'True'\n      t"
        "ype: ValidationSucceeded\n    - lastTransitionTime: '2025-12-02T17:34:55Z'\n      message: NodeClass n"
        "ot found on cluster\n      observedGeneration: 3\n      reason: NodeClassNotFound\n      status: 'False"
        "'\n      type: NodeClassReady\n    - lastTransitionTime: '2025-12-02T17:34:55Z'\n      message: NodeCla"
        "ssReady=False\n      observedGeneration: 3\n      reason: UnhealthyDependents\n      status: 'False'\n  "
        '    type: Ready\n',
        {'no-instance-type'}, ('does not exist', 'nodeClassRef', 'aksnodeclass', ),
        ('its node class its node class', )),
    # a DaemonSet's pod pinned to a node Karpenter had filled before the DaemonSet's requests were counted: only that node is short of room
    'daemonset-pod-one-node-short-no-preemption-tail': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/390',
        "`0/26 nodes are available: 1 Insufficient cpu, 22 node(s) didn't match Pod's node affinity/selector,"
        " 3 node(s) had taint {CriticalAddonsOnly: }, that the pod didn't tolerate.`\n",
        {'node-filter', 'taint'}, ("If the pod is a DaemonSet's", 'new node does not help it', 'system-node-critical', ),
        ()),
    # EKS node groups of CI got maxPods 17 from their instance type: the fix set eksctl's maxPodsPerNode to 110 (cilium/cilium#42894)
    'too-many-pods-in-pod-status-yaml': Paste(
        'https://github.com/cilium/cilium/issues/42816',
        '  status:\n    conditions:\n    - lastProbeTime: null\n      lastTransitionTime: "2025-11-14T10:20:04Z"'
        "\n      message: '0/3 nodes are available: 1 Too many pods, 2 node(s) didn''t match pod\n        affin"
        'ity rules. preemption: 0/3 nodes are available: 1 No preemption victims\n        found for incoming p'
        'od, 2 Preemption is not helpful for scheduling.\'\n      reason: Unschedulable\n      status: "False"\n '
        '     type: PodScheduled\n    phase: Pending\n    qosClass: BestEffort\n',
        {'node-filter'}, ('1 Too many pods', 'maxPodsPerNode', 'kubelet.maxPods', ),
        ('Lower the pod', )),
    # a DaemonSet's pod on t3.small nodes, which allow 11 pods each: the node it targets had no pod slot left
    'insufficient-pods-daemonset-t3-small': Paste(
        'https://github.com/aws-samples/eks-workshop/pull/1169',
        '  Type     Reason            Age                 From               Message\n  ----     ------       '
        '     ----                ----               -------\n  Warning  FailedScheduling  31m (x3 over 31m)  '
        " default-scheduler  0/3 nodes are available: 1 Insufficient pods, 2 node(s) didn't match node select"
        'or.\n  Warning  FailedScheduling  43s (x23 over 30m)  default-scheduler  0/3 nodes are available: 1 n'
        "ode(s) didn't match node selector, 2 Insufficient pods.\n",
        {'node-filter'}, ('Too many pods', "If the pod is a DaemonSet's", ),
        ()),
    # an early Karpenter left its karpenter.sh/not-ready taint on a node Ready for 40 minutes: a Karpenter bug, not the pod's tolerations
    'karpenter-not-ready-taint-left-on-node': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/644',
        'Warning  FailedScheduling  4m35s (x39 over 50m)  default-scheduler  0/5 nodes are available: 1 node('
        "s) had taint {karpenter.sh/not-ready: }, that the pod didn't tolerate, 4 node(s) didn't match node s"
        'elector.\n',
        {'node-filter', 'taint'}, ('karpenter.sh/not-ready', 'do not add a toleration', 'component that should remove it is failing', ),
        ('add a toleration (key: karpenter.sh/not-ready', )),
    # m6a.2xlarge launched in eu-central-1a and 1c while 1b had no offering for 3 hours: capacity in one zone, not the label the message also names
    'v15-offering-only-zone-out-of-capacity': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/8712',
        '"no instance type has the required offering, requirements=karpenter.k8s.aws/ec2nodeclass In [<nodecl'
        'ass-name>], \nkarpenter.k8s.aws/instance-family In [m6a], karpenter.k8s.aws/instance-size In [2xlarge'
        '], \nkarpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [<nodepool-name>], \nkubernet'
        'es.io/arch In [amd64], kubernetes.io/os In [linux], node.example.io/compute In [<nodepool-name>], \nt'
        'opology.kubernetes.io/zone In [eu-central-1b], resources={\\"cpu\\":\\"7780m\\",\\"memory\\":\\"30120Mi\\",\\'
        '"pods\\":\\"6\\"}; \nincompatible requirements, label \\"node.example.io/compute\\" does not have known va'
        'lues"\n',
        {'no-instance-type', 'unknown-label'}, ('is offered for the pod', 'none of them is offered right now', 'not the cause', ),
        ('if it were widened', 'alone leaves no instance type', )),
    # the title's message: the instance was created but never joined (NodeClaim Registered/Initialized Unknown), not a node Karpenter does not manage
    'nodeclaim-without-node-cannot-disrupt': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/7046',
        "Cannot disrupt NodeClaim: state node doesn't contain both a node and a nodeclaim\n",
        set(), ('has not joined the cluster', 'access entry', 'Registered condition', ),
        ('consolidation leaves it alone', )),
    # kube-scheduler 1.3's one line per node: the pet's volume pinned it to a zone whose nodes were full; 8 nodes added elsewhere did not help
    'fit-failure-per-node-lines-volume-zone-full': Paste(
        'https://github.com/kubernetes-retired/federation/issues/50',
        '$ kubectl describe  po cassandra-data-498\n<redacted for brevity>\nfit failure on node (kubernetes-min'
        'ion-group-cxmy): Insufficient CPU\nfit failure on node (kubernetes-minion-group-zc10): Insufficient C'
        'PU\nfit failure on node (kubernetes-minion-group-iyit): Insufficient CPU\nfit failure on node (kuberne'
        'tes-minion-group-nnhm): Insufficient CPU\nfit failure on node (kubernetes-minion-group-2k68): NoVolum'
        'eZoneConflict\nfit failure on node (kubernetes-minion-group-xfnx): Insufficient CPU\nfit failure on no'
        'de (kubernetes-minion-group-hbxt): Insufficient CPU\nfit failure on node (kubernetes-minion-group-srd'
        'l): Insufficient CPU\nfit failure on node (kubernetes-minion-group-fx7b): Insufficient CPU\n',
        {'node-filter', 'volume'}, ('8 Insufficient CPU', '1 NoVolumeZoneConflict', 'another zone does not help', ),
        ('Seen 8 times', )),
    # after the nomination the node count rose from 29 to 30 and the one new node had a volume node affinity conflict: Karpenter launched it outside the PV's zone, in a loop
    'nominated-node-lands-outside-volume-zone-loop': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5406',
        'Events:\n  Type     Reason            Age                   From               Message\n  ----     ---'
        '---            ----                  ----               -------\n  Warning  FailedScheduling  30m    '
        '               default-scheduler  0/29 nodes are available: 18 Insufficient cpu, 2 Too many pods, 21'
        ' Insufficient memory, 8 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}. pre'
        'emption: 0/29 nodes are available: 1 Insufficient cpu, 18 Insufficient memory, 3 No preemption victi'
        'ms found for incoming pod, 8 Preemption is not helpful for scheduling..\n  Normal   Nominated        '
        ' 30m                   karpenter          Pod should schedule on: machine/bottlerocket-prov-4m5qp\n  '
        'Warning  FailedScheduling  29m                   default-scheduler  0/30 nodes are available: 1 node'
        '(s) had volume node affinity conflict, 18 Insufficient cpu, 2 Too many pods, 21 Insufficient memory,'
        ' 8 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}. preemption: 0/30 nodes a'
        're available: 1 Insufficient cpu, 18 Insufficient memory, 3 No preemption victims found for incoming'
        ' pod, 9 Preemption is not helpful for scheduling..\n',
        {'node-filter', 'volume'}, ('most likely the one Karpenter launched for it', 'kubectl get nodeclaim -o wide', ),
        ('disagree on capacity', )),
    # the Karpenter example's only node group is tainted CriticalAddonsOnly for add-ons; the Karpenter pods ran without the toleration their chart carries by default
    'critical-addons-only-system-node-group': Paste(
        'https://github.com/terraform-aws-modules/terraform-aws-eks/issues/3211',
        'Warning  FailedScheduling  92s   default-scheduler  0/2 nodes are available: 2 node(s) had untolerat'
        'ed taint {CriticalAddonsOnly: true}. preemption: 0/2 nodes are available: 2 Preemption is not helpfu'
        'l for scheduling.\n',
        {'node-filter', 'taint'}, ('CriticalAddonsOnly reserves those nodes', 'operator: Exists', 'replace that default', ),
        ()),
    # moving the cluster to API_AND_CONFIG_MAP (access entries) left the Fargate pod execution role without its FARGATE_LINUX access entry, so the profile was blocked
    'fargate-profile-blocked-access-entries': Paste(
        'https://github.com/terraform-aws-modules/terraform-aws-eks/issues/2912',
        '  Warning  FailedScheduling  21s   fargate-scheduler  Misconfigured Fargate Profile: fargate profile'
        ' coredns blocked for new launches due to: Pod execution role is not found in auth config or does not'
        ' have all required permissions for launching fargate pods.\n',
        {'unsupported'}, ('FARGATE_LINUX', 'access entry', 'Fargate profile coredns is blocked', ),
        ('add a toleration', )),
    # Karpenter v0.6 bound the pod to its new GPU node before the NVIDIA device plugin advertised the GPU; the kubelet failed it OutOfnvidia.com/gpu (pre-binding dropped later)
    'kubelet-admission-out-of-gpu-prebound': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/1459',
        'riva-riva-api-768b77d764-74k4m   0/2     OutOfnvidia.com/gpu   0          5m55s\n',
        {'unsupported'}, ('rejected it at admission', 'device plugin', 'Karpenter before v0.11', 'delete it', ),
        ('Insufficient nvidia.com/gpu', )),
    # an early EKS cluster had no StorageClass: the operator's claims named none and stayed unbound until storageClassName was set
    'unbound-pvc-eks-without-storage-class': Paste(
        'https://github.com/instaclustr/cassandra-operator/issues/112',
        'Events:\n  Type     Reason            Age               From               Message\n  ----     ------ '
        '           ----              ----               -------\n  Warning  FailedScheduling  5s (x5 over 12s'
        ')  default-scheduler  pod has unbound PersistentVolumeClaims (repeated 4 times)\n',
        {'volume'}, ('names no StorageClass in a cluster without a default one', ),
        ('Insufficient', )),
    # the claims named StorageClass 'default', which did not exist; cluster-autoscaler's NotTriggerScaleUp quoting the VolumeBinding filter was read as a second scheduler's rejection
    'autoscaler-volumebinding-filter-unbound-claim': Paste(
        'https://github.com/scalar-labs/scalar-kubernetes/pull/117',
        'Events:\n  Type     Reason             Age                From                Message\n  ----     ----'
        '--             ----               ----                -------\n  Warning  FailedScheduling   53s (x2 '
        'over 54s)  default-scheduler   0/6 nodes are available: 6 pod has unbound immediate PersistentVolume'
        "Claims.\n  Normal   NotTriggerScaleUp  44s                cluster-autoscaler  pod didn't trigger scal"
        'e-up (it wouldn\'t fit if a new node is added): 2 running "VolumeBinding" filter plugin for pod "prom'
        'etheus-prometheus-prometheus-oper-prometheus-0": pod has unbound immediate PersistentVolumeClaims\n',
        {'node-filter', 'volume'}, ('did not make cluster-autoscaler add a node', 'StorageClass that does not exist', ),
        ('by the scheduler cluster-autoscaler', 'spec.schedulerName', )),
    # EKS 1.24 without the EBS CSI driver: the gp2 claims were never provisioned, so the scheduler's PreBind timed out
    'prebind-volumebinding-timeout-no-ebs-csi': Paste(
        'https://github.com/elastic/cloud-on-k8s/issues/6515',
        '{\n    "apiVersion": "v1",\n    "kind": "Event",\n    "count": 3,\n    "firstTimestamp": "2023-03-13T01:'
        '25:07Z",\n    "lastTimestamp": "2023-03-13T01:45:11Z", \n   "involvedObject": {\n        "apiVersion": '
        '"v1",\n        "kind": "Pod",\n        "name": "elasticsearch-wdrv-es-default-0",\n        "namespace":'
        ' "e2e-sdroq-mercury",\n    },\n    "message": "running PreBind plugin \\"VolumeBinding\\": binding volum'
        'es: timed out waiting for the condition",\n    "reason": "FailedScheduling",\n    "type": "Warning",\n '
        '   "source": {\n        "component": "default-scheduler"\n    }\n}\n',
        {'volume'}, ('binding volumes: timed out', 'EBS CSI driver', 'aws-ebs-csi-driver add-on', ),
        ('Insufficient', )),
    # the module's EKS cluster had only the in-tree gp2 class, not default, and no EBS CSI driver: claims without a class never bound
    'pvc-failedbinding-no-storage-class-set': Paste(
        'https://github.com/n8n-io/terraform-aws-n8n/issues/22',
        '$ kubectl describe pvc data-0\n...\n  Warning  FailedBinding  persistentvolumeclaim/data-0\n    no pers'
        'istent volumes available for this claim and no storage class is set\n',
        {'volume'}, ('names no storageClassName', 'no default StorageClass', 'aws-ebs-csi-driver', ),
        ()),
    # kubectl describe nodeclaim: Launched True, Registered Unknown (NodeNotFound): the instance ran but its node never joined
    'nodeclaim-conditions-node-not-registered': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/7738',
        'Conditions:\n    Last Transition Time:  2025-02-14T07:15:25Z\n    Message:               object is awa'
        'iting reconciliation\n    Observed Generation:   1\n    Reason:                AwaitingReconciliation\n'
        '    Status:                Unknown\n    Type:                  Initialized\n    Last Transition Time: '
        ' 2025-02-14T07:15:25Z\n    Message:               Node not registered with cluster\n    Observed Gener'
        'ation:   1\n    Reason:                NodeNotFound\n    Status:                Unknown\n    Type:     '
        '             Registered\n    Last Transition Time:  2025-02-14T07:15:27Z\n    Message:               \n'
        '    Observed Generation:   1\n    Reason:                Launched\n    Status:                True\n   '
        ' Type:                  Launched\n    Last Transition Time:  2025-02-14T07:15:25Z\n    Message:       '
        '        Initialized=Unknown, Registered=Unknown\n    Observed Generation:   1\n    Reason:            '
        '    ReconcilingDependents\n    Status:                Unknown\n    Type:                  Ready\n  Imag'
        'e ID:                ami-0262a19088a11e248\n  Provider ID:             aws:///ap-south-2b/i-0e593f835'
        'ff381a22\n',
        {'no-instance-type'}, ('never registered with the cluster', 'access entry', 'system log', ),
        ('fits the pod', )),
    # Karpenter v1 with a custom AMI: the node registered without karpenter.sh/unregistered, which v1 requires, so the NodeClaim never became registered
    'missing-unregistered-startup-taint-custom-ami': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/1635',
        'Error":"missing required startup taint, karpenter.sh/unregistered"\n',
        {'no-instance-type'}, ('register-with-taints=karpenter.sh/unregistered:NoExecute', 'amiFamily: Custom', ),
        ()),
    # the chart shipped a required node affinity on application/clickhouse=true that no node carried: remove it or label the nodes
    'chart-node-affinity-no-node-labelled': Paste(
        'https://github.com/liwenhe1993/charts/issues/1',
        'Warning  FailedScheduling  56s (x7 over 9m45s)  default-scheduler  0/6 nodes are available: 6 node(s'
        ") didn't match node selector.\n",
        {'node-filter'}, ("No node carries what the pod's spec.nodeSelector", 'kubectl get nodes --show-labels', ),
        ('Insufficient', )),
    # hwameistor's scheduler rejected the pod three times within a second (its volume published on one node, the other full), then assigned it: the rejections are not what keeps it
    'custom-scheduler-then-scheduled': Paste(
        'https://github.com/hwameistor/hwameistor/issues/1742',
        'Events:\n  Type     Reason              Age                  From                     Message\n  ---- '
        '    ------              ----                 ----                     -------\n  Warning  FailedSched'
        'uling    5m7s                 hwameistor-scheduler     0/2 nodes are available: 1 Insufficient cpu, '
        '1 Insufficient memory, 1 not the published node. preemption: 0/2 nodes are available: 2 No preemptio'
        'n victims found for incoming pod.\n  Warning  FailedScheduling    5m7s                 hwameistor-sch'
        'eduler     0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. preemption: 0/2 nodes'
        ' are available: 2 No preemption victims found for incoming pod..\n  Warning  FailedScheduling    5m6s'
        '                 hwameistor-scheduler     0/2 nodes are available: 1 Insufficient memory, 1 not the '
        'published node. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.'
        '\n  Normal   Scheduled           5m6s                 hwameistor-scheduler     Successfully assigned '
        'u-2ee2d2c6a504/ins-7mp9z-855486d9d-42gnl to controller-node-1\n',
        {'node-filter'}, ('scheduled in the end', 'hwameistor-scheduler', ),
        ()),
    # a Fargate-only cluster: CoreDNS pods created before the kube-system profile stayed with default-scheduler, which sees only tainted Fargate nodes (AWS's fix: restart; the module's: a toleration)
    'coredns-fargate-only-cluster-rollout': Paste(
        'https://github.com/langfuse/langfuse-terraform-aws/issues/47',
        '0/10 nodes are available: 10 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}'
        '. preemption: 0/10 nodes are available.\n',
        {'node-filter', 'taint'}, ('kubectl rollout restart deployment coredns', 'stay with default-scheduler', ),
        ()),
    # the title alone: CoreDNS on Fargate kept by default-scheduler (its eks.amazonaws.com/compute-type: ec2 annotation); the message names one taint without the 0/N head
    'coredns-fargate-taint-title-alone': Paste(
        'https://github.com/aws-ia/terraform-aws-eks-blueprints/issues/568',
        "1 node(s) had taint {eks.amazonaws.com/compute-type: fargate}, that the pod didn't tolerate.\n",
        {'node-filter', 'taint'}, ('eks.amazonaws.com/compute-type: ec2', 'Fargate profile, not a toleration', ),
        ()),
    # with instanceStorePolicy RAID0 Karpenter's ephemeral-storage allocatable exceeds the kubelet's; a request in that gap gets nodes launched that kube-scheduler refuses with Insufficient ephemeral-storage
    'lone-insufficient-ephemeral-storage-raid0': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/3253',
        '`Insufficient ephemeral-storage`\n',
        {'node-filter'}, ('Karpenter counts more ephemeral-storage than the kubelet reports', 'RAID0', ),
        ('Lower the pod', )),
    # EKS Auto Mode NodePool allowing t3.medium spot: Auto Mode's own instance filter (no 1-vCPU, nano, micro or small types) and an insufficient-capacity error for t3.medium in one zone left nothing
    'auto-mode-no-compatible-instance-types': Paste(
        'https://github.com/aws/containers-roadmap/issues/2533',
        '`Warning  NoCompatibleInstanceTypes  4s    karpenter  NodePool requirements filtered out all compati'
        'ble available instance types\n`\n',
        {'no-instance-type'}, ('EKS Auto Mode', 'more than one vCPU', 'insufficient-capacity', ),
        ('Lower the pod', 'too big', )),
    # scale-in blocked: the tiller pod fit on no other node because every other node was at its pod limit (EKS max pods per instance type), as the maintainer answered
    'autoscaler-scale-down-insufficient-pods': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1576',
        'I0113 03:43:30.105993       1 cluster.go:222] Evaluation ip-192-168-75-46.us-east-2.compute.internal'
        ' for test/tiller-deploy-7b584bf689-vzbn4 -> PodFitsResources predicate mismatch, reason: Insufficien'
        't pods\nI0113 03:43:30.106018       1 cluster.go:222] Evaluation ip-192-168-84-242.us-east-2.compute.'
        'internal for test/tiller-deploy-7b584bf689-vzbn4 -> PodFitsResources predicate mismatch, reason: Ins'
        'ufficient pods\nI0113 03:43:30.106085       1 cluster.go:222] Evaluation ip-192-168-41-162.us-east-2.'
        'compute.internal for test/tiller-deploy-7b584bf689-vzbn4 -> PodFitsResources predicate mismatch, rea'
        'son: Insufficient pods\nI0113 03:43:30.106106       1 cluster.go:126] Fast evaluation: node ip-192-16'
        '8-2-214.us-east-2.compute.internal is not suitable for removal: failed to find place for test/tiller'
        '-deploy-7b584bf689-vzbn4\n',
        {'node-filter'}, ('maxPods', 'failed to find place', 'keeps node ip-192-168-2-214', ),
        ('did not make cluster-autoscaler add a node', )),
    # a single spot provisioner on v0.31: consolidation could only delete spot nodes (spot-to-spot replacement came with v0.34's feature gate), and deleting this one needed 2 new nodes
    'unconsolidatable-spot-to-spot-before-v034': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4812',
        '$ kubectl describe nodes <spot-node-name>\nEvents:\n  Type    Reason            Age                  F'
        'rom       Message\n  ----    ------            ----                 ----       -------\n  Normal  Unco'
        "nsolidatable  31m (x6 over 127m)   karpenter  Can't remove without creating 2 candidates\n  Normal  U"
        "nconsolidatable  14m (x6 over 3h25m)  karpenter  Can't replace a spot node with a spot node\n",
        set(), ('never replaces a spot node by another spot node', 'SpotToSpotConsolidation', '2 new nodes', ),
        ()),
    # Strapi pending for hours with CPU and memory free: the node's ENI / IP pod limit, fixed with prefix delegation
    'too-many-pods-describe-wrapped-after-colon': Paste(
        'https://peter-notes.pages.dev/posts/eks-pod-pending-too-many-pods',
        'Events:\nType Reason Age From Message\n---- ------ ---- ---- -------\nWarning FailedScheduling 3h defau'
        'lt-scheduler 0/1 nodes are available:\n1 Too many pods.\n',
        {'node-filter'}, ('1 Too many pods', 'maxPods', ),
        ('Insufficient cpu', )),
}
# Not counted in the sweep (their threads are cited elsewhere): the same fault as its thread really shows it
REGRESSIONS: dict[str, Paste] = {
    # the label is spelled as meant and is one of the pod's nodeSelectorTerms that only the stable pool sets; that
    # pool was at its limits (checked before the pod's requirements); Karpenter's "typo of" is a suffix match
    'typo-guess-is-karpenters-stable-pool-at-limits': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/2123',
        '{"level":"ERROR","time":"2025-04-04T10:15:40.110Z","logger":"controller","caller":"provisioning/provisioner.go:'
        '350","message":"could not schedule pod","controller":"provisioner","namespace":"","name":"","reconcileID":'
        '"9aec5d56-039d-4b85-bcbd-78e58bfef269","Pod":{"name":"nginx-565d69d9cd-g5fkp","namespace":"default"},"error":'
        '"incompatible with nodepool \\"worker-multi-az-xxlarge\\", daemonset overhead={\\"cpu\\":\\"681m\\",\\"memory\\":'
        '\\"652Mi\\",\\"pods\\":\\"11\\"}, incompatible requirements, label \\"node-role.kaas.acquia.io/stable\\" does '
        'not have known values (typo of \\"acquia.io/stage\\"?); incompatible with nodepool \\"webeip-multi-az-large\\", '
        'daemonset overhead={\\"cpu\\":\\"656m\\",\\"memory\\":\\"652Mi\\",\\"pods\\":\\"11\\"}, did not tolerate '
        'kaas.acquia.io/pool=web-eip:NoSchedule; all available instance types exceed limits for nodepool: '
        '\\"stable-multi-az-xxlarge\\"; incompatible with nodepool \\"kb-demo\\", daemonset overhead={\\"cpu\\":\\"681m\\",'
        '\\"memory\\":\\"652Mi\\",\\"pods\\":\\"10\\"}, incompatible requirements, label \\"node-role.kaas.acquia.io/'
        'stable\\" does not have known values (typo of \\"acquia.io/stage\\"?)"}\n',
        {'unknown-label', 'limits'}, ('Karpenter adds a guess', 'ignore the guess',
                                      'NodePool "stable-multi-az-xxlarge" was never compared with the pod',
                                      'nodeSelectorTerms'),
        ('Karpenter suggests you meant', 'check the spelling')),
    # the same, cut where the thread's first quote of it is cut: the guess stays Karpenter's
    'typo-guess-cut-line': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/2123',
        '"error":"incompatible with nodepool \\"worker-multi-az-xxlarge\\", daemonset overhead={\\"cpu\\":\\"681m\\",'
        '\\"memory\\":\\"652Mi\\",\\"pods\\":\\"11\\"}, incompatible requirements, label \\"node-role.kaas.acquia.io/'
        'stable\\" does not have known values (typo of \\"acquia.io/stage\\"?); incompa…\n',
        {'unknown-label'}, ('Karpenter adds a guess', 'spelled as intended'),
        ('Karpenter suggests you meant',)),
}
ALL = {**PASTES, **REGRESSIONS}


@pytest.fixture(scope="module")
def load() -> CatalogFor:
    return catalog_loader(None, None)


@pytest.mark.parametrize("name", sorted(ALL))
def test_real_paste(name: str, load: CatalogFor) -> None:
    check_paste(ALL[name], load)


def test_the_sweep_cites_threads_not_cited_before() -> None:
    """Each thread once, and none the earlier sweeps cite."""
    check_new_threads(PASTES.values(), __file__)


def _no_type_line(requirements: str, zones: str) -> str:
    return ('{"level":"ERROR","time":"2025-06-02T10:00:00.000Z","logger":"controller","message":"could not schedule '
            'pod","Pod":{"name":"web-1","namespace":"shop"},"error":"incompatible with nodepool \\"default\\", daemonset '
            'overhead={\\"cpu\\":\\"200m\\",\\"memory\\":\\"256Mi\\",\\"pods\\":\\"3\\"}, no instance type met the '
            'scheduling requirements or had a required offering, requirements=karpenter.sh/capacity-type In [on-demand], '
            f'karpenter.sh/nodepool In [default], {requirements}, topology.kubernetes.io/zone In [{zones}], '
            'resources={\\"cpu\\":\\"1200m\\",\\"memory\\":\\"1256Mi\\",\\"pods\\":\\"4\\"}"}\n')


@pytest.mark.parametrize("requirement", ["node.kubernetes.io/instance-type In [c7i.xlarge]",
                                         "karpenter.k8s.aws/instance-family In [c7i m7i]"])
def test_a_type_the_regions_catalog_lacks_is_the_catalogs_gap(requirement: str, load: CatalogFor) -> None:
    """eu-west-2's embedded prices are older than c7i: the requirement is not to be widened nor said to match
    nothing; the answer names the gap and the catalog to give."""
    explanation = explain_text(_no_type_line(requirement, "eu-west-2a eu-west-2b"))
    enrich(explanation, load)
    told = explanation.item_list()[0].plain
    assert "the embedded eu-west-2 catalog lacks" in told and "--catalog FILE" in told, told
    assert "matches nothing" not in told and "if it were widened" not in told, told
    # the same requirement in us-east-1, whose catalog has the types: no gap is claimed
    explanation = explain_text(_no_type_line(requirement, "us-east-1a us-east-1b"))
    enrich(explanation, load)
    assert "catalog lacks" not in explanation.item_list()[0].plain


def test_a_lacking_type_beside_a_zone_the_region_lacks(load: CatalogFor) -> None:
    """The thread's own line (kubernetes-sigs/karpenter#3272): c7g.medium is the catalog's gap, eu-west-2z the real
    fault; each is said as what it is."""
    explanation = explain_text(_no_type_line("node.kubernetes.io/instance-type In [c7g.medium]", "eu-west-2z"))
    enrich(explanation, load)
    told = explanation.item_list()[0].plain
    assert "c7g.medium, which the embedded eu-west-2 catalog lacks" in told, told
    assert "This requirement alone matches nothing in the eu-west-2 catalog: topology.kubernetes.io/zone In [eu-west-2z]" \
        in told, told


def test_other_nodeclaim_rejections_name_the_crd_rule() -> None:
    """The CRD's 30-requirement cap of Karpenter before mid-2024 (Panfactum/stack#42's log line), and a rule this
    module has no wording for: both say the claim was refused, so no node came."""
    capped = explain_text('{"level":"ERROR","time":"2024-05-29T22:07:31.187Z","logger":"controller.provisioner",'
                          '"message":"creating node claim, NodeClaim.karpenter.sh \\"burstable-9ns7l\\" is invalid: '
                          '[spec.requirements: Too many: 33: must have at most 30 items, <nil>: Invalid value: '
                          '\\"null\\": some validation rules were not checked because the object was invalid; correct '
                          'the existing errors to complete validation]","commit":"fb4d75f"}\n').item_list()
    assert capped and "33 requirements, above the 30" in capped[0].plain and "CRDs" in capped[0].plain
    other = explain_text('creating node claim, NodeClaim.karpenter.sh "default-x1" is invalid: spec.requirements: '
                         "Invalid value: \"array\": requirements with operator 'In' must have a value defined\n").item_list()
    assert other and "rejected NodeClaim default-x1" in other[0].plain


def test_k9s_box_rows_that_each_start_a_log_line_stay_apart() -> None:
    """k9s draws empty columns after each row (`... │   │   ││`); a row that starts a klog line of its own is not the
    wrapped tail of the row before (nebari-dev/nebari#620's cluster-autoscaler log): one item per pod."""
    row = ("│ I0531 15:57:57.611016       1 pod_schedulable.go:165] Pod {pod} can't be scheduled on eks-86bcda3b-58c2, "
           "predicate failed: GeneralPredicates predicate mismatch, reason: node(s) didn't match Pod's node "
           "affinity/selector │                      │                           ││\n")
    items = explain_text(row.format(pod="qhub-conda-store-d866b59ff-zwqmt") + row.format(pod="hub-7c44495548-fqhgx")
                         ).item_list()
    assert sorted(i.parsed.pod or "" for i in items) == ["hub-7c44495548-fqhgx", "qhub-conda-store-d866b59ff-zwqmt"]
    assert all("│" not in i.plain for i in items), [i.plain for i in items]


def test_a_gpu_pod_whose_allowed_types_the_region_lacks_is_not_told_they_offer_no_gpu(load: CatalogFor) -> None:
    """aws/karpenter-provider-aws#5527's g5 line explained with `--region ap-northeast-1`, whose embedded prices
    predate g5: every g5 has an A10G, yet the answer said "no type the requirements allow offers it [nvidia.com/gpu],
    though these would: g5g.xlarge" (arm64). The allowed types are the catalog's gap, and it says that instead."""
    line = _no_type_line("node.kubernetes.io/instance-type In [g5.4xlarge g5.8xlarge]",
                         "ap-northeast-1a ap-northeast-1c").replace(
        'resources={\\"cpu\\":\\"1200m\\"', 'resources={\\"nvidia.com/gpu\\":\\"1\\",\\"cpu\\":\\"1200m\\"')
    explanation = explain_text(line)
    enrich(explanation, load)
    told = explanation.item_list()[0].plain
    assert "which the embedded ap-northeast-1 catalog lacks" in told, told
    assert "offers it" not in told and "g5g" not in told, told
