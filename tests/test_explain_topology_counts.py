"""Karpenter's topology counts read whole: `and N other(s)` kept, and empty counts not blamed on maxSkew.

Real pastes (threads below) a new user tried: the `)` of `other(s)` was stripped with the counts' bracket, so a
pod pinned by its volume to one zone of thirteen read as an ordinary maxSkew problem; and `counts = ,` (Karpenter
knew no domain at all, a v1.8.1 regression) was answered "raise maxSkew".
"""

from __future__ import annotations

from karpplan.explain.enrich import catalog_loader, enrich
from karpplan.explain.report import explain_text

# https://github.com/aws/karpenter-provider-aws/issues/6141 (maintainers: kubernetes-sigs/karpenter#1029, #1239)
VOLUME_PINNED = '{"level":"DEBUG","time":"2024-05-03T06:48:06.528Z","logger":"controller.provisioner","message":"adding requirements derived from pod volumes, [{topology.ebs.csi.aws.com/zone In [eu-central-1c]}]","commit":"17d6c05","pod":"sre/test-5"}\n{"level": "ERROR", "time": "2024-05-03T06:48:06.530Z", "logger": "controller.provisioner", "message": "Could not schedule pod, incompatible with nodepool \\"sre-amd64\\", daemonset overhead={\\"cpu\\":\\"273m\\",\\"memory\\":\\"1047Mi\\",\\"pods\\":\\"7\\"}, unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = eu-central-1c: 1 and 12 other(s), podDomains = topology.kubernetes.io/zone In [eu-central-1c], nodeDomains = topology.kubernetes.io/zone In [eu-central-1c]", "commit": "17d6c05", "pod": "sre/test-5"}'

# https://github.com/kubernetes-sigs/karpenter/issues/2785 (a v1.8.1 regression, reverted in v1.8.2)
EMPTY_COUNTS = '{"level": "ERROR", "time": "2026-01-14T10:00:00.000Z", "logger": "controller", "caller": "provisioning/provisioner.go:355", "message": "could not schedule pod", "commit": "f15a737", "controller": "provisioner", "Pod": {"name": "gha-runner-abc12", "namespace": "gha"}, "error": "unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = , podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone Exists"}'


def _told(text: str) -> str:
    explanation = explain_text(text)
    enrich(explanation, catalog_loader(None, None))
    return " ".join(" ".join(item.plain for item in explanation.item_list()).split())


def test_a_volume_pinned_pod_counts_the_other_domains_and_is_not_a_maxskew_problem() -> None:
    told = _told(VOLUME_PINNED)
    assert "and 12 other domains" in told
    assert "widening the pool cannot help" in told and "PersistentVolume" in told
    assert "let the pool reach more domains" not in told


def test_empty_counts_are_not_blamed_on_maxskew() -> None:
    told = _told(EMPTY_COUNTS)
    assert "counted no topology.kubernetes.io/zone domain at all" in told and "#2785" in told
    assert "raise maxSkew" not in told
