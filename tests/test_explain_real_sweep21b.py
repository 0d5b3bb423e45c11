"""explain on a new user's trial (session 21) and the threads swept after it: messages pasted in public issue threads,
none cited elsewhere in tests/, each with the cause its thread established. The trial's findings: a `kubectl get
events` row pasted without its LAST SEEN column (read as a describe row: its object taken for the Age, the word
`pod` for the scheduler's name, the pod lost), a Nominated + FailedScheduling pair worded as a capacity dispute
with Fargate's taint as a cause to fix, a v0.32-v0.37 line running a NodePool and a Provisioner labelled v0.16-v0.31
(and v0.5's `matched 0/1 provisioners`), and a pretty-printed JSON record whose first lines were counted
unrecognised. The threads swept after it: a nominated existing node in conflict with the pod's volume (said as a
node Karpenter launched), v0.32's karpenter.sh/legacy migration taint (a toleration advised), claims nominated one
after another beside a node under MemoryPressure (said as launches that failed), a node.kubernetes.io/unreachable
taint (said as a startup taint) and a no-provisioner StorageClass of local volumes.

Every message is copied as its thread shows it. `says` are words the answer must contain for the established cause;
`never` the misdiagnosis or misreading a reader would take.
"""

from __future__ import annotations

import pytest
from explain_pastes import Paste, check_new_threads, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader, enrich
from karpplan.explain.report import explain_text

PASTES: dict[str, Paste] = {
    # a `kubectl get events` row without its LAST SEEN column: cluster-autoscaler's event about pod pega-web-1 (the
    # chart's volume was in another zone than any node group the autoscaler could grow)
    'ca-event-row-without-last-seen': Paste(
        'https://github.com/pegasystems/pega-helm-charts/issues/663',
        "Normal    NotTriggerScaleUp        pod/pega-web-1                  pod didn't trigger scale-up: 1 Insufficient"
        " memory, 1 node(s) had volume node affinity conflict\n",
        {'node-filter', 'volume'}, ('Pod pega-web-1 did not make cluster-autoscaler add a node', 'template node'),
        ('by the scheduler pod', 'no pod named')),
    # v1.x pretty-printed: the pod's required podAffinity on hostname followed pods that ran on no node the pool
    # reaches (the thread's cause), every line of the record one record
    'pretty-printed-pod-affinity-record': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/8000',
        '{"level":"ERROR",\n"time":"2025-04-16T17:43:44.030Z",\n"logger":"controller",\n"message":"could not schedule'
        ' pod",\n"commit":"4f41a6d",\n"controller":"provisioner",\n"namespace":"",\n"name":"",\n"reconcileID":"fe5e5c2a'
        '-ead3-4d78-a2fc-32a2907f02c2",\n"Pod":{"name":"docapi-7cd65b9f44-pvzlm","namespace":"docapi"},\n"error":"inco'
        'mpatible with nodepool \\"default\\", daemonset overhead={\\"cpu\\":\\"629m\\",\\"ephemeral-storage\\":\\"100Mi'
        '\\",\\"memory\\":\\"1248Mi\\",\\"pods\\":\\"11\\"}, unsatisfiable topology constraint for pod affinity, key=ku'
        'bernetes.io/hostname (counts = ip-10-60-53-184.ec2.internal: 0, ip-10-60-53-209.ec2.internal: 0, ip-10-60-65-'
        '123.ec2.internal: 0, ip-10-60-81-253.ec2.internal: 0, ip-10-60-88-65.ec2.internal: 0, ip-10-60-92-26.ec2.int'
        'ernal: 0, podDomains = kubernetes.io/hostname Exists, nodeDomains = kubernetes.io/hostname In [hostname-plac'
        'eholder-35074])"}\n',
        {'topology'}, ('spec.affinity.podAffinity on kubernetes.io/hostname', 'Pod docapi/docapi-7cd65b9f44-pvzlm'),
        ()),
    # v0.19: Karpenter added the volume's zone to the first of the pod's ORed nodeSelectorTerms only and relaxed it
    # away, so it nominated an existing node in another zone (fixed by kubernetes-sigs/karpenter#104)
    'nominated-node-without-the-volume-zone': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/2971',
        "Warning  FailedScheduling  2m28s (x8 over 9m3s)  default-scheduler  0/6 nodes are available: 1 node(s) had "
        "volume node affinity conflict, 2 node(s) didn't match Pod's node affinity/selector, 3 Insufficient cpu.      "
        "                        \u2502\nNormal   Nominated         18s (x6 over 10m)     karpenter          Pod should "
        "schedule on ip-10-20-93-221.us-east-2.compute.internal \n",
        {'node-filter', 'volume'}, ('most likely the nominated one', 'nodeSelectorTerms', 'kubectl get node -L '
                                    'topology.kubernetes.io/zone'),
        ('the one Karpenter launched for it', 'disagree on capacity')),
    # a StorageClass of kubernetes.io/no-provisioner (local volumes): no PersistentVolume on the nodes the pod may use
    'yaml-status-local-volumes-and-unreachable-nodes': Paste(
        'https://github.com/scylladb/scylla-operator/issues/523',
        "  status:\n    conditions:\n    - lastProbeTime: null\n      lastTransitionTime: \"2021-03-30T01:08:44Z\"\n"
        "      message: '0/6 nodes are available: 2 node(s) had taint {node.kubernetes.io/unreachable:\n        }, that "
        "the pod didn''t tolerate, 4 node(s) didn''t find available persistent\n        volumes to bind.'\n      reaso"
        "n: Unschedulable\n      status: \"False\"\n      type: PodScheduled\n    phase: Pending\n",
        {'node-filter', 'volume', 'taint'}, ('kubernetes.io/no-provisioner', 'stopped reporting'),
        ('add tolerations to spec.tolerations',)),
    # v0.32 migration: the old Provisioner carries the migration guide's karpenter.sh/legacy taint; the pods had no
    # NodePool of their own to go to
    'v032-legacy-taint-on-the-old-provisioner': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/7188',
        'did not tolerate karpenter.sh/legacy=true:NoSchedule; incompatible with provisioner \\"default\\"\n',
        {'taint'}, ('v0.32 migration guide', 'do not tolerate it', 'The pod needs a NodePool', 'v0.32-v0.37 log'),
        ('add a toleration (key: karpenter.sh/legacy', 'v0.16-v0.31')),
    # the claims' nodes came up and filled past their memory (MemoryPressure): not a launch that failed
    'renominated-claims-beside-memory-pressure': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5463',
        " Normal   Nominated         3m44s                karpenter          Pod should schedule on: nodeclaim/default-"
        "zlp9c\n  Normal   Nominated         94s                  karpenter          Pod should schedule on: nodeclaim/"
        "default-c7gls\n  Warning  FailedScheduling  26s (x5 over 2m22s)  default-scheduler  0/3 nodes are available: 1"
        " node(s) had untolerated taint {node.kubernetes.io/memory-pressure: }, 2 Too many pods. preemption: 0/3 nodes "
        "are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..\n "
        " Warning  FailedScheduling  16s (x3 over 4m44s)  default-scheduler  0/2 nodes are available: 2 Too many pods. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..\n",
        {'node-filter', 'taint'}, ('A node did come up', 'MemoryPressure', 'Too many pods'),
        ('failed to launch', 'never registered')),
    # two NodePools refusing pods meant for a managed node group: the GPU pool's taint and the app pool's missing
    # node-group label keep them off on purpose, and Karpenter logs each pending pod's refusal (expected noise)
    'node-group-pods-refused-by-every-pool': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/7574',
        '"incompatible with nodepool \\"gpu\\", daemonset overhead={\\"cpu\\":\\"605m\\",\\"memory\\":\\"1288Mi'
        '\\",\\"pods\\":\\"12\\"}, did not tolerate nvidia.com/gpu=1:NoSchedule;\nincompatible with nodepool '
        '\\"app\\", daemonset overhead={\\"cpu\\":\\"605m\\",\\"memory\\":\\"1288Mi\\",\\"pods\\":\\"12\\"}'
        ', incompatible requirements, label \\"eks.amazonaws.com/nodegroup\\" does not have known values"\n',
        {'taint', 'unknown-label'}, ('a label only nodes of an EKS managed node group carry', 'Karpenter logging it is '
                                    'expected', 'look at the node group'),
        ('add the label there',)),
    # cert-manager's webhook with hostNetwork (and its host port) in a namespace a Fargate profile selects
    'fargate-refuses-host-network': Paste(
        'https://github.com/cert-manager/website/issues/696',
        '  Warning  FailedScheduling  112s  fargate-scheduler  Pod not supported on Fargate: fields not supported: '
        'HostNetwork, port contains HostIP or HostPort\n',
        {'unsupported'}, ('HostNetwork (spec.hostNetwork)', 'containers[].ports[].hostPort', 'does not fall back to EC2'),
        ('add a toleration',)),
}

# Not counted in the sweep (their threads are cited elsewhere): the trial's other findings, as the user pasted them
_K932 = ('  Warning  FailedScheduling  6m17s (x5 over 23m)  default-scheduler  0/9 nodes are available: 1 Insufficient '
         "memory, 1 node(s) didn't find available persistent volumes to bind, 2 node(s) had untolerated taint {eks.ama"
         'zonaws.com/compute-type: fargate}, 5 node(s) had untolerated taint {im-a-sparklike: true}. preemption: 0/9 no'
         'des are available: 1 No preemption victims found for incoming pod, 8 Preemption is not helpful for scheduling'
         '..\n  Normal   Nominated         108s (x12 over 24m)  karpenter          Pod should schedule on: nodeclaim/def'
         'ault-cvkcv, node/ip-10-199-71-41.ec2.internal\n')  # kubernetes-sigs/karpenter#932
_A5169 = ('{"level":"ERROR","time":"2023-11-28T07:49:22.662Z","logger":"controller.provisioner","message":"Could not sc'
          'hedule pod, incompatible with nodepool \\"arm-instance-store\\", daemonset overhead={\\"cpu\\":\\"180m\\",\\"m'
          'emory\\":\\"504Mi\\",\\"pods\\":\\"4\\"}, did not tolerate arch=arm64:NoSchedule; incompatible with provisio'
          'ner \\"arm\\", daemonset overhead={\\"cpu\\":\\"205m\\",\\"memory\\":\\"674Mi\\",\\"pods\\":\\"7\\"}, did no'
          't tolerate arch=arm64:NoSchedule; incompatible with nodepool \\"x86-instance-store\\", daemonset overhead={'
          '\\"cpu\\":\\"180m\\",\\"memory\\":\\"504Mi\\",\\"pods\\":\\"4\\"}, no instance type satisfied resources {\\"'
          'cpu\\":\\"280m\\",\\"memory\\":\\"760Mi\\",\\"pods\\":\\"5\\"} and requirements karpenter.sh/capacity-type I'
          'n [on-demand spot], karpenter.sh/nodepool In [x86-instance-store], kubernetes.io/arch In [amd64], kubernetes'
          '.io/os In [linux] (no instance type has enough resources)"}\n')  # aws/karpenter-provider-aws#5169, shortened
_V05 = ('2022-01-26T16:07:43.841Z\tDEBUG\tcontroller.selection\tCould not schedule pod, matched 0/1 provisioners, tried '
        'provisioner/provisioner-test: invalid nodeSelector "dwh", [yes-dwh] not in []\t{"commit": "5047f3c", "pod": '
        '"dwh-dev/karpenter-test-4vgnb"}\n')  # aws/karpenter-provider-aws#1225


@pytest.fixture(scope="module")
def load() -> CatalogFor:
    return catalog_loader(None, None)


@pytest.mark.parametrize("name", sorted(PASTES))
def test_real_paste(name: str, load: CatalogFor) -> None:
    check_paste(PASTES[name], load)


def test_the_sweep_cites_threads_not_cited_before() -> None:
    """Each thread once, and none the earlier sweeps cite."""
    check_new_threads(PASTES.values(), __file__)


@pytest.mark.parametrize("row, pod", [
    ("Normal    NotTriggerScaleUp        pod/pega-web-1                  pod didn't trigger scale-up: 1 Insufficient "
     "memory, 1 node(s) had volume node affinity conflict", "pega-web-1"),
    ("Warning   FailedScheduling       pod/web-0    0/8 nodes are available: 7 node(s) had volume node affinity "
     "conflict, 1 Insufficient cpu.", "web-0"),
    ("shop      Warning   FailedScheduling   pod/web-0   0/3 nodes are available: 3 Insufficient cpu.", "shop/web-0"),
    ("2m21s     Warning   FailedScheduling   pod/web-0   0/3 nodes are available: 3 Insufficient cpu.", "web-0"),
    # `kubectl events` (1.26+): the LAST SEEN counts repeats, the object's kind is capitalised
    ("3m12s (x2 over 3m12s)   Warning   FailedScheduling   Pod/web-0   0/3 nodes are available: 3 Insufficient cpu.",
     "web-0"),
])
def test_an_events_row_without_last_seen_names_its_pod_and_source(row: str, pod: str) -> None:
    """`TYPE REASON OBJECT MESSAGE` (LAST SEEN cut): the object is the pod, the reason says the source - never the
    object taken for a describe row's Age and `pod` for a scheduler's name."""
    [item] = explain_text(row + "\n").item_list()
    assert item.parsed.pod == pod and item.parsed.scheduler is None
    assert item.parsed.source == ("cluster-autoscaler" if "NotTriggerScaleUp" in row else "kube-scheduler")
    assert "scheduler pod" not in item.plain


def test_a_nomination_beside_fargate_taints_leads_with_the_volume_not_the_taint(load: CatalogFor) -> None:
    """kubernetes-sigs/karpenter#932: the untolerated taints are other nodes (Karpenter does not nominate a node whose
    taints the pod does not tolerate): never a cause to fix; the unbound claim leads, and 1 node of 9 short of memory
    is no capacity dispute."""
    explanation = explain_text(_K932)
    enrich(explanation, load)
    [nominated] = [i for i in explanation.item_list() if i.parsed.event == "Nominated"]
    told = nominated.plain
    assert "The lead is the pod's volume" in told and "kubectl describe pvc" in told
    assert "Only 1 of the 9 nodes was short of room" in told
    assert "are other nodes" in told and "its taint is not one to tolerate" in told
    assert "disagree on capacity" not in told
    fix = told[told.index("waiting will not help"):told.index("The other reasons")]
    assert "untolerated taint" not in fix


def test_a_line_with_both_a_nodepool_and_a_provisioner_is_v032() -> None:
    """NodePools exist from v0.32, Provisioners until v0.33 was run beside them: such a line is v0.32-v0.37, and
    each pool is named with its own kind and fields."""
    [item] = explain_text(_A5169).item_list()
    assert item.parsed.dialect == "v0.32-v0.37"
    assert 'Provisioner "arm" taints its nodes' in item.plain and "(spec.taints)" in item.plain
    assert 'NodePools "arm-instance-store" and "arm"' not in item.plain


def test_matched_provisioners_is_an_early_provisioner_dialect() -> None:
    """`matched 0/1 provisioners, tried provisioner/X` is v0.5-v0.15's (before v0.16), worded with a Provisioner's
    fields."""
    [item] = explain_text(_V05).item_list()
    assert item.parsed.dialect == "v0.5-v0.15" and "v0.16-v0.31" not in item.plain
    assert item.to_document()["dialect"] == "v0.6"  # the contract's closed list: its earliest dialect


def test_a_pretty_printed_record_opened_on_its_first_field_is_one_record() -> None:
    """`{"level":"ERROR",` then a field a line: every line of the record is explained, none unrecognised - and lines
    around it stay records of their own."""
    text = "INFO starting\n" + PASTES['pretty-printed-pod-affinity-record'].text + "INFO done\n"
    explanation = explain_text(text)
    assert len(explanation.item_list()) == 1
    assert explanation.summary()["unrecognised"] == 2
    assert [line for line, _ in explanation.unrecognised_lines] == [1, 13]


def test_a_pool_head_ended_by_a_semicolon_keeps_its_reason() -> None:
    """kubernetes-sigs/karpenter#3272's tail: `daemonset overhead={...}; incompatible requirements, key ...` - the
    clause after the `; ` is that pool's reason, not a reason cut off; a pinned pool that may not exist is named."""
    text = ('{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"web-7d9f","namespace":"default"},"error":'
            '"incompatible with nodepool \\"default\\", daemonset overhead={\\"cpu\\":\\"750m\\",\\"memory\\":\\"256Mi'
            '\\",\\"pods\\":\\"3\\"}; incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [no'
            'n-existent-zone] not in karpenter.sh/nodepool In [default]"}\n')
    [item] = explain_text(text).item_list()
    assert [r.kind for r in item.parsed.pools[0].reasons] == ["requirement-conflict"] and not item.parsed.reasons
    assert "cut off" not in item.plain and "If no pool of that name exists (kubectl get nodepools)" in item.plain


def test_an_unnamed_pool_at_its_limits_is_none_of_the_named_ones() -> None:
    """aws/karpenter-provider-aws#5101 (v0.31): `all available instance types exceed provisioner limits` names no pool;
    Karpenter skips such a pool before comparing it with the pod, so it is none of the pools named after it - and the
    DEBUG line that narrowed another pool's types is not a failure of the pod."""
    text = ('2023-11-16T15:11:49.499Z\tDEBUG\tcontroller.provisioner\t445 out of 613 instance types were excluded because'
            ' they would breach provisioner limits\t{"commit": "dc3af1a"}\n2023-11-16T15:11:49.499Z\tERROR\tcontroller.pro'
            'visioner\tCould not schedule pod, all available instance types exceed provisioner limits; incompatible with p'
            'rovisioner "eng-shared", incompatible requirements, label "role" does not have known values\n')
    excluded, failed = explain_text(text).item_list()
    assert excluded.plain.startswith("Karpenter narrowed the instance types") and "not a failure" in excluded.plain
    assert 'That pool is none of those named after it (Provisioner "eng-shared")' in failed.plain


def test_prices_say_whose_region_they_are(load: CatalogFor) -> None:
    """aws/karpenter-provider-aws#7839's r5a.8xlarge pod (no zone in the message): the larger types' prices are the
    default region's, and the answer says so (the new user ran in eu-central-1)."""
    text = ('  Warning  FailedScheduling  106s (x2 over 6m46s)  karpenter          Failed to schedule pod, incompatible '
            'with nodepool "default", daemonset overhead={"cpu":"500m","memory":"640Mi","pods":"5"}, no instance type '
            'satisfied resources {"cpu":"29500m","memory":"246400Mi","pods":"6"} and requirements karpenter.k8s.aws/ec2'
            'nodeclass In [default], karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [default], node'
            '.kubernetes.io/instance-type In [r5a.8xlarge] (no instance type has enough resources)\n')
    explanation = explain_text(text)
    enrich(explanation, load)
    [item] = explanation.item_list()
    assert "r5a.12xlarge ($" in item.plain and "(Prices are us-east-1's; explain --region names your region.)" in item.plain
    explanation = explain_text(text)
    enrich(explanation, catalog_loader("eu-central-1", None))
    assert "(Prices are eu-central-1's" in explanation.item_list()[0].plain
