"""Karpenter's interruption controller (aws/karpenter-provider-aws pkg/controllers/interruption): EC2 told it, through
its SQS interruption queue, that an instance is going, and it cordons, drains and replaces the node.

    INFO  controller.interruption  initiating delete for machine from interruption message {"messageKind": "SpotInterruptionKind", "action": "CordonAndDrain", "node": "ip-..."}   (v0.28-v0.31)
    {"message": "initiating delete from interruption message", "messageKind": "spot_interrupted", "action": "CordonAndDrain", "Node": {"name": "ip-..."}}   (v0.32+)
    Deleted node from interruption message                                                    (v0.19-v0.27)
    DEBUG controller.interruption  removing offering from offerings {"reason": "SpotInterruptionKind", "instance-type": "t3a.small", "zone": "...", "capacity-type": "spot", "ttl": "3m0s"}
    Warning  SpotInterrupted            Spot interruption warning was triggered                 (events, v0.32+)
    Normal   InstanceSpotInterrupted    Node ip-... event: A spot interruption warning was triggered for the node   (v0.19-v0.31)
    Normal   SpotRebalanceRecommendation / InstanceStopping / InstanceTerminating / InstanceUnhealthy /
             TerminatingOnInterruption / CapacityReservationInstanceInterrupted

The message kinds are messages/types.go's (`SpotInterruptionKind` ... before v0.32, `spot_interrupted` ... since);
the action each gets is utils.go's actionForMessage: a rebalance recommendation gets none (an event only), instance
status failures are terminated without a graceful drain, the others cordoned and drained. `parse` returns a key
(`interruption KIND: WHAT`), `plain` words it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

EVENT = "Interrupted"
TRIGGERS = ("interruption message", "removing offering from offerings", "interruption warning was triggered",
            "rebalance recommendation was triggered", "Interruption triggered termination",
            "unhealthy warning was triggered", "SpotInterrupted", "SpotRebalanceRecommendation",
            "TerminatingOnInterruption", "CapacityReservationInstanceInterrupted", "Instance is stopping",
            "Instance is terminating")

SPOT, REBALANCE, SCHEDULED, STATE = "spot_interrupted", "rebalance_recommendation", "scheduled_change", "state_change"
STOPPED, TERMINATED, RESERVATION = "instance_stopped", "instance_terminated", "capacity_reservation_interrupted"
STATUS = ("instance_status", "system_status", "event_status")
# messages/types.go: the v0.2x names, and the v0.32+ ones
_KINDS = {"spotinterruptionkind": SPOT, "rebalancerecommendationkind": REBALANCE, "scheduledchangekind": SCHEDULED,
          "statechangekind": STATE, **{k: k for k in (SPOT, REBALANCE, SCHEDULED, STOPPED, TERMINATED, RESERVATION,
                                                       *STATUS)}}
# the events notifyForMessage publishes (reason, then the message's own words), each with its kind
_EVENTS = (
    (r"(?:Instance)?SpotInterrupted|(?:a )?spot interruption warning was triggered", SPOT),
    (r"(?:Instance)?SpotRebalanceRecommendation|(?:a )?spot rebalance recommendation was triggered", REBALANCE),
    (r"CapacityReservationInstanceInterrupted|Capacity Reservation interruption warning was triggered", RESERVATION),
    (r"InstanceUnhealthy|an unhealthy warning was triggered", SCHEDULED),
    (r"InstanceStopping|Instance is stopping", STOPPED),
    (r"InstanceTerminating(?!OnInterruption)|Instance is terminating", TERMINATED),
    (r"(?:Node)?TerminatingOnInterruption|Interruption triggered termination", ""),
)
_EVENT_RULES = tuple((re.compile(p, re.I), kind) for p, kind in _EVENTS)
_DELETE = re.compile(r"(?:initiating delete(?: for (?:machine|nodeclaim|node))?|deleted (?:machine|node(?:claim)?)) "
                     r"from interruption message", re.I)
_OFFERING = re.compile(r"removing offering from offerings", re.I)
_FIELD = re.compile(r'"(?P<key>messageKind|action|reason|instance-type|zone|capacity-type|ttl)"\s*:\s*"(?P<value>[^"]*)"')
# the node a record names: v0.2x's "node" field, v0.32+'s "Node": {"name": ...}, an old event's `Node X event:`
_NODE = re.compile(r'"node"\s*:\s*"(?P<a>[^"]+)"|"Node"\s*:\s*\{\s*"name"\s*:\s*"(?P<b>[^"]+)"|\bNode (?P<c>\S+) event:')


def kind_of(value: object) -> str | None:
    return _KINDS.get(value.lower()) if isinstance(value, str) else None


def _fields(text: str) -> dict[str, str]:
    return {m.group("key"): m.group("value") for m in _FIELD.finditer(text)}


def key(message: str, fields: Mapping[str, Any] | None = None, event: str | None = None) -> str | None:
    """The item text of an interruption record (`interruption KIND: WHAT`), or None when it is not one. `fields`
    are a JSON record's own (the message beside them); else the ones a console line carries after it."""
    got = {k: v for k, v in (fields or {}).items() if isinstance(v, str)} or _fields(message)
    kind = kind_of(got.get("messageKind")) or ""
    if _DELETE.search(message):
        action = got.get("action") or ""
        return f"interruption {kind or 'message'}: delete" + (f", action {action}" if action else "")
    if _OFFERING.search(message):
        why = kind_of(got.get("reason"))
        if why is None:  # an offering removed for another reason (insufficient capacity on launch): not ours
            return None
        what = " ".join(got.get(k, "") for k in ("instance-type", "capacity-type")).strip()
        return (f"interruption {why}: offering {what or 'unknown'} in {got.get('zone') or 'its zone'} unavailable"
                + (f" for {got['ttl']}" if got.get("ttl") else ""))
    head = f"{event or ''} {message}"
    for rule, rule_kind in _EVENT_RULES:
        if rule.search(head):
            return f"interruption {rule_kind or kind or 'message'}: " + ("delete" if not rule_kind else "event")
    return None


def nodes(message: str, fields: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The node an interruption record names."""
    for name in ("node", "Node"):
        value = (fields or {}).get(name)
        if isinstance(value, dict):
            value = value.get("name")
        if isinstance(value, str) and value:
            return (value,)
    m = _NODE.search(message)
    return (m.group("a") or m.group("b") or m.group("c"),) if m else ()


def mentioned(message: str) -> bool:
    return any(t in message for t in TRIGGERS)


_WHAT = {
    SPOT: ("EC2 is reclaiming this spot instance: it sent a Spot Instance Interruption Warning, and stops or "
           "terminates the instance two minutes later because AWS needs the capacity back (not a fault of the node or "
           "the cluster)"),
    REBALANCE: ("EC2 sent a rebalance recommendation: this spot instance is at elevated risk of interruption. "
                "Karpenter only records it as an event (no cordon, no drain, no replacement); what makes it act is "
                "the interruption warning, if one follows"),
    SCHEDULED: ("AWS Health scheduled a change for this instance (maintenance or retirement of its host), so it "
                "will be stopped or retired"),
    STATE: "the instance is stopping or terminating (its EC2 state changed outside Karpenter)",
    STOPPED: ("the instance is stopping (its EC2 state changed outside Karpenter: someone or something stopped it, "
              "or EC2 stopped an interrupted spot instance)"),
    TERMINATED: ("the instance is terminating (its EC2 state changed outside Karpenter: someone or something "
                 "terminated it, or EC2 reclaimed it)"),
    RESERVATION: ("the capacity reservation this instance runs in (a capacity block ending, or an on-demand "
                  "capacity reservation reclaimed) is being interrupted"),
    **{s: ("EC2's status checks report this instance or its host impaired, so Karpenter terminates it without a "
           "graceful drain (PodDisruptionBudgets and volume detachment are not waited for)") for s in STATUS},
}
_ACTS = ("Karpenter cordons and drains the node (evicting its pods, respecting PodDisruptionBudgets while the instance "
         "lives) and deletes its NodeClaim; the evicted pods go to other nodes, and Karpenter launches a replacement "
         "for those that fit nowhere else")
_SPREAD = ("To soften the next one: let the NodePool choose from many instance types (families, sizes, generations) "
           "and every zone, so spot launches draw from deep capacity pools and the replacement is another type or zone "
           "(Karpenter also takes the reclaimed type and zone out of its offerings for a few minutes); run two or more "
           "replicas spread across nodes and zones (topologySpreadConstraints) with a PodDisruptionBudget, so a drain "
           "never takes them all at once; keep terminationGracePeriodSeconds well under the two minutes; and put what "
           "must not be interrupted on on-demand (karpenter.sh/capacity-type: on-demand).")
QUEUE = ("Karpenter hears of these only through its interruption queue (settings.interruptionQueue in the Helm "
         "values, --interruption-queue or INTERRUPTION_QUEUE; settings.aws.interruptionQueueName before v0.32): an SQS "
         "queue fed by EventBridge rules for EC2 Spot Instance Interruption Warning, EC2 Instance Rebalance "
         "Recommendation, EC2 Instance State-change Notification and AWS Health events. Where spot nodes vanish with "
         "no such line, the queue is not set, or the queue, its rules or the controller's SQS permissions are "
         "missing (Karpenter's getting-started CloudFormation template creates them); aws-node-termination-handler "
         "in queue mode on the same events is then redundant.")
_KEY = re.compile(r"^interruption (?P<kind>[\w]+): (?P<what>delete|event|offering (?P<offering>.*))(?:, action (?P<action>\w+))?$")


def plain(text: str, nodes: tuple[str, ...] = ()) -> str:
    """What an interruption item (its `key`) means, and what to do; `nodes`: the nodes its records name."""
    said = _plain(text)
    if not nodes:
        return said
    named = ", ".join(nodes[:3]) + (f" and {len(nodes) - 3} more" if len(nodes) > 3 else "")
    return f"Node{'s' if len(nodes) > 1 else ''} {named}: {said}"


def _plain(text: str) -> str:
    m = _KEY.match(text)
    kind = m.group("kind") if m else "message"
    what = m.group("what") if m else ""
    if m and m.group("offering"):
        offering = m.group("offering").removesuffix(" unavailable").replace(" unavailable for ", ", for ")
        lead = (_WHAT[SPOT][:1].upper() + _WHAT[SPOT][1:] + ". ") if kind == SPOT else ""
        return (f"{lead}After the interruption ({kind}), Karpenter marks the offering it ran on unavailable ({offering}), so "
                "the replacement is launched as another instance type, zone or capacity type. Expected, nothing to fix; "
                "with few types allowed in the NodePool the replacement may cost more or not launch at all - allow "
                "more instance types and zones.")
    cause = _WHAT.get(kind, "EC2 sent an interruption event for this instance (Karpenter's interruption queue)")
    if kind == REBALANCE:
        return (cause[:1].upper() + cause[1:] + ". Nothing to fix, and not what makes a node NotReady or its pods fail "
                "(kubectl describe node: its conditions and the kubelet say that). Acting on the recommendation itself "
                "(draining early) takes aws-node-termination-handler; Karpenter does not.")
    if kind in STATUS or (m and m.group("action") == "ForcefulTermination"):
        acts = ("Karpenter deletes its NodeClaim at once; the pods are recreated on other nodes and Karpenter launches "
                "a replacement for those that fit nowhere else")
    else:
        acts = _ACTS
    done = " (this line: the delete has started)" if what == "delete" else ""
    if kind in (SPOT, "message"):
        after = _SPREAD
    else:
        after = ("Two or more replicas spread across nodes and zones, with a PodDisruptionBudget, keep a workload up "
                 "while one node goes.")
        if kind in (STOPPED, TERMINATED, STATE):
            after += (" If nobody meant to stop it, CloudTrail's StopInstances / TerminateInstances events say who "
                      "did.")
    return (f"{cause[:1].upper() + cause[1:]}. {acts}{done}. This is Karpenter's interruption handling working: "
            f"nothing is broken. {after} {QUEUE}")
