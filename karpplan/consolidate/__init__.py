"""`karpplan consolidate`: what Karpenter v1's disruption controller would do to a running cluster.

    snapshot (nodes, bound pods, PDBs, NodePools) -> candidates (why-not reasons) -> budgets ->
    emptiness / multi-node / single-node commands (each a re-schedule by the Karpenter engine) ->
    the steady state -> ConsolidationReport

One concept per module: `snapshot.py` reads, `pdb.py` judges evictions, `budgets.py` counts disruptions,
`candidates.py` says which nodes may be disrupted and why not, `simulate.py` re-schedules evicted pods with
`engines/karpenter.py`, `decide.py` is Karpenter's delete-or-replace price rule, `methods.py` the three
methods, `loop.py` the steady state, `optimal.py` the optimal re-pack, `report.py` the versioned document.
"""
