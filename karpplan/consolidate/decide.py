"""Delete or replace: Karpenter's `computeConsolidation` and its price rule (disruption/consolidation.go).

All pods placed on the nodes left: delete. One new NodeClaim: replace, with the instance types whose
cheapest offering costs less than the candidates together (`RemoveInstanceTypeOptionsByPriceAndMinValues`);
an on-demand candidate whose NodePool allows spot is replaced by spot. Spot candidates replaced by spot need
the SpotToSpotConsolidation gate, and a single spot node needs 15 cheaper types (it launches among the 15
cheapest, or as many as the NodePool's `minValues` take when that is more). Multi-node commands also drop
every type not cheaper than a candidate's own type (`filterOutSameInstanceType`). A NodePool whose requirements carry `minValues` needs that many distinct values
of each such label among the types the price filter leaves, or there is no command ("Filtering by price:
minValues requirement is not met ...", Karpenter's default Strict policy). The replacement launched is the
cheapest offering left.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from karpplan.consolidate.candidates import Candidate
from karpplan.consolidate.simulate import Outcome
from karpplan.model import labels as L
from karpplan.scheduling.candidates import LaunchOption

SPOT = "spot"
MIN_SPOT_TO_SPOT_TYPES = 15  # MinInstanceTypesForSpotToSpotConsolidation


@dataclass
class Command:
    method: str  # emptiness | multi | single
    candidates: list[Candidate]
    outcome: Outcome | None = None
    replacement: LaunchOption | None = None
    options: list[LaunchOption] = field(default_factory=list)  # the instance types sent for launch

    @property
    def decision(self) -> str:
        return "replace" if self.replacement is not None else "delete"

    @property
    def source_cost(self) -> float:
        return sum(c.price for c in self.candidates)

    @property
    def savings(self) -> float:
        return self.source_cost - (self.replacement.price if self.replacement is not None else 0.0)


def _by_type(options: Sequence[LaunchOption]) -> dict[str, float]:
    """Each instance type's cheapest offering among `options`."""
    prices: dict[str, float] = {}
    for o in options:
        name = o.instance_type.name
        known = prices.get(name)
        if known is None or o.price < known:
            prices[name] = o.price
    return prices


def _cheaper(options: Sequence[LaunchOption], limit: float) -> list[LaunchOption]:
    """The options of the types whose cheapest offering costs less than `limit`."""
    prices = _by_type(options)
    return [o for o in options if prices[o.instance_type.name] < limit]


def _label(o: LaunchOption, key: str) -> str | None:
    if key == L.ZONE:
        return o.zone
    if key == L.CAPACITY_TYPE:
        return o.capacity_type
    if key == L.INSTANCE_TYPE:
        return o.instance_type.name
    return o.labels.get(key) or o.instance_type.labels.get(key)


def min_values_unmet(options: Sequence[LaunchOption], min_values: Sequence[tuple[str, int]]) -> str | None:
    """Karpenter's error when `options` hold fewer distinct values of a `minValues` label than it asks
    (`SatisfiesMinValues`), wrapped as its Unconsolidatable event words it; None when every one is met."""
    short = [key for key, least in min_values if len({v for o in options if (v := _label(o, key)) is not None}) < least]
    if not short:
        return None
    return f"Filtering by price: minValues requirement is not met for label(s) (label(s)=[{' '.join(short)}])"


def _types_for_min_values(names: Sequence[str], options: Sequence[LaunchOption],
                          min_values: Sequence[tuple[str, int]]) -> int:
    """How many of the types `names` (cheapest first) it takes to meet every `minValues` (`SatisfiesMinValues`'
    count): spot-to-spot launches with that many when it exceeds 15. 0 without minValues."""
    if not min_values:
        return 0
    of_type: dict[str, list[LaunchOption]] = {}
    for o in options:
        of_type.setdefault(o.instance_type.name, []).append(o)
    seen: dict[str, set[str]] = {key: set() for key, _ in min_values}
    for count, name in enumerate(names, start=1):
        for key, _ in min_values:
            seen[key].update(v for o in of_type.get(name, ()) if (v := _label(o, key)) is not None)
        if all(len(seen[key]) >= least for key, least in min_values):
            return count
    return len(names)


def _min_values(candidates: list[Candidate], claim_pool: str) -> tuple[tuple[str, int], ...]:
    """The replacement's NodePool's `minValues` (known when it is a candidate's pool, as it nearly always is)."""
    return next((c.disruption.min_values for c in candidates if c.pool.name == claim_pool), ())


def _launch(options: list[LaunchOption], chosen: LaunchOption) -> LaunchOption:
    """The offering launched: the simulation's own choice when it survived the filters, else the cheapest."""
    return chosen if chosen in options else min(options, key=lambda o: (o.price, o.instance_type.name, o.zone))


def decide(method: str, candidates: list[Candidate], outcome: Outcome, spot_to_spot: bool) -> Command | str:
    """The command for these candidates, or why there is none (Karpenter's event text)."""
    if outcome.errors:
        return outcome.error_text()
    if not outcome.claims:
        return Command(method, candidates, outcome)
    if len(outcome.claims) != 1:
        return f"Can't remove without creating {len(outcome.claims)} candidates"
    claim = outcome.claims[0]
    price = sum(c.price for c in candidates)
    options = claim.options
    least = _min_values(candidates, claim.chosen.pool.name)
    all_spot = all(c.node.capacity_type == SPOT for c in candidates)
    if all_spot and any(o.capacity_type == SPOT for o in options):
        if not spot_to_spot:
            return "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
        spot = _cheaper([o for o in options if o.capacity_type == SPOT], price)
        unmet = min_values_unmet(spot, least)
        if unmet is not None:
            return unmet
        if not spot:
            return "Can't replace with a cheaper node"
        if len(candidates) == 1:
            types = sorted(_by_type(spot).items(), key=lambda kv: (kv[1], kv[0]))
            if len(types) < MIN_SPOT_TO_SPOT_TYPES:
                return (f"SpotToSpotConsolidation requires {MIN_SPOT_TO_SPOT_TYPES} cheaper instance type options "
                        f"than the current candidate to consolidate, got {len(types)}")
            cap = max(MIN_SPOT_TO_SPOT_TYPES, _types_for_min_values([name for name, _ in types], spot, least))
            first = {name for name, _ in types[:cap]}
            spot = [o for o in spot if o.instance_type.name in first]
        return Command(method, candidates, outcome, _launch(spot, claim.chosen), spot)
    cheaper = _cheaper(options, price)
    unmet = min_values_unmet(cheaper, least)
    if unmet is not None:
        return unmet
    if not cheaper:
        return "Can't replace with a cheaper node"
    if any(o.capacity_type == SPOT for o in cheaper) and any(o.capacity_type != SPOT for o in cheaper):
        cheaper = [o for o in cheaper if o.capacity_type == SPOT]  # OD -> [OD, spot]: launch spot only
    if method == "multi":
        own: dict[str | None, float] = {}
        for c in candidates:
            own[c.node.instance_type] = min(own.get(c.node.instance_type, c.price), c.price)
        present = [own[t] for t in _by_type(cheaper) if t in own]
        if present:
            cheaper = _cheaper(cheaper, min(present))
        if not cheaper:
            return "Can't replace with a cheaper node"
    return Command(method, candidates, outcome, _launch(cheaper, claim.chosen), cheaper)
