"""Cost per workload (showback): the plan's cost split by workload, namespace and NodePool (`showback.py`)."""

from karpplan.costs.showback import RULE, Costs, NamespaceCost, PoolCost, WorkloadCost, plan_costs

__all__ = ["RULE", "Costs", "NamespaceCost", "PoolCost", "WorkloadCost", "plan_costs"]
