"""explain on a fifth sweep of messages pasted in public issue threads (session 18), none cited elsewhere in tests/,
each with the cause its thread established: Karpenter v1.2-v1.8 JSON lines and NodeClaim conditions, pod events
(Nominated, FailedScheduling from karpenter and default-scheduler), EKS Auto Mode, Fargate, Azure's provider,
kube-scheduler 1.28-1.34 and cluster-autoscaler, in the envelopes they are pasted in.

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
    # BestEffort minValues not relaxed when the pod's bound volume narrows the zone requirement: Karpenter created
    # the NodeClaim with one zone and minValues 2, and the CRD's CEL rule refused it (fixed by PR #3170)
    'nodeclaim-cel-min-values-best-effort': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/2999',
        'NodeClaim.karpenter.sh "monitoring-v8xgc" is invalid: spec.requirements: Invalid value: "array": \n'
        "requirements with 'minValues' must have at least that many values specified in the 'values' field\n",
        {'min-values'}, ('rejected NodeClaim monitoring-v8xgc', 'kubernetes-sigs/karpenter#3170',
                         'remove minValues', 'topology.kubernetes.io/zone'),
        ('lower minValues or widen the requirements', 'Lower the pod')),
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
    paste = ALL[name]
    explanation = explain_text(paste.text)
    enrich(explanation, load)
    items = explanation.item_list()
    assert items, paste.url
    kinds = {r.kind for item in items for r in item.all_reasons()}
    assert paste.kinds <= kinds, (paste.url, kinds)
    told = "\n".join(item.plain for item in items)
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
