"""explain on a second sweep of messages pasted in public issue threads (session 15), each with the cause its
thread established: kube-scheduler FitErrors of every era (host ports, ephemeral-storage, the pre-1.11 predicate
names, the affinity/anti-affinity umbrella, volumes), cluster-autoscaler's NotTriggerScaleUp and verbose lines,
fargate-scheduler refusals, Karpenter v0.x and v1 lines, and the envelopes users paste them in.

Every message is copied as its thread shows it (wraps, k9s borders, markdown emphasis, quotes and backticks kept).
`says` are words the answer must contain for the established cause; `never` the misdiagnosis or misreading it
must not contain. The answer is read whole: every item the paste gives, as its reader would.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from explain_pastes import Paste, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader

PASTES = {
    # the nodes were at their maxPods; a cordoned one took none (fixed by raising maxPods)
    'too-many-pods-cordoned': Paste(
        'https://github.com/hwameistor/hwameistor/issues/1227',
        'Warning  FailedScheduling  65s (x8 over 10m)  default-scheduler  0/3 nodes are available: 1 node(s) were unschedulable, 2 Too many pods. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.\n',
        {'node-filter'}, ('maxPods', 'cordoned'),
        ('add a toleration',)),
    # k9s borders cut the line mid-word; the one eligible node was at its pod capacity (8)
    'k9s-too-many-pods-wrapped': Paste(
        'https://github.com/Panfactum/stack/issues/129',
        "0/7 nodes are available: 1 Too many pods, 6 node(s) didn't match Pod's node affinity/selector. preemption: 0/7 nodes are available: 1 No p │\n│ reemption victims found for incoming pod, 6 Preemption is not helpful for scheduling.           \n",
        {'node-filter'}, ('Too many pods: ', "6 node(s) didn't match Pod's node affinity/selector",
                          'on 1 node no set of lower-priority pods', 'on 6 nodes evicting pods cannot help'),
        ('│', ' reemption', 'No p ')),
    # 'Insufficient pods' is the older wording of Too many pods: the node was at its 110 pods
    'insufficient-pods': Paste(
        'https://github.com/neurohackademy/nh2020-jupyterhub/issues/86',
        "Events:\n  Type     Reason            Age                    From               Message\n  ----     ------            ----                   ----               -------\n  Warning  FailedScheduling  2m34s (x141 over 27m)  default-scheduler  0/4 nodes are available: 1 Insufficient pods, 3 node(s) didn't match node selector.\n",
        {'node-filter'}, ('maxPods',),
        ("lower the pod's requests",)),
    # pod execution role missing from auth config/access entries
    'fargate-profile-exec-role': Paste(
        'https://github.com/terraform-aws-modules/terraform-aws-eks/issues/2972',
        '  Warning  FailedScheduling  40m   fargate-scheduler  Misconfigured Fargate Profile: fargate profile karpenter blocked for new launches due to: Pod execution role is not found in auth config or does not have all required permissions for launching fargate pods.\n',
        {'unsupported'}, ('pod execution role', 'auth config'),
        ('Drop the field',)),
    # fargate-only cluster, no profile matched the pod -> default-scheduler; fargate nodes carry taint
    'fargate-taint-get-events': Paste(
        'https://github.com/kubernetes-sigs/aws-load-balancer-controller/issues/2261',
        "kubectl get events -n kube-system\n\nLAST SEEN   TYPE      REASON              OBJECT                                               MESSAGE\n61s         Warning   FailedScheduling    pod/aws-load-balancer-controller-5799d98f7b-6d9ck    0/4 nodes are available: 4 node(s) had taint {eks.amazonaws.com/compute-type: fargate}, that the pod didn't tolerate.\n31m         Warning   FailedScheduling    pod/aws-load-balancer-controller-5799d98f7b-cv7dr    0/4 nodes are available: 4 node(s) had taint {eks.amazonaws.com/compute-type: fargate}, that the pod didn't tolerate.\n",
        {'taint'}, ('a Fargate profile, not a toleration',),
        ("node group's template",)),
    # the new replica's hostPort was still held by the old one during the rollout
    'free-ports-rollout': Paste(
        'https://github.com/datawire/edge-stack/issues/2',
        "Events:\n  Type     Reason            Age                From               Message\n  ----     ------            ----               ----               -------\n  Warning  FailedScheduling  86s (x2 over 87s)  default-scheduler  0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports.\n  Normal   Scheduled         80s                default-scheduler  Successfully assigned default/ambassador-77b44684fd-mphc5 to dev-master\n",
        {'node-filter'}, ('hostPort', 'maxSurge: 0'),
        ("lower the pod's requests",)),
    # hostNetwork pods: every containerPort is a host port, taken on 43 nodes
    'free-ports-hostnetwork': Paste(
        'https://github.com/kubernetes/kubernetes/issues/66568',
        "Warning  FailedScheduling  20m (x745 over 24m)   default-scheduler  0/72 nodes are available: 23 node(s) didn't match node selector, 43 node(s) didn't have free ports for the requested pod ports, 45 Insufficient cpu.\n",
        {'node-filter'}, ('hostNetwork: true', 'a bigger node does not help'),
        ()),
    # k3s's svclb pod for another LoadBalancer already held ports 80/443
    'free-ports-svclb': Paste(
        'https://github.com/traefik/traefik-helm-chart/issues/732',
        "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 2 node(s) didn't match Pod's node affinity/selector.\n",
        {'node-filter'}, ('svclb',),
        ()),
    # node-exporter (a DaemonSet) wanted host port 9100, already in use on the node
    'free-ports-node-exporter': Paste(
        'https://github.com/canonical/microk8s/issues/2589',
        "Events:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  62m   default-scheduler  0/2 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) didn't match Pod's node affinity/selector.\n",
        {'node-filter'}, ('DaemonSet',),
        ()),
    # the ingress controller's hostPorts 80/443 were taken; one node carries its selected label
    'free-ports-kind-two-events': Paste(
        'https://github.com/kubernetes-sigs/kind/issues/1552',
        "Events:\n  Type     Reason            Age                    From               Message\n  ----     ------            ----                   ----               -------\n  Warning  FailedScheduling  2m53s (x4 over 3m19s)  default-scheduler  0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports.\n  Warning  FailedScheduling  70s (x3 over 2m21s)    default-scheduler  0/3 nodes are available: 1 node(s) didn't match node selector, 2 node(s) didn't have free ports for the requested pod ports.\n",
        {'node-filter'}, ('host port',),
        ()),
    # hostNetwork pods on a single-node cluster; removing the master taint was the fix
    'free-ports-and-master-taint': Paste(
        'https://github.com/gitpod-io/gitpod/issues/2622',
        "`1 node(s) didn't have free ports for the requested pod ports, 1 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate.`\n",
        {'node-filter', 'taint'}, ('host port', 'node-role.kubernetes.io/master'),
        ()),
    # anti-affinity kept the pod off one node; the other two lacked the service affinity label's value
    'old-predicates-anti-affinity-service-affinity': Paste(
        'https://github.com/openshift/origin/issues/19506',
        '0/3 nodes are available: 1 ExistingPodsAntiAffinityRulesNotMatch, 1 MatchInterPodAffinity, 2 CheckServiceAffinity\n',
        {'topology'}, ('existing pods anti-affinity', "OpenShift's service affinity"),
        ("either the pod's required",)),
    # required anti-affinity matched on every node (restarting the scheduler placed it)
    'old-predicates-anti-affinity-60': Paste(
        'https://github.com/kubernetes/kubernetes/issues/70996',
        "  Normal   PodDoestFitAnyNode  1m                 rescheduler        Critical pod kube-system_kube-apiserver-7cdc45f85d-q7ts7 doesn't fit on any node.\n  Warning  FailedScheduling    11s (x16 over 2m)  default-scheduler  0/60 nodes are available: 2 Insufficient cpu, 5 Insufficient memory, 60 ExistingPodsAntiAffinityRulesNotMatch, 60 MatchInterPodAffinity.\n",
        {'topology'}, ('existing pods anti-affinity rules): those nodes already run a pod',),
        ("either the pod's required",)),
    # Tekton's affinity assistant: required pod affinity to a pod on another node
    'tekton-affinity-assistant': Paste(
        'https://github.com/tektoncd/pipeline/issues/2769',
        "0/1 nodes are available: 1 node(s) didn't match pod affinity rules, 1 node(s) didn't match pod affinity/anti-affinity.\n",
        {'topology'}, ('spec.affinity.podAffinity',),
        ('keeps it away',)),
    # the thread asks which rule failed: the message does not say
    'affinity-anti-affinity-nmap': Paste(
        'https://github.com/kubernetes/kubernetes/issues/100400',
        "11s   Warning FailedScheduling pod/nmap     0/20 nodes are available: 1 node(s) didn't match pod affinity/anti-affinity, 19 node(s) didn't match node selector.\n",
        {'topology'}, ("either the pod's required spec.affinity.podAffinity", 'podAntiAffinity'),
        ()),
    # the 1.8 message form: ephemeral-storage requests and untolerated taints
    'old-format-ephemeral-storage': Paste(
        'https://github.com/kubernetes/kubernetes/issues/63190',
        'No nodes are available that match all of the predicates: Insufficient ephemeral-storage (2), PodToleratesNodeTaints (3)\n',
        {'node-filter'}, ('root volume', 'does not name the taints'),
        ()),
    # the job asked more ephemeral-storage than any node has (the requests were reverted)
    'ephemeral-storage-all-nodes-ca': Paste(
        'https://github.com/openshift/release/pull/4216',
        "```\n  Type     Reason             Age                   From                Message\n  ----     ------             ----                  ----                -------\n  Warning  FailedScheduling   2m4s (x909 over 12m)  default-scheduler   0/18 nodes are available: 18 Insufficient ephemeral-storage, 3 node(s) didn't match node selector.\n  Normal   NotTriggerScaleUp  117s (x50 over 11m)   cluster-autoscaler  pod didn't trigger scale-up (it wouldn't fit if a new node is added)\n```\n",
        {'node-filter'}, ('root volume', 'maximum size'),
        ()),
    # more ephemeral-storage than the nodes' 51GB allocatable
    'ephemeral-storage-slurm-big': Paste(
        'https://github.com/nebius/soperator/issues/378',
        'skip schedule deleting pod: slurm-system/worker-31\nPod: worker-0\nFailedScheduling\n0/136 nodes are available: 126 Insufficient ephemeral-storage, 2 node(s) had untolerated taint {node.kubernetes.io/unreachable: },  31 Insufficient cpu, 5 node(s) were unschedulable, 65 Insufficient memory, 65 Insufficient nvidia.com/gpu. preemption: 0/136 nodes are available: 10 Preemption is not helpful for scheduling, 126 Insufficient ephemeral-storage, 31 Insufficient cpu, 31 Insufficient memory, 31 Insufficient nvidia.com/gpu.\n',
        {'node-filter', 'taint'}, ('root volume', 'node.kubernetes.io/unreachable'),
        ()),
    # an Immediate-binding StorageClass made the volumes where no selected node is
    'volume-affinity-immediate-binding': Paste(
        'https://github.com/yugabyte/yugabyte-db/pull/20349',
        "0/10 nodes are available: 3 node(s) had volume node affinity conflict, 7 node(s) didn't match Pod's node affinity/selector. preemption: 0/10 nodes are available: 10 Preemption is not helpful for scheduling..\n",
        {'volume'}, ('WaitForFirstConsumer',),
        ()),
    # the disk and the node were in different zones
    'volume-affinity-disk-zone': Paste(
        'https://github.com/kubernetes-sigs/alibaba-cloud-csi-driver/issues/415',
        'default-scheduler  0/1 nodes are available: 1 node(s) had volume node affinity conflict.\n',
        {'volume'}, ('a volume never moves',),
        ()),
    # the volumes were in other zones than the workers; the master taint kept the rest off
    'volume-affinity-master-taint-wrapped': Paste(
        'https://github.com/radondb/radondb-mysql-kubernetes/issues/395',
        "```\n0/3 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/master: }, \nthat the pod didn't tolerate, 2 node(s) had volume node affinity conflict.\n```\n",
        {'taint', 'volume'}, ('node-role.kubernetes.io/master', 'a volume never moves'),
        ()),
    # a hostPath PV pinned to node4 by its nodeAffinity
    'volume-affinity-hostpath-pv': Paste(
        'https://github.com/kubernetes/kubernetes/issues/81020',
        "0/5 nodes are available: 1 node(s) had volume node affinity conflict, 4 node(s) didn't match node selector\n",
        {'volume'}, ('pinned',),
        ()),
    # the volumes pinned the pod to nodes anti-affinity already excluded
    'volume-affinity-and-anti-affinity': Paste(
        'https://github.com/Altinity/clickhouse-operator/issues/702',
        '"0/9 nodes are available: 1 node(s) didn\'t match pod affinity/anti-affinity, 8 node(s) had volume node affinity conflict."\n',
        {'topology', 'volume'}, ("either the pod's required", 'a volume never moves'),
        ()),
    # the CSI driver was down: claims unbound, then bound to volumes on other nodes
    'unbound-immediate-pvc': Paste(
        'https://github.com/minio/directpv/issues/100',
        '  Warning  FailedScheduling  <unknown>        0/4 nodes are available: 4 pod has unbound immediate PersistentVolumeClaims.\n  Warning  FailedScheduling  <unknown>        0/4 nodes are available: 4 pod has unbound immediate PersistentVolumeClaims.\n  Warning  FailedScheduling  <unknown>        0/4 nodes are available: 4 node(s) had volume node affinity conflict.\n',
        {'volume'}, ('binds Immediately', 'a volume never moves'),
        ()),
    # the EFS CSI controller cannot run on Fargate: run it on EC2 nodes
    'fargate-hostnetwork-privileged-hostport': Paste(
        'https://github.com/aws/containers-roadmap/issues/1517',
        'Error: "Pod not supported on Fargate: fields not supported: HostNetwork, invalid SecurityContext fields: Privileged, port contains HostIP or HostPort"\n',
        {'unsupported'}, ('spec.hostNetwork', 'containers[].ports[].hostPort'),
        ('HostPort"',)),
    # a hostPath volume (the docker socket) is refused by Fargate
    'fargate-hostpath-docker-sock': Paste(
        'https://github.com/pachyderm/pachyderm/issues/4522',
        '`Pod not supported on Fargate: volumes not supported: docker`\n',
        {'unsupported'}, ('hostPath',),
        ('docker`',)),
    # the EFS CSI controller needs hostNetwork: not on Fargate
    'fargate-hostnetwork-hostport': Paste(
        'https://github.com/aws-samples/eks-efs-share-within-fargate/issues/5',
        '`Pod not supported on Fargate: fields not supported: HostNetwork, port contains HostIP or HostPort`\n',
        {'unsupported'}, ('spec.hostNetwork', 'containers[].ports[].hostPort'),
        ('HostPort`',)),
    # an added capability (CAP_CHOWN) is refused by Fargate
    'fargate-capabilities': Paste(
        'https://github.com/frappe/frappe_docker/issues/1182',
        '### Observed result\n```\nfargate-scheduler  Pod not supported on Fargate: invalid SecurityContext fields: Capabilities added: CAP_CHOWN\n```\n',
        {'unsupported'}, ('CAP_CHOWN', 'securityContext.capabilities'),
        ()),
    # a privileged runner container: resolved by dropping docker (privileged)
    'fargate-privileged-runner': Paste(
        'https://github.com/antonputra/tutorials/issues/136',
        'This is the error messae got on describe pod:\nfargate-scheduler Pod not supported on Fargate: invalid SecurityContext fields: Privileged\n',
        {'unsupported'}, ('securityContext.privileged',),
        ()),
    # the group the pod fits was at its max size; the message reads as if the pod were too big
    'ca-wouldnt-fit-max-size': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1607',
        "pod didn't trigger scale-up (it wouldn't fit if a new node is added)\n",
        {'node-filter'}, ('maximum size',),
        ()),
    # the group whose nodes match was at its max size; the others' nodes do not match
    'ca-predicate-checking-error': Paste(
        'https://github.com/kubernetes/autoscaler/issues/4052',
        "predicate checking error: node(s) didn't match Pod's node affinity; predicateName=NodeAffinity; reasons: node(s) didn't match Pod's node affinity; debugInfo=\n",
        {'node-filter'}, ('max size reached', 'node-template/label'),
        ()),
    # a custom scheduler's pod whose selector no node group's template matched
    'ca-custom-scheduler-nap': Paste(
        'https://github.com/2i2c-org/infrastructure/issues/677',
        "Events:\n  Type     Reason             Age   From                 Message\n  ----     ------             ----  ----                 -------\n  Warning  FailedScheduling   38s   prod-user-scheduler  0/2 nodes are available: 2 node(s) didn't match node selector.\n  Warning  FailedScheduling   38s   prod-user-scheduler  0/2 nodes are available: 2 node(s) didn't match node selector.\n  Normal   NotTriggerScaleUp  38s   cluster-autoscaler   pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity\n",
        {'node-filter'}, ('prod-user-scheduler', 'node-template/label'),
        ()),
    # the node group's template node lacked the labels the affinity asks for
    'ca-scale-up-log-lines': Paste(
        'https://github.com/kubernetes/autoscaler/issues/4613',
        "I0211 15:35:46.498813       1 scale_up.go:288] Pod restic-2r6cr can't be scheduled on eks-d6bf7003-b4ee-d0a4-ad23-a23ac5c64c8e, predicate checking error: node(s) didn't match Pod's node affinity; predicateName=NodeAffinity; reasons: node(s) didn't match Pod's node affinity; debugInfo=\nI0211 15:35:46.498845       1 scale_up.go:437] No pod can fit to eks-d6bf7003-b4ee-d0a4-ad23-a23ac5c64c8e\nI0211 15:35:46.498872       1 scale_up.go:441] No expansion optiions\n",
        {'node-filter'}, ('eks-d6bf7003-b4ee-d0a4-ad23-a23ac5c64c8e', 'node-template/label'),
        ()),
    # a failed scale-up (no capacity) put the group in backoff; it passed
    'ca-backoff-gke': Paste(
        'https://github.com/2i2c-org/infrastructure/issues/2185',
        "2023-02-08T18:24:48Z [Normal] pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had taint {k8s.dask.org_dedicated: worker}, that the pod didn't tolerate, 1 in backoff after failed scale-up\n2023-02-08T18:27:02Z [Warning] 0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't match Pod's node affinity/selector.\n",
        {'node-filter', 'taint'}, ('backoff',),
        ()),
    # the core node group was at its max size
    'ca-max-size-get-events': Paste(
        'https://github.com/2i2c-org/infrastructure/issues/2248',
        "57m         Warning   FailedScheduling         pod/support-prometheus-server-548d55b8bc-mhppb    0/212 nodes are available: 200 node(s) had untolerated taint {k8s.dask.org_dedicated: worker}, 5 Insufficient cpu, 7 node(s) had untolerated taint {hub.jupyter.org_dedicated: user}, 8 Insufficient memory. preemption: 0/212 nodes are available: 207 Preemption is not helpful for scheduling, 5 No preemption victims found for incoming pod.\n57m         Normal    NotTriggerScaleUp        pod/support-prometheus-server-548d55b8bc-mhppb    pod didn't trigger scale-up: 4 node(s) had untolerated taint {hub.jupyter.org_dedicated: user}, 2 node(s) had untolerated taint {k8s.dask.org_dedicated: worker}, 2 Insufficient memory, 1 Insufficient cpu, 2 max node group size reached\n",
        {'limits', 'taint'}, ('raise the max size',),
        ()),
    # every group is tainted for another team; the pod tolerates none
    'ca-combined-many-taints': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/3397',
        "  Normal   NotTriggerScaleUp  86s (x44 over 10m)    cluster-autoscaler  (combined from similar events): pod didn't trigger scale-up: 1 node(s) had taint {dedicated: tracking}, that the pod didn't tolerate, 2 node(s) had taint {dedicated: email}, that the pod didn't tolerate, 1 node(s) had taint {dedicated: vikasa}, that the pod didn't tolerate, 8 node(s) didn't match Pod's node affinity/selector\n",
        {'taint'}, ('dedicated=tracking',),
        ()),
    # the pod lacked the Provisioner taint's toleration (the paste broke the line after the pool)
    'karpenter-v0-two-lines': Paste(
        'https://github.com/spack/spack-infrastructure/pull/689',
        '```\nincompatible with provisioner "glr-x86-64-v2"\ndid not tolerate spack.io/runner-taint=true:NoSchedule\n```\n',
        {'taint'}, ('Provisioner "glr-x86-64-v2" taints its nodes', 'key: spack.io/runner-taint'),
        ('cut off', 'v1.5+')),
    # the NodePool has no "workload" label or requirement
    'karpenter-v1-workload-unknown-label': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/7535',
        '`{"level":"ERROR","time":"2024-12-16T21:48:24.279Z","logger":"controller","message":"could not schedule pod","commit":"6174c75","controller":"provisioner","namespace":"","name":"","reconcileID":"8f62e2d4-ad75-47dc-9b95-a3cc56c6bfaf","Pod":{"name":"inflate-5c97b884d6-rp2fk","namespace":"default"},"error":"incompatible with nodepool \\"default\\", daemonset overhead={\\"cpu\\":\\"180m\\",\\"memory\\":\\"120Mi\\",\\"pods\\":\\"5\\"}, incompatible requirements, label \\"workload\\" does not have known values"}`\n',
        {'unknown-label'}, ('"workload"', 'add the label there'),
        ()),
    # the only NodePool has no "workload" requirement (event wrapped over three lines)
    'karpenter-event-typo-hint-wrapped': Paste(
        'https://github.com/knowledgesystems/knowledgesystems-k8s-deployment/issues/452',
        '```\nWarning  FailedScheduling  karpenter  Failed to schedule pod, incompatible requirements,\n                                      label "workload" does not have known values\n                                      (typo of "workload-class"?)\n```\n',
        {'unknown-label'}, ('"workload"',),
        ()),
    # the allowed types are not offered in the Copenhagen Local Zone
    'karpenter-local-zone-offering': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5239',
        '2023-12-05T20:07:35.515Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with nodepool "company-cluster-default", daemonset overhead={"cpu":"150m","pods":"2"}, no instance type satisfied resources {"cpu":"250m","memory":"70Mi","pods":"3"} and requirements karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [company-cluster-default], kubernetes.io/arch In [amd64 arm64], kubernetes.io/os In [linux], node.kubernetes.io/instance-type In [m5.2xlarge t3.medium t3.xlarge], topology.kubernetes.io/zone In [eu-north-1-cph-1a], worker/type In [worker] (no instance type met the scheduling requirements or had a required offering)\t{"commit": "56aaec1", "pod": "kube-system/coredns-d9694c9bb-5758f"}\n',
        {'no-instance-type'}, ('Local Zone', 'describe-instance-type-offerings'),
        ("so the pod's size is not the cause",)),
    # the pod's volume zone and selectors leave no zone at all
    'karpenter-zone-doesnotexist-nodepool': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/7713',
        'incompatible with nodepool "coder", daemonset overhead={"cpu":"956m","memory":"409Mi","pods":"10"}, incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone DoesNotExist not in topology.kubernetes.io/zone In [ap-northeast-1a ap-northeast-1c ap-northeast-1d]\n',
        {'requirement-conflict'}, ('DoesNotExist', 'WaitForFirstConsumer'),
        ()),
    # no local PV had been created for the claim
    'local-pv-none-to-bind': Paste(
        'https://github.com/pingcap/tidb-operator/issues/4509',
        "```\n kubectl -n tidb-test describe po tidb-pd-0\n\n  Type     Reason            Age                     From               Message\n  ----     ------            ----                    ----               -------\n  Warning  FailedScheduling  43s (x3743 over 2d14h)  default-scheduler  0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.\n```\n",
        {'volume'}, ('no existing PersistentVolume matches it',),
        ()),
    # no PV matched the claim after the upgrade
    'local-pv-none-to-bind-minikube': Paste(
        'https://github.com/kubernetes/minikube/issues/7056',
        "*Warning  FailedScheduling  11s (x2 over 11s)  default-scheduler  0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.*\n",
        {'volume'}, ('no existing PersistentVolume matches it',),
        ('bind.*',)),
    # the LVM volume group had less free space than the claim
    'csi-capacity-not-enough-free-storage': Paste(
        'https://github.com/openebs/lvm-localpv/issues/349',
        'following the docs results in "FailedScheduling: 0/1 nodes are available: 1 node(s) did not have enough free storage."\n',
        {'volume'}, ('CSIStorageCapacity',),
        ('storage."',)),
    # scaling a managed node group from zero: the template node lacked the labels
    'ca-new-predicate-format-template-node': Paste(
        'https://github.com/kubernetes/autoscaler/issues/8341',
        'I0721 11:10:41.153458       1 orchestrator.go:588] Pod xxxx can\'t be scheduled on xxxx, predicate checking error: can\'t schedule pod xxxx: predicate "NodeAffinity" didn\'t pass (predicateReasons=[node(s) didn\'t match Pod\'s node affinity/selector]; debugInfo=nodeName: "template-node-for-eks-xxxx")\n',
        {'node-filter'}, ('node-template/label',),
        ('debugInfo',)),
    # the nodes carried a custom taint the pod does not tolerate
    'custom-taint-kubeadm': Paste(
        'https://github.com/cilium/cilium/issues/18829',
        "Here is the bug report:Warning  FailedScheduling  65s   default-scheduler  0/3 nodes are available: 3 node(s) had taint {harm.cn/system: }, that the pod didn't tolerate. \n",
        {'taint'}, ('harm.cn/system',),
        ()),
    # security groups for pods: no node had a pod ENI left to give
    'pod-eni-all-nodes': Paste(
        'https://github.com/aws/amazon-vpc-cni-k8s/issues/2494',
        'FailedScheduling - 0/12 nodes are available: 12 Insufficient vpc.amazonaws.com/pod-eni.\n',
        {'node-filter'}, ('ENABLE_POD_ENI',),
        ()),
    # the only matching node was cordoned (a drain cluster-autoscaler left unfinished)
    'ca-cordoned-and-selector': Paste(
        'https://github.com/kubernetes/autoscaler/issues/7963',
        "Events:\n  Type     Reason             Age    From                Message\n  ----     ------             ----   ----                -------\n  Warning  FailedScheduling   3m25s  default-scheduler   0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.\n",
        {'node-filter'}, ('cordoned',),
        ()),
    # EBS volumes cannot be mounted on Fargate; only EFS
    'fargate-ebs-pv': Paste(
        'https://github.com/kubernetes-sigs/aws-ebs-csi-driver/issues/810',
        'Warning  FailedScheduling  58m   fargate-scheduler  Pod not supported on Fargate: volumes not supported: storage-volume not supported because: PVC prometheus-server bound to invalid PV pvc-a996c34f-eba8-45d1-9820-e5bc19ce325c with CSI Driver: ebs.csi.aws.com\n',
        {'unsupported'}, ("Amazon EBS volumes can't be mounted to Fargate Pods",),
        ()),
    # the claim was bound right after; fargate-scheduler judged once; recreating the pod ran it
    'fargate-pvc-not-bound-race': Paste(
        'https://github.com/kubernetes-sigs/aws-efs-csi-driver/issues/793',
        'the describe shows  `Warning  FailedScheduling  40s   fargate-scheduler  Pod not supported on Fargate: volumes not supported: efs-storage not supported because: PVC efs-storage-efs-app-sts1-0 not bound` but the pvc already created and bound\n',
        {'unsupported'}, ('judges a pod once', 'delete the pod'),
        ('but the pvc already created',)),
    # claims not bound when the pod was judged (static EFS PVs)
    'fargate-three-pvcs-not-bound': Paste(
        'https://github.com/aws/aws-cdk/issues/23375',
        'Events:\n  Type     Reason            Age    From               Message\n  ----     ------            ----   ----               -------\n  Warning  FailedScheduling  13m34s  fargate-scheduler  Pod not supported on Fargate: volumes not supported: gitlab-config not supported because: PVC config not bound, gitlab-logs not supported because: PVC logs not bound, gitlab-data not supported because: PVC data not bound\n',
        {'unsupported'}, ('static EFS PersistentVolume', 'delete the pod'),
        ()),
    # dynamically provisioned volume: create EFS PV/PVC, or run on EC2 node group
    'fargate-unknown-age-pvc': Paste(
        'https://github.com/airbytehq/airbyte/issues/15470',
        '```\n  Warning  FailedScheduling  <unknown>  fargate-scheduler  Pod not supported on Fargate: volumes not supported: data not supported because: PVC data-test-airbyte-postgresql-0 not bound\n\n```\n',
        {'unsupported'}, ('Amazon EFS ones only', 'runs on EC2 nodes'),
        ()),
    # EBS-backed chart volumes on a Fargate-only cluster: use EC2 nodes
    'fargate-etcd-pvc': Paste(
        'https://github.com/milvus-io/milvus-helm/issues/389',
        '`Pod not supported on Fargate: volumes not supported: data not supported because: PVC data-milvus-etcd-0 not bound`\n',
        {'unsupported'}, ('runs on EC2 nodes',),
        ('`',)),
    # CSI inline volume (csi.cert-manager.io) is refused on Fargate
    'fargate-csi-inline-volume': Paste(
        'https://github.com/cert-manager/csi-driver/issues/267',
        'Events:\n  Type     Reason            Age    From               Message\n  ----     ------            ----   ----               -------\n  Warning  FailedScheduling  3m40s  fargate-scheduler  Pod not supported on Fargate: volumes not supported: ca is of an unsupported volume Type\n',
        {'unsupported'}, ('CSI inline volumes',),
        ()),
    # AWS had no capacity for the selected types; broadening requirements helped
    'karpenter-offering-fragment-ice': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/1212',
        'Maybe the error message in this instance is a little bit too vague: ``no instance type which had enough resources and the required offering met the scheduling requirements``\n',
        {'no-instance-type'}, ('Allow more families or sizes',),
        ('``',)),
    # the cluster lacked the resources the tests need: adding them was the fix, not the policy
    'preemption-policy-never-only': Paste(
        'https://github.com/MinaProtocol/mina/issues/13862',
        '**Error:** `Cannot schedule pods: not eligible due to preemptionPolicy=Never.` \n',
        {'node-filter'}, ('only the preemption part', 'more capacity'),
        ()),
    # the spread's topologyKey names a label the node does not carry
    'spread-missing-required-label': Paste(
        'https://github.com/SREGym/SREGym/issues/854',
        "```\nWarning  FailedScheduling  0/1 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label).\n```\n",
        {'topology'}, ('lack the label', 'topologyKey'),
        ('would break maxSkew',)),
    # the nodes were under disk pressure (the disk was full)
    'disk-pressure-custom-scheduler': Paste(
        'https://github.com/secretflow/kuscia/issues/236',
        '  Warning  FailedScheduling  50s   kuscia-scheduler  0/2 nodes are available: failed to get task resource bob/ for pod. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod., can not find related task resource.\n  Warning  FailedScheduling  48s   kuscia-scheduler  0/2 nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling., reject the pod secretflow-task-20240228161259-single-psi-0 even after PostFilter.\n',
        {'taint'}, ('DiskPressure', 'Do not add a toleration'),
        ('Untolerated taints: node.kubernetes.io/disk-pressure',)),
    # the node disk was full (disk pressure)
    'disk-pressure-yaml-status-wrapped': Paste(
        'https://github.com/secretflow/kuscia/issues/45',
        'status:\n  conditions:\n  - lastProbeTime: null\n    lastTransitionTime: "2023-07-27T06:13:00Z"\n    message: \'0/2 nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/disk-pressure:\n      }. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.,\n      reject the pod secretflow-task-20230727141300-single-psi-0 is unschedulable\n      even after PostFilter.\'\n    reason: Unschedulable\n    status: "False"\n    type: PodScheduled\n  phase: Pending\n',
        {'taint'}, ('DiskPressure', 'Do not add a toleration'),
        ('Untolerated taints: node.kubernetes.io/disk-pressure',)),
    # CI runner disk full: disk pressure taint
    'disk-pressure-yaml-old-taint': Paste(
        'https://github.com/rootless-containers/usernetes/pull/155',
        '```yaml\n  status:\n    conditions:\n    - lastProbeTime: null\n      lastTransitionTime: "2020-04-15T04:44:48Z"\n      message: \'0/1 nodes are available: 1 node(s) had taint {node.kubernetes.io/disk-pressure:\n        }, that the pod didn\'\'t tolerate.\'\n      reason: Unschedulable\n      status: "False"\n      type: PodScheduled\n```\n',
        {'taint'}, ('DiskPressure', 'Do not add a toleration'),
        ('Untolerated taints: node.kubernetes.io/disk-pressure', "didn''t")),
    # the node disk filled up (a larger disk was discussed)
    'disk-pressure-describe': Paste(
        'https://github.com/snowdrop/k8s-infra/issues/249',
        "Pod was not started due to `Warning  FailedScheduling  4s    default-scheduler  0/1 nodes are available: 1 node(s) had taint {node.kubernetes.io/disk-pressure: }, that the pod didn't tolerate.`\n",
        {'taint'}, ('DiskPressure', 'Do not add a toleration'),
        ('Untolerated taints: node.kubernetes.io/disk-pressure',)),
    # the single node ran out of disk
    'disk-pressure-get-events': Paste(
        'https://github.com/vsys-host/shkeeper.io/issues/92',
        'cert-manager   26m         Warning   FailedScheduling       pod/cert-manager-776d69949d-5z7cd              0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..\nshkeeper       25m         Warning   FailedScheduling       pod/shkeeper-deployment-76c995f6bd-hb5pw       0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..\n',
        {'taint'}, ('DiskPressure', 'Do not add a toleration'),
        ('Untolerated taints: node.kubernetes.io/disk-pressure',)),
    # a resource watchdog tainted the nodes for disk pressure (kubectl describe node showed the taint)
    'unnamed-taints-dcos-disk': Paste(
        'https://github.com/d2iq-archive/dcos-kubernetes-quickstart/issues/108',
        "`Events:`\n ` Type     Reason            Age                    From               Message`\n`  ----     ------            ----                   ----               -------`\n`  Warning  FailedScheduling  4m41s (x156 over 49m)  default-scheduler  0/3 nodes are available: 3 node(s) had taints that the pod didn't tolerate.`\n",
        {'node-filter'}, ('does not name the taints', 'kubectl describe node'),
        ()),
}

# Not counted in the sweep (its thread is cited elsewhere): the same thread's other line, a label no v0.x
# Provisioner may carry and no EKS node has
REGRESSIONS = {
    'control-plane-selector-v0': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/2304',
        '2025-06-12T06:58:42.083Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner '
        '"karpenter-dev-provisioner-helper", daemonset overhead={"cpu":"736m","memory":"1452Mi","pods":"11"}, '
        'incompatible requirements, label "node-role.kubernetes.io/control-plane" does not have known values; '
        'incompatible with provisioner "karpenter-dev-provisioner-primary", daemonset overhead={"cpu":"736m",'
        '"memory":"1452Mi","pods":"11"}, incompatible requirements, label "node-role.kubernetes.io/control-plane" '
        'does not have known values\n',
        {'unknown-label'}, ('Karpenter v0.x rejects labels under kubernetes.io', 'remove that selector'),
        ('add the label there',)),
}
ALL = {**PASTES, **REGRESSIONS}


@pytest.fixture(scope="module")
def load() -> CatalogFor:
    return catalog_loader(None, None)


@pytest.mark.parametrize("name", sorted(ALL))
def test_real_paste(name: str, load: CatalogFor) -> None:
    check_paste(ALL[name], load)


def test_the_sweep_cites_each_thread_once() -> None:
    """Forty-odd threads, none counted twice."""
    urls = [p.url for p in PASTES.values()]
    assert len(urls) >= 40 and len(set(urls)) == len(urls)


@pytest.mark.parametrize("name", ["unbound-immediate-pvc", "karpenter-v0-two-lines", "old-format-ephemeral-storage"])
def test_a_paste_reads_the_same_from_the_cli(name: str) -> None:
    """`karpplan explain - -o json` on the pasted bytes: exit 0, nothing unrecognised, the cause's words."""
    run = subprocess.run([sys.executable, "-m", "karpplan", "explain", "-", "-o", "json"], input=PASTES[name].text,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    items = json.loads(run.stdout)["items"]
    assert items
    assert PASTES[name].says[0] in "\n".join(item["plain"] for item in items)
