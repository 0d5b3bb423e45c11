"""explain on Karpenter's disruption messages as users paste them: why a node is not consolidated
(Unconsolidatable), why it may not be disrupted (DisruptionBlocked), and disruptions under way - each one item per
cause, in plain words with its smallest fix, and never read as a pod that failed to schedule."""

from __future__ import annotations

import json

import pytest

from karpplan.explain.dialects import disruption
from karpplan.explain.enrich import catalog_loader, enrich
from karpplan.explain.report import Explanation, explain_text

# https://github.com/kubernetes-sigs/karpenter/issues/2802 (kubectl describe node, Karpenter v1.x)
DESCRIBE_NODE = """Events:
  Type    Reason              Age                 From       Message
  ----    ------              ----                ----       -------
  Normal  Unconsolidatable    13m (x86 over 23h)  karpenter  Can't replace with a cheaper node
  Normal  DisruptionBlocked   26s                 karpenter  Pdb "default/nginx-test-pdb" prevents pod evictions
"""
# kubectl get events -A as pasted in upstream threads (Karpenter v1.x; the PDB in the serrors form)
GET_EVENTS = """LAST SEEN   TYPE      REASON                    OBJECT                                  MESSAGE
3m13s       Normal    DisruptionBlocked         node/ip-10-52-162-231.eu-central-1.compute.internal   Pdb prevents pod evictions (PodDisruptionBudget=kube-system/ebs-csi-controller)
84m         Normal    DisruptionBlocked         node/ip-10-54-144-4.eu-central-1.compute.internal     Pdb prevents pod evictions (PodDisruptionBudget=kube-system/ebs-csi-controller)
21m         Normal    DisruptionBlocked         node/ip-10-38-34-142.ap-southeast-1.compute.internal   Node is nominated for a pending pod
10m         Normal    Unconsolidatable          node/ip-10-0-0-230.ec2.internal   NodePool "main-amd64" has non-empty consolidation disabled
3m22s       Normal    Unconsolidatable          node/ip-10-1-1-1.ec2.internal     SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node
"""
# https://github.com/kubernetes-sigs/karpenter/issues/651 (v0.3x events exported as JSON)
JSON_EVENT = ('{"eventNamespace":"default","involvedObject":{"kind":"Node","name":"ip-172-31-6-136.eu-central-1.compute.'
              'internal","uid":"473d160c-783a-427e-a75f-5c57c57e29df","apiVersion":"v1"},"reason":"DisruptionBlocked",'
              '"eventMessage":"Cannot disrupt Node: Pod \\"default/cdp-default-2ekrbha7wakskum3uuw492ts4y\\" has '
              '\\"karpenter.sh/do-not-disrupt\\" annotation","source":{"component":"karpenter"},"firstTimestamp":'
              '"2024-02-26T16:41:54Z","lastTimestamp":"2024-02-26T16:41:54Z","count":1,"type":"Normal",'
              '"reportingComponent":"karpenter"}')


def _explained(text: str) -> Explanation:
    out = explain_text(text)
    enrich(out, catalog_loader(None, None))
    return out


def _plains(out: Explanation) -> list[str]:
    return [i.plain for i in out.item_list()]


def test_describe_node_events_say_why_the_node_stays() -> None:
    out = _explained(DESCRIBE_NODE)
    cheaper, pdb = out.item_list()
    assert (cheaper.parsed.event, pdb.parsed.event) == ("Unconsolidatable", "DisruptionBlocked")
    assert cheaper.parsed.pod is None and pdb.parsed.pod is None  # a node's events, no pod failed
    assert "already the cheapest fit" in cheaper.plain and "widen the NodePool's requirements" in cheaper.plain
    assert 'PodDisruptionBudget "default/nginx-test-pdb"' in pdb.plain and "maxUnavailable: 1" in pdb.plain
    assert "kubectl get pdb -n default nginx-test-pdb" in pdb.plain


def test_one_item_per_cause_across_nodes() -> None:
    out = _explained(GET_EVENTS)
    assert len(out.item_list()) == 4 and out.summary()["unrecognised"] == 0 and out.summary()["context"] == 1  # header
    pdb = out.item_list()[0]
    assert pdb.count == 2 and "kube-system/ebs-csi-controller" in pdb.plain and "(Seen 2 times" in pdb.plain
    plains = _plains(out)
    assert "transient" in plains[1] and "nominated" in plains[1]
    assert "WhenEmptyOrUnderutilized" in plains[2] and 'NodePool "main-amd64"' in plains[2]
    assert "spotToSpotConsolidation=true" in plains[3]


def test_a_json_event_with_the_v03x_prefix_names_the_annotated_pod() -> None:
    [item] = _explained(JSON_EVENT).item_list()
    assert item.parsed.event == "DisruptionBlocked" and item.parsed.time == "2024-02-26T16:41:54Z"
    assert 'Pod "default/cdp-default-2ekrbha7wakskum3uuw492ts4y"' in item.plain
    assert "karpenter.sh/do-not-disrupt-" in item.plain  # how to remove it
    assert "Cannot disrupt" not in item.parsed.message  # Node and NodeClaim events of one cause are one item


@pytest.mark.parametrize(("message", "event", "said"), [
    ("Can't remove without creating 2 candidates", "Unconsolidatable", "would need 2 new nodes"),
    ("SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to consolidate, "
     "got 4", "Unconsolidatable", "at least 15 cheaper spot instance types"),
    ("Not all pods would schedule, default/web-0 => incompatible with nodepool \"gpu\", did not tolerate "
     "nvidia.com/gpu=true:NoSchedule ", "Unconsolidatable", "default/web-0 => incompatible with nodepool"),
    ("No allowed disruptions for disruption reason Underutilized due to blocking budget", "DisruptionBlocked",
     "spec.disruption.budgets"),
    ('Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation', "DisruptionBlocked",
     "kubectl annotate node NODE karpenter.sh/do-not-disrupt-"),
    ('Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=jobs/train-7)', "DisruptionBlocked", 'Pod "jobs/train-7"'),
    ('NodePool "default" has consolidation disabled', "Unconsolidatable", "consolidateAfter"),
    ("Node isn't initialized", "DisruptionBlocked", "Initialized"),
])
def test_each_upstream_message_is_worded_with_its_fix(message: str, event: str, said: str) -> None:
    found = disruption.parse(message)
    assert found is not None and found[0] == event
    assert said in disruption.plain(found[1])
    row = f"  Normal  {event}  2m  karpenter  {message}"
    [item] = _explained(row).item_list()
    assert item.parsed.event == event and said in item.plain


def test_a_pod_that_would_not_schedule_elsewhere_is_not_a_scheduling_failure_of_that_pod() -> None:
    row = ('  Normal  Unconsolidatable  2m  karpenter  Not all pods would schedule, default/web-0 => incompatible with '
           'nodepool "gpu", did not tolerate nvidia.com/gpu=true:NoSchedule ')
    [item] = _explained(row).item_list()
    assert item.parsed.pod is None and not item.parsed.pools and "consolidation keeps it" in item.plain


@pytest.mark.parametrize(("line", "how"), [
    # v1.1+ JSON: reason and decision logged beside the message (kubernetes-sigs/karpenter queue.go)
    ('{"level":"INFO","time":"2024-10-01T10:00:00.000Z","logger":"controller","message":"disrupting node(s)",'
     '"commit":"6174c75","controller":"disruption","command-id":"a1","reason":"underutilized","decision":"replace",'
     '"disrupted-node-count":1,"replacement-node-count":1,"pod-count":3}', "replace, reason underutilized"),
    # v1.0 JSON
    ('{"level":"INFO","time":"2024-08-01T10:00:00.000Z","logger":"controller","message":"disrupting nodeclaim(s) via '
     'delete, terminating 1 nodes (1 pods) ip-10-0-1-2.ec2.internal/m5.large/spot","commit":"5bdf9c3",'
     '"reason":"empty"}', "delete, reason empty"),
    # v0.32-v0.37 console
    ("2024-02-26T16:41:54.123Z\tINFO\tcontroller.disruption\tdisrupting via consolidation delete, terminating 1 "
     'candidates ip-192-168-1-1.ec2.internal/t3.medium/spot\t{"commit": "1072d3b"}', "consolidation delete"),
    # v0.2x console
    ("2023-03-01T10:00:00.000Z\tINFO\tcontroller.consolidation\tConsolidating via Delete, terminating 1 nodes "
     'ip-192-168-1-1.ec2.internal/t3.medium/on-demand\t{"commit": "5a7faa0"}', "consolidation delete"),
])
def test_disruption_log_lines_read_as_a_planned_removal(line: str, how: str) -> None:
    [item] = _explained(line).item_list()
    assert item.parsed.event == "Disrupting" and item.parsed.time is not None
    assert f"on purpose ({how})" in item.plain and "do-not-disrupt" in item.plain and "budgets" in item.plain


def test_disruption_items_keep_the_contract_shape() -> None:
    out = _explained(DESCRIBE_NODE + GET_EVENTS + JSON_EVENT + "\n")
    doc = json.loads(json.dumps(out.to_document()))
    for item in doc["items"]:
        assert item["source"] == "karpenter" and item["pod"] is None
        assert item["reasons"] == [] and item["nodePools"] == [] and item["plain"]


def test_an_event_text_of_another_version_is_still_the_nodes_not_a_pods() -> None:
    [item] = _explained("  Normal  Unconsolidatable  5m  karpenter  Node has a custom reason to stay").item_list()
    assert item.parsed.event == "Unconsolidatable" and item.parsed.pod is None
    assert "Node has a custom reason to stay" in item.plain and "not about placing a pod" in item.plain


def test_pods_that_would_land_on_an_uninitialized_node_make_disruption_wait_not_fail() -> None:
    """kubernetes-sigs/karpenter's simulation refuses a node that is not initialized yet (UninitializedNodeError,
    `would schedule against uninitialized nodeclaim/..., node/...`): the pods fit; the node is still starting."""
    row = ("21m  Normal  DisruptionBlocked  node/ip-10-0-130-142.ec2.internal  Not all pods would schedule, "
           "monitoring/prom-b5977fcf8-n27gp => would schedule against uninitialized nodeclaim/main-amd64-zhfgv, "
           "node/ip-10-0-130-84.ec2.internal shop/web-6cf-jcqdf => would schedule against uninitialized "
           "nodeclaim/main-amd64-zhfgv, node/ip-10-0-130-84.ec2.internal")
    [item] = _explained(row).item_list()
    assert "nodeclaim/main-amd64-zhfgv, node/ip-10-0-130-84.ec2.internal," in item.plain
    assert "monitoring/prom-b5977fcf8-n27gp, shop/web-6cf-jcqdf" in item.plain
    assert "clears by itself" in item.plain and "would fit on no other node" not in item.plain


def test_the_older_non_initialized_wording_names_the_node() -> None:
    """Older Karpenter worded the same refusal `would schedule against a non-initialized node NAME`: the node's
    name is read, not just the word `node`."""
    row = ("  Normal  Unconsolidatable  4m (x12 over 64m)  karpenter  not all pods would schedule, "
           "monitoring/prometheus-server-0 => would schedule against a non-initialized node "
           "ip-10-0-12-34.eu-west-1.compute.internal")
    [item] = _explained(row).item_list()
    assert "node ip-10-0-12-34.eu-west-1.compute.internal, which" in item.plain
    assert "clears by itself" in item.plain
