"""A whole `kubectl describe pod` is one record: the Events' FailedScheduling row is what is explained, and the
describe's own fields (Requests, Node-Selectors, Tolerations, Topology Spread Constraints, Labels) are context that
makes the answer concrete, never "unrecognised" noise.

The pastes are copied as their sources show them (`kubectl describe pod` pasted in an issue or a write-up); the
checks are what a reader of the answer sees: the pod it names, its own values quoted back, nothing unrecognised
but the paste's own non-kubectl lines.
"""

from __future__ import annotations

import pytest

from karpplan.explain.report import explain_text

# kubectl describe pod of a Pending pod on EKS, cut by its author between Node: and the containers' Mounts (a
# write-up of the fix: more nodes, cluster-autoscaler), as pasted with its code fence
# https://github.com/bridgecrew-perf6/deployment-roulette/blob/main/starter/apps/bloatware/explanation.md
BLOATWARE = (
    "```kubectl describe pod bloaty-mcbloatface-58c98b98d8-qxfcr\n"
    "Name:           bloaty-mcbloatface-58c98b98d8-qxfcr\n"
    "Namespace:      udacity\n"
    "Priority:       0\n"
    "Node:           <none>\n"
    "    Mounts:\n"
    "      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-ln4h7 (ro)\n"
    "Conditions:\n"
    "  Type           Status\n"
    "  PodScheduled   False\n"
    "Volumes:\n"
    "  kube-api-access-ln4h7:\n"
    "    Type:                    Projected (a volume that contains injected data from multiple sources)\n"
    "    TokenExpirationSeconds:  3607\n"
    "    ConfigMapName:           kube-root-ca.crt\n"
    "    ConfigMapOptional:       <nil>\n"
    "    DownwardAPI:             true\n"
    "QoS Class:                   Burstable\n"
    "Node-Selectors:              <none>\n"
    "Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n"
    "                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s\n"
    "Events:\n"
    "  Type     Reason            Age                 From               Message\n"
    "  ----     ------            ----                ----               -------\n"
    "  Warning  FailedScheduling  33s (x3 over 2m3s)  default-scheduler  0/2 nodes are available: 2 Insufficient cpu.\n"
    "  ```\n")

# the tail of a describe pasted from its Conditions on (no Name: line): an EKS node group named in the pod's
# nodeSelector, no node matching https://github.com/klothoplatform/klotho/issues/553
KLOTHO = (
    "Conditions:\n"
    "  Type           Status\n"
    "  PodScheduled   False\n"
    "Volumes:\n"
    "  aws-iam-token:\n"
    "    Type:                    Projected (a volume that contains injected data from multiple sources)\n"
    "    TokenExpirationSeconds:  86400\n"
    "  kube-api-access-nfh62:\n"
    "    Type:                    Projected (a volume that contains injected data from multiple sources)\n"
    "    TokenExpirationSeconds:  3607\n"
    "    ConfigMapName:           kube-root-ca.crt\n"
    "    ConfigMapOptional:       <nil>\n"
    "    DownwardAPI:             true\n"
    "QoS Class:                   Guaranteed\n"
    "Node-Selectors:              eks.amazonaws.com/nodegroup=private_t3_xlarge\n"
    "                             network_placement=private\n"
    "Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n"
    "                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s\n"
    "Events:\n"
    "  Type     Reason            Age   From               Message\n"
    "  ----     ------            ----  ----               -------\n"
    "  Warning  FailedScheduling  5m2s  default-scheduler  0/4 nodes are available: 4 node(s) didn't match Pod's node "
    "affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.\n")

# the head of a describe (kubectl's own layout) with a container's Requests, a toleration and a spread constraint;
# the Events row is metrics-server's on an EKS cluster whose only nodes are Fargate's
DESCRIBE_HEAD = (
    "Name:                 metrics-server-5c6bdf7f85-lwd9h\n"
    "Namespace:            kube-system\n"
    "Priority:             2000000000\n"
    "Priority Class Name:  system-cluster-critical\n"
    "Labels:               app.kubernetes.io/instance=metrics-server\n"
    "                      app.kubernetes.io/name=metrics-server\n"
    "Containers:\n"
    "  metrics-server:\n"
    "    Image:           602401143452.dkr.ecr.ap-south-1.amazonaws.com/eks/metrics-server:v0.8.0-eksbuild.3\n"
    "    Args:\n"
    "      --secure-port=10251\n"
    "    Limits:\n"
    "      memory:  400Mi\n"
    "    Requests:\n"
    "      cpu:        100m\n"
    "      memory:     200Mi\n"
    "    Liveness:     http-get https://:https/livez delay=0s timeout=1s period=10s #success=1 #failure=3\n"
    "Volumes:\n"
    "  envoy-config:\n"
    "    Type:      ConfigMap (a volume populated by a ConfigMap)\n"
    "    Name:      osmo-service-envoy-config\n"
    "    Optional:  false\n"
    "QoS Class:                    Burstable\n"
    "Node-Selectors:               <none>\n"
    "Tolerations:                  CriticalAddonsOnly op=Exists\n"
    "                              node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n"
    "Topology Spread Constraints:  topology.kubernetes.io/zone:ScheduleAnyway when max skew 1 is exceeded for "
    "selector app.kubernetes.io/instance=metrics-server,app.kubernetes.io/name=metrics-server\n"
    "Events:\n"
    "  Type     Reason            Age                 From               Message\n"
    "  ----     ------            ----                ----               -------\n")
FARGATE_ROW = ("  Warning  FailedScheduling  30m (x10 over 75m)  default-scheduler  0/5 nodes are available: 5 node(s) had "
               "untolerated taint {eks.amazonaws.com/compute-type: fargate}. preemption: 0/5 nodes are available: 5 "
               "Preemption is not helpful for scheduling.\n")


def test_a_whole_describe_is_one_record_not_thirty_unrecognised_lines() -> None:
    explanation = explain_text(BLOATWARE)
    summary = explanation.summary()
    assert summary["explained"] == 1 and summary["context"] == 23
    assert [text for _, text in explanation.unrecognised_lines] == [
        "```kubectl describe pod bloaty-mcbloatface-58c98b98d8-qxfcr", "```"]
    [item] = explanation.item_list()
    assert item.parsed.pod == "udacity/bloaty-mcbloatface-58c98b98d8-qxfcr"
    # the paste cut the containers: nothing is said about what they request
    assert "Insufficient cpu" in item.plain and "The pod requests" not in item.plain


def test_a_describe_cut_above_its_name_is_read_from_its_fields() -> None:
    explanation = explain_text(KLOTHO)
    assert explanation.summary()["unrecognised"] == 0
    [item] = explanation.item_list()
    assert ("The pod's Node-Selectors are eks.amazonaws.com/nodegroup=private_t3_xlarge, network_placement=private"
            in item.plain)
    assert item.to_document()["described"]["nodeSelectors"] == ["eks.amazonaws.com/nodegroup=private_t3_xlarge",
                                                                "network_placement=private"]


def test_the_missing_toleration_and_the_requests_are_the_pods_own() -> None:
    explanation = explain_text(DESCRIBE_HEAD + FARGATE_ROW)
    assert explanation.summary()["unrecognised"] == 0
    [item] = explanation.item_list()
    # a volume's Name: inside the describe is not another pod's
    assert item.parsed.pod == "kube-system/metrics-server-5c6bdf7f85-lwd9h"
    assert ("Tolerations (kubectl describe pod) are CriticalAddonsOnly op=Exists; node.kubernetes.io/not-ready:NoExecute "
            "op=Exists for 300s: none tolerates eks.amazonaws.com/compute-type=fargate") in item.plain
    described = item.to_document()["described"]
    assert described["requests"] == ["cpu 100m (container metrics-server)", "memory 200Mi (container metrics-server)"]
    assert described["labels"] == ["app.kubernetes.io/instance=metrics-server", "app.kubernetes.io/name=metrics-server"]


def test_requests_answer_insufficient_and_a_toleration_of_another_value_is_named() -> None:
    row = ("  Warning  FailedScheduling  45s  default-scheduler  0/3 nodes are available: 2 Insufficient memory, 1 "
           "node(s) had untolerated taint {dedicated: infra}. preemption: 0/3 nodes are available: 3 Preemption is not "
           "helpful for scheduling.\n")
    text = DESCRIBE_HEAD.replace("CriticalAddonsOnly op=Exists", "dedicated=batch:NoSchedule") + row
    [item] = explain_text(text).item_list()
    assert "The pod requests cpu 100m (container metrics-server), memory 200Mi (container metrics-server)" in item.plain
    assert "name dedicated but not the taint's value (dedicated=batch:NoSchedule against dedicated=infra)" in item.plain


def test_a_spread_of_scheduleanyway_only_is_said_not_to_filter() -> None:
    row = ("  Warning  FailedScheduling  45s  default-scheduler  0/3 nodes are available: 3 node(s) didn't match pod "
           "topology spread constraints. preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
           "scheduling.\n")
    [item] = explain_text(DESCRIBE_HEAD + row).item_list()
    assert "All of them are ScheduleAnyway, by which kube-scheduler only scores nodes" in item.plain


def test_a_log_after_the_describe_is_read_as_a_log() -> None:
    """The describe ends at the first line kubectl's describe does not print: what follows is read as usual."""
    tail = "I0815 10:22:06.718419       1 main.go:42] started\nQoS Class:   Burstable\n"
    explanation = explain_text(DESCRIBE_HEAD + FARGATE_ROW + tail)
    assert [text for _, text in explanation.unrecognised_lines] == ["I0815 10:22:06.718419       1 main.go:42] started"]


def test_a_described_nodeclaim_is_read_whole_and_its_message_parsed() -> None:
    """`kubectl describe nodeclaim` (Karpenter's layout: Labels, then Status / Conditions): the condition's Message
    is what is explained, the rest is context; its karpenter.azure.com labels put the answer on Azure."""
    text = ("Name:         default-abcde\nNamespace:    \n"
            "Labels:       karpenter.azure.com/sku-name=Standard_D2ps_v5\n              karpenter.sh/nodepool=default\n"
            "Status:\n  Conditions:\n    Last Transition Time:  2025-02-14T07:15:25Z\n"
            "    Message:               Node not registered with cluster\n    Reason:                NodeNotFound\n"
            "    Status:                Unknown\n    Type:                  Registered\n")
    explanation = explain_text(text)
    assert explanation.summary()["unrecognised"] == 0
    [item] = explanation.item_list()
    assert "VM was created but its node never registered" in item.plain and "access entry" not in item.plain


def test_an_init_containers_requests_are_told_apart() -> None:
    head = DESCRIBE_HEAD.replace("Containers:\n", "Init Containers:\n  migrate:\n    Requests:\n      cpu:  2\n"
                                 "Containers:\n", 1)
    row = ("  Warning  FailedScheduling  45s  default-scheduler  0/3 nodes are available: 3 Insufficient cpu. "
           "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.\n")
    [item] = explain_text(head + row).item_list()
    assert "The pod requests cpu 2 (init container migrate), cpu 100m (container metrics-server)" in item.plain
    assert "init containers run one at a time" in item.plain


def test_a_described_nodes_taints_name_what_the_message_does_not() -> None:
    """kube-scheduler's `untolerated taint(s)` names no taint; a `kubectl describe node` in the same paste does, and
    the pod's own tolerations (its describe) leave out the ones it already tolerates."""
    row = ("  Warning  FailedScheduling  45s  default-scheduler  0/3 nodes are available: 3 node(s) had untolerated "
           "taint(s). preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.\n")
    node = ("Name:               ip-10-0-1-5.ec2.internal\nRoles:              <none>\n"
            "Taints:             dedicated=gpu:NoSchedule\n                    CriticalAddonsOnly:NoSchedule\n"
            "Unschedulable:      false\n")
    [item] = explain_text(DESCRIBE_HEAD + row + node).item_list()
    assert "The pasted node description shows the taints: dedicated=gpu:NoSchedule - the ones" in item.plain
    assert "CriticalAddonsOnly:NoSchedule" not in item.plain.split("The pasted node description")[1]


@pytest.mark.parametrize(("before", "after"), [("> ", ""), ("\u2502 ", " \u2502")])
def test_a_describe_quoted_or_in_a_k9s_box_is_read_the_same(before: str, after: str) -> None:
    """A describe quoted in an issue (`> `) or copied from k9s' box reads as the bare one: fields are context."""
    text = "\n".join(before + line.ljust(130 if after else 0) + after for line in KLOTHO.splitlines()) + "\n"
    explanation = explain_text(text)
    assert explanation.summary()["unrecognised"] == 0
    [item] = explanation.item_list()
    assert "The pod's Node-Selectors are eks.amazonaws.com/nodegroup=private_t3_xlarge" in item.plain
