"""explain on a third sweep of messages pasted in public issue threads (session 16), none cited elsewhere in tests/,
each with the cause its thread established: kube-scheduler from 1.4's `failed to fit in any node` to 1.31's
`preemption: ...`, cluster-autoscaler of every era, fargate-scheduler, Karpenter v0.x to v1.5+, and the envelopes
(k9s boxes, describe tables, get events rows, prose) they are pasted in.

Every message is copied as its thread shows it. `says` are words the answer must contain for the established cause;
`never` the misdiagnosis or misreading the code before this sweep gave (or one a reader would take for the fix).
"""

from __future__ import annotations

import pytest
from explain_pastes import Paste, check_new_threads, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader

PASTES = {
    # 1.8-era predicate list with a doubled colon: the cluster had no room left for the workflow pods
    'predicates-double-colon-argo': Paste(
        'https://github.com/argoproj/argo-workflows/issues/190',
        "  2h\t\t48m\t\t7\tdefault-scheduler\t\t\tWarning\t\tFailedScheduling\tNo nodes are available that match all of the following predicates:: Insufficient cpu (9), Insufficient memory (15), MatchNodeSelector (18).\n",
        {'node-filter'}, ('9 Insufficient cpu', '15 Insufficient memory', 'counts requests, not use'),
        ('9 :', ': Insufficient')),
    # 1.4: a stale scheduler cache / a pod asking all 4 CPUs of 4-vCPU nodes (allocatable is below capacity)
    'fit-failure-per-node-1-4': Paste(
        'https://github.com/kubernetes/kubernetes/issues/37232',
        "Events:\n  FirstSeen\tLastSeen\tCount\tFrom\t\t\tSubobjectPath\tType\t\tReason\t\t\tMessage\n  ---------\t--------\t-----\t----\t\t\t-------------\t--------\t------\t\t\t-------\n  3m\t\t3m\t\t2\t{default-scheduler }\t\t\tWarning\t\tFailedScheduling\tpod (jenkins-master-645022479-ov9ka) failed to fit in any node\nfit failure on node (gke-warpdrive-default-pool-eae1f3b0-spgr): Insufficient cpu\nfit failure on node (gke-warpdrive-default-pool-eae1f3b0-jitr): Insufficient cpu\nfit failure on node (gke-warpdrive-default-pool-eae1f3b0-3qqu): Insufficient cpu\nfit failure on node (gke-warpdrive-default-pool-eae1f3b0-530e): Insufficient cpu\n",
        {'node-filter'}, ('4 Insufficient cpu', 'Allocatable is below its capacity'),
        ()),
    # 1.4 upgrade: the scheduler counted requests of pods already gone; the message in backticks, double colon
    'predicates-double-colon-backticks': Paste(
        'https://github.com/kubernetes/kubernetes/issues/34920',
        "`No nodes are available that match all of the following predicates:: Insufficient cpu (3)`\n",
        {'node-filter'}, ('3 Insufficient cpu', 'Allocated resources'),
        ('3 :',)),
    # a VM asking more memory than the single node had left
    'harvester-insufficient-memory-preemption': Paste(
        'https://github.com/harvester/harvester/issues/3136',
        "0/1 nodes are available: 1 Insufficient memory. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.\n",
        {'node-filter'}, ('1 Insufficient memory', 'counts requests, not use'),
        ('No preemption victims found for incoming pod;',)),
    # the GPU was never advertised: the device plugin had not registered nvidia.com/gpu on the node
    'gpu-not-advertised': Paste(
        'https://github.com/NVIDIA/k8s-device-plugin/issues/430',
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..\n",
        {'node-filter'}, ('device plugin', 'registered'),
        ("lower the pod's requests",)),
    # the claim existed; the message was stale (the pod started after several minutes)
    'fargate-pvc-not-found-stale': Paste(
        'https://github.com/aws/containers-roadmap/issues/1382',
        "Events:\n  Type     Reason            Age    From               Message\n  ----     ------            ----   ----               -------\n  Warning  FailedScheduling  5m43s  fargate-scheduler  Pod not supported on Fargate: volumes not supported: persistence not supported because: persistentvolumeclaim \"test-pvc\" not found\n",
        {'unsupported'}, ('the message is stale', 'delete the pod'),
        ('Drop the field',)),
    # cluster-autoscaler before 1.16 said `max limit reached` for a node group at its max size
    'ca-old-max-limit-reached': Paste(
        'https://github.com/kubernetes/autoscaler/issues/3268',
        "I0702 12:46:14.945401       1 event.go:209] Event(v1.ObjectReference{Kind:\"Pod\", Namespace:\"default\", Name:\"hello-world-699d84fcc5-7c4pr\", UID:\"5c8782a9-0d02-4863-abc1-575ff64de782\", APIVersion:\"v1\", ResourceVersion:\"99786677\", FieldPath:\"\"}): type: 'Normal' reason: 'NotTriggerScaleUp' pod didn't trigger scale-up (it wouldn't fit if a new node is added): 1 max limit reached\n",
        {'limits'}, ('raise the max size',),
        ('no node group\'s template node would take it',)),
    # the nodes ran out of pod IPs (Insufficient pods) and one of memory
    'insufficient-pods-ips-in-prose': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1218',
        "Then I stressed the cluster to run out of resources - the error in kube on the pod is `0/2 nodes are available: 1 Insufficient memory, 2 Insufficient pods.` . IPs have ran out on both nodes, and memory on one:\n",
        {'node-filter'}, ('maxPods', 'ENI / IP limit'),
        ()),
    # a pasted v0.9 line that stops inside the capacity-type list: nothing in it says the types are too small
    'karpenter-v09-line-cut-in-a-list': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/1783',
        '2022-05-09T20:04:37.981Z\tERROR\tcontroller\tno instance type satisfied resources {"cpu":"1","pods":"1"} and requirements karpenter.sh/provisioner-name In [omo-karpenter], karpenter.sh/capacity-type In [',
        {'no-instance-type'}, ('karpenter.sh/capacity-type In […]', "the pod's size is not the cause"),
        ('alone leaves no instance type', 'In []')),
    # v0.31 with security groups for pods: the pod asks vpc.amazonaws.com/pod-eni, counted only with aws.enablePodENI
    'karpenter-v031-pod-eni': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5156',
        '**Events**\n`incompatible with provisioner "dev-ops", daemonset overhead={"cpu":"180m","memory":"120Mi","pods":"3"}, no instance type satisfied resources {"cpu":"530m","memory":"1272Mi","pods":"4","vpc.amazonaws.com/pod-eni":"1"} and requirements env In [dev], karpenter.sh/capacity-type In [on-demand], karpenter.sh/provisioner-name In [dev-ops], kubernetes.io/arch In [amd64], kubernetes.io/os In [linux], node.kubernetes.io/instance-type In [c6i.2xlarge c6i.4xlarge c6i.large c6i.xlarge m6i.large and 2 others], topology.kubernetes.io/zone In [ap-northeast-2a], type In [service] (no instance type has enough resources);`\n',
        {'no-instance-type'}, ('aws.enablePodENI=true', 'branch-interface limit'),
        ('lower the requests',)),
    # kube-scheduler 1.6's summary line: the EBS volume's zone had no schedulable node
    'fit-failure-summary-volume-zone': Paste(
        'https://github.com/kubernetes/kops/issues/3235',
        'E0912 21:15:18.306924       5 factory.go:583] Error scheduling default mongo-mongodb-2769490052-cjh94: pod (mongo-mongodb-2769490052-cjh94) failed to fit in any node\nfit failure summary on nodes : NoVolumeZoneConflict (3), PodToleratesNodeTaints (3); retrying\n',
        {'node-filter', 'volume'}, ('3 NoVolumeZoneConflict', 'a volume never moves'),
        ()),
    # two existing EBS volumes in different zones: no node can mount both
    'two-volumes-two-zones': Paste(
        'https://github.com/kubeflow/kubeflow/issues/7109',
        '> `0/3 nodes are available: 1 Insufficient memory, 1 Too many pods, 1 node(s) had volume node affinity conflict. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.`\n',
        {'node-filter', 'volume'}, ('two in different zones fit no node at all',),
        ()),
    # the early EBS CSI driver: nodes lacked its topology label, so its PVs matched no node
    'ebs-csi-topology-label': Paste(
        'https://github.com/kubernetes-sigs/aws-ebs-csi-driver/issues/107',
        "```\nEvents:\n  Type     Reason            Age                From               Message\n  ----     ------            ----               ----               -------\n  Warning  FailedScheduling  8m (x35 over 18m)  default-scheduler  0/2 nodes are available: 2 node(s) had volume node affinity conflict.\n```\n",
        {'volume'}, ('topology.ebs.csi.aws.com/zone', 'kubectl get csinode'),
        ()),
    # cluster-autoscaler: the zone-pinned volume needs a node group in its zone with the pod's labels
    'ca-volume-zone-node-groups': Paste(
        'https://github.com/aerospike/aerospike-kubernetes-operator/issues/80',
        "  Normal   NotTriggerScaleUp  10s (x18 over 10m)  cluster-autoscaler  pod didn't trigger scale-up (it wouldn't fit if a new node is added): 1 node(s) had volume node affinity conflict, 2 node(s) didn't match node selector\n",
        {'volume'}, ('one autoscaling group per zone',),
        ()),
    # CA's own max for the group (--nodes=1:10:...) was below the autoscaling group's MaxSize of 50
    'ca-skipping-group-max-size': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1537',
        "> I1227 10:48:22.745330       1 scale_up.go:61] 30 other pods are also unschedulable\nI1227 10:48:22.915535       1 scale_up.go:92] Upcoming 0 nodes\nI1227 10:48:23.118126       1 scale_up.go:116] Skipping node group nodes.XXXXXXXX - max size reached\nI1227 10:48:23.118148       1 scale_up.go:186] No expansion options\n",
        {'limits'}, ('Node group nodes.XXXXXXXX', '--nodes=<min>:<max>:<group>', 'cluster-autoscaler-status'),
        ()),
    # the machine deployment's autoscaler max (2) was reached though the user meant 5
    'ca-max-node-group-size-magnum': Paste(
        'https://github.com/vexxhost/magnum-cluster-api/issues/309',
        "  Normal   TriggeredScaleUp   2m2s   cluster-autoscaler  pod triggered scale-up: [{MachineDeployment/magnum-system/kube-c9d9y-default-worker-wkqwc 1->2 (max: 2)}]\n  Normal   NotTriggerScaleUp  110s   cluster-autoscaler  pod didn't trigger scale-up: 1 max node group size reached\n",
        {'limits'}, ('raise the max size',),
        ()),
    # a one-node cluster: the StatefulSet's second replica is kept off the node its first runs on
    'one-node-anti-affinity-statefulset': Paste(
        'https://github.com/nacos-group/nacos-k8s/issues/328',
        "0/1 nodes are available: 1 node(s) didn't match pod affinity/anti-affinity, 1 node(s) didn't match pod anti-affinity rules.\n",
        {'topology'}, ('spec.affinity.podAntiAffinity', 'it needs another node or zone'),
        ("lower the pod's requests",)),
    # the workshop's third checkout replica: anti-affinity with the other two, affinity to redis on the third node
    'affinity-and-anti-affinity-in-prose-elided': Paste(
        'https://github.com/aws-samples/eks-workshop-v2/pull/427',
        'Events for pending pod: "1 node(s) didn\'t match pod affinity rules...that the pod didn\'t tolerate, 2 node(s) didn\'t match pod anti-affinity rules."\n',
        {'topology'}, ('spec.affinity.podAffinity', 'spec.affinity.podAntiAffinity'),
        ()),
    # the GPU autoscaling group at zero nodes: its template offers no nvidia.com/gpu without the resources tag
    'ca-gpu-template-backticks': Paste(
        'https://github.com/kubernetes/autoscaler/issues/2506',
        "```event.go:209] Event(v1.ObjectReference{Kind:\"Pod\", Namespace:\"default\", Name:\"gpu3-5vrjp\", UID:\"cf6affef-fc40-11e9-ab2d-12c6abee5b20\", APIVersion:\"v1\", ResourceVersion:\"180529\", FieldPath:\"\"}): type: 'Normal' reason: 'NotTriggerScaleUp' pod didn't trigger scale-up (it wouldn't fit if a new node is added): 6 Insufficient nvidia.com/gpu```\n",
        {'node-filter'}, ('k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu;', 'Pod default/gpu3-5vrjp'),
        ('gpu```',)),
    # the CI runner pods: two groups too small, the one that would fit at its max (old wording)
    'ca-too-small-and-max-limit': Paste(
        'https://github.com/kubernetes/autoscaler/issues/2148',
        "I0630 05:08:40.068086       1 factory.go:33] Event(v1.ObjectReference{Kind:\"Pod\", Namespace:\"gitlab\", Name:\"runner-mzzfrpqb-project-6-concurrent-98srx2\", UID:\"8fc4bdd1-9af4-11e9-a1d4-06346ba69dd2\", APIVersion:\"v1\", ResourceVersion:\"4291547\", FieldPath:\"\"}): type: 'Normal' reason: 'NotTriggerScaleUp' pod didn't trigger scale-up (it wouldn't fit if a new node is added): 2 Insufficient cpu, 2 Insufficient memory, 1 max limit reached\n",
        {'limits', 'node-filter'}, ('raise the max size', 'too small for the pod'),
        ()),
    # the group's single instance type had less allocatable CPU than the pod asked
    'ca-insufficient-cpu-capitalised': Paste(
        'https://github.com/kubernetes/autoscaler/issues/2749',
        "CA failed on 'pod didn't trigger scale-up (it wouldn't fit if a new node is added): 1 Insufficient CPU.\n",
        {'node-filter'}, ('too small for the pod', 'larger instance type'),
        ()),
    # kubespray: the CNI had not come up, so every node stayed NotReady (tainted not-ready)
    'not-ready-taint-no-cni': Paste(
        'https://github.com/kubernetes-sigs/kubespray/issues/9989',
        'kubernetes-dashboard 0/3 nodes are available: 3 node(s) had untolerated taint {node.kubernetes.io/not-ready: }\n',
        {'taint'}, ('do not add a toleration', 'CNI'),
        ()),
    # a single-node kubeadm cluster: its only node carried the master taint
    'unnamed-taints-single-master': Paste(
        'https://github.com/kubernetes/kubernetes/issues/85625',
        "Warning FailedScheduling 20s (x5 over 4m27s) default-scheduler 0/1 nodes are available: 1 node(s) had taints that the pod didn't tolerate.\n",
        {'node-filter'}, ('node-role.kubernetes.io/control-plane', 'does not name the taints'),
        ()),
    # coredns replicas kept apart by anti-affinity on three nodes already running one each
    'existing-pods-anti-affinity-coredns': Paste(
        'https://github.com/kubernetes-sigs/kubespray/issues/4101',
        "Warning FailedScheduling 0s (x20 over 53s) default-scheduler 0/3 nodes are available: 3 node(s) didn't match pod affinity/anti-affinity, 3 node(s) didn't satisfy existing pods anti-affinity rules.\n",
        {'topology'}, ('existing pods anti-affinity', 'it needs another node or zone'),
        ("lower the pod's requests",)),
    # a t3.medium takes 17 pods (ENI / IP limit); the message on the lines under the event
    'too-many-pods-t3-medium-wrapped-event': Paste(
        'https://engineering.mypie.io/2026/04/03/eks-pod-capacity/',
        "Events:\n  Warning  FailedScheduling  14m  default-scheduler\n    0/1 nodes are available: 1 Too many pods.\n    preemption: 0/1 nodes are available: 1 No preemption victims found.\n",
        {'node-filter'}, ('ENI / IP limit', 'prefix delegation'),
        ("lower the pod's requests",)),
    # t2.medium nodes (2 vCPU): the client's CPU request fit none of them
    'insufficient-cpu-invalid-age': Paste(
        'https://github.com/pires/kubernetes-elasticsearch-cluster/issues/178',
        "  Warning  FailedScheduling  <invalid> (x7 over 26s)  default-scheduler  0/5 nodes are available: 5 Insufficient cpu.\n",
        {'node-filter'}, ('5 Insufficient cpu', 'Allocatable is below its capacity'),
        ()),
    # no local PV matched the claim (the static provisioner had not created one); a shell prompt cut the paste
    'no-pv-to-bind-terminal-garbage': Paste(
        'https://github.com/kubernetes-sigs/sig-storage-local-static-provisioner/issues/424',
        " Warning  FailedScheduling  7s    default-scheduler  0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind. preemption: 0/1 nodes are available: 1 Preemption is not helpful for sched\n(base) [root@dingo209 admin]# ls                                                                                                                                                                                     \u2502uling.\n",
        {'volume'}, ('no existing PersistentVolume matches it',),
        ("lower the pod's requests",)),
    # the local-PV driver published no CSIStorageCapacity on 1.21, so every node looked full
    'not-enough-free-storage-capacity-tracking': Paste(
        'https://github.com/openebs-archive/device-localpv/issues/36',
        "Events:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  16s   default-scheduler  0/4 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate, 3 node(s) did not have enough free storage.\n  Warning  FailedScheduling  14s   default-scheduler  0/4 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate, 3 node(s) did not have enough free storage.\n",
        {'volume', 'taint'}, ('CSIStorageCapacity', 'storageCapacity: true'),
        ()),
    # Rancher 1.x: the Kubernetes hosts had not registered as nodes, so the scheduler had none (klog event line)
    'no-nodes-klog-event-rancher': Paste(
        'https://github.com/rancher/rancher/issues/6926',
        "12/6/2016 1:24:29 PMI1206 12:24:29.656195       1 event.go:217] Event(api.ObjectReference{Kind:\"Pod\", Namespace:\"vgcomputers\", Name:\"letsencrypt-client-4161631106-0gndm\", UID:\"ec77699a-bbae-11e6-8e12-eee5cb3b7b3a\", APIVersion:\"v1\", ResourceVersion:\"5056\", FieldPath:\"\"}): type: 'Warning' reason: 'FailedScheduling' no nodes available to schedule pods\n",
        {'node-filter'}, ('no node to consider at all', 'Pod vgcomputers/letsencrypt-client-4161631106-0gndm'),
        ()),
    # kube-scheduler 1.4's event alone says no reason (the thread: the message is not useful)
    'failed-to-fit-event-alone-1-4': Paste(
        'https://github.com/kubernetes/kubernetes/issues/9207',
        "```\n  FirstSeen\tLastSeen\tCount\tFrom\t\t\tSubobjectPath\tType\t\tReason                                                                          Message\n  ---------\t--------\t-----\t----\t\t\t-------------\t--------\t------                                                                          -------\n  51m\t\t37m\t\t50\t{default-scheduler }\t\t\tWarning\t\tFailedScheduling                                                                        pod (loudmail-deployment-1671311517-s1nb9) failed to fit in any node\n```\n",
        {'node-filter'}, ('gave its reasons only on the lines under this event', 'Allocatable'),
        ()),
    # a managed node group: the pod's node affinity label was not on the group's template (scaled to zero)
    'ca-predicate-line-cut-affinity': Paste(
        'https://github.com/kubernetes/autoscaler/issues/5319',
        "I1118 13:32:36.868201       1 scale_up.go:300] Pod podinfo-79c4469b46-jg6mc can't be scheduled on eks-test-one-app-two-ng-aac242cc-8048-1b87-0493-dc987d8aebb8, predicate checking error: node(s) didn't match Pod's node affinity/selector; predicateNam\n",
        {'node-filter'}, ('Node group eks-test-one-app-two-ng-aac242cc-8048-1b87-0493-dc987d8aebb8', 'node-template/label'),
        ('predicateNam',)),
    # EKS AL2023 NVIDIA AMI: the GPU node advertised no nvidia.com/gpu until the device plugin was installed
    'gpu-al2023-no-device-plugin': Paste(
        'https://github.com/awslabs/amazon-eks-ami/issues/2342',
        "  **Warning  FailedScheduling   2m28s (x8 over 7m47s)   default-scheduler   0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling.**               \n",
        {'node-filter'}, ('do not run the device plugin', 'under Allocatable'),
        ("lower the pod's requests", '**')),
    # 1.8: device plugins were alpha (DevicePlugins feature gate), so no node advertised nvidia.com/gpu
    'gpu-1-8-predicate-names': Paste(
        'https://github.com/NVIDIA/k8s-device-plugin/issues/22',
        "0/3 nodes are available: 1 PodToleratesNodeTaints, 3 Insufficient nvidia.com/gpu.\n",
        {'node-filter'}, ('3 Insufficient nvidia.com/gpu', 'plugin registers'),
        ()),
    # the node group label's value differed from the pod's nodeSelector (eks.amazonaws.com/nodegroup)
    'selector-nodegroup-name-describe': Paste(
        'https://github.com/klothoplatform/klotho/issues/553',
        "Node-Selectors:              eks.amazonaws.com/nodegroup=private_t3_xlarge\n                             network_placement=private\nTolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s\nEvents:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  5m2s  default-scheduler  0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.\n",
        {'node-filter'}, ('eks.amazonaws.com/nodegroup', 'kubectl get nodes --show-labels'),
        ('add a toleration',)),
    # coredns selected beta.kubernetes.io/os; the nodes carried kubernetes.io/os only
    'selector-deprecated-beta-label': Paste(
        'https://github.com/kelseyhightower/kubernetes-the-hard-way/issues/595',
        "Due to this mismatch pods cannot enter running state and an error is visible: 0/3 nodes are available: 3 node(s) didn't match node selector.\n",
        {'node-filter'}, ('beta.kubernetes.io/os',),
        ()),
    # the GPU node was cordoned and the other had no GPU registered (nvidia runtime not set up)
    'gpu-and-cordoned': Paste(
        'https://github.com/NVIDIA/k8s-device-plugin/issues/119',
        "Events:\n Warning FailedScheduling  40s (x2 over 40s)  default-scheduler  0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable.\n",
        {'node-filter'}, ('cordoned', 'NVIDIA runtime'),
        ()),
    # minikube with CRI-O: the NVIDIA runtime was not configured, so the plugin registered no GPU
    'gpu-minikube-runtime': Paste(
        'https://github.com/NVIDIA/k8s-device-plugin/issues/852',
        "Events:\n  Type     Reason            Age                  From               Message\n  ----     ------            ----                 ----               -------\n  Warning  FailedScheduling  26m (x150 over 12h)  default-scheduler  0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..\n",
        {'node-filter'}, ('nvidia-container-toolkit', 'plugin registers'),
        ("lower the pod's requests",)),
    # one pod per r5a.8xlarge: its requests exceed what Karpenter counts allocatable (VM memory overhead)
    'karpenter-event-too-big-for-the-only-type': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/7839',
        '```\n  Warning  FailedScheduling  106s (x2 over 6m46s)  karpenter          Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"500m","memory":"640Mi","pods":"5"}, no instance type satisfied resources {"cpu":"29500m","memory":"246400Mi","pods":"6"} and requirements karpenter.k8s.aws/ec2nodeclass In [default], karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [default], node.kubernetes.io/instance-type In [r5a.8xlarge] (no instance type has enough resources)\n  Warning  FailedScheduling  81s (x2 over 6m47s)   default-scheduler  0/10 nodes are available: 10 Insufficient cpu, 10 Insufficient memory. preemption: 0/10 nodes are available: 10 No preemption victims found for incoming pod.\n```\n',
        {'no-instance-type'}, ('VM_MEMORY_OVERHEAD_PERCENT', 'r5a.8xlarge has 256Gi memory'),
        ()),
    # a new AWS account: Fargate launches were blocked until AWS Support lifted it
    'fargate-account-blocked': Paste(
        'https://github.com/clowdhaus/eks-reference-architecture/issues/12',
        "```bash\nEvents:\n  Type     Reason            Age    From               Message\n  ----     ------            ----   ----               -------\n  Warning  FailedScheduling  2m59s  fargate-scheduler  Your AWS account is currently blocked and thus cannot launch any Fargate pods\n\n```\n",
        {'unsupported'}, ('AWS Support',),
        ('Drop the field', 'toleration')),
    # k3s: traefik's svclb already held host ports 80/443 on the only node
    'free-ports-k3s-hostnetwork-prose': Paste(
        'https://github.com/kubernetes/ingress-nginx/issues/6048',
        "the pod hangs with the error\n\nWarning FailedScheduling default-scheduler 0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.\nWarning FailedScheduling default-scheduler 0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.\n",
        {'node-filter'}, ('svclb', 'hostNetwork: true'),
        ("lower the pod's requests",)),
    # minikube: the patched controller's new replica wanted host port 6379 the old replica still held
    'free-ports-rolling-update-one-node': Paste(
        'https://github.com/kubernetes/ingress-nginx/issues/4626',
        "```text\n  Warning  FailedScheduling  63s   default-scheduler  0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.\n```\n",
        {'node-filter'}, ('old replica during a rolling update', 'maxSurge: 0'),
        ()),
    # 2015: PodFitsPorts was the host-port check (hostPort in the pod spec)
    'kube-1-0-failed-for-reason-ports': Paste(
        'https://github.com/kubernetes/kubernetes/issues/14586',
        "Failed for reason PodFitsPorts and possibly others\n",
        {'node-filter'}, ('hostPort',),
        ()),
    # 2015 docs: PodFitsResources, not enough CPU / memory left on any node for the replicas
    'kube-1-0-failed-for-reason-resources': Paste(
        'https://github.com/kubernetes/kubernetes/pull/11083',
        "Events:\n  FirstSeen\t\t\t\tLastSeen\t\t\tCount\tFrom\t\tSubobjectPath\tReason\t\t\tMessage\n  Thu, 09 Jul 2015 23:56:21 -0700\tFri, 10 Jul 2015 00:01:30 -0700\t21\t{scheduler }\t\t\tfailedScheduling\tFailed for reason PodFitsResources and possibly others\n",
        {'node-filter'}, ('counts requests, not use',),
        ()),
    # workloads selected node-role.kubernetes.io/spot-worker: a NodeClaim may not carry that kubernetes.io key
    'karpenter-nodeclaim-restricted-domain': Paste(
        'https://blog.gitcode.com/c1a51bc21127e9a9ffcbcb50a2dc75c7.html',
        'NodeClaim.karpenter.sh \\"default-dvph4\\" is invalid: spec.requirements[7].key: Invalid value: \\"string\\": label domain \\"kubernetes.io\\" is restricted\n',
        {'unsupported'}, ('node-role.kubernetes.io/<role>', 'NodeClaim default-dvph4'),
        ('upgrade Karpenter',)),
    # zone spread and hostname spread together: 2 nodes in one zone, 1 in the other, the 6th replica fits neither
    'spread-zone-and-hostname-klog': Paste(
        'https://github.com/kubernetes/kubernetes/issues/109364',
        '2. The 6th and 7th replica remain in pending state, with the scheduler saying `"Unable to schedule pod; no fit; waiting" pod="default/test-5" err="0/3 nodes are available: 3 node(s) didn\'t match pod topology spread constraints."`\n',
        {'topology'}, ('Every constraint must hold on the chosen node at once', 'Pod default/test-5'),
        ()),
    # the default NodePool sat at its cpu limit (48/48); the other pools' taints kept the pod off them
    'karpenter-v15-limits-and-taints-multiline': Paste(
        'https://github.com/JiRaska/open-bank-oss/issues/1272',
        "```\nFailedScheduling: all available instance types exceed limits for nodepool (NodePool=default);\n  did not tolerate taint (openbank.io/runner=true:NoSchedule);\n  did not tolerate taint (workload=observability:NoSchedule)\nRolloutAborted: ReplicaSet \"sanctions-service-86d5cd7d4\" has timed out progressing\nScalingReplicaSet: Scaled down ReplicaSet sanctions-service-86d5cd7d4 (revision 19) from 1 to 0\n```\n",
        {'limits', 'taint'}, ('NodePool "default" has reached its spec.limits', 'openbank.io/runner=true:NoSchedule'),
        ('taint, taint',)),
    # the worker was full and the other node a tainted control plane; the autoscaler never acted (not running)
    'insufficient-cpu-and-control-plane-multiline': Paste(
        'https://github.com/FootprintAI/Containarium/issues/1469',
        "```\nFailedScheduling Pod/overflow-869c5856b9-t6slm: 0/2 nodes are available:\n  1 Insufficient cpu,\n  1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }\n```\n",
        {'node-filter', 'taint'}, ('their own messages say why they did not', 'node-role.kubernetes.io/control-plane'),
        ()),
    # Karpenter v0.6: the hostname topology spread left an empty hostname requirement after nodes were deleted
    'karpenter-v06-empty-hostname-spread': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/1425',
        '2022-02-28T08:04:17.445Z\tINFO\tcontroller.provisioning\tUnable to schedule pod ingress/traefik-5fcc45756f-qdxv2, incompatible requirements, [] not in [rhv6mc5e], key kubernetes.io/hostname\t{"commit": "fd19ba2", "provisioner": "dedicated-ingress-arm64"}\n',
        {'requirement-conflict'}, ('topology spread constraint on kubernetes.io/hostname', 'can run on no host'),
        ('The pod requires []', 'widen the pool')),
    # the App Mesh injector's init container added NET_ADMIN; an injector release for Fargate fixed it
    'fargate-net-admin-from-mesh-injector': Paste(
        'https://github.com/aws/aws-app-mesh-roadmap/issues/158',
        "I've tried https://docs.aws.amazon.com/eks/latest/userguide/mesh-k8s-integration.html but failed due to \"Pod not supported on Fargate: invalid SecurityContext fields: Capabilities added: NET_ADMIN\"\n",
        {'unsupported'}, ('sidecar injector', 'containers[].securityContext.capabilities'),
        ()),
    # Karpenter kept nominating machines kube-scheduler found short of memory (their capacity estimates differed)
    'nominated-but-insufficient-memory': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4450',
        "```\nEvents:\n  Type     Reason            Age                   From               Message\n  ----     ------            ----                  ----               -------\n  Normal   Nominated         37m (x3 over 41m)     karpenter          Pod should schedule on: machine/default-bjb87\n  Normal   Nominated         9m51s (x13 over 34m)  karpenter          Pod should schedule on: machine/default-bjb87\n  Warning  FailedScheduling  4m41s (x11 over 41m)  default-scheduler  0/4 nodes are available: 4 Insufficient memory. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.\n  Normal   Nominated         81s (x4 over 7m41s)   karpenter          Pod should schedule on: machine/default-j956g\n```\n",
        {'node-filter'}, ('disagree on capacity', 'machine/default-bjb87'),
        ()),
}

# Not counted in the sweep (their threads are cited elsewhere): the same message as its thread really shows it
REGRESSIONS = {
    # the Fargate-only cluster's fluent-bit DaemonSet: its one node was full, and DaemonSets do not run on Fargate
    'k9s-prefilter-daemonset-wrapped': Paste(
        'https://github.com/aws-ia/terraform-aws-eks-blueprints-addons/issues/399',
        "`FailedScheduling  4m7s (x258 over 21h)  default-scheduler  0/13 nodes are available: 1 Too many pods, 12 node is filtered out by the prefilter resul │\n│ t. preemption: 0/13 nodes are available: 1 No preemption victims found for incoming pod, 12 Preemption is not helpful for scheduling.`\n",
        {'node-filter'}, ('prefilter result.', 'DaemonSets do not run on Fargate'),
        ('resul;', 'No preemption victims found for incoming pod;', '│')),
    # the CA verbose line wrapped by the terminal mid-word ("produ" / "ction/..."): the kops group lacked the label
    'ca-predicate-line-wrapped': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1291',
        "auto-scaler-aws-cluster-autoscaler-5f78688568-6q4hn aws-cluster-autoscaler I1002 11:03:26.503432       1 utils.go:196] Pod myapp-server-0 can't be scheduled on nodes.prod.example.com, predicate failed: GeneralPredicates predicate mismatch, cannot put produ\nction/sportradar-uof-server-0 on template-node-for-nodes.prod.example.com-7085033211816415489, reason: node(s) didn't match node selector\nauto-scaler-aws-cluster-autoscaler-5f78688568-6q4hn aws-cluster-autoscaler I1002 11:03:26.503455       1 scale_up.go:371] No pod can fit to nodes.prod.example.com\n",
        {'node-filter'}, ("cannot take the pod: node(s) didn't match node selector", 'node-template/label'),
        ('cannot put produ.',)),
    # a v1.5+ record cut inside its errorCauses: the record's own error holds both causes (memory was the real one)
    'karpenter-record-cut-in-error-causes': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/2890',
        '```\n{"level":"ERROR","time":"2026-05-01T21:36:41.423Z","logger":"controller","message":"could not schedule pod","commit":"8adb23d","controller":"provisioner","namespace":"","name":"","reconcileID":"fa147b79-e0b4-45c3-ab4d-9425fe460361","Pod":{"name":"cdb-builder-test","namespace":"cdb-builder"},"error":"incompatible requirements, label \\"cdb-builder\\" does not have known values; no instance type has enough resources, requirements=cdb-builder In [supported], karpenter.k8s.aws/ec2nodeclass In [cdb-builder], karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [cdb-builder], node.kubernetes.io/instance-type In [m5.8xlarge], resources={\\"cpu\\":\\"16220m\\",\\"memory\\":\\"123170Mi\\",\\"pods\\":\\"11\\"}","errorCauses":[{"error":"incompatible requirements, label \\"cdb-builder\\" does not have known values"},{"error":"no instance type has enough resources, requirements=cdb-builder In [supported], karpenter.k8s.aws/ec2nodeclass In [cdb-bui\n```\n',
        {'no-instance-type', 'unknown-label'}, ('m5.8xlarge has 128Gi memory', 'Pod cdb-builder/cdb-builder-test'),
        ()),
    # v0.2x: EBS volumes in three zones, their zones' intersection printed as DoesNotExist
    'karpenter-v0-zone-doesnotexist-quoted-stern': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4192',
        '> karpenter-f8c94f455-w6gw5 controller 2023-07-03T21:13:23.572Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner "default", no instance type satisfied resources {"cpu":"2","memory":"6Gi","pods":"1"} and requirements karpenter.sh/provisioner-name In [default], kubernetes.io/os In [linux], kubernetes.io/arch In [amd64], karpenter.k8s.aws/instance-category In [c m r], topology.kubernetes.io/zone DoesNotExist, karpenter.k8s.aws/instance-generation Exists >2, karpenter.sh/capacity-type In [on-demand spot] (no instance type met the scheduling requirements or had a required offering){"commit": "698f22f-dirty", "pod": "xxx/xxx"}\n',
        {'no-instance-type'}, ('EBS volumes in different zones', 'WaitForFirstConsumer'),
        ()),
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
