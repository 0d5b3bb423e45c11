"""explain on a new user's trial (session 21, second) and the threads swept after it: Karpenter's interruption
controller and the preemption half of kube-scheduler's FailedScheduling. The trial's findings: Karpenter's
interruption lines (`initiating delete for machine from interruption message`, a pretty-printed v1 record) went
unrecognised, and that record's nine lines were counted as nine but listed as one; the preemption sentence
(`20 Preemption is not helpful for scheduling, 7 No preemption victims found`) was dropped, and a Machine nominated
seconds before the scheduler's last rejection was said to be a node in the wrong zone replaced "in a loop"
(aws/karpenter-provider-aws#4341 is about consolidation taking the new node before the pod started). The threads
swept after it: spot interruptions as Karpenter v0.27 to v1.x log them, the offering it removes after one, and a
rebalance recommendation event beside nodes that were NotReady for another reason.

Every message is copied as its thread shows it. `says` are words the answer must contain for the established cause;
`never` the misdiagnosis or misreading a reader would take.
"""

from __future__ import annotations

import pytest
from explain_pastes import Paste, check_new_threads, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader, enrich
from karpplan.explain.report import explain_text

PASTES: dict[str, Paste] = {
    # v0.31: a spot instance reclaimed (AWS FIS); the thread closed as "no bug": Karpenter acted on the queue's message
    'v031-spot-interruption-console': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4772',
        '2023-10-10T05:24:20.220Z\tDEBUG\tcontroller.interruption\tremoving offering from offerings\t{"commit": "34d50'
        'bf-dirty", "queue": "karpenter-venture-preprod-queue-interruption", "messageKind": "SpotInterruptionKind", "m'
        'achine": "karpenter-spot-worker-preprod-66tr5", "action": "CordonAndDrain", "node": "ip-172-27-13-123.ap-sout'
        'heast-2.compute.internal", "reason": "SpotInterruptionKind", "instance-type": "t3a.small", "zone": "ap-southe'
        'ast-2a", "capacity-type": "spot", "ttl": "3m0s"}\n'
        '2023-10-10T05:24:20.236Z\tINFO\tcontroller.interruption\tinitiating delete for machine from interruption mess'
        'age\t{"commit": "34d50bf-dirty", "queue": "karpenter-venture-preprod-queue-interruption", "messageKind": "Spo'
        'tInterruptionKind", "machine": "karpenter-spot-worker-preprod-66tr5", "action": "CordonAndDrain", "node": "ip'
        '-172-27-13-123.ap-southeast-2.compute.internal"}\n',
        set(), ('Node ip-172-27-13-123.ap-southeast-2.compute.internal', 'EC2 is reclaiming this spot instance',
                'Karpenter cordons and drains the node', 't3a.small spot in ap-southeast-2a', 'interruption queue'),
        ('could not be scheduled', 'Not understood')),
    # v1.x, pretty-printed: the builder pod's node was a spot instance EC2 reclaimed (the PR classifies such jobs)
    'v1-spot-interruption-pretty-printed': Paste(
        'https://github.com/spack/spack-infrastructure/pull/1297',
        '{\n'
        '  "message": "initiating delete from interruption message",\n'
        '  "controller": "interruption",\n'
        '  "messageKind": "spot_interrupted",\n'
        '  "action": "CordonAndDrain",\n'
        '  "Node": {\n'
        '    "name": "ip-10-0-101-113.ec2.internal"\n'
        '  }\n'
        '}\n',
        set(), ('Node ip-10-0-101-113.ec2.internal', 'EC2 is reclaiming this spot instance', '--interruption-queue',
                'replicas spread across nodes and zones'),
        ('could not be scheduled',)),
    # v0.27's offering removed, then (a later comment, v0.33) the delete and the node tainted: cordon, drain, and
    # the replacement launched for pods that fit nowhere else
    'v027-offering-then-v033-delete': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/4028',
        '2023-06-12T11:47:23.814Z\tDEBUG\tcontroller.interruption\tremoving offering from offerings\t{"commit": "698f2'
        '2f-dirty", "queue": "linker-k8s-infradev", "messageKind": "SpotInterruptionKind", "node": "ip-172-22-30-249.e'
        'u-central-1.compute.internal", "action": "CordonAndDrain", "reason": "SpotInterruptionKind", "instance-type":'
        ' "t4g.medium", "zone": "eu-central-1c", "capacity-type": "spot", "ttl": "3m0s"}\n'
        '2024-01-18T01:50:34.693075244Z {"level":"INFO","time":"2024-01-18T01:50:34.692Z","logger":"controller.interru'
        'ption","message":"initiating delete from interruption message","commit":"a70b39e","queue":"KarpenterInterrupt'
        'ionQueue","messageKind":"SpotInterruptionKind","nodeclaim":"production-cltmx","action":"CordonAndDrain","node'
        '":"i-09b7740c6dd970471.eu-west-1.compute.internal"}\n'
        '2024-01-18T01:50:34.741894846Z {"level":"INFO","time":"2024-01-18T01:50:34.741Z","logger":"controller.node.te'
        'rmination","message":"tainted node","commit":"a70b39e","node":"i-09b7740c6dd970471.eu-west-1.compute.internal'
        '"}\n',
        set(), ('t4g.medium spot in eu-central-1c', 'Node i-09b7740c6dd970471.eu-west-1.compute.internal',
                'launches a replacement for those that fit nowhere else'),
        ()),
    # stern: a GPU spot node reclaimed while its pods' long grace period and PDB held the drain; the offering line
    # alone still says EC2 reclaimed the instance
    'stern-offering-removed-after-spot-interruption': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/3562',
        'karpenter-75b66f6bb5-qxbqg controller {"level":"INFO","time":"2023-03-08T18:50:56.314Z","logger":"controller.'
        'provisioner.cloudprovider","message":"launched new instance","commit":"beb0a64-dirty","provisioner":"gpu-spot'
        '","id":"i-06b3734b274b683d1","hostname":"ip-10-3-136-12.us-west-2.compute.internal","instance-type":"g4dn.2xl'
        'arge","zone":"us-west-2a","capacity-type":"spot"}\n'
        'karpenter-75b66f6bb5-qxbqg controller {"level":"DEBUG","time":"2023-03-08T19:07:39.045Z","logger":"controller'
        '.interruption","message":"removing offering from offerings","commit":"beb0a64-dirty","queue":"my-karpenter-in'
        'terrupt-queue","messageKind":"SpotInterruptionKind","node":"ip-10-3-136-12.us-west-2.compute.internal","actio'
        'n":"CordonAndDrain","reason":"SpotInterruptionKind","instance-type":"g4dn.2xlarge","zone":"us-west-2a","capac'
        'ity-type":"spot","ttl":"3m0s"}\n',
        set(), ('Spot Instance Interruption Warning', 'g4dn.2xlarge spot in us-west-2a'),
        ('could not be scheduled',)),
    # v0.27: a rebalance recommendation event on nodes that were NotReady; Karpenter takes no action on it
    'rebalance-recommendation-is-not-the-notready-cause': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/3954',
        'Events:\n'
        '  Type    Reason                               Age   From             Message\n'
        '  ----    ------                               ----  ----             -------\n'
        '  Normal  RegisteredNode                       17m   node-controller  Node ip-10-207-86-246.ec2.internal even'
        't: Registered Node ip-10-207-86-246.ec2.internal in Controller\n'
        '  Normal  InstanceSpotRebalanceRecommendation  16m   karpenter        Node ip-10-207-86-246.ec2.internal even'
        't: A spot rebalance recommendation was triggered for the node\n',
        set(), ('Karpenter only records it as an event', 'not what makes a node NotReady',
                'Node ip-10-207-86-246.ec2.internal'),
        ('Karpenter cordons and drains the node',)),
}

# Not counted in the sweep (its thread is cited elsewhere): the trial's preemption finding, as the user pasted it
_A4341 = ('  Normal   Nominated           118s                 karpenter                Pod should schedule on: machine/'
          'arm-4vwlh\n'
          '  Warning  FailedScheduling    114s (x3 over 119s)  default-scheduler        0/27 nodes are available: 1 node'
          "(s) had volume node affinity conflict, 14 node(s) didn't match Pod's node affinity/selector, 5 Insufficient c"
          'pu, 5 Insufficient memory, 5 node(s) had untolerated taint {simple.life/gitlab-runner: true}. preemption: 0/2'
          '7 nodes are available: 20 Preemption is not helpful for scheduling, 7 No preemption victims found for incomin'
          'g pod..\n')  # aws/karpenter-provider-aws#4341


@pytest.fixture(scope="module")
def load() -> CatalogFor:
    return catalog_loader(None, None)


def _told(text: str, load: CatalogFor) -> str:
    """The whole answer, as the CLI gives it (the items linked to each other)."""
    explanation = explain_text(text)
    enrich(explanation, load)
    return "\n".join(i.plain for i in explanation.item_list())


@pytest.mark.parametrize("name", sorted(PASTES))
def test_real_paste(name: str, load: CatalogFor) -> None:
    check_paste(PASTES[name], load)


def test_the_sweep_cites_threads_not_cited_before() -> None:
    """Each thread once, and none the earlier sweeps cite."""
    check_new_threads(PASTES.values(), __file__)


def test_the_preemption_half_is_read_with_its_counts(load: CatalogFor) -> None:
    """`preemption: 0/27 nodes are available: 20 Preemption is not helpful for scheduling, 7 No preemption victims
    found`: what each count means, and what a PriorityClass can and cannot do about it."""
    told = _told(_A4341, load)
    assert "on 7 nodes no set of lower-priority pods frees enough room" in told
    assert "on 20 nodes evicting pods cannot help at all" in told
    assert "PriorityClass above the pods it should displace" in told


def test_a_machine_nominated_seconds_before_the_last_rejection_is_a_launch_not_a_refusal(load: CatalogFor) -> None:
    """aws#4341: the Machine was nominated 118s ago and the rejections (x3) ended 114s ago, too soon for its node to
    exist: the rejections counted the older nodes; the thread's cause (the new node consolidated before the pod
    bound) is named, never a node in the wrong zone replaced in a loop."""
    told = _told(_A4341, load)
    assert "Karpenter launched machine/arm-4vwlh for it after the scheduler's rejection" in told
    assert "4s after the nomination" in told and "aws/karpenter-provider-aws#4341" in told
    assert "in a loop" not in told and "waiting will not help" not in told


def test_a_rejection_long_after_the_nomination_is_still_a_refusal_of_the_claims_node(load: CatalogFor) -> None:
    """The same pair with the rejection a minute after the nomination: the claim's node could exist by then, so the
    scheduler refused it too."""
    late = _A4341.replace("114s (x3 over 119s)", "50s (x3 over 119s)")
    told = _told(late, load)
    assert "keeps rejecting the pod" in told and "launched machine/arm-4vwlh for it after" not in told


def test_a_multi_line_record_is_listed_as_its_line_span() -> None:
    """spack#1297's record outside any grammar (its message changed): nine lines, counted and listed as nine."""
    text = PASTES['v1-spot-interruption-pretty-printed'].text.replace("interruption message", "a message")
    explanation = explain_text(text)
    assert explanation.summary()["unrecognised"] == 9
    assert explanation.unrecognised_spans() == ["1-9"]
    assert explanation.unrecognised_document()[0]["lastLine"] == 9


@pytest.mark.parametrize("message, kind", [
    ("Spot interruption warning was triggered", "spot_interrupted"),
    ("Node ip-10-0-1-2.ec2.internal event: Instance is stopping", "instance_stopped"),
    ("Interruption triggered termination for the NodeClaim", "message"),
    ("An unhealthy warning was triggered for the instance", "scheduled_change"),
    ("Capacity Reservation interruption warning was triggered", "capacity_reservation_interrupted"),
])
def test_the_interruption_events_karpenter_publishes_are_each_read(message: str, kind: str) -> None:
    """events.go's messages (v0.32+, and v0.2x's `Node X event:` form): each an interruption item of its kind."""
    [item] = explain_text(f"  Normal  SomeReason  2m  karpenter  {message}\n").item_list()
    assert item.parsed.event == "Interrupted" and item.parsed.message.startswith(f"interruption {kind}:")


def test_an_offering_removed_for_another_reason_is_not_an_interruption() -> None:
    """`removing offering from offerings` is logged for insufficient capacity on launch too: not an interruption."""
    line = ('2023-06-12T11:47:23.814Z\tDEBUG\tcontroller.provisioner\tremoving offering from offerings\t{"reason": '
            '"InsufficientInstanceCapacity", "instance-type": "t4g.medium", "zone": "eu-central-1c", '
            '"capacity-type": "spot", "ttl": "3m0s"}\n')
    assert not [i for i in explain_text(line).item_list() if i.parsed.event == "Interrupted"]


# the thread's next event: one node more, and `node(s) were unschedulable` rose with it (its preemption tail, cut in
# the stored copy after `found f`, completed as kube-scheduler prints it)
_A4341_LATER = ("  Warning  FailedScheduling    62s (x2 over 72s)    default-scheduler        0/28 nodes are available: 1 "
                "node(s) had volume node affinity conflict, 1 node(s) were unschedulable, 14 node(s) didn't match Pod's "
                "node affinity/selector, 5 Insufficient cpu, 5 Insufficient memory, 5 node(s) had untolerated taint "
                "{simple.life/gitlab-runner: true}. preemption: 0/28 nodes are available: 21 Preemption is not helpful "
                "for scheduling, 7 No preemption victims found for incoming pod..\n")


def test_the_claims_node_that_came_up_cordoned_is_said_removed_not_in_the_wrong_zone(load: CatalogFor) -> None:
    """aws#4341 as the thread goes on: the rejection a minute later counts the claim's node, and what rose with it is
    `node(s) were unschedulable` - the new node cordoned for removal (consolidation before the pod bound), not a
    node in the volume's wrong zone replaced in a loop, nor a label Karpenter misjudged."""
    told = _told(_A4341 + _A4341_LATER, load)
    assert "came up and was cordoned" in told and "consolidateAfter" in told
    assert "in a loop" not in told and "kubernetes-sigs/karpenter#343" not in told


# aws/karpenter-provider-aws#1233 (the report's first two lines, v0.5): a game studio pasted both and the DEBUG line
# was "unrecognised"
_ICE_1233 = ('2022-01-28T13:15:43.351Z        DEBUG   controller.provisioning InsufficientInstanceCapacity for offering '
             '{ instanceType: g4dn.xlarge, zone: us-east-1c, capacityType: spot }, avoiding for 45s  {"commit": '
             '"2346ed5", "provisioner": "provisioner-gpu"}\n'
             '2022-01-28T13:15:43.351Z        ERROR   controller.provisioning Could not launch node, launching instances, '
             'with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient g4dn.xlarge '
             'capacity in the Availability Zone you requested (us-east-1c). Our system will be working on provisioning '
             'additional capacity. You can currently get g4dn.xlarge capacity by not specifying an Availability Zone in '
             'your request or choosing us-east-1a, us-east-1b, us-east-1d, us-east-1f.; UnfulfillableCapacity: Unable to '
             'fulfill capacity due to your request configuration. Please adjust your request and try again.  '
             '{"commit": "2346ed5", "provisioner": "provisioner-gpu"}\n')


def test_an_offering_kept_out_after_insufficient_capacity_is_explained_beside_the_launch_error() -> None:
    explanation = explain_text(_ICE_1233)
    assert explanation.unrecognised == 0
    avoided, failed = explanation.item_list()
    assert avoided.plain.startswith("EC2 had no capacity for g4dn.xlarge in us-east-1c, so Karpenter keeps that "
                                    "offering out of its choices for a while")
    assert "could not start: EC2 had no capacity" in failed.plain
