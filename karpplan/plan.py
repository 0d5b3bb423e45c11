"""The Plan: the result of planning, as plain facts renderers can show without deciding anything.

`to_document()` produces the versioned JSON/YAML document of `cli-contract.md` (apiVersion
karpplan.io/v1alpha1, kind Plan). Fields beyond the contract's are additive; the timing ones
(`summary.solveSeconds`, `summary.phases`) differ from run to run, everything else is the same for the
same inputs, seed and time limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from karpplan.model.resources import PODS, Resources

API_VERSION = "karpplan.io/v1alpha1"
HOURS_PER_MONTH = 730
EXIT_CUT = 3  # `plan`'s exit code when the time limit cut it before every pending pod was simulated


@dataclass(frozen=True)
class FargateInfo:
    cpu: str
    memory: str
    capacity_provisioned: str
    profile: str
    requested_cpu: str = ""
    requested_memory: str = ""
    waste_cpu: str = ""
    waste_memory: str = ""
    hint: str = ""


@dataclass(frozen=True)
class PlanNode:
    name: str
    new: bool
    node_pool: str | None
    instance_type: str | None
    zone: str | None
    capacity_type: str | None
    hourly_price: float
    price_estimated: bool
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, str], ...]
    allocatable: Resources
    requested: Resources  # pods on the node (bound and planned) plus DaemonSet pods
    daemon_requests: Resources
    pods: tuple[str, ...]
    fargate: FargateInfo | None = None
    static: bool = False  # a node a static NodePool (spec.replicas) keeps, whatever is pending

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "name": self.name,
            "new": self.new,
            "nodePool": self.node_pool,
            "instanceType": self.instance_type,
            "zone": self.zone,
            "capacityType": self.capacity_type,
            "hourlyPrice": round(self.hourly_price, 6),
            "priceEstimated": self.price_estimated,
            "labels": dict(self.labels),
            "taints": [dict(t) for t in self.taints],
            "allocatable": self.allocatable.formatted(),
            "requested": self.requested.formatted(),
            "daemonSetRequests": self.daemon_requests.formatted(),
            "pods": list(self.pods),
            "fargate": None,
            "static": self.static,
        }
        if self.fargate is not None:
            doc["fargate"] = {
                "cpu": self.fargate.cpu,
                "memory": self.fargate.memory,
                "capacityProvisioned": self.fargate.capacity_provisioned,
                "profile": self.fargate.profile,
                "roundingWaste": {"cpu": self.fargate.waste_cpu, "memory": self.fargate.waste_memory},
                "hint": self.fargate.hint or None,
            }
        return doc


@dataclass(frozen=True)
class PlanPod:
    name: str
    namespace: str
    workload: str
    node: str | None
    bound: bool
    gated: bool
    labels: Mapping[str, str]
    requests: Resources
    origin: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_document(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "workload": self.workload,
            "node": self.node,
            "bound": self.bound,
            "gated": self.gated,
            "labels": dict(self.labels),
            "requests": Resources({k: v for k, v in self.requests.items() if k != PODS}).formatted(),
        }


@dataclass(frozen=True)
class UnschedulablePod:
    pod: str
    workload: str
    reasons: tuple[str, ...]
    # The smallest changes that make the workload schedule (`explain`'s Fix documents), when searched.
    fixes: tuple[Mapping[str, object], ...] = ()

    def to_document(self) -> dict[str, Any]:
        return {"pod": self.pod, "workload": self.workload, "reasons": list(self.reasons),
                "fixes": [dict(f) for f in self.fixes]}


@dataclass(frozen=True)
class NotSimulatedPod:
    """A pending pod the time limit left undecided: never simulated, so neither placed nor unschedulable."""

    pod: str
    workload: str
    reason: str

    def to_document(self) -> dict[str, Any]:
        return {"pod": self.pod, "workload": self.workload, "reason": self.reason}


@dataclass(frozen=True)
class IgnoredDocument:
    """A document of the input the plan does not use, and why."""

    kind: str
    name: str
    origin: str  # file:line
    reason: str

    def to_document(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "origin": self.origin, "reason": self.reason}


PreferencePolicy = Literal["honour", "drop"]
PREFERENCE_POLICIES: tuple[PreferencePolicy, ...] = get_args(PreferencePolicy)  # the first is the default


@dataclass(frozen=True)
class PreferenceOutcome:
    """What the plan did with the pods' preferences: the summary's `preferences`."""

    policy: PreferencePolicy
    kept: int = 0  # preferences made required (honour)
    # Preferences Karpenter could not keep for some pod (left as preferences), each as where it is written,
    # whose it is and what it asks (`UnmetPreference.preference`), with what Karpenter's plan did instead.
    relaxed: tuple[str, ...] = ()
    # Kept by Karpenter's plan, yet not made required: with them required its simulation placed fewer pods.
    not_enforced: int = 0
    honoured_cost: float | None = None  # drop: $/h of the plan that keeps them (None: not planned)

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"policy": self.policy, "kept": self.kept,
                               "relaxed": len(self.relaxed) + self.not_enforced,
                               "relaxedPreferences": list(self.relaxed)}
        if self.honoured_cost is not None:
            doc["honouredHourlyCost"] = round(self.honoured_cost, 6)
        return doc

    def describe(self, hourly_cost: float) -> str:
        """Plain lines for the table: the policy, and each preference Karpenter relaxed."""
        if self.policy == "drop":
            line = "preferences dropped (--preferences drop): the plan ignores preferred spreads and affinities"
            if self.honoured_cost is not None:
                saved = self.honoured_cost - hourly_cost
                line += (f"; the plan that keeps them as Karpenter would costs ${self.honoured_cost:.4f}/h"
                         + (f", so dropping them saves ${saved:.4f}/h" if saved > 1e-9 else ", no more"))
            return line
        relaxed = len(self.relaxed) + self.not_enforced
        line = (f"honoured as Karpenter does: {self.kept} kept"
                + (f", {relaxed} relaxed where Karpenter could not keep them" if relaxed else "")
                + "; --preferences drop plans without them")
        # Each says what Karpenter's plan did instead, naming its nodes: that plan, not the one shown.
        lines = [line, *(f"relaxed in Karpenter's plan: {r}" for r in self.relaxed)]
        if self.not_enforced:
            lines.append(f"relaxed: {self.not_enforced} more that Karpenter's plan keeps, as making them required "
                         "left pods out")
        return "\n".join(lines)


@dataclass(frozen=True)
class SteadyState:
    """Karpenter's plan after its disruption controller consolidated it: the steady state the cluster settles
    in (`summary.karpenter.steadyState*`). `hourly_cost` None: not computed, and `note` says why."""

    hourly_cost: float | None
    nodes: int | None = None  # the plan's nodes left (launched, replacements, static, Fargate), as `newNodes`
    actions: int | None = None  # consolidation commands executed to get there
    note: str | None = None  # why it was not computed, or what the figure includes beyond the launch
    asked: bool = True  # False: the plan's caller did not ask for it (a library caller, a re-plan)
    # $/h of nodes that were running before the plan and consolidation removes (the plans keep them): the
    # steady state is then below the launch by more than the launch's own nodes, possibly below today's bill.
    existing_removed: float = 0.0

    @property
    def computed(self) -> bool:
        return self.hourly_cost is not None

    def to_document(self) -> dict[str, Any]:
        cost = self.hourly_cost
        return {
            "steadyStateHourlyCost": None if cost is None else round(cost, 6),
            "steadyStateMonthlyCost": None if cost is None else round(cost * HOURS_PER_MONTH, 2),
            "steadyStateNodes": self.nodes,
            "steadyStateActions": self.actions,
            "steadyStateNote": self.note,
            "steadyStateExistingRemovedHourlyCost": round(self.existing_removed, 6),
        }


NOT_ASKED = SteadyState(None, note="not computed: the steady state was not asked for", asked=False)


@dataclass(frozen=True)
class Summary:
    pods: int
    scheduled: int
    unschedulable: int
    gated: int
    bound: int
    new_nodes: int
    hourly_cost: float
    lower_bound: float | None
    engine: str
    status: str
    solve_seconds: float
    region: str
    catalog: str
    karpenter_cost: float | None = None
    karpenter_new_nodes: int | None = None
    karpenter_scheduled: int | None = None
    estimated_prices: bool = False
    seed: int = 0
    time_limit: float | None = None
    phases: tuple[tuple[str, float], ...] = ()  # (name, wall seconds) of each timed phase, in the order they ran
    # The bound `lower_bound` is: "cp-sat", "fluid-lp", "configuration-lp", "zone-lp" or "whole-nodes" (the largest of them).
    bound_source: str | None = None
    preferences: PreferenceOutcome | None = None  # what the optimal plan did with preferences (None: none)
    zones: tuple[str, ...] = ()  # the cluster's zones new nodes may launch in
    zones_source: str = ""  # where they came from (`Catalog.zones_source`)
    region_source: str = ""  # where the region came from ("--region", "from Node X's labels (file:line)", ...)
    catalog_coverage: str = ""  # an embedded catalog that prices only part of the known types: how much, since when
    # Provisioning batches Karpenter needed for its plan (`karpenter_*`), and for this plan when its engine is
    # the Karpenter simulation.
    karpenter_batches: int | None = None
    batches: int | None = None
    # Karpenter's plan once consolidated (`SteadyState`); the saving is quoted against it when computed.
    karpenter_steady: SteadyState = NOT_ASKED

    @property
    def like_for_like(self) -> bool:
        """Do this plan and Karpenter's schedule as many pods, so that their costs compare the same thing?"""
        return self.karpenter_scheduled is None or self.karpenter_scheduled == self.scheduled
    # Where spot prices come from ("estimated: 0.4 x on-demand", "file:<path>", "catalog:<name>").
    spot_prices: str = ""
    fargate_prices: str | None = None  # the Fargate rates and their source, when the plan runs Fargate pods
    # Pending pods the time limit left undecided (`Plan.not_simulated`), this plan's and Karpenter's.
    not_simulated: int = 0
    karpenter_not_simulated: int = 0
    time_limit_auto: bool = False  # `--time-limit auto` chose `time_limit` from the input's size
    gap_cause: str | None = None  # a wide gap's likely cause, the plan or the bound (`gap_cause.py`)

    @property
    def gap(self) -> float | None:
        """None when there is no bound, or when the time limit left pods undecided: the bound is then of the pods
        placed only, and a gap of 0 on a plan that placed nothing would read as a proof."""
        if self.lower_bound is None or self.not_simulated:
            return None
        if self.hourly_cost <= 1e-12 or self.status == "optimal":
            return 0.0  # a proof holds within the solvers' tolerance (a few parts per million): no gap to report
        return max(0.0, (self.hourly_cost - self.lower_bound) / self.hourly_cost)

    @property
    def monthly_cost(self) -> float:
        return self.hourly_cost * HOURS_PER_MONTH

    @property
    def baseline_cost(self) -> float | None:
        """What this plan's saving is quoted against: Karpenter's steady state when computed (the honest
        baseline: a cluster run by Karpenter consolidates), else its launch."""
        if self.karpenter_cost is None:
            return None
        steady = self.karpenter_steady.hourly_cost
        return self.karpenter_cost if steady is None else steady

    def to_document(self) -> dict[str, Any]:
        gap = self.gap
        return {
            "pods": self.pods,
            "scheduled": self.scheduled,
            "unschedulable": self.unschedulable,
            "notSimulated": self.not_simulated,
            "gated": self.gated,
            "bound": self.bound,
            "newNodes": self.new_nodes,
            "hourlyCost": round(self.hourly_cost, 6),
            "monthlyCost": round(self.monthly_cost, 2),
            "lowerBound": None if self.lower_bound is None else round(self.lower_bound, 6),
            "gap": None if gap is None else round(gap, 6),
            "boundSource": self.bound_source,
            "gapCause": self.gap_cause,
            "engine": self.engine,
            "status": self.status,
            "solveSeconds": round(self.solve_seconds, 3),
            "phases": [{"name": name, "seconds": round(seconds, 3)} for name, seconds in self.phases],
            "seed": self.seed,
            "timeLimit": self.time_limit,
            "timeLimitAuto": self.time_limit_auto,
            "region": self.region,
            "catalog": self.catalog,
            "estimatedPrices": self.estimated_prices,
            "zones": list(self.zones),
            "zonesSource": self.zones_source,
            "regionSource": self.region_source,
            "catalogCoverage": self.catalog_coverage or None,
            "spotPrices": self.spot_prices or None,
            "fargatePrices": self.fargate_prices,
            "karpenter": None if self.karpenter_cost is None else {
                "hourlyCost": round(self.karpenter_cost, 6),
                "newNodes": self.karpenter_new_nodes,
                "scheduled": self.karpenter_scheduled,
                "batches": self.karpenter_batches,
                "notSimulated": self.karpenter_not_simulated,
                "likeForLike": self.like_for_like,
                **self.karpenter_steady.to_document(),
            },
            "preferences": None if self.preferences is None else self.preferences.to_document(),
            "batches": self.batches,
        }


@dataclass(frozen=True)
class Plan:
    summary: Summary
    nodes: tuple[PlanNode, ...]
    pods: tuple[PlanPod, ...]
    unschedulable: tuple[UnschedulablePod, ...]
    warnings: tuple[str, ...] = field(default=())
    ignored: tuple[IgnoredDocument, ...] = field(default=())
    # Pending pods the time limit left undecided (the Karpenter simulation was cut before it placed them).
    not_simulated: tuple[NotSimulatedPod, ...] = field(default=())
    # The preferences this plan does not honour, each as where it is written and whose it is (the warnings say
    # what the plan did instead): what `diff` compares between two plans. Not in the JSON document.
    unmet_preferences: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        """0 when every pending pod is placed, 1 when some are unschedulable (cli-contract.md), 3 when the time
        limit cut the plan before every pod was simulated (`not_simulated`): a cut plan, whatever else."""
        if self.not_simulated:
            return EXIT_CUT
        return 1 if self.unschedulable else 0

    def to_document(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": "Plan",
            "summary": self.summary.to_document(),
            "nodes": [n.to_document() for n in self.nodes],
            "pods": [p.to_document() for p in self.pods],
            "unschedulable": [u.to_document() for u in self.unschedulable],
            "warnings": list(self.warnings),
            "ignored": [i.to_document() for i in self.ignored],
            "notSimulated": [n.to_document() for n in self.not_simulated],
        }
