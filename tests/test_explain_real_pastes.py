"""explain on messages pasted in public issue threads, each with the cause the thread established.

Every message is copied as its thread shows it (wraps, `> ` quotes, k9s borders, markdown links, pretty-printed JSON
kept; a quoted paste is the thread's message with GitHub's `> ` added). `says` are words the answer must contain for
the established cause; `never` the misdiagnosis (or misreading) it must not contain. The answer is read whole: every
item the paste gives, each paragraph, as its reader would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from karpplan.explain.enrich import CatalogFor, catalog_loader, enrich
from karpplan.explain.report import explain_text


class Paste(NamedTuple):
    url: str
    text: str
    kinds: set[str]
    says: tuple[str, ...]
    never: tuple[str, ...]


PASTES = {
    'consolidated-nominated-node-volume': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4341',
        "  Normal   Nominated           118s                 karpenter                Pod should schedule on: machine/arm-4vwlh\n  Warning  FailedScheduling    114s (x3 over 119s)  default-scheduler        0/27 nodes are available: 1 node(s) had volume node affinity conflict, 14 node(s) didn't match Pod's node affinity/selector, 5 Insufficient cpu, 5 Insufficient memory, 5 node(s) had untolerated taint {simple.life/gitlab-runner: true}. preemption: 0/27 nodes are available: 20 Preemption is not helpful for scheduling, 7 No preemption victims found for incoming pod..\n  Warning  FailedScheduling    62s (x2 over 72s)    default-scheduler        0/28 nodes are available: 1 node(s) had volume node affinity conflict, 1 node(s) were unschedulable, 14 node(s) didn't match Pod's node affinity/selector, 5 Insufficient cpu, 5 Insufficient memory, 5 node(s) had untolerated taint {simple.life/gitlab-runner: true}. preemption: 0/28 nodes are available: 21 Preemption is not helpful for scheduling, 7 No preemption victims found for incoming pod..\n",
        ['node-filter', 'volume'], ('a volume never moves', 'Node(s) were unschedulable', 'cordoned'),
        ("lower the pod's resources.requests",)),
    'ebs-attach-limit-volume-count': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/3647',
        '0/5 nodes are available: 2 node(s) had untolerated taint {CriticalAddonsOnly: true}, 3 node(s) exceed max volume count. preemption: 0/5 nodes are available: 2 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.\n',
        ['taint', 'volume'], ('--volume-attach-limit', 'a new node, not smaller requests'),
        ('lower the requests', 'as many volumes attached as their instance type allows')),
    'old-taint-format-keeps-values': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/1887',
        "  Warning  FailedScheduling   6s (x2 over 22s)  default-scheduler   0/13 nodes are available: 1 Too many pods, 1 node(s) had taint {kubernetes.io/arch: arm64}, that the pod didn't tolerate, 1 node(s) were unschedulable, 5 node(s) exceed max volume count, 5 node(s) had taint {nd.group-name: kube-system}, that the pod didn't tolerate.\n",
        ['taint', 'volume'], ('kubernetes.io/arch=arm64', 'nd.group-name=kube-system', 'Too many pods: ', 'cordoned'),
        ('Untolerated taints: kubernetes.io/arch, nd.group-name',)),
    'old-taint-format-same-key-twice': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/1887',
        "  Warning  FailedScheduling        7m43s                  default-scheduler        0/8 nodes are available: 1 Insufficient memory, 1 node(s) had volume node affinity conflict, 2 node(s) didn't match pod topology spread constraints, 2 node(s) had taint {company.com/dedicated: ingress}, that the pod didn't tolerate, 2 node(s) had taint {company.com/dedicated: monitoring}, that the pod didn't tolerate.\n  Warning  FailedScheduling        105s (x13 over 9m27s)  default-scheduler        0/8 nodes are available: 2 Insufficient memory, 2 node(s) didn't match pod topology spread constraints, 2 node(s) had taint {company.com/dedicated: ingress}, that the pod didn't tolerate, 2 node(s) had taint {company.com/dedicated: monitoring}, that the pod didn't tolerate.\n",
        ['taint', 'topology', 'volume'], ('company.com/dedicated=ingress', 'company.com/dedicated=monitoring'),
        ('company.com/dedicated, company.com/dedicated',)),
    'eks-auto-mode-categories-and-gpu-pool-limits': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/8068',
        '  Warning  FailedScheduling  23m (x54 over 4h48m)    default-scheduler  0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.\n  Warning  FailedScheduling  3m50s (x58 over 4h48m)  karpenter          Failed to schedule pod, incompatible with nodepool "spot-pool", daemonset overhead={"cpu":"1566m","memory":"930Mi","pods":"11"}, no instance type has enough resources, requirements=eks.amazonaws.com/instance-category In [c m t], eks.amazonaws.com/nodeclass In [spot-default], karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [spot-pool], kubernetes.io/arch In [amd64], resources={"cpu":"1566m","memory":"930Mi","nvidia.com/gpu":"1","pods":"12"}; all available instance types exceed limits for nodepool (NodePool=gpu-nodepool)\n',
        ['limits', 'no-instance-type'], ('no type the requirements allow offers it', 'NodePool "gpu-nodepool" has reached its spec.limits'),
        ('Instance types the requirements allow do fit the pod (e.g. g4dn',)),
    # the thread's line is cut after the second pool's reason; its end (the closing reason, commit, pod) is filled in
    'gpu-pool-types-fit-offerings': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5527',
        '{"level":"ERROR","time":"2024-01-25T11:31:43.932Z","logger":"controller.provisioner","message":"Could not schedule pod, incompatible with nodepool \\"gpu\\", daemonset overhead={\\"cpu\\":\\"185m\\",\\"memory\\":\\"240Mi\\",\\"pods\\":\\"6\\"}, no instance type satisfied resources {\\"cpu\\":\\"185m\\",\\"memory\\":\\"240Mi\\",\\"nvidia.com/gpu\\":\\"1\\",\\"pods\\":\\"7\\"} and requirements gpu-type In [nvidia], karpenter.sh/nodepool In [gpu], node.kubernetes.io/instance-type In [g5.12xlarge g5.16xlarge g5.24xlarge g5.4xlarge g5.8xlarge] (no instance type which met the scheduling requirements and had enough resources, had a required offering); incompatible with nodepool \\"general-purpose\\", daemonset overhead={\\"cpu\\":\\"155m\\",\\"memory\\":\\"120Mi\\",\\"pods\\":\\"4\\"}, no instance type satisfied resources {\\"cpu\\":\\"155m\\",\\"memory\\":\\"120Mi\\",\\"nvidia.com/gpu\\":\\"1\\",\\"pods\\":\\"5\\"} and requirements karpenter.k8s.aws/instance-category In [c m r], karpenter.k8s.aws/instance-generation Exists >2, karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [general-purpose], kubernetes.io/arch In [amd64], kubernetes.io/os In [linux] (no instance type which had enough resources and the required offering met the scheduling requirements)","commit":"1072d3b","pod":"default/gpu-pod"}\n',
        ['no-instance-type'], ("so the pod's size is not the cause", 'offerings'),
        ("lower the pod's resources.requests",)),
    'gpu-pool-two-types-fit': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/6574',
        'incompatible with nodepool "gpu-nodepool", daemonset overhead={"cpu":"185m","memory":"240Mi","pods":"7"}, no instance type satisfied resources {"cpu":"185m","memory":"240Mi","nvidia.com/gpu":"1","pods":"8"} and requirements app In [gpu-test], karpenter.sh/capacity-type In [on-demand spot], karpenter.sh/nodepool In [gpu-nodepool], node.kubernetes.io/instance-type In [g4dn.xlarge g5.xlarge] (no instance type met all requirements);\n',
        ['no-instance-type'], ("so the pod's size is not the cause",),
        ("lower the pod's resources.requests",)),
    'two-gpus-on-one-gpu-types': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/8064',
        '{"level":"ERROR","time":"2025-05-12T11:28:27.068Z","logger":"controller.provisioner","message":"Could not schedule pod, incompatible with nodepool \\"nodepool-code-analyzer\\", daemonset overhead={\\"cpu\\":\\"185m\\",\\"memory\\":\\"240Mi\\",\\"pods\\":\\"4\\"}, no instance type satisfied resources {\\"cpu\\":\\"17185m\\",\\"ephemeral-storage\\":\\"32Gi\\",\\"memory\\":\\"33008Mi\\",\\"nvidia.com/gpu\\":\\"2\\",\\"pods\\":\\"5\\"} and requirements codeanalyzer/taint In [code], karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [nodepool-code-analyzer], node.kubernetes.io/instance-family In [g4dn], node.kubernetes.io/instance-type In [g4dn.2xlarge g4dn.4xlarge] (no instance type has enough resources)\n',
        ['no-instance-type'], ('the types the requirements allow offer fewer', 'at most 1', 'g4dn.12xlarge'),
        ('no type the requirements allow offers it',)),
    'ephemeral-storage-is-the-root-volume': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/2298',
        '2022-08-16T17:24:55.937Z\tERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with provisioner "karpenter-default", no instance type satisfied resources {"cpu":"1","ephemeral-storage":"100G","memory":"1536Mi","pods":"1"} and requirements karpenter.sh/capacity-type In [spot], kubernetes.io/arch In [amd64], karpenter.sh/provisioner-name In [karpenter-default]\t{"commit": "062a029", "pod": "master-company/master-company-orb-cron-manual-q7wfw-qpbm8"}\n',
        ['no-instance-type'], ('blockDeviceMappings', '20Gi when none is set', 'larger instance types alone do not help'),
        ("lower the pod's resources.requests below that", '()')),
    'ephemeral-storage-nodepool-from-zero': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5715',
        'Failed to schedule pod, incompatible with nodepool "devrunners-intel-xlarge-pool", daemonset overhead={"cpu":"685m","memory":"340Mi","pods":"9"}, no instance type satisfied resources {"cpu":"30685m","ephemeral-storage":"180G","memory":"112980Mi","pods":"10"}\n',
        ['no-instance-type'], ('blockDeviceMappings', 'root device'),
        ('The pod is too big for every type in the us-east-1 catalog ()',)),
    'combined-events-hostname-placeholder': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/270',
        'Warning  FailedScheduling  2m4s (x4 over 2m30s)  default-scheduler  0/3 nodes are available: 1 Insufficient memory, 1 node(s) didn\'t match pod affinity rules, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.\n  Warning  FailedScheduling  64s (x15 over 2m14s)  karpenter          (combined from similar events): Failed to schedule pod, incompatible with provisioner "default", key kubernetes.io/hostname, kubernetes.io/hostname DoesNotExist not in kubernetes.io/hostname In [hostname-placeholder-0129]\n',
        ['requirement-conflict', 'topology'], ('hostname-placeholder-', 'pod affinity'),
        ("widen the pool's requirement",)),
    'wrapped-mid-word-provisioner-limits': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5101',
        '2023-11-16T15:11:49.499Z\tDEBUG\tcontroller.provisioner\t445 out of 613 instance types were excluded because they would breach provisioner limits\t{"commit": "dc3af1a"}\n2023-11-16T15:11:49.499Z\tERROR\tcontroller.provisioner\tCould not schedule pod, all available instance types exceed provisioner limits; incompatible with provisioner "eng-eck-logs-warm-c", incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-central-1b] not in topology.kubernetes.io/zone In [eu-central-1c]; incompatible with provisioner "eng-shared", incompatible requirements, label "role" does not have known values; incompatible with provisioner "eng-eck-logs-hot-b", incompatible requirements, key role, role In [eck-logs-warm] not in role In [eck-logs-hot]; incompatible with provisioner "eng-eck-logs-hot-c", incompatible requirements, key role, role In [eck-logs-warm] not in role In [eck-logs-hot]; key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-central-1b] not in topology.kubernetes.io/zone In [eu-central-1c]; incompatible with provisioner "eng-eck-logs-master-a", did not tolerate dedicated=eck-logs-master:NoSchedule; incomp\natible with provisioner "eng-eck-logs-hot-a", incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-central-1b] not in topology.kubernetes.i\n',
        ['excluded-types', 'limits', 'requirement-conflict'], ('Provisioner "eng-eck-logs-hot-a"', "breach the pool's spec.limits.resources"),
        ('Not understood', 'incomp atible')),
    'pretty-printed-json-taints': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/6884',
        '{\n    "level": "DEBUG",\n    "time": "2024-08-26T21:51:35.612Z",\n    "logger": "controller",\n    "caller": "scheduling/scheduler.go:220",\n    "message": "226 out of 801 instance types were excluded because they would breach limits",\n    "commit": "62a726c",\n    "controller": "provisioner",\n    "namespace": "",\n    "name": "",\n    "reconcileID": "0c544d27-9a71-4c1d-9c72-839aea9c9238",\n    "NodePool": {\n        "name": "ep-base"\n    }\n}\n{\n    "level": "ERROR",\n    "time": "2024-08-26T21:51:35.618Z",\n    "logger": "controller",\n    "caller": "provisioning/provisioner.go:355",\n    "message": "could not schedule pod",\n    "commit": "62a726c",\n    "controller": "provisioner",\n    "namespace": "",\n    "name": "",\n    "reconcileID": "0c544d27-9a71-4c1d-9c72-839aea9c9238",\n    "Pod": {\n        "name": "e2e-test-stage-kane-p7wck-edge-pipeline-pickle-2973982407",\n        "namespace": "argo"\n    },\n    "error": "incompatible with nodepool \\"tc-heavy\\", daemonset overhead={\\"cpu\\":\\"380m\\",\\"memory\\":\\"376Mi\\",\\"pods\\":\\"4\\"}, did not tolerate example.com/taint-tc-heavy=:NoSchedule; incompatible with nodepool \\"tc-base\\", daemonset overhead={\\"cpu\\":\\"380m\\",\\"memory\\":\\"376Mi\\",\\"pods\\":\\"4\\"}, did not tolerate example.com/taint-tc-base=:NoSchedule"\n}\n',
        ['excluded-types', 'taint'], ('example.com/taint-tc-heavy', 'example.com/taint-tc-base', '226 of 801 instance types'),
        ()),
    'autoscaler-dedicated-taint-and-selector': Paste(
        'https://github.com/2i2c-org/infrastructure/issues/4165',
        "2024-05-30T19:20:55.211199Z [Warning] 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..\n2024-05-30T19:21:01Z [Normal] pod didn't trigger scale-up: 1 node(s) had untolerated taint {k8s.dask.org/dedicated: worker}, 8 node(s) didn't match Pod's node affinity/selector\n",
        ['node-filter', 'taint'], ("8 node group(s) didn't match Pod's node affinity/selector", 'k8s.dask.org/dedicated=worker',
                                   'a deleted node group leaves nothing to grow'),
        ()),
    'autoscaler-markdown-linked-taints': Paste(
        'https://github.com/StatCan/aaw/issues/1297',
        "pod didn't trigger scale-up:\n4 node(s) had taint {[node.statcan.gc.ca/purpose](http://node.statcan.gc.ca/purpose): system}, that the pod didn't tolerate,\n2 node(s) had taint {[node.statcan.gc.ca/use](http://node.statcan.gc.ca/use): gpu}, that the pod didn't tolerate,\n1 node(s) had taint {[data.statcan.gc.ca/classification](http://data.statcan.gc.ca/classification): unclassified}, that the pod didn't tolerate,\n1 node(s) had taint {[remediator.aks.microsoft.com/unschedulable](http://remediator.aks.microsoft.com/unschedulable): }, that the pod didn't tolerate,\n1 Insufficient memory, 1 Insufficient [nvidia.com/gpu](http://nvidia.com/gpu),\n1 node(s) had taint {CriticalAddonsOnly: true}, that the pod didn't tolerate,\n1 max node group size reached\n",
        ['limits', 'node-filter', 'taint'], ('node.statcan.gc.ca/purpose=system', 'max node group size reached', 'AKS node auto-repair'),
        ('](http',)),
    'autoscaler-predicate-go-taints': Paste(
        'https://github.com/kubernetes/autoscaler/issues/3115',
        'I0506 14:23:31.057849       1 pod_schedulable.go:165] Pod nginx-to-scaleout-7474d8bb57-dxt2n can\'t be scheduled on eks-ue1-prod-XXXX-worker-group-prod-120200506102140590000000012, predicate failed: PodToleratesNodeTaints predicate mismatch, reason: node(s) had taints that the pod didn\'t tolerate, taints on node: []v1.Taint{v1.Taint{Key:"prod-only", Value:"true", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}}\n',
        ['node-filter', 'taint'], ('prod-only=true:NoSchedule',),
        ()),
    'pdb-placeholders-and-cheaper-node': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/8164',
        'DisruptionBlocked: pdb "<namespace>/<ingress-controller-pdb>" prevents pod evictions\nUnconsolidatable: Can\'t replace with a cheaper node\n',
        [], ('allows no eviction right now', 'already the cheapest fit'),
        ()),
    'pdb-bold-age': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/8164',
        'Events:\n  Normal  DisruptionBlocked  **46m**  karpenter  Cannot disrupt Node: pdb "example/ingress-controller-pdb" prevents pod evictions\n',
        [], ('PodDisruptionBudget "example/ingress-controller-pdb"',),
        ()),
    'unquoted-pdb-istiod': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/3854',
        '44m         Normal   Unconsolidatable   node/ip-10-207-123-115.ec2.internal   pdb istio-system/istiod prevents pod evictions\n',
        [], ('PodDisruptionBudget "istio-system/istiod"', 'one more replica'),
        ('Karpenter keeps this node for now',)),
    # the thread writes the PDB as <ns>-<cluster_name>-zookeeper; a name stands in for the placeholders
    'deprovisioning-blocked-zookeeper': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/690',
        'Cannot deprovision node due to pdb kafka-my-cluster-zookeeper prevents pod evictions\n',
        [], ('PodDisruptionBudget "kafka-my-cluster-zookeeper"',),
        ()),
    'fargate-karpenter-no-nodes': Paste(
        'https://github.com/terraform-aws-modules/terraform-aws-eks/issues/2864',
        '│   Warning  FailedScheduling  26m                  default-scheduler  no nodes available to schedule pods                                                                    \n│   Warning  FailedScheduling  23m                  default-scheduler  0/1 nodes are available: 1 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..                                                                                             \n│   Warning  FailedScheduling  2m41s (x4 over 18m)  default-scheduler  0/2 nodes are available: 2 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..\n',
        ['node-filter', 'taint'], ('No nodes available to schedule pods', 'a Fargate profile, not a toleration'),
        ('add a toleration (key: eks.amazonaws.com/compute-type',)),
    'daemonset-prefilter-too-many-pods': Paste(
        'https://github.com/aws-ia/terraform-aws-eks-blueprints-addons/issues/399',
        'FailedScheduling  4m7s (x258 over 21h)  default-scheduler  0/13 nodes are available: 1 Too many pods, 12 node is filtered out by the prefilter result. preemption: 0/13 nodes are available: 1 No preemption victims found for incoming pod, 12 Preemption is not helpful for scheduling.\n',
        ['node-filter'], ('prefilter result were never candidates', 'DaemonSets do not run on Fargate', 'Too many pods: '),
        ('lower the requests',)),
    'nodeclaim-insufficient-capacity': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/6643',
        '{"level":"ERROR","time":"2024-08-04T21:21:43.196Z","logger":"controller","message":"failed launching nodeclaim","commit":"490ef94","controller":"nodeclaim.lifecycle","controllerGroup":"karpenter.sh","controllerKind":"NodeClaim","NodeClaim":{"name":"gpu-g5-4-kpxk7"},"namespace":"","name":"gpu-g5-4-kpxk7","reconcileID":"467c9a9a-8d03-428a-9001-7cd21c7a4661","error":"insufficient capacity, all requested instance types were unavailable during launch"}\n{"level":"ERROR","time":"2024-08-04T21:21:43.203Z","logger":"controller","message":"failed launching nodeclaim","commit":"490ef94","controller":"nodeclaim.lifecycle","controllerGroup":"karpenter.sh","controllerKind":"NodeClaim","NodeClaim":{"name":"gpu-g5-4-5rnc5"},"namespace":"","name":"gpu-g5-4-5rnc5","reconcileID":"2ec00154-bc8f-4a7d-979f-0b0ba4f66c72","error":"insufficient capacity, all requested instance types were unavailable during launch"}\n',
        ['no-instance-type'], ('NodeClaim gpu-g5-4-kpxk7 could not start', 'InsufficientInstanceCapacity', 'widen its requirements'),
        ('lower the pod',)),
    'machine-ice-one-type-one-zone': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4165',
        '2023-06-28T17:40:00.394Z\tERROR\tcontroller.machine.lifecycle\tcreating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient m7g.8xlarge capacity in the Availability Zone you requested (eu-west-1c). Our system will be working on provisioning additional capacity.\t{"commit": "26e2d35", "machine": "trino-7xk2p"}\n',
        ['no-instance-type'], ('no m7g.8xlarge capacity in eu-west-1c',),
        ()),
    'fleet-invalid-parameter': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5850',
        '"launching nodeclaim, creating instance, with fleet error(s), InvalidParameterValue: You cannot specify tags for Spot instances requests if there are no Spot instances requests being created by the request."\n',
        ['no-instance-type'], ('InvalidParameterValue: You cannot specify tags for Spot instances', 'not the pod'),
        ('launching nodeclaim, creating instance, with fleet error(s), InvalidParameterValue: launching',)),
    'no-subnets-matched-reconciler': Paste(
        'https://github.com/eksctl-io/eksctl/issues/4806',
        '2022-02-16T17:58:09.522Z        ERROR   controller.controller.provisioning      Reconciler error        {"commit": "3d0d368", "reconciler group": "karpenter.sh", "reconciler kind": "Provisioner", "name": "default", "namespace": "", "error": "no subnets matched selector map[karpenter.sh/discovery:test-karpenter-sa-9]"}\n',
        ['no-instance-type'], ('map[karpenter.sh/discovery:test-karpenter-sa-9]', "Tag the cluster's private subnets"),
        ()),
    'no-subnets-matched-scheduler': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/3341',
        '2023-02-02T12:45:34.945Z        ERROR   controller.provisioner  creating scheduler, getting instance types, no subnets matched selector map[karpenter.sh/discovery:karpenter-argocd]    {"commit": "5a7faa0-dirty"}\n',
        ['no-instance-type'], ('map[karpenter.sh/discovery:karpenter-argocd]', 'subnetSelector'),
        ()),
    'fargate-privileged-and-volume': Paste(
        'https://github.com/freegroup/kube-s3/issues/14',
        'Events:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  2m2s  fargate-scheduler  Pod not supported on Fargate: invalid SecurityContext fields: Privileged, volumes not supported: mntdatas3fs is of an unsupported volume Type\n',
        ['unsupported'], ('Privileged', 'volumes not supported', 'does not fall back to EC2'),
        ()),
    'fargate-cap-chown': Paste(
        'https://github.com/frappe/helm/issues/182',
        'fargate-scheduler  Pod not supported on Fargate: invalid SecurityContext fields: Capabilities added: CAP_CHOWN\n',
        ['unsupported'], ('CAP_CHOWN', 'securityContext.capabilities'),
        ()),
    'fargate-k9s-box': Paste(
        'https://github.com/kubernetes-sigs/aws-efs-csi-driver/issues/1329',
        '│   Warning  FailedScheduling  11m   fargate-scheduler  Pod not supported on Fargate: invalid SecurityContext fields: Privileged                                                            │\n',
        ['unsupported'], ('Privileged (containers[].securityContext.privileged)',),
        ('│',)),
    'fargate-allow-privilege-escalation': Paste(
        'https://github.com/kubernetes/ingress-nginx/issues/4888',
        'Warning  FailedScheduling  <unknown>  fargate-scheduler  Pod not supported on Fargate: invalid SecurityContext fields: AllowPrivilegeEscalation\n',
        ['unsupported'], ('allowPrivilegeEscalation',),
        ()),
    'unbound-immediate-claims': Paste(
        'https://github.com/apache/apisix-helm-chart/issues/346',
        '  Warning  FailedScheduling  4m36s  default-scheduler  0/3 nodes are available: 3 pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.\n',
        ['volume'], ('kubectl describe pvc', 'no longer mark gp2 as the default'),
        ('lower the pod',)),
    'memory-past-vm-overhead': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/2890',
        '{"level":"ERROR","time":"2026-05-01T21:36:41.423Z","logger":"controller","message":"could not schedule pod","commit":"8adb23d","controller":"provisioner","namespace":"","name":"","reconcileID":"fa147b79-e0b4-45c3-ab4d-9425fe460361","Pod":{"name":"cdb-builder-test","namespace":"cdb-builder"},"error":"incompatible requirements, label \\"cdb-builder\\" does not have known values; no instance type has enough resources, requirements=cdb-builder In [supported], karpenter.k8s.aws/ec2nodeclass In [cdb-builder], karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [cdb-builder], node.kubernetes.io/instance-type In [m5.8xlarge], resources={\\"cpu\\":\\"16220m\\",\\"memory\\":\\"123170Mi\\",\\"pods\\":\\"11\\"}"}\n',
        ['no-instance-type', 'unknown-label'], ('m5.8xlarge has 128Gi memory, but Karpenter subtracts', 'VM_MEMORY_OVERHEAD_PERCENT'),
        ()),
    # two excerpts of the same thread's line joined; the requirements between them are reconstructed
    'volume-zone-without-subnet': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4738',
        'karpenter-5dd479847d-5kxvj controller 2023-10-05T05:32:43.651Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner "bitbucket", daemonset overhead={"cpu":"655m","memory":"628000Ki","pods":"7"}, did not tolerate bitbucket=true:NoSchedule; incompatible with provisioner "default", daemonset overhead={"cpu":"655m","memory":"628000Ki","pods":"7"}, did not tolerate default=true:NoSchedule; incompatible with provisioner "monitoring", daemonset overhead={"cpu":"655m","memory":"628000Ki","pods":"7"}, no instance type satisfied resources {"cpu":"2655m","memory":"21599520Ki","pods":"8"} and requirements karpenter.k8s.aws/instance-category In [c m r], karpenter.k8s.aws/instance-generation Exists >2, karpenter.sh/capacity-type In [on-demand spot], karpenter.sh/provisioner-name In [monitoring], kubernetes.io/arch In [amd64 arm64], topology.kubernetes.io/zone In [us-east-1d], type In [karpenter] (no instance type met the scheduling requirements or had a required offering); incompatible with provisioner "system", daemonset overhead={"cpu":"655m","memory":"628000Ki","pods":"7"}, did not tolerate CriticalAddonsOnly=true:NoSchedule\t{"commit": "322822a", "pod": "monitoring/prometheus-monitoring-kube-prometheus-prometheus-0"}\n',
        ['no-instance-type', 'taint'], ('subnet selector finds a subnet in that zone', 'AWSNodeTemplate'),
        ("lower the pod's resources.requests",)),
    'pod-eni-old-taints': Paste(
        'https://github.com/aws/amazon-vpc-cni-k8s/issues/2123',
        "53s         Warning   FailedScheduling    pod/db-proxy-tcp-proxy-558c5688df-kdw5b          0/4 nodes are available: 1 node(s) had taint {NodeType: backend}, that the pod didn't tolerate, 1 node(s) had taint {NodeType: frontend}, that the pod didn't tolerate, 2 Insufficient vpc.amazonaws.com/pod-eni.\n",
        ['node-filter', 'taint'], ('NodeType=backend', 'NodeType=frontend', 'ENABLE_POD_ENI=true'),
        ()),
    'pod-eni-and-no-nodes': Paste(
        'https://github.com/aws/amazon-vpc-cni-k8s/issues/1348',
        '32m         Warning   FailedScheduling    pod/dev-tfdeployer-kbbm8-6s093   0/2 nodes are available: 2 Insufficient vpc.amazonaws.com/pod-eni.\n41m         Warning   FailedScheduling    pod/dev-tfdeployer-kbbm8-6zzl7   no nodes available to schedule pods\n',
        ['node-filter'], ('ENABLE_POD_ENI=true', 'No nodes available to schedule pods'),
        ()),
    'spot-to-spot-before-the-gate': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/669',
        "$ kubectl describe nodes <spot-node-name>\nEvents:\n  Type    Reason            Age                  From       Message\n  ----    ------            ----                 ----       -------\n  Normal  Unconsolidatable  31m (x6 over 127m)   karpenter  Can't remove without creating 2 candidates\n  Normal  Unconsolidatable  14m (x6 over 3h25m)  karpenter  Can't replace a spot node with a spot node\n",
        [], ('before v0.34', '2 new nodes'),
        ('Smallest fix: enable the gate',)),
    'two-candidates': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/1442',
        " Type    Reason            Age                  From       Message\n ----    ------            ----                 ----       -------  \n Normal  Unconsolidatable  6m10s (x5 over 67m)  karpenter  Can't remove without creating 2 candidates    \n",
        [], ('2 new nodes',),
        ()),
    # the thread's title (the event message) in a describe Events row; the row's age is made up
    'spot-to-spot-fifteen-types': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/1653',
        'Normal  Unconsolidatable  2m (x3 over 40m)  karpenter  SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to consolidate, got 6\n',
        [], ('at least 15 cheaper spot instance types', 'allows only 6'),
        ()),
    'fit-error-over-lines-taints-and-spread': Paste(
        'https://jorijn.com/en/knowledge-base/kubernetes/troubleshooting/pod-pending-topology-spread-constraints/',
        "Warning  FailedScheduling  default-scheduler\n0/12 nodes are available:\n  3 node(s) had untolerated taint {node-role.kubernetes.io/control-plane},\n  3 node(s) had untolerated taint {dedicated: tenant-a},\n  6 node(s) didn't match pod topology spread constraints.\npreemption: 0/12 nodes are available: 12 Preemption is not helpful for scheduling.\n",
        ['taint', 'topology'], ('nodeTaintsPolicy: Honor', 'dedicated=tenant-a'),
        ('12 Preemption is not helpful',)),
    'provisioner-limits-types-fit': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/3642',
        '2023-03-27T07:04:24.263Z        DEBUG   controller.provisioner  525 out of 616 instance types were excluded because they would breach provisioner limits        {"commit": "dc3af1a"}\n2023-03-27T07:04:24.355Z        ERROR   controller.provisioner  Could not schedule pod, incompatible with provisioner "gitlab-node", no instance type satisfied resources {"cpu":"4","memory":"4Gi","pods":"1"} and requirements node.kubernetes.io/instance-type In [c5.2xlarge c5.4xlarge c5.xlarge c5a.2xlarge c5a.4xlarge and 18 others], kubernetes.io/os In [linux], kubernetes.io/arch In [amd64], customer In [gitlab-aws], karpenter.sh/provisioner-name In [gitlab-node], topology.kubernetes.io/zone In [eu-west-1a eu-west-1b], karpenter.sh/capacity-type In [on-demand spot]      {"commit": "dc3af1a", "pod": "default/runner-ud-txenw-project-2389-concurrent-7v64v4"}\n',
        ['excluded-types', 'no-instance-type'], ('525 of 616 instance types', "look at the pool's limits first"),
        ("lower the pod's resources.requests",)),
    'no-resolved-instance-types': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4698',
        '2023-09-26T10:00:37.775Z\tINFO\tcontroller.provisioner\tprovisioning/provisioner.go:238\tskipping, no resolved instance types found\t{"commit": "637a642", "provisioner": "default"}\n2023-09-26T10:00:37.775Z\tERROR\tcontroller.provisioner\tscheduling/scheduler.go:190\tCould not schedule pod, all available instance types exceed limits for provisioner: "default"\t{"commit": "637a642", "pod": "default/resource-hungry-deployment-54d45649c-9tkxt"}\ngithub.com/aws/karpenter-core/pkg/controllers/provisioning/scheduling.(*Scheduler).recordSchedulingResults\n\tgithub.com/aws/karpenter-core@v0.30.0/pkg/controllers/provisioning/scheduling/scheduler.go:190\n',
        ['limits', 'no-instance-type'], ('Provisioner "default" is not really at its limits', 'AWSNodeTemplate'),
        ('Raise the limits', 'nodeClassRef')),
    # the thread's line is cut after 'exceed limits for pr'; its end (provisioner name, commit, pod) is filled in
    'wrapped-inside-a-label-key': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5169',
        '{"level":"ERROR","time":"2023-11-28T07:49:22.662Z","logger":"controller.provisioner","message":"Could not schedule pod, incompatible with nodepool \\"arm-instance-store\\", daemonset overhead={\\"cpu\\":\\"180m\\",\\"memory\\":\\"504Mi\\",\\"pods\\":\\"4\\"}, did not tolerate arch=arm64:NoSchedule; incompatible with provisioner \\"arm\\", daemonset overhead={\\"cpu\\":\\"205m\\",\\"memory\\":\\"674Mi\\",\\"pods\\":\\"7\\"}, did not tolerate arch=arm64:NoSchedule; incompatible with nodepool \\"x86-instance-store\\", daemonset overhead={\\"cpu\\":\\"180m\\",\\"memory\\":\\"504Mi\\",\\"pods\\":\\"4\\"}, no instance type satisfied resources {\\"cpu\\":\\"280m\\",\\"memory\\":\\"760Mi\\",\\"pods\\":\\"5\\"} and requirements karpenter.k8s.aws/instance-category In [c hpc m r x and 1 others], karpenter.k8s.aws/instance-generation Exists >3, karpenter.k8s.aws/instance-hypervisor In [nitro], karpenter.k8s.aws/instance-local-nvme Exists >45, karpenter.sh/capacity-type In [on-demand spot], karpenter.sh/nodepool In [x86-instance-store], kubernetes.io/\narch In [amd64], kubernetes.io/os In [linux] (no instance type has enough resources); incompatible with provisioner \\"x86\\", daemonset overhead={\\"cpu\\":\\"205m\\",\\"memory\\":\\"674Mi\\",\\"pods\\":\\"7\\"}, incompatible requirements, label \\"karpenter.sh/nodepool\\" does not have known values; all available instance types exceed limits for provisioner: \\"default\\"","commit":"1072d3b","pod":"default/app-0"}\n',
        ['no-instance-type', 'taint', 'unknown-label'], ('kubernetes.io/arch In [amd64]',),
        ('Not understood',)),
    'github-quoted-wrapped-provisioner-line': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5101',
        '> 2023-11-16T15:11:49.499Z\tDEBUG\tcontroller.provisioner\t445 out of 613 instance types were excluded because they would breach provisioner limits\t{"commit": "dc3af1a"}\n> 2023-11-16T15:11:49.499Z\tERROR\tcontroller.provisioner\tCould not schedule pod, all available instance types exceed provisioner limits; incompatible with provisioner "eng-eck-logs-warm-c", incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-central-1b] not in topology.kubernetes.io/zone In [eu-central-1c]; incompatible with provisioner "eng-shared", incompatible requirements, label "role" does not have known values; incompatible with provisioner "eng-eck-logs-hot-b", incompatible requirements, key role, role In [eck-logs-warm] not in role In [eck-logs-hot]; incompatible with provisioner "eng-eck-logs-hot-c", incompatible requirements, key role, role In [eck-logs-warm] not in role In [eck-logs-hot]; key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-central-1b] not in topology.kubernetes.io/zone In [eu-central-1c]; incompatible with provisioner "eng-eck-logs-master-a", did not tolerate dedicated=eck-logs-master:NoSchedule; incomp\n> atible with provisioner "eng-eck-logs-hot-a", incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-central-1b] not in topology.kubernetes.i\n',
        ['limits', 'requirement-conflict'], ('Provisioner "eng-eck-logs-hot-a"',),
        ('Not understood', 'incomp atible')),
    'github-quoted-fit-error-over-lines': Paste(
        'https://jorijn.com/en/knowledge-base/kubernetes/troubleshooting/pod-pending-topology-spread-constraints/',
        "> Warning  FailedScheduling  default-scheduler\n> 0/12 nodes are available:\n>   3 node(s) had untolerated taint {node-role.kubernetes.io/control-plane},\n>   3 node(s) had untolerated taint {dedicated: tenant-a},\n>   6 node(s) didn't match pod topology spread constraints.\n> preemption: 0/12 nodes are available: 12 Preemption is not helpful for scheduling.\n",
        ['taint', 'topology'], ('nodeTaintsPolicy: Honor',),
        ('12 Preemption is not helpful', '>   3 node(s)')),
    # the thread quotes the predicate clause only; the klog head around it (pod, node group) is cluster-autoscaler's
    # orchestrator line, filled in with made-up names
    'autoscaler-template-node-without-ephemeral-storage': Paste(
        'https://github.com/kubernetes/autoscaler/issues/9637',
        'I0514 10:21:03.101010       1 orchestrator.go:565] Pod build/runner-abc-0 can\'t be scheduled on oci-nodepool-ocid1, predicate checking error: predicate "NodeResourcesFit" didn\'t pass (predicateReasons=[Insufficient ephemeral-storage]; debugInfo=nodeName: "template-node-for-ocid1.nodepool.oc1-123")\n',
        ['node-filter'], ('Insufficient ephemeral-storage: for a group at zero nodes', 'node-template/resources/ephemeral-storage'),
        ("the node group's instance type is too small", 'predicateReasons=[')),
    # the thread quotes the line with GitHub's `> ` and cut at its end
    'quoted-cut-all-types-unavailable': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5578',
        '> {"level":"ERROR","time":"2024-02-06T09:05:23.566Z","logger":"controller.nodeclaim.lifecycle","message":"insufficient capacity, all requested instance type\n',
        ['no-instance-type'], ('could not start', 'widen its requirements'),
        ('lower the pod',)),
}


@pytest.fixture(scope="module")
def load() -> CatalogFor:
    return catalog_loader(None, None)


@pytest.mark.parametrize("name", sorted(PASTES))
def test_real_paste(name: str, load: CatalogFor) -> None:
    paste = PASTES[name]
    explanation = explain_text(paste.text)
    enrich(explanation, load)
    items = explanation.item_list()
    assert items, paste.url
    kinds = {r.kind for item in items for r in item.all_reasons()}
    assert set(paste.kinds) <= kinds, (paste.url, kinds)
    told = "\n".join(item.plain for item in items)
    for words in paste.says:
        assert words in told, (paste.url, words, told)
    for words in paste.never:
        assert words.lower() not in told.lower(), (paste.url, words, told)


@pytest.mark.parametrize("name", ["nodeclaim-insufficient-capacity", "two-gpus-on-one-gpu-types",
                                  "github-quoted-fit-error-over-lines"])
def test_a_paste_reads_the_same_from_a_file_and_from_stdin(name: str, tmp_path: Path) -> None:
    """The CLI as a user runs it: `karpplan explain FILE -o json` and the same bytes on stdin agree."""
    path = tmp_path / "pasted.log"
    path.write_text(PASTES[name].text)
    run = [sys.executable, "-m", "karpplan", "explain"]
    from_file = subprocess.run([*run, str(path), "-o", "json"], capture_output=True, text=True, check=False)
    from_stdin = subprocess.run([*run, "-", "-o", "json"], input=PASTES[name].text, capture_output=True, text=True,
                                check=False)
    assert from_file.returncode == from_stdin.returncode == 0, from_file.stderr
    assert json.loads(from_file.stdout)["items"] == json.loads(from_stdin.stdout)["items"]
    assert PASTES[name].says[0] in from_file.stdout
