"""The steady state does not simulate again what a replacement cannot have changed (`consolidate/memory.py`),
and reaches the answer Karpenter's re-simulate-everything passes reach: the same actions, the same reasons."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from test_consolidate_semantics import node, nodepool, pod, write

import karpplan.consolidate.loop as loop
from karpplan.consolidate.candidates import Candidate
from karpplan.consolidate.memory import CHANGES, SAME, STILL_FAILS, Failure, Memory, may_use
from karpplan.consolidate.run import ConsolidateOptions, read
from karpplan.consolidate.simulate import NEW_CLAIM, Outcome
from karpplan.consolidate.state import ClusterState

ZONE = "topology.kubernetes.io/zone"


def pinned(zone: str) -> dict[str, Any]:
    return {"nodeSelector": {ZONE: zone}}


def _state(path: Path) -> ClusterState:
    return read(ConsolidateOptions(paths=(str(path),), region="us-east-1"))[1]


def _summary(result: loop.SteadyState) -> tuple[list[tuple[str, str, list[str], str | None]], dict[str, str]]:
    return ([(a.method, a.decision, [n.name for n in a.nodes], a.replacement.name if a.replacement else None)
             for a in result.actions], result.verdicts)


def _zones_snapshot(tmp_path: Path) -> Path:
    # "alone": the only node of zone a; its pod may not leave the zone, and no m5 is cheaper than its m5.large:
    # "Can't replace with a cheaper node". "big" (zone b, judged after it: lower price over disruption cost) is
    # replaced by an m5.xlarge in zone b, with room "alone"'s pod would fit, but in the wrong zone.
    docs = [node("alone", "m5.large", "us-east-1a"), pod("stay", "alone", cpu="300m", spec=pinned("us-east-1a"),
                                                          owner="ReplicaSet/stay", labels={"app": "stay"}),
            node("big", "m5.2xlarge", "us-east-1b")]
    docs += [pod(f"b{i}", "big", cpu="400m", spec=pinned("us-east-1b")) for i in range(8)]
    return write(tmp_path, *docs, pools=(nodepool(families=("m5",)),))


def test_a_replacement_in_another_zone_does_not_undo_a_failure(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = _zones_snapshot(tmp_path)
    simulated: Counter[str] = Counter()
    real = loop.simulate

    def counted(state: ClusterState, batch: Sequence[Candidate]) -> Outcome:
        if len(batch) == 1:
            simulated[batch[0].name] += 1
        return real(state, batch)

    monkeypatch.setattr(loop, "simulate", counted)
    fast = loop.steady_state(_state(path), workers=1)
    assert [(a.method, a.decision, [n.name for n in a.nodes]) for a in fast.actions] == [("single", "replace", ["big"])]
    assert fast.verdicts["alone"] == "Can't replace with a cheaper node"
    assert simulated["alone"] == 1  # the zone-b replacement cannot take its zone-a pod: not simulated again
    simulated.clear()
    slow = loop.steady_state(_state(path), workers=1, remember=False)
    assert simulated["alone"] == 2  # Karpenter's way: every pass simulates it again, to the same answer
    assert _summary(fast) == _summary(slow)


def _failure(price: float, where: tuple[tuple[Any, str | None], ...] | None, since: int = 0) -> Failure:
    return Failure("Can't replace with a cheaper node", (), price, since, where)


def test_what_a_new_node_may_change(tmp_path: Path) -> None:
    docs = [node("n", "m5.large", "us-east-1a"),
            pod("small", "n", cpu="200m"), pod("large", "n", cpu="1800m"), pod("zoned", "n", cpu="200m",
                                                                               spec=pinned("us-east-1b"))]
    state = _state(write(tmp_path, *docs, pools=(nodepool(families=("m5",)),)))
    pods = {p.name: p for p in state.pods_on["n"]}
    option = next(o for o in state.launch_options() if o.instance_type.name == "m5.large" and o.zone == "us-east-1a")
    memory = Memory()
    new = state.launch(option)  # empty: room for 1.93 CPU
    memory.launched(state, new)
    launched = memory.replacements
    room = new.node.allocatable
    assert may_use(pods["small"], new, room) and may_use(pods["large"], new, room)
    assert not may_use(pods["zoned"], new, room)  # its node selector names another zone

    def changes(failure: Failure) -> bool:
        return failure.may_change(state, "n", new, launched) == CHANGES

    small, large, zoned = pods["small"], pods["large"], pods["zoned"]
    # Placed on existing nodes tried before the new one ("a..." < "default-m5-large-..."): they go there again.
    assert not changes(_failure(0.096, ((small, "a-node"), (large, "b-node"))))
    # ... tried after it: the pod may move to the new node and free room there.
    assert changes(_failure(0.096, ((small, "z-node"),)))
    # Only claim pods the new node cannot take: nothing moves.
    assert not changes(_failure(0.096, ((zoned, NEW_CLAIM),)))
    # Every claim pod may move and the room holds them all: maybe no claim at all.
    assert changes(_failure(0.096, ((small, NEW_CLAIM),)))
    # Each may move, but 2 CPU exceed the new node's 1.93: a claim stays, and no m5 is cheaper than an m5.large.
    # Still a failure, though perhaps worded otherwise (the final pass simulates it again for its reason).
    assert _failure(0.096, ((small, NEW_CLAIM), (large, NEW_CLAIM))).may_change(state, "n", new, launched) == \
        STILL_FAILS
    assert _failure(0.096, ((zoned, NEW_CLAIM),)).may_change(state, "n", new, launched) == SAME
    # "small" may move, "zoned" stays on a claim: no m5 is cheaper than the m5.large candidate, still a failure...
    assert not changes(_failure(0.096, ((small, NEW_CLAIM), (zoned, NEW_CLAIM))))
    # ... but an m5.2xlarge candidate could be replaced by an m5.large holding "zoned" alone.
    assert changes(_failure(0.384, ((small, NEW_CLAIM), (zoned, NEW_CLAIM))))
    # Not known where the pods went: a pod of the node that fits the new node's room counts.
    assert changes(_failure(0.096, None))
    # Replacements add up: a second empty m5.large, and together they hold both pods (no claim at all).
    second = state.launch(option)
    memory.launched(state, second)
    assert _failure(0.096, ((small, NEW_CLAIM), (large, NEW_CLAIM)), since=1).may_change(
        state, "n", second, memory.replacements) == STILL_FAILS  # launched after the first: only the second counts
    assert _failure(0.096, ((small, NEW_CLAIM), (large, NEW_CLAIM)), since=0).may_change(
        state, "n", second, memory.replacements) == CHANGES


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_remembering_gives_karpenters_answer_on_zoned_clusters(tmp_path: Path, seed: int) -> None:
    import random

    rng = random.Random(seed)
    zones = ("us-east-1a", "us-east-1b", "us-east-1c")
    types = ("m5.large", "m5.xlarge", "m5.2xlarge", "c5.xlarge", "c5.2xlarge")
    docs: list[dict[str, Any]] = []
    for i in range(12):
        itype = rng.choice(types)
        zone = zones[i % 3]
        docs.append(node(f"n{i:02d}", itype=itype, zone=zone))
        for j in range(rng.randint(0, 4)):
            app = rng.choice(("api", "web", "worker", "db"))
            spec = pinned(zone) if app == "db" else None
            docs.append(pod(f"p{i}-{j}", f"n{i:02d}", cpu=f"{rng.choice((100, 250, 500, 900))}m",
                            memory=f"{rng.choice((256, 1024, 3072))}Mi", labels={"app": app},
                            owner=f"ReplicaSet/{app}", spec=spec))
    path = write(tmp_path, *docs, pools=(nodepool(families=("m5", "c5"), budgets=[{"nodes": "30%"}]),))
    fast = loop.steady_state(_state(path), workers=1)
    slow = loop.steady_state(_state(path), workers=1, remember=False)
    assert fast.actions, "the snapshot should leave Karpenter something to do"
    assert _summary(fast) == _summary(slow)


def test_a_multi_node_batch_is_remembered_until_a_replacement_may_change_it(tmp_path: Path) -> None:
    docs = [node("a", "m5.xlarge", "us-east-1a"), pod("pa", "a", cpu="3000m", spec=pinned("us-east-1a")),
            node("b", "m5.xlarge", "us-east-1b"), pod("pb", "b", cpu="3000m", spec=pinned("us-east-1b"))]
    state = _state(write(tmp_path, *docs, pools=(nodepool(families=("m5",)),)))
    memory = Memory()
    batch = loop.candidates_of(state, {})
    assert [c.name for c in batch] == ["a", "b"]
    outcome = loop.simulate(state, batch)
    assert len(outcome.claims) == 2  # one pod per zone: two new nodes, never one cheaper command
    memory.batches_asked()
    assert memory.batch_known(state, batch) is None
    memory.batch_failed(state, batch, outcome, "Can't remove without creating 2 candidates")
    memory.batches_asked()  # the next search
    assert memory.batch_known(state, batch) == "Can't remove without creating 2 candidates"
    def launch(itype: str) -> None:
        option = next(o for o in state.launch_options() if o.instance_type.name == itype and o.zone == "us-east-1a")
        memory.launched(state, state.launch(option))

    launch("m5.large")  # too small for either pod
    assert memory.batch_known(state, batch) == "Can't remove without creating 2 candidates"
    launch("m5.xlarge")  # "pa" may move there, and "pb" alone fits an m5.xlarge, cheaper than the two nodes
    assert memory.batch_known(state, batch) is None
    memory.batches_asked()
    memory.batches_asked()  # a search that did not ask about it: forgotten
    assert memory.batches == {}


def _balanced_snapshot(tmp_path: Path) -> Path:
    # NodePool "balanced" (Balanced): "node-1", an m5.2xlarge that may not be disrupted, with 3 pods, and
    # "node-2", an m5.large with 2. Deleting node-2 saves 0.096 of the pool's 0.48 (20%) and disrupts 3 of its
    # 7 (43%): score 0.47 < 0.5, refused. NodePool "general": "node-3", whose 2 pods fit node-1, is deleted;
    # node-1 then holds 5 pods, the pool's disruption cost is 9, node-2's score 0.6: approved.
    docs = [node("node-1", "m5.2xlarge", pool="balanced", annotations={"karpenter.sh/do-not-disrupt": "true"}),
            node("node-2", "m5.large", pool="balanced"), node("node-3", "m5.large", pool="general")]
    docs += [pod(f"x{i}", "node-1", cpu="300m", owner="ReplicaSet/x", labels={"app": "x"}) for i in range(3)]
    docs += [pod(f"a{i}", "node-2", cpu="300m", owner="ReplicaSet/a", labels={"app": "a"}) for i in range(2)]
    docs += [pod(f"b{i}", "node-3", cpu="300m", owner="ReplicaSet/b", labels={"app": "b"}) for i in range(2)]
    return write(tmp_path, *docs, pools=(nodepool("balanced", policy="Balanced"), nodepool("general")))


def test_a_balanced_refusal_is_judged_again_when_its_pool_s_totals_change(tmp_path: Path) -> None:
    # balanced.go scores each move against the NodePool's totals as they are on that pass: a refusal holds
    # only while they do (a deletion elsewhere, pods moving in, change them), though the node's pods are the same
    path = _balanced_snapshot(tmp_path)
    slow = loop.steady_state(_state(path), workers=1, remember=False)
    assert [(a.method, [n.name for n in a.nodes]) for a in slow.actions] == [("single", ["node-3"]),
                                                                            ("single", ["node-2"])]
    fast = loop.steady_state(_state(path), workers=1)
    assert _summary(fast) == _summary(slow)


def test_multi_node_consolidation_is_tried_again_when_a_balanced_pool_s_totals_change(tmp_path: Path) -> None:
    # "balanced" (Balanced, budget 100%): node-1 (m5.2xlarge, may not be disrupted, 1 pod), node-2 and node-3
    # (m5.large, 2 pods each). Deleting both saves 0.192 of 0.576 and disrupts 6 of 8: score 0.44, refused, as
    # each alone. Once general's node-4 is deleted and its 2 pods join node-1, the pool's disruption cost is 10
    # and the pair scores 0.56: Karpenter's next multi-node search deletes them together.
    docs = [node("node-1", "m5.2xlarge", pool="balanced", annotations={"karpenter.sh/do-not-disrupt": "true"}),
            node("node-2", "m5.large", pool="balanced"), node("node-3", "m5.large", pool="balanced"),
            node("node-4", "m5.large", pool="general"),
            pod("x0", "node-1", cpu="300m", owner="ReplicaSet/x", labels={"app": "x"})]
    for n in (2, 3, 4):
        docs += [pod(f"p{n}-{i}", f"node-{n}", cpu="300m", owner=f"ReplicaSet/p{n}", labels={"app": f"p{n}"})
                 for i in range(2)]
    path = write(tmp_path, *docs, pools=(nodepool("balanced", policy="Balanced", budgets=[{"nodes": "100%"}]),
                                         nodepool("general")))
    slow = loop.steady_state(_state(path), workers=1, remember=False)
    assert [(a.method, sorted(n.name for n in a.nodes)) for a in slow.actions] == [
        ("single", ["node-4"]), ("multi", ["node-2", "node-3"])]
    fast = loop.steady_state(_state(path), workers=1)
    assert _summary(fast) == _summary(slow)
