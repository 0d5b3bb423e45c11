"""explain on a sixth sweep of messages pasted in public issue threads (session 19), none cited elsewhere in tests/,
each with the cause its thread established, and the known faults the sweep fixed, each on its thread's own text:
the pod of a structured line read wherever Karpenter's loggers put it, the "relaxing soft constraints" debug line,
a clause cut off mid-word, several NodeClaims rejected in one line, and a nomination that named its rejection's
causes a second time.

Every message is copied as its thread shows it. `says` are words the answer must contain for the established cause;
`never` the misdiagnosis or misreading the code before this sweep gave (or one a reader would take for the fix).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from explain_pastes import Paste, check_new_threads, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader, enrich
from karpplan.explain.report import explain_text

PASTES: dict[str, Paste] = {
    # a consolidation simulation's debug lines (controller.deprovisioning): the volume's zone (and region) and two
    # preferences Karpenter dropped on its retry; neither is a failure (the thread's pods were placed, in one zone)
    'relaxing-lines-of-a-consolidation-simulation': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5597',
        '2024-02-09T10:18:10.521Z\tDEBUG\tcontroller.deprovisioning\tadding requirements derived from pod volumes, '
        '[{topology.kubernetes.io/zone In [eu-west-1b]} {topology.kubernetes.io/region In [eu-west-1]}]\t{"commit": '
        '"74bf29c", "pod": "monitoring/mimir-ingester-zone-b-0"}\n2024-02-09T10:18:10.924Z\tDEBUG\tcontroller.depro'
        'visioning\trelaxing soft constraints for pod since it previously failed to schedule, removing: spec.affini'
        'ty.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]={"weight":10,"preference":{"matchExpres'
        'sions":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["spot"]}]}}\t{"commit": "74bf29c", "p'
        'od": "monitoring/mimir-gateway-d84dcd5cd-s4jr2"}\n',
        {'volume', 'requirement-conflict'},
        ('Pod monitoring/mimir-gateway-d84dcd5cd-s4jr2: an earlier try', 'heaviest preferred node affinity term',
         'not a failure by itself', 'may only run in eu-west-1b,'),
        ('could not be scheduled', 'eu-west-1b or eu-west-1')),
    # v0.33: the scheduler's one rejection (of the single node there was) made Karpenter launch a NodeClaim; the nodes
    # never joined the cluster (the maintainer's question, the reporter's instances terminated) - no capacity dispute
    'nomination-after-the-rejection-claim-never-joined': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/5267',
        'Events:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  -'
        '---               -------\n  Warning  FailedScheduling  54s   default-scheduler  0/1 nodes are available: 1 '
        'Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..\n  '
        'Normal   Nominated         53s   karpenter          Pod should schedule on: nodeclaim/default-zjrnm\n',
        {'node-filter'}, ('launched nodeclaim/default-zjrnm for it after the scheduler\'s rejection',
                          'kubectl describe nodeclaim default-zjrnm'),
        ('keeps rejecting', 'disagree on capacity', 'waiting will not help')),
    # a soft affinity on karpenter.sh/nodepool DoesNotExist: Karpenter reads the preferred term as well and ignores the
    # pod, which then waited on the node-group nodes alone (its volume's zone had none with room)
    'ignored-pod-preferring-non-karpenter-nodes': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/1334',
        '{"level":"DEBUG","time":"2024-06-18T14:32:52.068Z","logger":"controller.provisioner","message":"ignoring pod,'
        ' configured to not run on a Karpenter provisioned node via the karpenter.sh/nodepool DoesNotExist requirement'
        '","commit":"6b868db","pod":"monitoring/prometheus-prometheus-kube-prometheus-prometheus-0"}\n',
        {'requirement-conflict'}, ('Pod monitoring/prometheus-prometheus-kube-prometheus-prometheus-0: karpenter '
                                   'ignores it', 'preferred (soft) term', 'karpenter.sh/nodepool DoesNotExist'),
        ('could not be scheduled', )),
    # the EFS CSI driver's pods on a Fargate-only cluster: node agents Fargate refuses; Fargate mounts EFS itself
    'efs-csi-driver-pods-on-fargate': Paste(
        'https://github.com/kubernetes-sigs/aws-efs-csi-driver/issues/589',
        '`Pod not supported on Fargate: fields not supported: HostNetwork, invalid SecurityContext fields: Privileged, '
        'port contains HostIP or HostPort`\n',
        {'unsupported'}, ('node agent', 'without the EFS CSI driver\'s pods', 'spec.hostNetwork'), ()),
    # cluster-autoscaler 1.2's scale-up predicate for two StatefulSet pods whose EBS volumes are in a zone the
    # multi-zone autoscaling group's template node is not: one node group per zone is the fix (each pod its own item)
    'ca-scale-up-no-volume-zone-two-pods': Paste(
        'https://github.com/kubernetes/autoscaler/issues/1649',
        'I0204 07:31:14.597296       1 scale_up.go:152] Scale-up predicate failed: NoVolumeZoneConflict predicate '
        'mismatch, cannot put default/iconverse-elasticsearch-0 on template-node-for-iconverse-worker-nodes-NodeGrou'
        'p-1B0XF3VJS2O0J-1244933151533827896, reason: node(s) had no available volume zone\nI0204 07:31:14.597434  '
        '     1 scale_up.go:152] Scale-up predicate failed: NoVolumeZoneConflict predicate mismatch, cannot put defau'
        'lt/iconverse-mysql-1 on template-node-for-iconverse-worker-nodes-NodeGroup-1B0XF3VJS2O0J-12449331515338278'
        '96, reason: node(s) had no available volume zone\n',
        {'node-filter', 'volume'}, ('Pod default/iconverse-elasticsearch-0', 'Pod default/iconverse-mysql-1',
                                    'give each zone its own node group'), ('Seen 2 times', )),
    # kube-scheduler before 1.9: a PV in a zone without nodes of the single multi-zone instance group; kops's answer
    # was an instance group per zone (for the autoscaler to grow the right one)
    'old-fit-failure-summary-volume-zone': Paste(
        'https://github.com/kubernetes/kops/issues/1998',
        'pod (belligerent-ibis-minio-825379079-zv6bb) failed to fit in any node fit failure summary on nodes : '
        'NoVolumeZoneConflict (4), PodToleratesNodeTaints (3)\n',
        {'node-filter', 'volume'}, ('Pod belligerent-ibis-minio-825379079-zv6bb', 'a volume never moves',
                                    'one node group per zone'), ('Lower the pod', )),
    # GKE out of GPU quota: the node group's scale-up failed, so cluster-autoscaler holds it in backoff (quoted in prose)
    'ca-backoff-after-failed-scale-up-quota': Paste(
        'https://github.com/cortexlabs/cortex/issues/1685',
        'error message is an event on the pod, and it says "pod didn\'t trigger scale-up (it wouldn\'t fit if a new '
        'node is added): 1 in backoff after failed scale-up"\n',
        {'node-filter'}, ('in backoff', 'a quota', '1 in backoff after failed scale-up.'),
        ("no node group's template node would take it", 'scale-up".')),
    # the head of the pod's event (the thread quotes it in prose): 1.35's DynamicResources scoring bug with a shared
    # multi-node claim beside per-node claims, fixed by kubernetes/kubernetes#139017 and its cherry-picks
    'dra-score-plugin-error-135-regression': Paste(
        'https://github.com/kubernetes/kubernetes/issues/139016',
        'running Score plugins: plugin "DynamicResources" failed with: number of allocations 1 is smaller than '
        'number of claim\n',
        {'unsupported'}, ('DynamicResources plugin failed with an error', 'not a verdict that no node fits',
                          'kubernetes/kubernetes#139016'), ('unrecognised', )),
    # k3s's ServiceLB pod for pihole's web Service (MetalLB annotations in the values): ServiceLB holds each
    # LoadBalancer Service's ports as host ports on every node, one Service per port (k3s-io/k3s#1969); with MetalLB
    # ServiceLB is to be disabled
    'k3s-servicelb-pod-out-of-host-ports': Paste(
        'https://github.com/MoJo2600/pihole-kubernetes/issues/199',
        "2m21s       Warning   FailedScheduling        pod/svclb-pihole-web-lcj6p       0/5 nodes are available: 1 "
        "node(s) didn't have free ports for the requested pod ports, 4 node(s) didn't match Pod's node affinity/"
        "selector.\n",
        {'node-filter'}, ("k3s's ServiceLB", '--disable servicelb', 'Pod svclb-pihole-web-lcj6p'), ()),
}

_VOLUME_V1 = ('{"level":"DEBUG","time":"2025-08-26T09:12:44.101Z","logger":"controller","caller":"scheduling/volumetopol'
              'ogy.go:77","message":"adding requirements derived from pod volumes, [{topology.ebs.csi.aws.com/zone In [us'
              '-east-1a]}]","commit":"1c39126","controller":"provisioner","namespace":"","name":"","reconcileID":"7f1e'
              '0c2a-5b1d-4f0e-9a57-0d6b0e3f4a11","Pod":{"name":"postgres-0","namespace":"db"}}\n')

REGRESSIONS: dict[str, Paste] = {
    # (a) the thread's line as Karpenter v1 logs it, with the Pod object WithValues adds (the thread's paste dropped
    # the other fields): the pod is the record's, not "no pod named"
    'volume-line-pod-from-its-pod-object': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/2458', _VOLUME_V1,
        {'volume'}, ('Pod db/postgres-0', 'may only run in us-east-1a'), ('The pod could not', )),
    # (b) Karpenter v1.4+ puts the dropped preference in a `reason` field of its own (preferences.go)
    'relaxing-line-v1-reason-field': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/2458',
        '{"level":"DEBUG","time":"2025-08-26T09:12:45.000Z","logger":"controller","caller":"scheduling/preferences.go'
        ':52","message":"relaxing soft constraints for pod since it previously failed to schedule","commit":"1c39126'
        '","controller":"provisioner","Pod":{"name":"web-7d9f","namespace":"shop"},"reason":"removing: spec.topology'
        'SpreadConstraints = {\\"maxSkew\\":1,\\"topologyKey\\":\\"topology.kubernetes.io/zone\\",\\"whenUnsatisfiab'
        'le\\":\\"ScheduleAnyway\\",\\"labelSelector\\":{\\"matchLabels\\":{\\"app\\":\\"web\\"}}}"}\n',
        {'topology'}, ('Pod shop/web-7d9f', 'whenUnsatisfiable: ScheduleAnyway on topology.kubernetes.io/zone',
                       'not a failure by itself'), ('could not be scheduled', 'unrecognised')),
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


@pytest.mark.parametrize("where", ['"pod":"db/postgres-0"', '"Pod":{"name":"postgres-0","namespace":"db"}',
                                   '"Pod":{"namespace":"db","name":"postgres-0"}',
                                   '"Pod.name":"postgres-0","Pod.namespace":"db"'])
def test_a_structured_lines_pod_is_read_wherever_it_stands(where: str) -> None:
    """(a) v0.3x's `pod`, v1's `Pod` object (either key order), a log shipper's flattened `Pod.name`: the same pod,
    for the volume line, the relaxing line and a could-not-schedule line alike."""
    head = '{"level":"DEBUG","time":"2025-08-26T09:12:44.101Z","logger":"controller",'
    for message in ('"message":"adding requirements derived from pod volumes, [{topology.ebs.csi.aws.com/zone In '
                    '[us-east-1a]}]"',
                    '"message":"relaxing soft constraints for pod since it previously failed to schedule, removing: '
                    'spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]={}"',
                    '"message":"could not schedule pod","error":"incompatible with nodepool \\"a\\", daemonset '
                    'overhead={}, did not tolerate dedicated=x:NoSchedule"'):
        items = explain_text(head + message + "," + where + "}\n").item_list()
        assert [i.parsed.pod for i in items] == ["db/postgres-0"], (message, where)


def test_karpenter_v1_5_volume_line_names_the_zone() -> None:
    """(a) v1.5+'s wording (`getting requirements from pod volumes`, the requirements in their own field)."""
    line = ('{"level":"DEBUG","time":"2026-01-20T10:00:00.000Z","logger":"controller","message":"getting requirements '
            'from pod volumes","controller":"provisioner","Pod":{"name":"kafka-2","namespace":"streams"},'
            '"requirements":"topology.ebs.csi.aws.com/zone In [eu-west-1b]"}\n')
    (item,) = explain_text(line).item_list()
    assert item.parsed.pod == "streams/kafka-2" and "may only run in eu-west-1b" in item.plain


@pytest.mark.parametrize(("line", "says"), [
    ('2022-06-01T10:00:00.000Z\tDEBUG\tcontroller.provisioning\tRelaxing soft constraints for pod since it previously '
     'failed to schedule, adding: toleration for PreferNoSchedule taints\t{"commit": "abc", "pod": "default/y-1"}\n',
     "toleration for PreferNoSchedule taints"),
    ('{"level":"DEBUG","message":"relaxing soft constraints for pod since it previously failed to schedule, removing: '
     'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]={\\"matchExpressions\\":[]}",'
     '"Pod":{"name":"x","namespace":"y"}}\n', "the first of its required nodeSelectorTerms"),
])
def test_every_relaxation_is_said_as_what_it_dropped(line: str, says: str) -> None:
    """(b) each of Relax's steps, in the wording of its version, is named; none is called a failure."""
    (item,) = explain_text(line).item_list()
    assert says in item.plain and "could not be scheduled" not in item.plain, item.plain


@pytest.mark.parametrize(("line", "cut", "not_key"), [
    ('Warning  FailedScheduling  2m  karpenter  Failed to schedule pod, incompatible with nodepool "default", daemonset '
     'overhead={"cpu":"200m","pods":"3"}, incompatible requirements, label "node-role.kubernetes.io/control-p\n',
     'a label whose key begins "node-role.kubernetes.io/control-p"', 'label "node-role.kubernetes.io/control-p" ('),
    ('0/5 nodes are available: 2 node(s) had untolerated taint {node-role.kubernetes.io/control-p\n',
     'a taint whose key begins "node-role.kubernetes.io/control-p"', "key: node-role.kubernetes.io/control-p,"),
    ('Failed to schedule pod, incompatible with nodepool "a", daemonset overhead={"pods":"3"}, incompatible '
     'requirements, key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd6…\n',
     "The values after the cut are not known", "only allows kubernetes.io/arch In [amd6"),
])
def test_a_clause_cut_mid_word_is_said_as_cut(line: str, cut: str, not_key: str) -> None:
    """(c) a message a UI or kubectl's column cut inside its last clause: what can be read, the key it most likely
    began, and no cut fragment taken for a real key or value."""
    told = " ".join(i.plain for i in explain_text(line).item_list())
    assert cut in told and "cut off" in told, told
    assert not_key not in told, told


def test_a_whole_clause_before_the_users_ellipsis_is_not_cut() -> None:
    """(c) kubernetes-sigs/karpenter#2809's `...` follows a whole clause: it is read as written."""
    told = explain_text('Failed to schedule pod, incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/'
                        'nodepool In [public] not in karpenter.sh/nodepool In [private] ...\n').item_list()[0].plain
    assert "cut off inside" not in told and "karpenter.sh/nodepool In [private]" in told, told


def test_two_claims_refused_by_the_cap_are_each_reported() -> None:
    """(d) the line of Panfactum/stack#42 (cited by an earlier sweep): two NodeClaims refused by the CRD's cap in one
    error; each is reported with its own count, the cause and fix once."""
    line = ('creating node claim, NodeClaim.karpenter.sh \\"spot-8c7mc\\" is invalid: [spec.requirements: Too many:'
            ' 32: must have at most 30 items, <nil>: Invalid value: \\"null\\": some validation rules were not chec'
            'ked because the object was invalid; correct the existing errors to complete validation]; creating no'
            'de claim, NodeClaim.karpenter.sh \\"burstable-2l6cf\\" is invalid: [spec.requirements: Too many: 33: m'
            'ust have at most 30 items, <nil>: Invalid value: \\"null\\": some validation rules were not checked be'
            'cause the object was invalid; correct the existing errors to complete validation]\n')
    (item,) = explain_text(line).item_list()
    assert "NodeClaim spot-8c7mc" in item.plain and "NodeClaim burstable-2l6cf too" in item.plain, item.plain
    assert "33 requirements" in item.plain and item.plain.count("upgrade Karpenter together with its CRDs") == 1


def test_claims_rejected_for_a_restricted_domain_are_each_named() -> None:
    """(d) two NodeClaims refused for the same restricted label domain: both named, the cause said once."""
    claim = ('creating node claim, NodeClaim.karpenter.sh \\"{}\\" is invalid: spec.requirements[7].key: Invalid value: '
             '\\"string\\": label domain \\"kubernetes.io\\" is restricted')
    (item,) = explain_text(claim.format("default-a1") + "; " + claim.format("default-b2") + "\n").item_list()
    assert "NodeClaim default-a1" in item.plain and "NodeClaim default-b2 too" in item.plain, item.plain
    assert item.plain.count("Select on a label of your own") == 1, item.plain


_6447 = ('0s          Normal    Nominated                 pod/testapp-5f8b56c8fc-w9kgn        Pod should schedule on: '
         'nodeclaim/jmeter-amd64-qrr7q\n0s          Warning   FailedScheduling          pod/testapp-5f8b56c8fc-w9kgn  '
         "      0/19 nodes are available: 1 node(s) had untolerated taint {windowsContainers: true}, 2 node(s) had "
         "untolerated taint {eks.amazonaws.com/compute-type: fargate}, 4 node(s) didn't match Pod's node affinity/"
         "selector, 4 node(s) didn't match pod anti-affinity rules, 8 node(s) didn't match pod topology spread "
         "constraints. preemption: 0/19 nodes are available: 12 No preemption victims found for incoming pod, 7 "
         "Preemption is not helpful for scheduling.\n")


def test_a_nomination_names_its_rejections_causes_once(load: CatalogFor) -> None:
    """(e) aws/karpenter-provider-aws#6447: the nomination and the scheduler's rejection of one pod; the anti-affinity
    and spread paragraphs are said once in the answer, the nomination pointing at them."""
    explanation = explain_text(_6447)
    enrich(explanation, load)
    items = explanation.item_list()
    sentences = Counter(s for i in items for s in re.split(r"(?<=\.)\s+", i.plain))
    assert not [s for s, n in sentences.items() if n > 1], sentences
    told = " ".join(i.plain for i in items)
    assert told.count("Node(s) didn't match pod anti-affinity rules: those nodes") == 1, told
    assert "said with line 2" in told and "nominated node cannot take it" in told


@pytest.mark.parametrize("error", [
    "one or more instance types with compatible reserved offerings are available, but could not be reserved",
    "satisfying updated nodeclaim constraints would remove all compatible reserved offering options"])
def test_reserved_capacity_held_for_other_claims_is_no_misfit(error: str) -> None:
    """Karpenter v1.3+'s reserved-capacity errors (scheduling/nodeclaim.go; the strict mode of
    kubernetes-sigs/karpenter#2056): the pod fits, the reservations are held for other claims of the round; it is not
    said that no type fits it."""
    line = ('{"level":"ERROR","time":"2025-09-01T10:00:00.000Z","logger":"controller","message":"could not schedule '
            f'pod","Pod":{{"name":"train-0","namespace":"ml"}},"error":"{error}"}}\n')
    (item,) = explain_text(line).item_list()
    assert item.parsed.pod == "ml/train-0" and "reserv" in item.plain, item.plain
    assert "fits the pod" not in item.plain and "too big" not in item.plain, item.plain


def test_karpenters_refusal_of_dra_pods_is_named() -> None:
    """Karpenter with IGNORE_DRA_REQUESTS (its default, kubernetes-sigs/karpenter#2384) refuses pods with
    ResourceClaims: said as that, not left unrecognised nor read as a size misfit."""
    line = ('{"level":"ERROR","time":"2025-09-01T10:00:00.000Z","logger":"controller","message":"could not schedule '
            'pod","Pod":{"name":"gpu-0","namespace":"ml"},"error":"pod has Dynamic Resource Allocation requirements '
            'that are not yet supported by Karpenter"}\n')
    (item,) = explain_text(line).item_list()
    assert "Dynamic Resource Allocation" in item.plain and "IGNORE_DRA_REQUESTS" in item.plain, item.plain
    assert "fits the pod" not in item.plain
