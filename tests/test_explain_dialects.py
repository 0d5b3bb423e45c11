"""explain: each dialect's grammar on real lines (karpenter-scheduler.md §12, peers-and-log-dialects.md §2.6)
and their variants: log-tailer prefixes, truncation, pretty-printed JSON, pasted continuations."""

from __future__ import annotations

import json

import pytest

from karpplan.explain.report import explain_text
from karpplan.explain.structure import Item

E1 = ('{"level":"ERROR","time":"2024-04-03T06:40:04.552Z","logger":"controller.provisioner","message":"Could not '
      'schedule pod, incompatible with nodepool \\"default\\", daemonset overhead={\\"cpu\\":\\"675m\\",\\"memory\\":'
      '\\"390Mi\\",\\"pods\\":\\"6\\"}, incompatible requirements, label \\"nodegroup\\" does not have known values",'
      '"commit":"17d6c05","pod":"com-dtv-dcp-dpd/beamacctgetprofilems-green-746d677b76-lghl4"}')
E4 = ('ERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with provisioner "default", incompatible '
      'requirements, key karpenter.sh/provisioner-name, karpenter.sh/provisioner-name DoesNotExist not in '
      'karpenter.sh/provisioner-name In [default]\t{"commit": "639756a", "pod": "karpenter/karpenter-788545f8d9-qjnx5"}')
E6 = ('2022-12-05T09:58:42.908Z\tERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with provisioner '
      '"core-system", did not tolerate domain.node.dkb.cloud/system-core=true:NoExecute; incompatible with provisioner '
      '"internal-services-tenant", no instance type satisfied resources {"cpu":"7","github.com/fuse":"4","memory":'
      '"8692Mi","pods":"1"} and requirements node.kubernetes.io/instance-type In [m5d.2xlarge m5d.4xlarge], '
      'kubernetes.io/arch In [amd64]\t{"commit": "27a51c0", "pod": "ns/runner-1"}')
E8 = ('2023-11-16T15:11:49.499Z\tDEBUG\tcontroller.provisioner\t445 out of 613 instance types were excluded because '
      'they would breach provisioner limits\t{"commit": "dc3af1a"}')
E11 = ('Failed to schedule pod, unsatisfiable topology constraint for pod affinity, key=topology.kubernetes.io/zone '
       '(counts = us-east-1a: 0, us-east-1b: 0, us-east-1c: 0, podDomains = topology.kubernetes.io/zone Exists, '
       'nodeDomains = topology.kubernetes.io/zone In [us-east-1a us-east-1b us-east-1c]; incompatible requirements, '
       'key karpenter.sh/nodepool, karpenter.sh/nodepool In [public] not in karpenter.sh/nodepool In [private] ...')
E16 = ('{"level":"ERROR","time":"2025-04-04T10:15:40.110Z","logger":"controller","message":"could not schedule pod",'
       '"Pod":{"name":"nginx-565d69d9cd-g5fkp","namespace":"default"},"error":"incompatible with nodepool \\"w\\", '
       'daemonset overhead={\\"cpu\\":\\"681m\\"}, incompatible requirements, label \\"node-role.kaas.acquia.io/stable\\"'
       ' does not have known values (typo of \\"acquia.io/stage\\"?); incompa…')
FIT = ('  Warning  FailedScheduling  77s (x3 over 4m14s)  default-scheduler  0/8 nodes are available: 1 Insufficient '
       'memory, 2 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}, 5 node(s) didn\'t match '
       'Pod\'s node affinity/selector. preemption: 0/8 nodes are available: 8 Preemption is not helpful for scheduling..')
CA = ('I0910 18:42:33.914842       1 event.go:281] Event(v1.ObjectReference{Kind:"Pod", Namespace:"test", '
      'Name:"test-69c4886596-pssfj", UID:"bb1"}): type: \'Normal\' reason: \'NotTriggerScaleUp\' pod didn\'t trigger '
      'scale-up (it wouldn\'t fit if a new node is added): 1 node(s) didn\'t match node selector')


def one(text: str) -> Item:
    items = explain_text(text).item_list()
    assert len(items) == 1, [i.to_document() for i in items]
    return items[0]


def kinds(item: Item) -> dict[str, list[str]]:
    out = {p.name: [r.kind for r in p.reasons] for p in item.parsed.pools}
    out[""] = [r.kind for r in item.parsed.reasons]
    return out


def test_v032_json_unknown_label() -> None:
    item = one(E1)
    assert (item.parsed.source, item.parsed.dialect) == ("karpenter", "v0.32-v0.37")
    assert item.parsed.pod == "com-dtv-dcp-dpd/beamacctgetprofilems-green-746d677b76-lghl4"
    pool = item.parsed.pools[0]
    assert (pool.name, pool.kind, dict(pool.daemonset_overhead or {})) == (
        "default", "nodepool", {"cpu": "675m", "memory": "390Mi", "pods": "6"})
    assert pool.reasons[0].kind == "unknown-label" and pool.reasons[0].key == "nodegroup"
    assert "nodeSelector" in item.plain


def test_v016_console_requirement_conflict() -> None:
    item = one(E4)
    r = item.parsed.pools[0].reasons[0]
    assert item.parsed.dialect == "v0.16-v0.31" and item.parsed.pools[0].kind == "provisioner"
    assert (r.kind, r.key, r.pod_side, r.pool_side) == (
        "requirement-conflict", "karpenter.sh/provisioner-name", "karpenter.sh/provisioner-name DoesNotExist",
        "karpenter.sh/provisioner-name In [default]")
    assert item.parsed.pod == "karpenter/karpenter-788545f8d9-qjnx5"


def test_taint_and_extended_resources() -> None:
    item = one(E6)
    taint = item.parsed.pools[0].reasons[0]
    assert (taint.key, taint.value, taint.effect) == ("domain.node.dkb.cloud/system-core", "true", "NoExecute")
    nit = item.parsed.pools[1].reasons[0]
    assert nit.kind == "no-instance-type" and dict(nit.resources or {})["github.com/fuse"] == "4"
    assert [str(q) for q in nit.requirements] == ["node.kubernetes.io/instance-type In [m5d.2xlarge m5d.4xlarge]",
                                                  "kubernetes.io/arch In [amd64]"]
    assert item.parsed.time == "2022-12-05T09:58:42.908Z"


def test_excluded_types() -> None:
    r = one(E8).parsed.reasons[0]
    assert (r.kind, r.excluded, r.total) == ("excluded-types", 445, 613)


def test_v15_bare_reasons_and_truncation() -> None:
    item = one(E11)
    assert item.parsed.dialect == "v1.5+" and kinds(item)[""] == ["topology", "requirement-conflict"]
    topo = item.parsed.reasons[0]
    assert topo.constraint == "pod affinity" and dict(topo.counts or {}) == {"us-east-1a": 0, "us-east-1b": 0,
                                                                             "us-east-1c": 0}
    assert item.parsed.reasons[1].truncated


def test_typo_suggestion_in_truncated_v1_line() -> None:
    item = one(E16)
    r = item.parsed.pools[0].reasons[0]
    assert (r.key, r.suggestion) == ("node-role.kaas.acquia.io/stable", "acquia.io/stage")
    assert item.parsed.dialect == "v1.0-v1.4" and item.parsed.pod == "default/nginx-565d69d9cd-g5fkp"
    assert not item.parsed.unparsed


def test_v15_taint_and_nodepool_field() -> None:
    line = ('{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"a","namespace":"b"},"error":"did not '
            'tolerate taint (taint=CriticalAddonsOnly:NoSchedule); all available instance types exceed limits for '
            'nodepool (NodePool=np-b)"}')
    item = one(line)
    taint, limits = item.parsed.reasons
    assert (taint.key, taint.value, taint.effect) == ("CriticalAddonsOnly", None, "NoSchedule")
    assert (limits.kind, limits.node_pool) == ("limits", "np-b")
    assert item.parsed.dialect == "v1.5+"


def test_v06_unable_to_schedule() -> None:
    item = one("2022-03-01T10:00:00.000Z\tINFO\tcontroller.selection\tUnable to schedule pod default/web-abc, "
               "incompatible requirements, [] not in [rhv6mc5e], key kubernetes.io/hostname\t{\"commit\": \"abc\"}")
    r = item.parsed.reasons[0]
    assert item.parsed.dialect == "v0.6" and item.parsed.pod == "default/web-abc"
    assert (r.kind, r.key, r.pod_side, r.pool_side) == ("requirement-conflict", "kubernetes.io/hostname", "[]",
                                                        "[rhv6mc5e]")


@pytest.mark.parametrize("prefix", ["", "[pod/karpenter-78748f59d4-hnx82/controller] ",
                                    "karpenter-78748f59d4-hnx82 controller ", "2024-04-03T06:40:04.552123456Z ",
                                    '2024-04-03T06:40:04Z {app="karpenter", pod="karpenter-1"} ',
                                    "2024-04-03T06:40:04.552Z stderr F "])
def test_log_tailer_prefixes(prefix: str) -> None:
    item = one(prefix + E1)
    assert item.parsed.pools[0].reasons[0].key == "nodegroup" and item.parsed.dialect == "v0.32-v0.37"


def test_pretty_printed_json_with_prefix() -> None:
    doc = json.loads(E16.replace("; incompa…", '"}'))
    pretty = json.dumps(doc, indent=2).splitlines()
    text = "\n".join("[pod/k/controller] " + line for line in pretty)
    explanation = explain_text("noise\n" + text + "\nmore noise")
    (item,) = explanation.item_list()
    assert item.line == 2 and item.parsed.pod == "default/nginx-565d69d9cd-g5fkp"
    assert explanation.lines == len(pretty) + 2 and explanation.unrecognised == 2


def test_error_value_pasted_over_two_lines() -> None:
    text = ('"incompatible with nodepool \\"gpu\\", daemonset overhead={\\"cpu\\":\\"605m\\"}, did not tolerate '
            'nvidia.com/gpu=1:NoSchedule;\nincompatible with nodepool \\"app\\", daemonset overhead={\\"cpu\\":'
            '\\"605m\\"}, incompatible requirements, label \\"eks.amazonaws.com/nodegroup\\" does not have known values"')
    item = one(text)
    assert kinds(item) == {"gpu": ["taint"], "app": ["unknown-label"], "": []}


def test_default_scheduler_fit_error() -> None:
    text = "Name:         web-1\nNamespace:    shop\nEvents:\n" + FIT
    item = one(text)
    r = item.parsed.reasons[0]
    assert item.parsed.source == "kube-scheduler" and item.parsed.pod == "shop/web-1"
    assert r.kind == "node-filter" and r.total == 8 and dict(r.counts or {})["Insufficient memory"] == 1
    assert any(x.kind == "taint" and x.key == "eks.amazonaws.com/compute-type" for x in item.parsed.reasons)
    assert "fargate" in item.plain.lower()


def test_cluster_autoscaler() -> None:
    item = one(CA)
    assert item.parsed.source == "cluster-autoscaler" and item.parsed.pod == "test/test-69c4886596-pssfj"
    assert dict(item.parsed.reasons[0].counts or {}) == {"node(s) didn't match node selector": 1}


def test_get_events_rows_and_nominated() -> None:
    text = ("NAMESPACE   LAST SEEN   TYPE      REASON             OBJECT                     MESSAGE\n"
            "default     2m          Warning   FailedScheduling   pod/api-7d9f8b6c5d-x2x3z   0/5 nodes are available: "
            "2 Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector.\n"
            "default     1m          Normal    Nominated          pod/api-7d9f8b6c5d-x2x3z   Pod should schedule on: "
            "nodeclaim/default-abcde\n")
    explanation = explain_text(text)
    first, second = explanation.item_list()
    assert first.parsed.pod == second.parsed.pod == "default/api-7d9f8b6c5d-x2x3z"
    assert second.parsed.event == "Nominated" and second.parsed.nominated == "nodeclaim/default-abcde"
    assert explanation.unrecognised == 0 and explanation.context == 1  # the header row frames the rows


def test_repeated_lines_collapse() -> None:
    explanation = explain_text("\n".join([E1, "x", E1, E1]))
    (item,) = explanation.item_list()
    assert (item.count, item.line, item.last_line) == (3, 1, 4)


def test_unrecognised_only() -> None:
    explanation = explain_text("hello\nworld\n")
    assert not explanation.items and explanation.lines == 2 and explanation.unrecognised == 2


@pytest.mark.parametrize("clause", [
    # a v0.3x pool's clause with its `incompatible with nodepool "X", daemonset overhead=...,` prefix cut off
    'incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-central-1b] not '
    'in topology.kubernetes.io/zone In [eu-central-1c]',
    # the pre-v1 wording of "no instance type", pasted alone
    'no instance type satisfied resources {"cpu":"7","memory":"8692Mi","pods":"1"} and requirements '
    'kubernetes.io/arch In [amd64], karpenter.sh/capacity-type In [on-demand]',
    'incompatible requirements, label "nodegroup" does not have known values',
])
def test_a_clause_pasted_alone_claims_no_version(clause: str) -> None:
    """Every version prints these clauses; without its envelope nothing says which one: no "(v1.5+ log)"."""
    item = one(clause)
    assert item.parsed.dialect is None
    assert "v1.5+" not in item.plain and "Karpenter." in item.plain


@pytest.mark.parametrize("text", [
    'Failed to schedule pod, incompatible requirements, label "nodegroup" does not have known values',
    '{"error":"incompatible requirements, label \\"nodegroup\\" does not have known values"}]}',
    'did not tolerate taint (taint=CriticalAddonsOnly:NoSchedule)',
])
def test_what_shows_v15_still_says_so(text: str) -> None:
    """The v1.5+ event envelope with a bare reason, a bare error value, and v1.5's taint wording do show it."""
    assert one(text).parsed.dialect == "v1.5+"
