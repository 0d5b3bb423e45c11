"""explain on a third sweep of messages pasted in public issue threads (session 16), none cited elsewhere in tests/,
each with the cause its thread established: kube-scheduler from 1.4's `failed to fit in any node` to 1.31's
`preemption: ...`, cluster-autoscaler of every era, fargate-scheduler, Karpenter v0.x to v1.5+, and the envelopes
(k9s boxes, describe tables, get events rows, prose) they are pasted in.

Every message is copied as its thread shows it. `says` are words the answer must contain for the established cause;
`never` the misdiagnosis or misreading the code before this sweep gave (or one a reader would take for the fix).
"""

from __future__ import annotations

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
}

# Not counted in the sweep (their threads are cited elsewhere): the same message as its thread really shows it
REGRESSIONS = {
    # the Fargate-only cluster's fluent-bit DaemonSet: its one node was full, and DaemonSets do not run on Fargate
    'k9s-prefilter-daemonset-wrapped': Paste(
        'https://github.com/aws-ia/terraform-aws-eks-blueprints-addons/issues/399',
        "`FailedScheduling  4m7s (x258 over 21h)  default-scheduler  0/13 nodes are available: 1 Too many pods, 12 node is filtered out by the prefilter resul │\n│ t. preemption: 0/13 nodes are available: 1 No preemption victims found for incoming pod, 12 Preemption is not helpful for scheduling.`\n",
        {'node-filter'}, ('prefilter result.', 'DaemonSets do not run on Fargate'),
        ('resul;', 'No preemption victims found for incoming pod;', '│')),
}
ALL = {**PASTES, **REGRESSIONS}


@pytest.fixture(scope="module")
def load() -> CatalogFor:
    return catalog_loader(None, None)


@pytest.mark.parametrize("name", sorted(ALL))
def test_real_paste(name: str, load: CatalogFor) -> None:
    paste = ALL[name]
    explanation = explain_text(paste.text)
    enrich(explanation, load)
    items = explanation.item_list()
    assert len(items) == 1, (paste.url, [i.plain for i in items])
    kinds = {r.kind for r in items[0].all_reasons()}
    assert paste.kinds <= kinds, (paste.url, kinds)
    told = items[0].plain
    for words in paste.says:
        assert words in told, (paste.url, words, told)
    for words in paste.never:
        assert words.lower() not in told.lower(), (paste.url, words, told)


def test_the_sweep_cites_threads_not_cited_before() -> None:
    """Each thread once, and none the earlier sweeps cite."""
    from pathlib import Path
    urls = [p.url for p in PASTES.values()]
    assert len(set(urls)) == len(urls)
    here = Path(__file__)
    others = "".join(f.read_text(encoding="utf-8") for f in here.parent.glob("test_explain*.py") if f != here)
    assert not [u for u in urls if f"'{u}'" in others]
