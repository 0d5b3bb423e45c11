"""explain on real upstream lines, one table row per line with the issue it was pasted in.

The lines are copied exactly from the issues (peers-and-log-dialects.md §2.6; JSON escapes and the console
encoder's TABs kept, partial lines cut where the issue cut them). Each row says what the parser must find:
source, dialect, event, pod and the reason kinds per NodePool / Provisioner ("" = reasons tied to no pool).
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from karpplan.explain.report import explain_text


class Real(NamedTuple):
    name: str
    url: str
    family: str
    line: str
    source: str
    dialect: str | None
    event: str
    pod: str | None
    kinds: dict[str, list[str]]


REAL_LINES = [
    Real('E1', 'https://github.com/kubernetes-sigs/karpenter/issues/1162', 'v0.32-v0.37 JSON',
         '{"level":"ERROR","time":"2024-04-03T06:40:04.552Z","logger":"controller.provisioner","message":"Could not schedule pod, incompatible with nodepool \\"default\\", daemonset overhead={\\"cpu\\":\\"675m\\",\\"memory\\":\\"390Mi\\",\\"pods\\":\\"6\\"}, incompatible requirements, label \\"nodegroup\\" does not have known values","commit":"17d6c05","pod":"com-dtv-dcp-dpd/beamacctgetprofilems-green-746d677b76-lghl4"}',
         'karpenter', 'v0.32-v0.37', 'FailedScheduling', 'com-dtv-dcp-dpd/beamacctgetprofilems-green-746d677b76-lghl4', {'default': ['unknown-label']}),
    Real('E2', 'https://github.com/aws/karpenter-provider-aws/issues/6540', 'v0.32-v0.37 JSON',
         '{"level":"ERROR","time":"2024-07-18T04:12:31.208Z","logger":"controller.provisioner","message":"Could not schedule pod, incompatible with nodepool \\"default\\", daemonset overhead={\\"cpu\\":\\"910m\\",\\"memory\\":\\"844Mi\\",\\"pods\\":\\"10\\"}, key kubernetes.io/hostname, kubernetes.io/hostname DoesNotExist not in kubernetes.io/hostname In [hostname-placeholder-740854]","commit":"17d6c05","pod":"xxx-zookeeper-0"}',
         'karpenter', 'v0.32-v0.37', 'FailedScheduling', 'xxx-zookeeper-0', {'default': ['requirement-conflict']}),
    Real('E3', 'https://github.com/aws/karpenter-provider-aws/issues/6292', 'v0.32-v0.37 JSON',
         '{"level":"ERROR","time":"2024-05-28T20:49:25.812Z","logger":"controller.provisioner","message":"Could not schedule pod, all available instance types exceed limits for nodepool: \\"default\\"","commit":"17dd42b","pod":"podname/model-d4dnm"}',
         'karpenter', 'v0.32-v0.37', 'FailedScheduling', 'podname/model-d4dnm', {'': ['limits']}),
    Real('E4', 'https://github.com/aws/karpenter-provider-aws/issues/2383', 'v0.16-v0.31 console',
         'ERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with provisioner "default", incompatible requirements, key karpenter.sh/provisioner-name, karpenter.sh/provisioner-name DoesNotExist not in karpenter.sh/provisioner-name In [default]\t{"commit": "639756a", "pod": "karpenter/karpenter-788545f8d9-qjnx5"}',
         'karpenter', 'v0.16-v0.31', 'FailedScheduling', 'karpenter/karpenter-788545f8d9-qjnx5', {'default': ['requirement-conflict']}),
    Real('E5', 'https://github.com/aws/karpenter-provider-aws/issues/2476', 'v0.16-v0.31 JSON',
         '{"level":"ERROR","time":"2022-09-08T17:59:04.478Z","logger":"controller.provisioning","message":"Could not schedule pod, incompatible with provisioner \\"test\\", no instance type satisfied resources {\\"pods\\":\\"1\\"} and requirements node.kubernetes.io/instance-type In [m6i.xlarge], karpenter.sh/provisioner-name In [test], karpenter.sh/capacity-type In [on-demand], topology.kubernetes.io/zone DoesNotExist, node-type In [node], kubernetes.io/arch In [amd64], manged-by In [karpenter]","pod":"kube-public/example-karpenter"}',
         'karpenter', 'v0.16-v0.31', 'FailedScheduling', 'kube-public/example-karpenter', {'test': ['no-instance-type']}),
    Real('E6', 'https://github.com/aws/karpenter-provider-aws/issues/2899', 'v0.16-v0.31 console',
         '2022-12-05T09:58:42.908Z\tERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with provisioner "core-system", did not tolerate domain.node.dkb.cloud/system-core=true:NoExecute; incompatible with provisioner "ingress-system", did not tolerate domain.node.dkb.cloud/system-ingress=true:NoExecute; incompatible with provisioner "internal-services-tenant", no instance type satisfied resources {"cpu":"7","github.com/fuse":"4","memory":"8692Mi","pods":"1"} and requirements node.kubernetes.io/instance-type In [m5d.2xlarge m5d.4xlarge m5d.xlarge], topology.kubernetes.io/zone In [eu-central-1a eu-central-1b eu-central-1c], kubernetes.io/arch In [amd64], karpenter.sh/capacity-type In [on-demand], kubernetes.io/os In [linux], domain.node.dkb.cloud/internal-services-dev-tenant In [true], karpenter.sh/provisioner-name In [internal-services-tenant]\t{"commit": "27a51c0", "pod": "k4-alpha-dev-gitlab-runner-gitlab-runner/runner-wyassimf-project-25-concurrent-4j6s8g"}',
         'karpenter', 'v0.16-v0.31', 'FailedScheduling', 'k4-alpha-dev-gitlab-runner-gitlab-runner/runner-wyassimf-project-25-concurrent-4j6s8g', {'core-system': ['taint'], 'ingress-system': ['taint'], 'internal-services-tenant': ['no-instance-type']}),
    Real('E7', 'https://github.com/aws/karpenter-provider-aws/issues/1308', 'v0.6 console',
         '2022-02-09T22:20:06.877Z\tDEBUG\tcontroller.selection\tIgnoring pod, pod anti-affinity is not supported\t{"commit": "df57892", "pod": "default/elasticsearch-master-0"}',
         'karpenter', 'v0.6', 'Log', 'default/elasticsearch-master-0', {'': ['unsupported']}),
    Real('E8', 'https://github.com/aws/karpenter-provider-aws/issues/5101', 'v0.16-v0.31 console',
         '2023-11-16T15:11:49.499Z\tDEBUG\tcontroller.provisioner\t445 out of 613 instance types were excluded because they would breach provisioner limits\t{"commit": "dc3af1a"}',
         'karpenter', 'v0.16-v0.31', 'FailedScheduling', None, {'': ['excluded-types']}),
    Real('E9', 'https://github.com/aws/karpenter-provider-aws/issues/8378', 'v1 errorCauses fragment',
         '{"error":"no instance type met the scheduling requirements or had a required offering, requirements=coder In [workspace], karpenter.k8s.aws/ec2nodeclass In [default-bottlerocket], karpenter.k8s.aws/instance-category NotIn [t], karpenter.k8s.aws/instance-cpu Exists >4, karpenter.sh/capacity-type In [on-demand spot], karpenter.sh/nodepool In [coder-workspace], kubernetes.io/arch In [amd64], kubernetes.io/os In [linux], topology.kubernetes.io/zone DoesNotExist, resources={\\"cpu\\":\\"4180m\\",\\"memory\\":\\"6264Mi\\",\\"pods\\":\\"7\\"}"}]}',
         'karpenter', 'v1.5+', 'FailedScheduling', None, {'': ['no-instance-type']}),
    Real('E10', 'https://github.com/kubernetes-sigs/karpenter/issues/1904', 'v1.0-v1.4 error value over two lines',
         '"incompatible with nodepool \\"gpu\\", daemonset overhead={\\"cpu\\":\\"605m\\",\\"memory\\":\\"1288Mi\\",\\"pods\\":\\"12\\"}, did not tolerate nvidia.com/gpu=1:NoSchedule;\nincompatible with nodepool \\"app\\", daemonset overhead={\\"cpu\\":\\"605m\\",\\"memory\\":\\"1288Mi\\",\\"pods\\":\\"12\\"}, incompatible requirements, label \\"eks.amazonaws.com/nodegroup\\" does not have known values"',
         'karpenter', 'v1.0-v1.4', 'FailedScheduling', None, {'gpu': ['taint'], 'app': ['unknown-label']}),
    Real('E11', 'https://github.com/kubernetes-sigs/karpenter/issues/2809', 'v1.5+ event message',
         'Failed to schedule pod, unsatisfiable topology constraint for pod affinity, key=topology.kubernetes.io/zone (counts = us-east-1a: 0, us-east-1b: 0, us-east-1c: 0, podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone In [us-east-1a us-east-1b us-east-1c]; incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [public] not in karpenter.sh/nodepool In [private] ...',
         'karpenter', 'v1.5+', 'FailedScheduling', None, {'': ['topology', 'requirement-conflict']}),
    Real('E12', 'https://github.com/kubernetes-sigs/karpenter/issues/2785', 'v1.5+ error fragment',
         '"error": "unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = , podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone Exists"',
         'karpenter', 'v1.5+', 'FailedScheduling', None, {'': ['topology']}),
    Real('E13', 'https://github.com/kubernetes-sigs/karpenter/issues/3272', 'v1.5+ JSON behind a kubectl logs --prefix',
         '[pod/karpenter-78748f59d4-hnx82/controller] {"level":"ERROR","time":"2026-09-02T13:12:57.030Z","logger":"controller","caller":"scheduling/scheduler.go:302","message":"could not schedule pod","commit":"85eeae8","controller":"provisioner","namespace":"","name":"","reconcileID":"f8d9c232-f7ca-4976-8583-09d9f127232f","Pod":{"name":"spread-workload-8695444944-d5g7x","namespace":"lab"},"error":"incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [non-existent-zone] not in karpenter.sh/nodepool In [default-reserved]; no instance type met the scheduling requirements or had enough resources or had a required offering, requirements=karpenter.k8s.aws/ec2nodeclass In [default], karpenter.sh/capacity-type In [on-demand], karpenter.sh/initialized In [true], karpenter.sh/nodepool In [non-existent-zone], karpenter.sh/registered In [true], kubernetes.io/arch In [arm64], node.kubernetes.io/instance-type In [c7g.medium], topology.kubernetes.io/zone In [eu-west-2z], resources={\\"cpu\\":\\"750m\\",\\"memory\\":\\"256Mi\\",\\"pods\\":\\"3\\"}; incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [non-existent-zone] not in karpenter.sh/nodepool In [default]","errorCauses":[{"error":"incompatible requirements, key karpenter.sh/nodepool, karpe…',
         'karpenter', 'v1.5+', 'FailedScheduling', 'lab/spread-workload-8695444944-d5g7x', {'': ['requirement-conflict', 'no-instance-type', 'requirement-conflict']}),
    Real('E14', 'https://github.com/kubernetes-sigs/karpenter/issues/1306', 'v0.32-v0.37 JSON',
         '{"level":"ERROR","time":"2024-06-07T16:56:48.879+0800","logger":"controller.provisioner","message":"Could not schedule pod, incompatible with nodepool \\"app-c-ecs.r7.16xlarge\\", daemonset overhead={\\"pods\\":\\"1\\"}, unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = C: 1 B: 1 and 1 other(s), podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone In [C];  incompatible with nodepool \\"app-b-ecs.r7.16xlarge\\", daemonset overhead={\\"pods\\":\\"1\\"}, unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = C: 1 B: 1 and 1 other(s), podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone In [B];,"commit":"355bc85"…',
         'karpenter', 'v0.32-v0.37', 'FailedScheduling', None, {'app-c-ecs.r7.16xlarge': ['topology'], 'app-b-ecs.r7.16xlarge': ['topology']}),
    Real('E15', 'https://github.com/aws/karpenter-provider-aws/issues/7999', 'kubectl describe Events (karpenter)',
         'Warning  FailedScheduling  16s   karpenter        Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"629m","ephemeral-storage":"100Mi","memory":"1248Mi","pods":"11"}, unsatisfiable topology constraint for pod affinity, key=kubernetes.io/hostname (counts = ip-10-60-53-184.ec2.internal: 0, ip-10-60-53-209.ec2.internal: 0, ip-10-60-65-123.ec2.internal: 0, ip-10-60-81-253.ec2.internal: 0, ip-10-60-88-65.ec2.internal: 0, ip-10-60-92-26.ec2.internal: 0, podDomains = kubernetes.io/hostname…',
         'karpenter', 'v1.0-v1.4', 'FailedScheduling', None, {'default': ['topology']}),
    Real('E16', 'https://github.com/kubernetes-sigs/karpenter/issues/2123', 'v1.0-v1.4 JSON',
         '{"level":"ERROR","time":"2025-04-04T10:15:40.110Z","logger":"controller","caller":"provisioning/provisioner.go:350","message":"could not schedule pod","controller":"provisioner","namespace":"","name":"","reconcileID":"9aec5d56-039d-4b85-bcbd-78e58bfef269","Pod":{"name":"nginx-565d69d9cd-g5fkp","namespace":"default"},"error":"incompatible with nodepool \\"worker-multi-az-xxlarge\\", daemonset overhead={\\"cpu\\":\\"681m\\",\\"memory\\":\\"652Mi\\",\\"pods\\":\\"11\\"}, incompatible requirements, label \\"node-role.kaas.acquia.io/stable\\" does not have known values (typo of \\"acquia.io/stage\\"?); incompa…',
         'karpenter', 'v1.0-v1.4', 'FailedScheduling', 'default/nginx-565d69d9cd-g5fkp', {'worker-multi-az-xxlarge': ['unknown-label']}),
    Real('E17', 'https://github.com/aws/karpenter-provider-aws/issues/5676', 'v0.32-v0.37 JSON',
         '{"level":"ERROR","time":"2024-02-15T11:10:12.564Z","logger":"controller.provisioner","message":"Could not schedule pod, incompatible with nodepool \\"<omitted>-master\\", daemonset overhead={\\"cpu\\":\\"480m\\",\\"memory\\":\\"812700032\\",\\"pods\\":\\"5\\"}, no instance type satisfied resources {\\"cpu\\":\\"6480m\\",\\"memory\\":\\"30877471104\\",\\"pods\\":\\"6\\"} and requirements <omitted>-server-role In [<omitted>], karpenter.k8s.aws/instance-cpu In [8], karpenter.k8s.aws/instance-family In [m6a], karpenter.k8s.aws/instance-hypervisor In [nitro], karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [<omitted>-master], kubernetes.io/arch In [amd64], kubernetes.io/os In [linux], topology.kubernetes.io/zone In [eu-west-1a] (no instance type which had enough resources and the required offering met the scheduling requirements); incompatible with nodepool \\"<omitted>-slave\\", …',
         'karpenter', 'v0.32-v0.37', 'FailedScheduling', None, {'<omitted>-master': ['no-instance-type'], '<omitted>-slave': []}),
    Real('E18', 'https://github.com/aws/karpenter-provider-aws/issues/5101', 'v0.16-v0.31 console',
         '2023-11-16T15:11:49.499Z\tERROR\tcontroller.provisioner\tCould not schedule pod, all available instance types exceed provisioner limits; incompatible with provisioner "eng-eck-logs-warm-c", incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-central-1b] not in topology.kubernetes.io/zone In [eu-central-1c]; incompatible with provisioner "eng-shared", incompatible requirements, label "role" does not have known values; incompatible with provisioner "eng-eck-logs-hot-b", incompatible requirements, key role, role In [eck-logs-warm] not in role In [eck-logs-hot]; …',
         'karpenter', 'v0.16-v0.31', 'FailedScheduling', None, {'eng-eck-logs-warm-c': ['requirement-conflict'], 'eng-shared': ['unknown-label'], 'eng-eck-logs-hot-b': ['requirement-conflict'], '': ['limits']}),
    Real('CA', 'https://github.com/kubernetes/autoscaler/issues/3503', 'cluster-autoscaler NotTriggerScaleUp',
         'I0910 18:42:33.914842       1 event.go:281] Event(v1.ObjectReference{Kind:"Pod", Namespace:"test", Name:"test-69c4886596-pssfj", UID:"bb1cd249-0fd3-42b9-bc01-f22b0bbafa64", APIVersion:"v1", ResourceVersion:"11897361", FieldPath:""}): type: \'Normal\' reason: \'NotTriggerScaleUp\' pod didn\'t trigger scale-up (it wouldn\'t fit if a new node is added): 1 node(s) didn\'t match node selector',
         'cluster-autoscaler', None, 'NotTriggerScaleUp', 'test/test-69c4886596-pssfj', {'': ['node-filter']}),
    Real('NOMINATED', 'https://github.com/kubernetes-sigs/karpenter/issues/932', 'kubectl describe Events (Nominated)',
         '  Normal   Nominated         108s (x12 over 24m)  karpenter          Pod should schedule on: nodeclaim/default-cvkcv, node/ip-10-199-71-41.ec2.internal',
         'karpenter', None, 'Nominated', None, {}),
    Real('FIT', 'https://github.com/kubernetes-sigs/karpenter/issues/932', 'kubectl describe Events (default-scheduler FitError)',
         "  Warning  FailedScheduling  77s (x3 over 4m14s)  default-scheduler  0/8 nodes are available: 1 Insufficient memory, 1 node(s) didn't find available persistent volumes to bind, 2 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}, 4 node(s) had untolerated taint {im-a-sparklike: true}. preemption: 0/8 nodes are available: 1 No preemption victims found for incoming pod, 7 Preemption is not helpful for scheduling..",
         'kube-scheduler', None, 'FailedScheduling', None, {'': ['node-filter', 'taint', 'taint', 'volume']}),
]


@pytest.mark.parametrize("real", REAL_LINES, ids=[r.name for r in REAL_LINES])
def test_real_line(real: Real) -> None:
    (item,) = explain_text(real.line).item_list()
    p = item.parsed
    assert (p.source, p.dialect, p.event, p.pod) == (real.source, real.dialect, real.event, real.pod), real.url
    kinds = {pool.name: [r.kind for r in pool.reasons] for pool in p.pools}
    if p.reasons:
        kinds[""] = [r.kind for r in p.reasons]
    assert kinds == real.kinds, real.url
    assert item.plain and not item.plain.startswith("Not understood")


def test_every_dialect_family_has_a_real_line() -> None:
    dialects = {r.dialect for r in REAL_LINES if r.source == "karpenter"}
    assert dialects >= {"v0.6", "v0.16-v0.31", "v0.32-v0.37", "v1.0-v1.4", "v1.5+"}
    assert {r.source for r in REAL_LINES} == {"karpenter", "kube-scheduler", "cluster-autoscaler"}
    assert all(r.url.startswith("https://github.com/") for r in REAL_LINES)
