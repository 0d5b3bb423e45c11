"""Re-packing a plan's new nodes: the same zones and pools, better-filled and right-sized nodes.

Karpenter's greedy keeps the zones, pools and capacity types it chose, but spreads pods over claims by
pod count and never revisits a claim, so its nodes end up unevenly filled and imbalanced between CPU and
memory. The re-packer keeps every decision a zone-level rule can see and redoes only the per-node part:

* Pods on new nodes are put into *buckets*: nodes of one pool, zone and capacity type with the same
  values for every topology key a rule or preference uses and the same eligibility for every spread
  rule whose inclusion policy depends on the instance type. Moving a pod inside its bucket changes no
  zone-level count, so zonal spread, zonal (anti-)affinity, limits by zone and pool tiers still hold.
* Inside a bucket only per-node rules remain: resources (requests + DaemonSet overhead, through each
  option's room), hard hostname spread (a new node holds at most maxSkew matching pods), hostname pod
  anti-affinity (both directions) and host ports. Pods with hostname pod *affinity*, and the pods such
  a term matches, are left on their nodes.
* Packing, per bucket: pods with hostname rules first, first-fit decreasing (each needs a node its rules
  allow); then the other pods into the slack the right-sized nodes already pay for; then the rest into
  bulk nodes of the bucket's most cost-efficient option, filled so CPU and memory stay balanced; finally
  every node launches the cheapest option that holds it (the decision Karpenter makes at launch).
* A bucket keeps its original nodes when re-packing does not make it cheaper, and a pool keeps its
  original nodes when the re-packed ones would break its limits, so the result is never worse than the
  plan it started from and never less valid.
* It keeps the run's time limit: once the work clock's wall guard passes, the buckets not yet re-packed
  keep their nodes (unless one breaks a hostname rule) and the clock records a cut, which the plan says.

Modules: `bucket` (a bucket's options as arrays), `rules` (the hostname rules a group carries and
matches), `bins` (nodes being packed, first fit, owner placement, launch), `slack` and `grown` (the two
kinds of packing), `zone_mix` (pods traded between zones by an LP), `packer` (the Repacker that ties
them together) and `replay` (a plan back into a placement state).
"""

from karpplan.engines.repack.bucket import BoolArray, BucketShape
from karpplan.engines.repack.packer import Repacker, repack
from karpplan.engines.repack.replay import state_for

__all__ = ["BoolArray", "BucketShape", "Repacker", "repack", "state_for"]
