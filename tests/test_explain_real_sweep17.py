"""explain on a fourth sweep of messages pasted in public issue threads (session 17), none cited elsewhere in tests/,
each with the cause its thread established: Karpenter v1.x and its Azure dialect, kube-scheduler 1.2x-1.3x
(preemption, DRA, host ports, volumes), cluster-autoscaler, Fargate, and the envelopes they are pasted in.

Every message is copied as its thread shows it. `says` are words the answer must contain for the established cause;
`never` the misdiagnosis or misreading the code before this sweep gave (or one a reader would take for the fix).
"""

from __future__ import annotations

import pytest
from explain_pastes import Paste, check_new_threads, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader
from karpplan.explain.report import explain_text

PASTES = {
    # an EMPTY zone among the spread's domains: the Azure provider offered VM sizes with no usable zone in zone "",
    # which counts 0 and holds every real zone past maxSkew (fixed by zone "0" for regional VMs, PR #1615)
    'azure-empty-zone-domain': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/1384',
        "Failed to schedule pod, unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone "
        "(counts = : 0, eastus2-1: 2, eastus2-2: 1, eastus2-3: 1, podDomains = topology.kubernetes.io/zone Exists, "
        "nodeDomains = topology.kubernetes.io/zone Exists\n",
        {'topology'}, ('EMPTY', '"" (empty)=0', 'zone ""', 'upgrade the provider',
                       'topology.kubernetes.io/zone In [eastus2-1 eastus2-2 eastus2-3]'),
        ('raise maxSkew',)),
    # Karpenter's own host-port check against the DaemonSets a new node would run (the PR fixing #2083 quotes it)
    'karpenter-host-port-daemonset': Paste(
        'https://github.com/kubernetes-sigs/karpenter/pull/2102',
        '{"level":"ERROR","time":"2025-03-25T23:45:29.227Z","logger":"controller","caller":"provisioning/provisioner.go:357",'
        '"message":"could not schedule pod","commit":"76aaae9-dirty","controller":"provisioner","namespace":"","name":"",'
        '"reconcileID":"0b9f3a42-15f2-4323-9e99-d01a32fd4e32","Pod":{"name":"nginx-deployment-5c4df47f4d-cfmmz",'
        '"namespace":"default"},"error":"incompatible with nodepool \\"arm-2cpu\\", daemonset overhead={\\"cpu\\":\\"250m\\",'
        '\\"memory\\":\\"200Mi\\",\\"pods\\":\\"6\\"}, checking host port usage, IP=0.0.0.0 Port=8080 Proto=TCP conflicts with '
        'existing HostPort configuration IP=0.0.0.0 Port=8080 Proto=TCP"}\n',
        {'node-filter'}, ('host port 8080/TCP', 'DaemonSet', '.hostPort == 8080', 'does not help'),
        ('lower the pod', 'raise the limit')),
    # k3s: a second LoadBalancer Service's svclb DaemonSet wants 80/443, which traefik's svclb already holds
    'k3s-svclb-free-ports': Paste(
        'https://github.com/k3d-io/k3d/issues/104',
        "  Warning  FailedScheduling  2m  default-scheduler  0/1 nodes are available: 1 node(s) didn't have free ports for "
        "the requested pod ports.\n",
        {'node-filter'}, ('svclb', 'Find the holder', 'hostPort'),
        ('Insufficient',)),
    # two replicas with a hostPort on a one-node cluster: the workload's own replica holds the port
    'own-replica-free-ports-one-node': Paste(
        'https://github.com/kubernetes/examples/issues/384',
        "Event: 0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports\n",
        {'node-filter'}, ('one replica per node',),
        ('Every node saying so points at a DaemonSet',)),
    # the PriorityClass's preemptionPolicy: Never is in the message: the pod will not evict lower-priority pods
    'preemption-policy-never-tail': Paste(
        'https://github.com/kubernetes/kubernetes/pull/107775',
        "  Warning  FailedScheduling  12s   default-scheduler  0/4 nodes are available: 1 Insufficient cpu, 1 node(s) had "
        "taint {virtual-kubelet.io/provider: ***}, that the pod didn't tolerate, 2 node(s) didn't match Pod's node "
        "affinity/selector. preemption: not eligible due to preemptionPolicy=Never.\n",
        {'node-filter', 'taint'}, ('1 Insufficient cpu', 'preemptionPolicy: PreemptLowerPriority'),
        ()),
    # a DaemonSet pod on a full node, total redacted as `0/x`: nothing lower-priority to evict, no autoscaler adds a node
    'daemonset-no-victims-redacted-total': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/671',
        "  Warning  FailedScheduling  112s (x3 over 5m33s)  default-scheduler  0/x nodes are available: 1 Insufficient cpu. "
        "preemption: 0/38 nodes are available: 38 No preemption victims found for incoming pod.\n",
        {'node-filter'}, ('1 Insufficient cpu', 'system-node-critical'),
        ('38 No preemption victims found for incoming pod.',)),
    # DRA: a claim shared by gang-scheduled pods left kube-scheduler retrying forever
    'dra-shared-claim-being-allocated': Paste(
        'https://github.com/kubernetes/kubernetes/issues/137617',
        "  Warning  FailedScheduling  2m21s (x2292168 over 7m21s)  default-scheduler  0/2 nodes are available: resource "
        "claim default/single-gpu is in the process of being allocated. no new claims to deallocate, preemption: 0/2 nodes "
        "are available: 2 Preemption is not helpful for scheduling.\n",
        {'node-filter'}, ('shares it', 'resourceClaimTemplateName'),
        ()),
    # v1.5+ repeats one taint clause per NodePool without naming the pool (the PR adding the name quotes it)
    'v15-taints-without-pool-names': Paste(
        'https://github.com/kubernetes-sigs/karpenter/pull/2441',
        '"error":"did not tolerate taint (taint=msp.stripe.io/availability-tier=A400:NoSchedule); did not tolerate taint '
        '(taint=msp.stripe.io/host-set-template=lowdisruption:NoSchedule); did not tolerate taint (taint=msp.stripe.io/'
        'host-set-template=lowdisruption:NoSchedule); did not tolerate taint (taint=msp.stripe.io/host-set-template='
        'docdb-arm:NoSchedule); did not tolerate taint (taint=msp.stripe.io/host-set-template=docdb:NoSchedule); did not '
        'tolerate taint (taint=msp.stripe.io/availability-tier=A200:NoSchedule); did not tolerate taint (taint=msp.stri\n',
        {'taint'}, ('without naming it', 'msp.stripe.io/availability-tier=A200:NoSchedule'),
        ()),
    # v0.15's wording of an unknown label (`key K does not have known values`): the pod's nodeSelector named a label
    # the Provisioner neither sets nor requires (tzneal: add it to the Provisioner's labels)
    'v015-key-does-not-have-known-values': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/2316',
        '`controller.provisioning    Could not schedule pod, incompatible with provisioner "default", incompatible '
        'requirements, key application does not have known values`\n',
        {'unknown-label'}, ('label "application"', 'spec.labels'),
        ("requirements do not overlap",)),
    # the label was put in the Provisioner's own metadata.labels, which never reach its nodes
    'label-in-pool-metadata': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4085',
        'karpenter-799794b4f-jzz7l controller 2023-06-20T12:44:38.209Z\tERROR\tcontroller.provisioner\tCould not '
        'schedule pod, incompatible with provisioner "test-provisioner", incompatible requirements, label "app1" does '
        'not have known values\t{"commit": "698f22f-dirty", "pod": "default/test-app-5c6cc4b6f9-gm7gf"}\n',
        {'unknown-label'}, ("metadata.labels never reaches its nodes",),
        ()),
    # a pod pinned to an EKS managed node group by eks.amazonaws.com/nodegroup; the paste cuts `values`
    'managed-nodegroup-label-cut': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4538',
        'ERROR controller.provisioner Could not schedule pod, incompatible with provisioner "eng-node-group", '
        'incompatible requirements, label "eks.amazonaws.com/nodegroup" does not have known\n',
        {'unknown-label'}, ('EKS managed node group',),
        ("requirements do not overlap",)),
    # k3s/RKE2 system pods on a cluster whose only node has the control-plane and etcd roles
    'control-plane-etcd-taints-get-events': Paste(
        'https://github.com/rancher/rancher/issues/40016',
        "LAST SEEN   TYPE      REASON             OBJECT                                        MESSAGE\n"
        "30m         Warning   FailedScheduling   pod/coredns-597584b69b-c2s8w                  0/1 nodes are available: "
        "1 node(s) had untolerated taint {node-role.kubernetes.io/etcd: }. preemption: 0/1 nodes are available: 1 "
        "Preemption is not helpful for scheduling.\n"
        "30m         Warning   FailedScheduling   pod/helm-install-traefik-crd-mzcb7            0/1 nodes are available: "
        "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/1 nodes are "
        "available: 1 Preemption is not helpful for scheduling.\n",
        {'taint'}, ('no worker node',),
        ()),
    # the FailedScheduling was the wait for Karpenter's node; the pod was then scheduled (its real trouble: an init
    # container crash-looping on EFS)
    'scheduled-after-nomination': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5691',
        "  Warning  FailedScheduling  20m                   default-scheduler  0/1 nodes are available: 1 Too many pods. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..\n"
        "  Normal   Nominated         20m                   karpenter          Pod should schedule on: nodeclaim/"
        "hxps-66ae7155-6992-40d7-a887-ae5a746c5c25-dev-mseries-btnkm\n"
        "  Normal   Scheduled         19m                   default-scheduler  Successfully assigned update-permissionx-"
        "a0c6988c/update-permissionx-a0c6988c-rb-58d85c4d66-8g476 to ip-10-1-45-204.ec2.internal\n",
        {'node-filter'}, ('scheduled in the end', 'CrashLoopBackOff'),
        ('waiting will not help',)),
    # AKS node auto-provisioning: the NodePool event; removing every requirement did not help (nothing changed on the
    # user's side), so the pod's size and the requirements are not what to change first
    'aks-nap-no-compatible-instance-types': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/996',
        "`Warning  NoCompatibleInstanceTypes  2m10s (x59 over 63m)  karpenter  NodePool requirements filtered out all "
        "compatible available instance type`\n",
        {'no-instance-type'}, ("not about the pod's size", 'the provider\'s list did'),
        ('lower the requests',)),
    # a node whose kubelet never registered cpu / memory / pods: Karpenter kept nominating pods to a broken node
    'failed-consistency-check-node-events': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4737',
        "Events:\n\n  Type     Reason                  Age                      From       Message\n\n"
        "  ----     ------                  ----                     ----       -------\n\n"
        "  Warning  FailedConsistencyCheck  49m (x86 over 3d23h)     karpenter  expected resource \"pods\" didn't "
        "register on the node\n\n"
        "  Warning  FailedConsistencyCheck  9m20s (x247 over 3d22h)  karpenter  expected resource \"cpu\" didn't "
        "register on the node\n",
        {'no-instance-type'}, ('the node is broken', 'delete its NodeClaim'),
        ('lower the pod', 'exceed')),
    # cluster-autoscaler 1.1: a multi-AZ autoscaling group's template node sits in one zone, the StatefulSet's EBS
    # volume in another (the FAQ's answer: one group per zone)
    'ca-no-volume-zone-conflict-template-node': Paste(
        'https://github.com/kubernetes/autoscaler/issues/501',
        "I0119 19:49:49.973505     214 scale_up.go:112] Scale-up predicate failed: NoVolumeZoneConflict predicate "
        "mismatch, cannot put elasticsearch/elastic6-data-3 on template-node-for-k8s-16Q6P7QM1VQ86-Workers-"
        "22NR6U4EQSJ6-8420422205862204812, reason: NoVolumeZoneConflict\n"
        "  Normal   NotTriggerScaleUp      53s (x18 over 6m)  cluster-autoscaler                     pod didn't "
        "trigger scale-up (it wouldn't fit if a new node is added)\n",
        {'node-filter', 'volume'}, ('k8s-16Q6P7QM1VQ86-Workers-22NR6U4EQSJ6', 'one autoscaling group per zone'),
        ('the pasted line does not name it',)),
    # EKS managed node group in other zones than the StatefulSet's EBS volume: no group's template node can take it
    'ca-volume-node-affinity-describe': Paste(
        'https://github.com/jenkins-infra/helpdesk/issues/3305',
        " Normal   NotTriggerScaleUp  3m58s (x32461 over 3d18h)  cluster-autoscaler  pod didn't trigger scale-up: 1 "
        "node(s) had volume node affinity conflict\n"
        "  Warning  FailedScheduling   2m30s (x5365 over 3d18h)   default-scheduler   0/2 nodes are available: 1 "
        "Insufficient cpu, 1 node(s) had volume node affinity conflict.\n",
        {'node-filter', 'volume'}, ('one autoscaling group per zone', "volume's zone"),
        ()),
    # one scale set per zone already: the Azure templates carried no zone label until cluster-autoscaler added it
    'ca-azure-vmss-per-zone-no-zone-label': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1500',
        "I1211 10:31:49.438834       1 utils.go:208] Pod prometheus-alertmanager-d9dcffbf8-sspb9 can't be scheduled on "
        "k8s1-euw-sandbox-agentzone1-vmss, predicate failed: NoVolumeZoneConflict predicate mismatch, reason: node(s) "
        "had no available volume zone\n",
        {'node-filter', 'volume'}, ('If each zone already has its own group', 'Azure scale-set templates'),
        ()),
    # AKS: a scale set cannot be asked for a VM in one zone, and the autoscaler's template is one node of the pool; the
    # two bare lines are two messages
    'aks-no-available-volume-zone-bare-lines': Paste(
        'https://github.com/Azure/AKS/issues/2187',
        "0/1 nodes are available: 1 node(s) had no available volume zone\n"
        "pod didn't trigger scale-up (it wouldn't fit if a new node is added): 1 node(s) had no available volume zone \n",
        {'node-filter', 'volume'}, ('1 node group(s) had no available volume zone', 'its own node group'),
        ("zone pod didn't trigger",)),
    # the pod event Karpenter publishes when the NodeClaim nominated for the pod hits an insufficient-capacity error:
    # pods pinned to one instance type / zone wait on EC2 capacity, and nothing on the pod is wrong
    'karpenter-pod-event-insufficient-capacity': Paste(
        'https://github.com/kubernetes-sigs/karpenter/pull/3143',
        "Warning  InsufficientCapacityError  NodeClaim default-xxxxx, nominated for this pod failed to launch: "
        "InsufficientInstanceCapacity: We currently do not have sufficient g5.12xlarge capacity in the Availability "
        "Zone you requested (us-west-2a). Our system will be working on provisioning additional capacity. You can\n",
        {'no-instance-type'}, ('NodeClaim default-xxxxx could not start', 'no g5.12xlarge capacity in us-west-2a'),
        ()),
    # a release added required anti-affinity across instance types: a bootstrap cluster has too few nodes for it
    'anti-affinity-and-spread-too-few-nodes': Paste(
        'https://github.com/Panfactum/stack/issues/41',
        "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints, 2 node(s) didn't match pod "
        "anti-affinity rules.\n",
        {'node-filter', 'topology'}, ('podAntiAffinity', 'another node'),
        ("Insufficient",)),
    # k3s edge: the node's disk crossed the kubelet's eviction threshold (DiskPressure), nothing on the pod
    'disk-pressure-taint-k3s': Paste(
        'https://github.com/Cumulocity-IoT/c8y-docs/pull/4536',
        "Warning  FailedScheduling  12m (x832 over 2d21h)  default-scheduler  0/1 nodes are available: 1 node(s) had "
        "untolerated taint {node.kubernetes.io/disk-pressure: }. preemption: 0/1 nodes are available: 1 Preemption is "
        "not helpful for scheduling.\n",
        {'taint'}, ('DiskPressure', 'Do not add a toleration'),
        ('add tolerations to spec.tolerations only if',)),
    # Karpenter v0.6 ignored pods with anti-affinity (#942); the line pasted after the person's prose
    'v06-anti-affinity-ignored-in-prose': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/1507',
        "I am getting this error when deploy kafka => Ignoring pod, pod anti-affinity is not supported. But some kafka "
        "pod deployed.\n",
        {'unsupported'}, ('upgrade Karpenter',),
        ()),
    # Karpenter's state bookkeeping during a hostPort DaemonSet's rollout (old and new pod on one node): no pod failed
    'karpenter-hostport-invariant-during-rollout': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4005',
        '{"level":"ERROR","time":"2023-06-06T19:03:02.108Z","logger":"controller.pod_state","message":"invariant '
        'violated registering host port usage, IP=0.0.0.0 Port=8125 Proto=UDP conflicts with existing HostPort '
        'configuration IP=0.0.0.0 Port=8125 Proto=UDP, please file an issue","commit":"698f22f-dirty",'
        '"pod":"datadog/datadog-brx5c"}\n',
        {'node-filter'}, ('not a pod that failed to schedule', 'rolls out'),
        ('could not be scheduled',)),
    # the head `0/1 nodes are available: 1` cut off the pasted title: the device plugin advertised no GPU (klueska)
    'gpu-reason-before-preemption-head-cut': Paste(
        'https://github.com/NVIDIA/k8s-device-plugin/issues/348',
        "Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming "
        "pod.\n",
        {'node-filter'}, ('1 Insufficient nvidia.com/gpu', 'device plugin'),
        ('1 No preemption victims found for incoming pod.',)),
    # the node's Docker did not use the NVIDIA runtime (default-runtime: nvidia), so the plugin registered no GPU
    'gpu-not-registered-docker-runtime': Paste(
        'https://github.com/NVIDIA/k8s-device-plugin/issues/33',
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu\n",
        {'node-filter'}, ('NVIDIA runtime', 'registered'),
        ("lower the pod's requests",)),
    # an EKS GPU autoscaling group at zero nodes: cluster-autoscaler sees no GPU on its template without the
    # node-template resources tag
    'ca-gpu-group-from-zero': Paste(
        'https://github.com/kubernetes/autoscaler/issues/4181',
        "pod didn't trigger scale-up (it wouldn't fit if a new node is added): 2 Insufficient nvidia.com/gpu\n",
        {'node-filter'}, ('node-template/resources/nvidia.com/gpu',),
        ()),
    # the group's min was raised above its size; cluster-autoscaler 1.3 asked for one node more, below the new min
    'ca-target-size-outside-min': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1348',
        "Warning  FailedToScaleUpGroup  15s   cluster-autoscaler  Scale-up failed for group agentpool: Target size 5 "
        "requested outside Max: 10, Min: 6\n",
        {'node-filter'}, ('below its own minimum', 'desired size to at least 6'),
        ("template node would take it",)),
    # AKS with cluster-autoscaler 1.3: no template for the node pool, so no scale-up can be computed
    'ca-no-node-info-for-group': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1602',
        "E0122 22:54:44.558783       1 static_autoscaler.go:283] Failed to scale up: Could not compute total resources: "
        "No node info for: nodepool1\n",
        {'node-filter'}, ('no template node', 'nodepool1'),
        ()),
    # the pod asked for more CPU than a VM of the default pool has, and the other pool is GPU-tainted (marwanad)
    'aks-cpu-larger-than-pool-vm-gpu-taint': Paste(
        'https://github.com/Azure/AKS/issues/2514',
        'Describe Pod msg: "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had taint {sku: gpu}, that the pod '
        'didn\'t tolerate."\n',
        {'node-filter', 'taint'}, ('fits no node of that size', 'sku=gpu'),
        ()),
    # Karpenter nominated an existing node without the pod's karpenter.k8s.aws/instance-local-nvme label: it compared
    # only the labels a node carries (kubernetes-sigs/karpenter#343), so kube-scheduler kept rejecting its choice
    'nominated-node-lacks-selected-label': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4438',
        "0/9 nodes are available: 1 node(s) had untolerated taint {dedicated: skipper-ingress-redis}, 1 node(s) had "
        "untolerated taint {node.kubernetes.io/role: master}, 2 node(s) had untolerated taint {dedicated: "
        "skipper-ingress}, 5 node(s) didn't match Pod's node affinity/selector. preemption: 0/9 nodes are available: 9 "
        "Preemption is not helpful for scheduling.\n"
        "Pod should schedule on: machine/default-karpenter-f72cc, node/ip-10-149-71-113.eu-central-1.compute.internal\n",
        {'node-filter', 'taint'}, ('kubernetes-sigs/karpenter#343', '--show-labels'),
        ()),
    # GKE: the claim bound Immediately, its disk made in us-east4-b, the pod's node pool in us-east4-a; quoted in prose
    'volume-conflict-quoted-gke-immediate-binding': Paste(
        'https://github.com/pravega/zookeeper-operator/issues/311',
        "as a result `Cannot schedule pods: node(s) had volume node affinity conflict.` \n",
        {'volume'}, ('WaitForFirstConsumer', "volume's zone"),
        ()),
    # EKS: the new node came up in eu-central-1c, the chart's EBS volume is in eu-central-1b
    'volume-conflict-count-in-bold-backticks': Paste(
        'https://github.com/helm/charts/issues/16701',
        "**Error:  `2 node(s) had volume node affinity conflict`**\n",
        {'node-filter', 'volume'}, ('2 node(s) had volume node affinity conflict', 'a volume never moves'),
        ()),
    # EKS: some replicas' EBS volumes sit in another zone than the nodes that have room
    'volume-conflict-bare-in-code-block': Paste(
        'https://github.com/bitnami/charts/issues/9194',
        "around 7 of them complain of this issue: \n```\nnode(s) had volume node affinity conflict\n```\n",
        {'volume'}, ("volume's zone",),
        ()),
    # d3 instances have fewer EBS attachment slots; Karpenter kept choosing d3.8xlarge until the family was excluded
    'max-volume-count-quoted': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/7725',
        "The pod keeps getting stuck in pending due to `node(s) exceed max volume count`.\n",
        {'volume'}, ('more attachment slots', 'not smaller requests'),
        ()),
    # a Fargate-only cluster and the EFS CSI driver's hostNetwork pods: they must run on EC2 (Fargate has EFS built in)
    'fargate-hostnetwork-efs-driver-quoted': Paste(
        'https://github.com/kubernetes-sigs/aws-efs-csi-driver/issues/1179',
        "I got the following error:\n`Pod not supported on Fargate: fields not supported: HostNetwork, port contains "
        "HostIP or HostPort`\n",
        {'unsupported'}, ('spec.hostNetwork', 'runs on EC2 nodes'),
        ()),
    # Karpenter v0.13 kept nominating a node without room for the pod's requests (sidecars injected by webhooks): the
    # nomination repeated for hours and the pod never bound
    'nominate-pod-debug-event-log-line': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/2309',
        '2022-08-17T15:29:03.786Z\tDEBUG\tcontroller.events\tNormal\t{"commit": "062a029", "object": {"kind":"Pod",'
        '"namespace":"payment-orchestrator","name":"payment-orchestrator-test-us-east-1-master-template-766d7c6dxml",'
        '"uid":"cfa1fce9-c4d5-4b9e-a75b-93d5408c4ab0","apiVersion":"v1","resourceVersion":"381957916"}, "reason": '
        '"NominatePod", "message": "Pod should schedule on ip-10-74-7-176.ec2.internal"}\n',
        set(), ('repeats for minutes', 'cannot take the pod'),
        ()),
    # k3d: both nodes carried node.kubernetes.io/disk-pressure (the Docker host's disk was nearly full); the 1.12-era
    # message names no taint
    'unnamed-taints-disk-pressure-k3d': Paste(
        'https://github.com/k3d-io/k3d/issues/18',
        "default-scheduler 0/2 nodes are available: 2 node(s) had taints that the pod didn't tolerate.\n",
        {'node-filter'}, ('disk-pressure', 'kubectl describe node'),
        ()),
    # eksctl --fargate makes a profile for default and kube-system only: a pod in `dev` matched no profile, so the
    # default scheduler saw only Fargate nodes (tainted) and no EC2 node
    'fargate-no-profile-for-namespace': Paste(
        'https://github.com/eksctl-io/eksctl/issues/6705',
        "Events:\n  Type     Reason            Age    From               Message\n  ----     ------            ----   ----"
        "               -------\n  Warning  FailedScheduling  4m24s  default-scheduler  0/2 nodes are available: 2 "
        "node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}. preemption: 0/2 nodes are available: 2 "
        "Preemption is not helpful for scheduling.\n",
        {'taint'}, ('a Fargate profile, not a toleration',),
        ()),
    # Fargate was not offered in ca-central-1d: the profile's subnets must be in supported zones only
    'fargate-unsupported-zone': Paste(
        'https://github.com/awsdocs/amazon-eks-user-guide/pull/262',
        'Warning  FailedScheduling  <unknown>  fargate-scheduler  Fargate is not supported in the requested availability '
        'zone: ca-central-1d"\n',
        {'unsupported'}, ("profile's subnets", 'supported zones'),
        ()),
}
# Not counted in the sweep (their threads are cited elsewhere): the same fault as its thread really shows it
REGRESSIONS: dict[str, Paste] = {}
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


def test_an_empty_domain_is_parsed_wherever_it_sorts() -> None:
    """The empty domain in both count formats (v0.34+ `: 0, a: 1`, Go's `map[:0 a:1]`), on a custom key too."""
    from karpplan.explain.dialects.karpenter import parse_reason
    for text in ("unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone "
                 "(counts = map[:0 us-east-1a:2 us-east-1b:1], podDomains = topology.kubernetes.io/zone Exists, "
                 "nodeDomains = topology.kubernetes.io/zone Exists)",
                 "unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone "
                 "(counts = : 0, us-east-1a: 2, us-east-1b: 1, podDomains = topology.kubernetes.io/zone Exists"):
        r = parse_reason(text)
        assert r is not None and r.counts == {"": 0, "us-east-1a": 2, "us-east-1b": 1}, text
    custom = explain_text("Failed to schedule pod, unsatisfiable topology constraint for topology spread, key=capacity-"
                          "spread (counts = : 0, 1: 3, 2: 2, podDomains = capacity-spread Exists, nodeDomains = "
                          "capacity-spread Exists\n").item_list()[0].plain
    assert 'capacity-spread=""' in custom and "raise maxSkew" not in custom
    hostnames = parse_reason("unsatisfiable topology constraint for pod anti-affinity, key=kubernetes.io/hostname "
                             "(counts = ip-10-0-1-5.ec2.internal: 1, ip-10-0-2-7.ec2.internal: 0, podDomains = "
                             "kubernetes.io/hostname Exists")
    assert hostnames is not None and hostnames.counts == {"ip-10-0-1-5.ec2.internal": 1, "ip-10-0-2-7.ec2.internal": 0}
