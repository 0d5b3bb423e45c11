"""A pattern (configuration) LP lower bound on the hourly cost of the new nodes, by column generation.

The fluid LP (`bound.py`) routes each resource of a pod on its own and counts nodes continuously, so it
never sees that a node holds whole pods whose CPU *and* memory fit. This bound does: a *pattern* is one
node of one launch option holding whole pods, and the configuration LP

    min sum_p price_p y_p   s.t.  sum_p a[c, p] y_p >= d_c  (every pod class c),   y >= 0

buys patterns until every class is covered. Existing nodes give patterns of price 0, each node at most
once. Every plan is a point of this LP (its nodes are patterns; a node holding more pods of a class than
the class must place is trimmed, which keeps it a pattern), so its optimum bounds every plan's cost.

What is relaxed (dropping constraints keeps the bound valid): zonal rules, pod affinity, preferences, pool
weights and **NodePool limits** (a plan that keeps the limits is still a point of the LP). What is kept:
per-node resources in every requested dimension, the classes each option allows, and the per-node caps
of `bound.cap_sets` (hostname anti-affinity cliques: one pod per node, on new and existing nodes;
hostname spread: maxSkew pods per new node).

* Pod classes: groups with the same usable options, usable existing nodes, cap sets and request vector
  (`instance.pod_classes`). Demand d_c: the pods of the class that must be placed (`required`, as in the
  fluid LP). A class that fits an option of price 0 is free (unbounded free nodes hold it) and is dropped.
* Shapes: options with the same room, price and (fitting) classes are priced once; a shape that another
  one beats (room at least as large in every dimension, every class it allows, no dearer) is dropped: its
  patterns are patterns of the other at no lower price.

**The bound is certified, never read off the LP.** For duals pi >= 0 of the class rows, let P_k(pi) be the
best value sum_c pi_c x_c of a pattern x on shape k (and P_e(pi) on existing node e), and P̄ >= P any
upper bound. With theta = max_k P̄_k(pi) / price_k, the vector pi / theta with mu_e = P̄_e(pi) / theta is
a feasible dual solution of the configuration LP, so by weak duality

    LB(pi) = (sum_c d_c pi_c - sum_e P̄_e(pi)) / theta

bounds its optimum, whatever pi is and however well the LP was solved (Farley's bound). The bound
reported is the best LB over the duals tried, times (1 - MARGIN); theta gets a relative 1e-9 on top.

Upper bounds P̄ (all valid for every pattern, so any mix of them is):

* Screening (every shape, every time): for multipliers lam >= 0 on the dimensions, a pattern is worth at
  most lam . room + sum_c x_c (pi_c - lam . req_c)^+, with x_c at most what fits (and what the class must
  place), and a cap group of s pods per node contributing at most s times its best member.
* Tables (dynamic programming): a table over a few dimensions (CPU first, then memory, then any other
  that fits) holds, in cell (i, j, ...), the best value of a pattern using at most i cells of the
  first dimension, j of the second... for every cell at once, so one table prices every shape it covers.
  Requests are rounded *down* to the table's grid and rooms too (floor(sum w) <= floor(room) holds for
  every real pattern), dimensions outside the table are priced by Lagrange multipliers (values
  pi_c - lam . req_c, plus lam . room), disjoint cap sets of a few pods per node are choose-one groups,
  other caps and the class demands bound the pod counts. Small shapes share tables by profile; large
  ones share tables over the first dimension, one row (with its own multipliers) per profile.
* The pricing problem's LP relaxation per shape (`lp_pricing.py`), bounded through GLOP's duals as
  multipliers (lam . room + rho . caps + sum_c u_c (pi_c - lam . req_c - rho . caps(c))^+, valid for any
  lam, rho >= 0): tighter than the tables on large shapes, looser on small ones.
* Tables of their own, and CP-SAT's proven bound (rounding of the scaled values added back), for the
  shapes that decide theta at the end.

Column generation (GLOP master) runs on an *aggregated* master: classes that differ only by their cap sets
share a row and every cap set has a row (a relaxation: its duals, spread over the classes, are the pi
certified above, so nothing is lost but the duals' freedom). It starts from fluid-like duals (one price
per dimension and per cap set, as large as every shape's price allows) with Wentges smoothing towards
them early on; columns are the tables' best patterns at each shape's cell, repaired to fit the real
room and caps, greedy ones for the shapes without a table this time, and (the bound's own LP only) the
relaxations' optima of the `LP_SHAPES` shapes of highest bound, rounded down and up, repaired and filled. Once the smoothing has faded, when the
shared tables find nothing, CP-SAT prices the shapes whose bounds leave most room at the master's own duals:
every pattern it finds joins the master and its proven bounds certify those duals again (the best certificate of
all iterations is kept); tables of their own only if it found no column. (The LP whose own plan `lp_rounding`
rounds keeps the older tail, tables of their own first, whose columns that rounding was tuned on.) It stops at `time_limit` on the work clock (`effort.py`:
every table, simplex solve and CP-SAT solve is charged its modelled time, so the bound is the same on every
run), keeping a share of it to certify the last duals with tables of their own per shape and CP-SAT.

The package, one concept per module:

* `instance.py`: the pod classes, the shapes (dominated ones dropped) and the existing nodes' shapes;
* `caps.py`: the per-node caps in the forms the pricing needs;
* `buckets.py`: which shapes share a table, on which grid;
* `tables.py`: the steps of a dynamic-programming table, and the pattern behind a cell;
* `pricing.py`: the bounds on the pricing problem (screening, tables, CP-SAT);
* `columns.py`: table patterns repaired into real columns;
* `lp_pricing.py`: the pricing problem's LP relaxation per shape: near-best patterns and their certified bound;
* `master.py`: the restricted master LP and the fluid-like starting duals;
* `driver.py`: what both column generations share (clocks, first columns, the master step and its
  stopping tests, CP-SAT pricing of the most promising shapes, the bound's inputs and margin);
* `generation.py`: column generation and the certified bound;
* `lower_bound.py`: `pattern_lower_bound`, the entry point;
* `mix.py`: the LP's own plan (the master's columns and their values), which `engines/lp_rounding.py` rounds;
* `zone_instance.py`, `zone_lp.py`: the zone-indexed configuration LP (classes per zone, the zonal rules as linking
  rows) and `zone_lower_bound`, its certified bound, built on the same pricing code.
"""

from karpplan.engines.patterns.lower_bound import PatternBound, pattern_lower_bound
from karpplan.engines.patterns.zone_lp import ZoneBound, zone_lower_bound

__all__ = ["PatternBound", "ZoneBound", "pattern_lower_bound", "zone_lower_bound"]
