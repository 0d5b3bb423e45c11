"""explain on real pastes a reviewer found misdiagnosed, judged by the cause each thread established.

Each case is the paste as the thread shows it (cited), what the answer must say and what it must not say.
"""

from __future__ import annotations

import json

from karpplan.explain.dialects import nodeclass
from karpplan.explain.enrich import catalog_loader, enrich
from karpplan.explain.report import Explanation, explain_text


def _explained(text: str) -> Explanation:
    out = explain_text(text)
    enrich(out, catalog_loader(None, None))
    return out


def _by_pod(out: Explanation) -> dict[str | None, str]:
    return {i.parsed.pod: i.plain for i in out.item_list()}


# https://github.com/aws/karpenter-provider-aws/issues/6292 (the reporter's JSON log, Karpenter v0.37)
NODECLASS_MISSING = "\n".join([
    '{"level":"ERROR","time":"2024-05-28T20:49:19.963Z","logger":"controller.disruption","message":"listing instance '
    'types for default, resolving node class, EC2NodeClass.karpenter.k8s.aws \\"default\\" not found","commit":"17dd42b"}',
    '{"level":"ERROR","time":"2024-05-28T20:49:25.665Z","logger":"controller.provisioner","message":"skipping, unable to '
    'resolve instance types, resolving node class, EC2NodeClass.karpenter.k8s.aws \\"default\\" not found",'
    '"commit":"17dd42b","nodepool":"default"}',
    '{"level":"INFO","time":"2024-05-28T20:49:25.812Z","logger":"controller.provisioner","message":"found provisionable '
    'pod(s)","commit":"17dd42b","pods":"podname/model-d4dnm","duration":"162.449739ms"}',
    '{"level":"ERROR","time":"2024-05-28T20:49:25.812Z","logger":"controller.provisioner","message":"Could not schedule '
    'pod, all available instance types exceed limits for nodepool: \\"default\\"","commit":"17dd42b",'
    '"pod":"podname/model-d4dnm"}',
])


def test_missing_node_class_is_the_cause_and_the_limits_message_its_side_effect() -> None:
    out = _explained(NODECLASS_MISSING)
    limits = _by_pod(out)["podname/model-d4dnm"]
    # the node class fix comes before anything about limits, and raising limits is ruled out
    assert limits.index('EC2NodeClass "default" does not exist') < limits.index("exceed limits")
    assert "nodeClassRef" in limits and "Do not raise spec.limits" in limits
    assert "Raise the limits" not in limits
    assert "kubernetes-sigs/karpenter#1165" in limits
    # the node-class lines are explained, not listed as unrecognised
    listed = [text for _, text in out.unrecognised_lines]
    assert not any("resolving node class" in t for t in listed)
    pool_items = [i for i in out.item_list() if i.parsed.pod is None]
    assert pool_items and all(i.parsed.reasons[0].node_pool == "default" for i in pool_items)
    assert "could not be scheduled" not in pool_items[0].plain  # a pool's error names no pod
    doc = json.loads(json.dumps(out.to_document()))
    assert any(r["kind"] == "no-instance-type" and r.get("cause") == nodeclass.MISSING
               for item in doc["items"] for r in item["reasons"])


def test_limits_alone_still_reads_as_limits() -> None:
    out = _explained(NODECLASS_MISSING.split("\n")[3])
    assert "Raise the limits" in _by_pod(out)["podname/model-d4dnm"]


def test_limits_of_another_pool_are_not_blamed_on_a_node_class() -> None:
    other = NODECLASS_MISSING.split("\n")[3].replace('\\"default\\"', '\\"gpu\\"')
    out = _explained("\n".join([*NODECLASS_MISSING.split("\n")[:2], other]))
    assert "Raise the limits" in _by_pod(out)["podname/model-d4dnm"]


def test_node_class_errors_of_every_shape() -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/5655 (v0.33 upgrade: plural resource name)
    e = nodeclass.parse('{"level":"ERROR","logger":"controller.disruption","message":"listing instance types for '
                        'default, resolving node class, ec2nodeclasses.karpenter.k8s.aws \\"default\\" not found"}')
    assert e is not None and (e.state, e.pool, e.kind, e.name) == (nodeclass.MISSING, "default", "EC2NodeClass", "default")
    ready = nodeclass.parse('2024-06-01T10:00:00.000Z\tERROR\tcontroller.provisioner\tskipping, unable to resolve '
                            'instance types, resolving node class, NodeClassNotReady\t{"commit": "x", "nodepool": "gpu"}')
    assert ready is not None and (ready.state, ready.pool) == (nodeclass.NOT_READY, "gpu")
    assert ready.text.endswith("NodeClassNotReady")
    assert nodeclass.parse('found provisionable pod(s) {"pods": "a/b"}') is None


def test_not_ready_node_class_points_at_its_conditions() -> None:
    log = ('2024-06-01T10:00:00.000Z\tERROR\tcontroller.provisioner\tskipping, unable to resolve instance types, '
           'resolving node class, NodeClassNotReady\t{"commit": "x", "nodepool": "gpu"}\n'
           '2024-06-01T10:00:01.000Z\tERROR\tcontroller.provisioner\tCould not schedule pod, all available instance '
           'types exceed limits for nodepool: "gpu"\t{"commit": "x", "pod": "ml/train-0"}\n')
    plain = _by_pod(_explained(log))["ml/train-0"]
    assert "not Ready" in plain and "kubectl describe" in plain and "Raise the limits" not in plain


# https://github.com/kubernetes-sigs/karpenter/issues/2257 (the pod's PVC is in eu-west-1a; minDomains 2)
PINNED_SPREAD = (
    '{"level":"ERROR","time":"2025-05-28T04:00:27.309Z","logger":"controller","message":"could not schedule pod",'
    '"commit":"0871602","controller":"provisioner","Pod":{"name":"infosec-elastic-es-data-hot-2-0","namespace":'
    '"infosec-elastic-test"},"error":"incompatible with nodepool \\"infosec-elastic\\", daemonset overhead={\\"cpu\\":'
    '\\"738m\\",\\"memory\\":\\"1880Mi\\",\\"pods\\":\\"8\\"}, unsatisfiable topology constraint for topology spread, '
    'key=topology.kubernetes.io/zone (counts = eu-west-1a: 1, eu-west-1b: 0, podDomains = topology.kubernetes.io/zone '
    'In [eu-west-1a], nodeDomains = topology.kubernetes.io/zone In [eu-west-1a]"}')


def test_spread_pod_pinned_to_fewer_zones_is_pointed_at_its_own_restriction() -> None:
    plain = _by_pod(_explained(PINNED_SPREAD))["infosec-elastic-test/infosec-elastic-es-data-hot-2-0"]
    assert "widening the pool cannot help" in plain
    assert "only run in eu-west-1a" in plain and "PersistentVolume" in plain and "minDomains" in plain
    assert "let the pool reach more domains" not in plain


def test_spread_pod_free_to_go_anywhere_keeps_the_pool_advice() -> None:
    free = PINNED_SPREAD.replace("podDomains = topology.kubernetes.io/zone In [eu-west-1a]",
                                 "podDomains = topology.kubernetes.io/zone Exists")
    assert "let the pool reach more domains" in _by_pod(_explained(free))[
        "infosec-elastic-test/infosec-elastic-es-data-hot-2-0"]


# https://github.com/aws/karpenter-provider-aws/issues/2971 (the PV's zone has no node; Karpenter keeps nominating)
NOMINATED_AND_REJECTED = """Events:
  Type     Reason            Age                   From               Message
  ----     ------            ----                  ----               -------
  Warning  FailedScheduling  2m28s (x8 over 9m3s)  default-scheduler  0/6 nodes are available: 1 node(s) had volume node affinity conflict, 2 node(s) didn't match Pod's node affinity/selector, 3 Insufficient cpu.
  Normal   Nominated         18s (x6 over 10m)     karpenter          Pod should schedule on ip-10-20-93-221.us-east-2.compute.internal
"""


def test_nomination_beside_a_scheduler_rejection_points_at_the_rejection() -> None:
    items = _explained(NOMINATED_AND_REJECTED).item_list()
    nominated = next(i for i in items if i.parsed.event == "Nominated")
    assert "should bind once" not in nominated.plain and "binds once" not in nominated.plain
    assert "cannot take it" in nominated.plain and "volume node affinity conflict" in nominated.plain
    # the rejection's own item words its cause and fix; the nomination names it without saying it again
    assert "said with line 4" in nominated.plain
    assert sum(i.plain.count("WaitForFirstConsumer") for i in items) == 1


def test_nomination_repeated_over_minutes_is_not_reassurance() -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/932 (nominated 12 times over 24 minutes)
    line = ('{"level":"INFO","time":"2024-01-10T10:%02d:00.000Z","logger":"controller.provisioner","message":'
            '"Pod should schedule on: nodeclaim/default-cvkcv, node/ip-10-199-71-41.ec2.internal",'
            '"pod":"spark/driver-0"}')
    out = _explained("\n".join(line % m for m in (0, 2, 4, 6, 8, 10, 12)))
    plain = _by_pod(out)["spark/driver-0"]
    assert "cannot take it" in plain and "FailedScheduling" in plain and "binds once" not in plain


def test_a_single_nomination_still_reassures_but_says_when_to_worry() -> None:
    out = _explained("  Normal   Nominated  108s  karpenter  Pod should schedule on: nodeclaim/default-cvkcv, "
                     "node/ip-10-199-71-41.ec2.internal")
    plain = out.item_list()[0].plain
    assert "binds once that node is ready" in plain and "repeats for minutes" in plain


# https://github.com/aws/karpenter-provider-aws/issues/6540 (a zookeeper pod pinned by a local PV to a gone node)
PLACEHOLDER = (
    '{"level":"ERROR","time":"2024-07-18T04:12:31.208Z","logger":"controller.provisioner","message":"Could not schedule '
    'pod, incompatible with nodepool \\"default\\", daemonset overhead={\\"cpu\\":\\"910m\\",\\"memory\\":\\"844Mi\\",'
    '\\"pods\\":\\"10\\"}, key kubernetes.io/hostname, kubernetes.io/hostname DoesNotExist not in kubernetes.io/hostname '
    'In [hostname-placeholder-740854]","commit":"17d6c05","pod":"xxx-zookeeper-0"}')


def test_placeholder_in_a_nodepool_check_is_not_transient() -> None:
    plain = _by_pod(_explained(PLACEHOLDER))["xxx-zookeeper-0"]
    assert "not transient" in plain and "This alone is transient" not in plain
    assert plain.index("pinned to a host") < plain.index("hostname-placeholder")
    assert "local PersistentVolume" in plain


def test_placeholder_for_an_in_flight_nodeclaim_stays_transient() -> None:
    bare = ('could not schedule pod {"Pod": {"name": "web-0", "namespace": "a"}, "error": "incompatible requirements, '
            'key kubernetes.io/hostname, kubernetes.io/hostname In [ip-10-0-0-1.ec2.internal] not in '
            'kubernetes.io/hostname In [hostname-placeholder-1234]"}')
    plain = _by_pod(_explained(bare))["a/web-0"]
    assert "This alone is transient" in plain


# https://github.com/kubernetes/autoscaler/issues/1291 (a StatefulSet's pod; the node group was at 0 nodes)
CA_PREDICATE_AND_EVENT = (
    "auto-scaler-aws-cluster-autoscaler-5f78688568-6q4hn aws-cluster-autoscaler I1002 11:03:26.503432       1 "
    "utils.go:196] Pod myapp-server-0 can't be scheduled on nodes.prod.example.com, predicate failed: "
    "GeneralPredicates predicate mismatch, cannot put production/myapp-server-0 on "
    "template-node-for-nodes.prod.example.com-7085033211816415489, reason: node(s) didn't match node selector\n"
    "auto-scaler-aws-cluster-autoscaler-5f78688568-6q4hn aws-cluster-autoscaler I1002 11:03:26.504202       1 "
    'factory.go:33] Event(v1.ObjectReference{Kind:"Pod", Namespace:"production", Name:"myapp-server-0", '
    'UID:"7a8d1128-c62b-11e8-9f1f-066d51fa4852", APIVersion:"v1", ResourceVersion:"6206696", FieldPath:""}): '
    "type: 'Normal' reason: 'NotTriggerScaleUp' pod didn't trigger scale-up (it wouldn't fit if a new node is "
    "added): 1 node(s) didn't match node selector\n")


def test_one_pod_named_with_and_without_its_namespace_is_one_pod() -> None:
    out = _explained(CA_PREDICATE_AND_EVENT)
    assert {i.parsed.pod for i in out.item_list()} == {"production/myapp-server-0"}
    assert out.summary()["pods"] == 1


def test_bare_name_shared_by_two_namespaces_stays_bare() -> None:
    events = "".join(f"{ns}   2m   Normal   NotTriggerScaleUp   pod/myapp-server-0   pod didn't trigger scale-up "
                     "(it wouldn't fit if a new node is added): 1 node(s) didn't match node selector\n"
                     for ns in ("production", "staging"))
    out = _explained(CA_PREDICATE_AND_EVENT.split("\n")[0] + "\n" + events)
    assert {"production/myapp-server-0", "staging/myapp-server-0"} <= {i.parsed.pod for i in out.item_list()}
    assert "myapp-server-0" in {i.parsed.pod for i in out.item_list()}


def test_selector_mismatch_on_node_groups_names_the_template_tags() -> None:
    plain = _by_pod(_explained(CA_PREDICATE_AND_EVENT))["production/myapp-server-0"]
    assert "k8s.io/cluster-autoscaler/node-template/label/" in plain and "managed node group" in plain


def test_selector_mismatch_beside_groups_at_max_size_is_not_about_templates() -> None:
    # https://github.com/kubernetes/autoscaler/issues/5692: the pod's own groups are at their max size
    out = _explained("pod didn't trigger scale-up: 12 node(s) didn't match Pod's node affinity/selector, "
                     "3 max node group size reached.")
    plain = out.item_list()[0].plain
    assert "maximum size" in plain and "node-template/label" not in plain


def test_a_custom_scheduler_is_named_not_called_kube_scheduler() -> None:
    from dataclasses import replace

    from karpplan.explain.wording import item_plain

    item = _explained("  Warning  FailedScheduling  3m  prod-user-scheduler  0/3 nodes are available: 3 Insufficient "
                      "memory.").item_list()[0]
    assert item.parsed.source == "kube-scheduler"  # the contract's source stays
    assert item.parsed.scheduler == "prod-user-scheduler"  # read from the describe row's From column
    assert "the scheduler prod-user-scheduler" in item.plain
    default = _explained("  Warning  FailedScheduling  3m  default-scheduler  0/3 nodes are available: 3 Insufficient "
                         "memory.").item_list()[0]
    assert default.parsed.scheduler == "default-scheduler" and "(kube-scheduler)" in default.plain
    item.parsed = replace(item.parsed, scheduler=None)
    assert "(kube-scheduler)" in item_plain(item)


def test_instance_types_unresolved_for_a_cut_off_cause_still_explain_the_limits_message() -> None:
    # Karpenter v1 logs the cause in a trailing "error" field, which a paste (or explain's line cut) may lose
    log = ('{"level":"ERROR","time":"2025-01-10T10:00:00.000Z","logger":"controller","message":"skipping, unable to '
           'resolve instance types","commit":"abc","controller":"provisioner","NodePool":{"name":"default"}}\n'
           + NODECLASS_MISSING.split("\n")[3] + "\n")
    out = _explained(log)
    plain = _by_pod(out)["podname/model-d4dnm"]
    assert "Do not raise spec.limits" in plain and "nodeClassRef" in plain
    assert "does not exist" not in plain and "is not Ready." not in plain  # the log does not say which
    pool_item = next(i for i in out.item_list() if i.parsed.pod is None)
    assert pool_item.parsed.reasons[0].cause == nodeclass.UNRESOLVED


def test_a_rejection_of_another_pod_leaves_the_nomination_alone() -> None:
    log = ("default   1m   Warning   FailedScheduling   pod/web-1   0/3 nodes are available: 3 node(s) had volume node "
           "affinity conflict.\n"
           "default   1m   Normal   Nominated   pod/api-0   Pod should schedule on: nodeclaim/default-x, node/ip-1\n")
    plain = _by_pod(_explained(log))["default/api-0"]
    assert "binds once" in plain and "keeps rejecting" not in plain


def test_a_nomination_whose_event_age_shows_minutes_of_repeats_is_not_reassurance() -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/932: `108s (x12 over 24m)`; the Age column is read by
    # the describe grammar (parse.py) into Parsed.age
    from dataclasses import replace

    from karpplan.explain.related import link_nominations

    out = explain_text("  Normal   Nominated  108s (x12 over 24m)  karpenter  Pod should schedule on: "
                       "nodeclaim/default-cvkcv, node/ip-10-199-71-41.ec2.internal")
    item = out.item_list()[0]
    assert item.parsed.age == "108s (x12 over 24m)"  # read from the describe row's Age column
    link_nominations(out)
    assert "12 times over 24 minutes" in item.plain and "binds once" not in item.plain
    assert item.count == 1  # the record was seen once; the event's own count is in the sentence
    item.parsed = replace(item.parsed, age="5s (x2 over 40s)")
    item.plain = "unchanged"
    link_nominations(out)
    assert item.plain == "unchanged"  # a retry within two minutes is a node on its way


# https://github.com/kubernetes-sigs/karpenter/issues/3272 ("Impossible topology domains are included in topology
# spreads"): a NodePool named non-existent-zone allows only eu-west-2z; Karpenter counts that domain and keeps
# sending the spread pod there. A new user read only "expected when the pod pins another pool", but the pod pins
# nothing.
IMPOSSIBLE_DOMAIN = '[pod/karpenter-78748f59d4-hnx82/controller] {"level":"ERROR","time":"2026-09-02T13:12:27.029Z","logger":"controller","caller":"scheduling/scheduler.go:302","message":"could not schedule pod","commit":"85eeae8","controller":"provisioner","namespace":"","name":"","reconcileID":"x","Pod":{"name":"spread-test-0","namespace":"default"},"error":"incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [non-existent-zone] not in karpenter.sh/nodepool In [default-reserved]; no instance type met the scheduling requirements or had enough resources or had a required offering, requirements=karpenter.k8s.aws/ec2nodeclass In [default], karpenter.sh/capacity-type In [on-demand], karpenter.sh/initialized In [true], karpenter.sh/nodepool In [non-existent-zone], karpenter.sh/registered In [true], kubernetes.io/arch In [arm64], node.kubernetes.io/instance-type In [c7g.medium], topology.kubernetes.io/zone In [eu-west-2z], resources={\\"cpu\\":\\"750m\\",\\"memory\\":\\"256Mi\\",\\"pods\\":\\"3\\"}; incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [non-existent-zone] not in karpenter.sh/nodepool In [default]","errorCauses":[{"error":"incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [non-existent-zone] not in karpenter.sh/nodepool In [default-reserved]"},{"error":"no instance type met the scheduling requirements or had enough resources or had a required offering, requirements=karpenter.k8s.aws/ec2nodeclass In [default], karpenter.sh/capacity-type In [on-demand], karpenter.sh/initialized In [true], karpenter.sh/nodepool In [non-existent-zone], karpenter.sh/registered In [true], kubernetes.io/arch In [arm64], node.kubernetes.io/instance-type In [c7g.medium], topology.kubernetes.io/zone In [eu-west-2z], resources={\\"cpu\\":\\"750m\\",\\"memory\\":\\"256Mi\\",\\"pods\\":\\"3\\"}"},{"error":"incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [non-existent-zone] not in karpenter.sh/nodepool In [default]"}]}'


def test_a_pod_pinned_to_the_one_pool_that_cannot_launch_is_told_the_pin_may_be_the_spreads() -> None:
    told = " ".join(_by_pod(_explained(IMPOSSIBLE_DOMAIN))["default/spread-test-0"].split())
    assert "required onto NodePool non-existent-zone, which fits no instance type" in told
    assert "topologySpreadConstraint" in told and "kubernetes-sigs/karpenter#3272" in told
    assert "eu-west-2 has the zones eu-west-2a, eu-west-2b, eu-west-2c" in told


# https://github.com/aws/karpenter-provider-aws/issues/2383: the Karpenter controller's own pod (its chart's affinity,
# provisioner-name DoesNotExist) refused by the one Provisioner; it belongs on a node Karpenter does not manage
CONTROLLER_POD = ('ERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with provisioner "default", '
                  'incompatible requirements, key karpenter.sh/provisioner-name, karpenter.sh/provisioner-name '
                  'DoesNotExist not in karpenter.sh/provisioner-name In [default]\t{"commit": "639756a", "pod": '
                  '"karpenter/karpenter-788545f8d9-qjnx5"}')


def test_a_pool_key_that_must_not_exist_keeps_off_every_karpenter_node() -> None:
    """DoesNotExist pins no other pool (the answer once said "expected when the pod pins another pool"): it keeps
    the pod off every node Karpenter launches."""
    plain = _by_pod(_explained(CONTROLLER_POD))["karpenter/karpenter-788545f8d9-qjnx5"]
    assert "keeps off every node Karpenter launches" in plain and "managed node group" in plain
    assert "pins another pool" not in plain
