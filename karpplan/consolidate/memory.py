"""What earlier passes of the steady state learnt that still holds (`Memory`).

Karpenter simulates every candidate again on every pass. A candidate's single-node failure is kept while its
pods are the same and no replacement launched since may change it (`Failure.may_change`: which of the
simulation's pods could move to the new nodes, and whether those that cannot still need a claim no cheaper
than the candidate); so is each multi-node batch the last search asked about, and multi-node consolidation
as a whole is not tried again until a replacement comes up (`loop.one_pass`). Deleting nodes and binding
pods only take room away, so they do not undo a failure, with one exception: a refusal by a `Balanced`
NodePool is a score against the pool's totals (its nodes' prices and disruption costs), which any command
touching the pool changes, so it holds only while they are the same (`Failure.totals`), and multi-node
consolidation is tried again when any Balanced pool's totals changed. The same answers, fewer simulations; a
failure that may now read otherwise is marked (`Failure.worded_as_now`) for the last pass to simulate again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from karpplan.consolidate.balanced import Totals, is_refusal
from karpplan.consolidate.budgets import BUDGET_PREFIX
from karpplan.consolidate.candidates import Candidate
from karpplan.consolidate.simulate import NEW_CLAIM, NOWHERE, Outcome
from karpplan.consolidate.snapshot import SimNode
from karpplan.consolidate.state import ClusterState
from karpplan.model.pods import Pod, PodTemplate
from karpplan.model.resources import Resources
from karpplan.scheduling.candidates import option_table
from karpplan.scheduling.filters import fits_taints

CHANGES, SAME, STILL_FAILS = "changes", "same", "still fails"  # `Failure.may_change`


def may_use(pod: Pod, node: SimNode, room: Resources) -> bool:
    """kube-scheduler's filters that read no other pod: the pod fits the node's `room`, tolerates its NoSchedule
    and NoExecute taints and matches its node selector and required node affinity. False: it cannot go there."""
    template = pod.template
    return (pod.requests.fits_in(room) and fits_taints(template.tolerations, node.node.taints)
            and template.affinity.matches(node.node.labels, node.name))


class Launched:
    """The replacements launched so far, and, while `launched` judges the newest, each one's room now and
    whether a pod may use it (kept per template: what `may_use` reads of a pod)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._rooms: dict[str, tuple[SimNode, Resources]] = {}
        self._usable: dict[tuple[int, str], tuple[PodTemplate, bool]] = {}

    def refresh(self, state: ClusterState) -> None:
        names = set(self.names)
        self._rooms = {n.name: (n, n.node.allocatable - state.used(n.name)) for n in state.nodes if n.name in names}
        self._usable = {}

    def up(self, since: int) -> list[str]:
        """The replacements launched since the `since`-th that are still in the cluster."""
        return [n for n in self.names[since:] if n in self._rooms]

    def room(self, name: str) -> Resources:
        return self._rooms[name][1]

    def usable(self, pod: Pod, name: str) -> bool:
        key = (id(pod.template), name)
        found = self._usable.get(key)
        if found is None:
            node, room = self._rooms[name]
            found = self._usable[key] = (pod.template, may_use(pod, node, room))
        return found[1]


@dataclass(frozen=True)
class Failure:
    """A candidate's single-node failure, with what replacements launched since could change of it."""

    reason: str
    pods: tuple[str, ...]  # the node's pods when it failed (`_pods`)
    price: float  # the candidate's
    since: int  # replacements launched before it was simulated
    # Its simulation's pods (moving and pending) with where they went (`Outcome.where`: an existing node's name,
    # NEW_CLAIM or NOWHERE). None: not known (every pod of the node counts as one a new node may take).
    where: tuple[tuple[Pod, str | None], ...] | None = None
    exact: bool = True  # False: still a failure, but a simulation now might give it another reason
    # the existing nodes its simulation placed pods on, with their versions then (`ClusterState.version`)
    used: tuple[tuple[str, int], ...] = ()
    # a Balanced refusal: its NodePool and the pool's totals it was scored against (it holds while they do)
    totals: tuple[str, Totals] | None = None

    def holds(self, state: ClusterState, name: str, totals: Mapping[str, Totals]) -> bool:
        """The node's pods are those it failed with, and a Balanced refusal's pool totals are the same."""
        return self.pods == _pods(state, name) and (
            self.totals is None or totals.get(self.totals[0]) == self.totals[1])

    def worded_as_now(self, state: ClusterState) -> bool:
        """Whether a simulation now would give the same reason: no pod could go elsewhere (`exact`), and the
        nodes it placed pods on are all still there with the same pods (one that filled up since could send
        a pod to a second claim: still a failure, worded otherwise)."""
        present = {n.name for n in state.nodes}
        return self.exact and all(name in present and state.version(name) == v for name, v in self.used)

    def may_change(self, state: ClusterState, name: str, node: SimNode, launched: Launched) -> str:
        """Whether the new `node` may change this failure (CHANGES: Karpenter would simulate it again), given
        every replacement launched since it was simulated (`launched`: each one's room now, `may_use`); SAME:
        the simulation would go as it went; STILL_FAILS: some pods may go elsewhere, still to no command.

        The engine tries the existing nodes in name order, then claims. A pod placed on a node tried before
        a new one goes there again: that node's pods are the same when it comes. So only the pods placed on
        a node tried after a new one, on a new claim or nowhere can go elsewhere, and only by moving to a new
        one. A pod that may move off a node tried after `node` frees room there: may change. A pod placed
        nowhere that may go to `node` may be placed: may change. (Each earlier replacement was judged so
        when it came; its room only shrank since.) Otherwise only new-claim pods move, to new nodes, at most
        their rooms' worth together; the others stay on new claims, so when no launch option cheaper than
        the candidate holds what must stay (the pods that may use no new node, and what exceeds the new
        nodes' room of those that may), the command still needs a claim that is not cheaper, or more than
        one: still a failure (unless a pod placed nowhere might then find room under the NodePool's limits), though
        not always for the same reason (one claim or two, say).
        Not known where the pods went: may change when one of the node's pods fits the node's room.
        (Deleting nodes and binding pods only take room away: not counted, as before.)"""
        if self.where is None:
            fits = any(p.requests.fits_in(launched.room(node.name)) for p in state.pods_on.get(name, []))
            return CHANGES if fits else SAME
        claimed: list[Pod] = []
        nowhere = False
        for pod, at in self.where:
            if at is NEW_CLAIM:
                claimed.append(pod)
                continue
            nowhere = nowhere or at == NOWHERE
            if (at == NOWHERE or at > node.name) and launched.usable(pod, node.name):
                return CHANGES
        up = launched.up(self.since)
        fixed = Resources()
        movers = Resources()
        moving = False
        for p in claimed:
            if any(launched.usable(p, n) for n in up):
                movers = movers + p.requests
                moving = True
            else:
                fixed = fixed + p.requests
        if not moving:
            return SAME  # nothing moves
        if nowhere:
            return CHANGES  # claims change under a pod placed nowhere
        rooms = Resources()
        for n in up:
            rooms = rooms + launched.room(n)
        left = {key: max(fixed.get(key), fixed.get(key) + movers.get(key) - rooms.get(key))
                for key in {*fixed.keys(), *movers.keys()}}
        if not any(v > 0 for v in left.values()):
            return CHANGES  # maybe no claim at all
        table = option_table(state.launch_options())
        return CHANGES if np.any((table.prices < self.price) & table.fits(left, table.all)) else STILL_FAILS


@dataclass
class Memory:
    """What earlier passes learnt that still holds (the module's docstring)."""

    epoch: int = 0  # replacements launched so far
    failures: dict[str, Failure] = field(default_factory=dict)
    multi_failed: int | None = None  # the epoch multi-node consolidation last found nothing in
    multi_totals: Mapping[str, Totals] = field(default_factory=dict)  # ... and the Balanced pools' totals then
    enabled: bool = True  # False: re-simulate everything every pass, as Karpenter does
    replacements: Launched = field(default_factory=Launched)
    # multi-node batches (their candidates' names) that failed in the last multi-node search, or were known to
    batches: dict[tuple[str, ...], Failure] = field(default_factory=dict)
    _asked: dict[tuple[str, ...], Failure] = field(default_factory=dict)

    def batches_asked(self) -> None:
        """A multi-node search starts: only the batches it asks about are kept for the next one (a search
        asks about the prefixes of the candidates' order, which changes little from one to the next)."""
        self.batches, self._asked = self._asked, {}

    def batch_known(self, state: ClusterState, batch: Sequence[Candidate]) -> str | None:
        """The batch's failure when nothing since may have changed it (the same test as a single node's)."""
        if not self.enabled:
            return None
        key = tuple(c.name for c in batch)
        found = self.batches.get(key)
        if found is None or found.pods != _batch_pods(state, batch):
            return None
        self._asked[key] = found
        return found.reason

    def batch_failed(self, state: ClusterState, batch: Sequence[Candidate], outcome: Outcome, why: str) -> None:
        key = tuple(c.name for c in batch)
        trace = _trace(state, [c.name for c in batch], outcome.where)
        if trace is not None:
            self._asked[key] = Failure(why, _batch_pods(state, batch), sum(c.price for c in batch), self.epoch, trace)

    def multi_known(self, totals: Mapping[str, Totals]) -> bool:
        """Multi-node consolidation found nothing and nothing since may change that (no replacement came up,
        no Balanced pool's totals changed)."""
        return self.multi_failed == self.epoch and dict(self.multi_totals) == dict(totals)

    def multi_found_nothing(self, totals: Mapping[str, Totals]) -> None:
        self.multi_failed = self.epoch if self.enabled else None
        self.multi_totals = dict(totals)

    def known(self, state: ClusterState, totals: Mapping[str, Totals]) -> dict[str, str]:
        """The failures that still hold, by node (`totals`: this pass's Balanced pools')."""
        if not self.enabled:
            return {}
        return {name: f.reason for name, f in self.failures.items() if f.holds(state, name, totals)}

    def forget_inexact(self, state: ClusterState, names: Iterable[str]) -> bool:
        """Forget the failures of `names` whose reason a simulation now might word otherwise; True if any."""
        inexact = [n for n in names if n in self.failures and not self.failures[n].worded_as_now(state)]
        for name in inexact:
            del self.failures[name]
        return bool(inexact)

    def learn(self, state: ClusterState, verdicts: dict[str, str],
              where: dict[str, dict[str, str | None]] | None = None,
              totals: Mapping[str, Totals] | None = None) -> None:
        """Remember the pass's failures (not the budgets'); `where`: where each failed simulation put its pods;
        `totals`: the Balanced pools' totals this pass scored against."""
        prices = {n.name: n.cost for n in state.nodes if n.name in verdicts}
        pools = {n.name: n.pool for n in state.nodes if n.name in verdicts}
        for name, reason in verdicts.items():
            if reason.startswith(BUDGET_PREFIX):
                continue
            placed = (where or {}).get(name)
            old = self.failures.get(name)
            if placed is None and old is not None and old.reason == reason and old.pods == _pods(state, name):
                continue  # not simulated this pass: known from an earlier one (what it learnt then stays)
            trace = None if placed is None else _trace(state, [name], placed)
            used = tuple(sorted({(at, state.version(at)) for at in (placed or {}).values() if at}))
            pool = pools.get(name)
            scored = None
            if is_refusal(reason) and pool is not None:
                scored = (pool, (totals or {}).get(pool, Totals(0.0, 0.0)))
            self.failures[name] = Failure(reason, _pods(state, name), prices.get(name, 0.0), self.epoch, trace,
                                          used=used, totals=scored)

    def launched(self, state: ClusterState, node: SimNode) -> None:
        """A replacement came up (its command's pods bound): forget the failures it may change."""
        self.epoch += 1
        self.replacements.names.append(node.name)
        self.replacements.refresh(state)
        for name, failure in list(self.failures.items()):
            verdict = failure.may_change(state, name, node, self.replacements)
            if verdict == CHANGES:
                del self.failures[name]
            elif verdict == STILL_FAILS and failure.exact:
                self.failures[name] = replace(failure, exact=False)
        for key, failure in list(self.batches.items()):
            if failure.may_change(state, "", node, self.replacements) == CHANGES:
                del self.batches[key]


def _pods(state: ClusterState, name: str) -> tuple[str, ...]:
    return tuple(sorted(p.key for p in state.pods_on.get(name, [])))


def _batch_pods(state: ClusterState, batch: Sequence[Candidate]) -> tuple[str, ...]:
    return tuple(key for c in batch for key in _pods(state, c.name))


def _trace(state: ClusterState, names: Sequence[str], where: dict[str, str | None]
           ) -> tuple[tuple[Pod, str | None], ...] | None:
    """`Outcome.where` with the pods themselves (the candidates' and the pending ones); None if one is missing."""
    pods = {p.key: p for p in state.pending}
    for name in names:
        pods.update((p.key, p) for p in state.pods_on.get(name, []))
    if not all(key in pods for key in where):
        return None
    return tuple((pods[key], at) for key, at in where.items())


