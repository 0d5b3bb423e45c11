"""What-if scale: the replica count each workload is planned with.

A workload's count is, first that applies:

1. `--replicas NAMESPACE/NAME=N` (or `NAMESPACE/KIND/NAME=N` where a name is shared by several kinds;
   `NAME=N` is the `default` namespace): exactly N;
2. else the replicas its HorizontalPodAutoscaler (autoscaling/v1, v2, v2beta1, v2beta2; `scaleTargetRef`
   in the HPA's namespace) picks by `--hpa`: `min` (minReplicas, default 1), `max` (maxReplicas), or
   `current` (default): the workload's own replicas clamped to [min, max], as the HPA controller keeps them;
3. else the workload's own (`spec.replicas`, default 1; a Job's parallelism);

then multiplied by `--scale FACTOR`, rounded up (an explicit `--replicas` is not multiplied). A
`--replicas` that names no workload, or several without a kind, is bad input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from karpplan.errors import UNKNOWN, InputError, InputProblem, Origin
from karpplan.model.build_fields import Field

HpaMode = Literal["current", "min", "max"]
HPA_MODES: tuple[HpaMode, ...] = get_args(HpaMode)  # the first is the default
REPLICAS_FLAG = "--replicas"
SCALE_FLAG = "--scale"
_KIND_ALIASES = {"deploy": "deployment", "sts": "statefulset", "rs": "replicaset", "rc": "replicationcontroller",
                 "cj": "cronjob"}


@dataclass(frozen=True)
class ReplicaOverride:
    """One `--replicas` flag."""

    namespace: str
    kind: str | None  # lower case; None: any kind
    name: str
    count: int
    text: str  # as written

    def matches(self, namespace: str, kind: str, name: str) -> bool:
        return (namespace == self.namespace and name == self.name
                and (self.kind is None or kind.lower() == self.kind))


@dataclass(frozen=True)
class ScaleOptions:
    """`--replicas`, `--scale` and `--hpa`."""

    replicas: tuple[ReplicaOverride, ...] = ()
    factor: float | None = None
    hpa: HpaMode = HPA_MODES[0]


@dataclass(frozen=True)
class Autoscaler:
    """A HorizontalPodAutoscaler: which workload it scales and between which counts."""

    namespace: str
    name: str
    target_kind: str
    target_name: str
    min_replicas: int
    max_replicas: int
    origin: Origin = field(default=UNKNOWN, compare=False)
    kind: str = "HorizontalPodAutoscaler"  # or KEDA's ScaledObject (it makes the HPA: `keda-hpa-<name>`)


def parse_replicas_flag(text: str, max_replicas: int, namespace: str = "default") -> ReplicaOverride:
    """`ns/name=N`, `ns/Kind/name=N` or `name=N` (in `namespace`: `--namespace`, else `default`); raises
    InputError (`--replicas: ...`) when malformed."""
    target, eq, count_text = text.rpartition("=")
    parts = target.split("/")
    if not eq or not target or len(parts) > 3 or not all(parts):
        raise InputError.at(Origin(REPLICAS_FLAG), f"{text!r}: expected NAMESPACE/NAME=N (or NAMESPACE/KIND/NAME=N)")
    try:
        count = int(count_text)
    except ValueError:
        count = -1
    if not 0 <= count <= max_replicas:
        raise InputError.at(Origin(REPLICAS_FLAG),
                            f"{text!r}: the replica count must be a whole number from 0 to {max_replicas:,}")
    namespace, kind, name = (namespace, None, parts[0]) if len(parts) == 1 else (
        (parts[0], None, parts[1]) if len(parts) == 2 else (parts[0], parts[1], parts[2]))
    kind = None if kind is None else _KIND_ALIASES.get(kind.lower(), kind.lower())
    return ReplicaOverride(namespace, kind, name, count, text)


def parse_scale_flags(replicas: Sequence[str] | None, factor: float | None, hpa: str,
                      max_replicas: int, namespace: str | None = None) -> ScaleOptions:
    """The command line's `--replicas`, `--scale` and `--hpa`; raises InputError for a bad value."""
    if factor is not None and not (factor > 0 and math.isfinite(factor)):
        raise InputError.at(Origin(SCALE_FLAG), f"{factor}: the factor must be a number greater than 0, e.g. 2 or 0.5")
    if hpa not in HPA_MODES:
        raise InputError.at(Origin("--hpa"), f"{hpa!r}: expected one of {', '.join(HPA_MODES)}")
    mode: HpaMode = next(m for m in HPA_MODES if m == hpa)
    return ScaleOptions(tuple(parse_replicas_flag(t, max_replicas, namespace or "default") for t in replicas or ()),
                        factor, mode)


KEDA_MAX_REPLICAS = 100  # a ScaledObject's maxReplicaCount when it sets none (KEDA's default)


def _spec_and_target(root: Field) -> tuple[Field, Field]:
    """An autoscaler's spec and its `scaleTargetRef` (required)."""
    spec = root["spec"]
    spec.is_mapping()
    ref = spec["scaleTargetRef"]
    if not ref.present:
        ref.required("scaleTargetRef is required")
    return spec, ref


def build_scaled_object(namespace: str, name: str, root: Field) -> Autoscaler:
    """KEDA's ScaledObject (keda.sh/v1alpha1): the HPA it makes scales `scaleTargetRef` (a Deployment unless `kind`
    says otherwise) between `minReplicaCount` (default 0: KEDA itself scales an idle workload to zero) and
    `maxReplicaCount` (default 100)."""
    spec, ref = _spec_and_target(root)
    low = spec["minReplicaCount"].optional_integer()
    high = spec["maxReplicaCount"].optional_integer()
    low = 0 if low is None or low < 0 else low
    high = KEDA_MAX_REPLICAS if high is None else high
    return Autoscaler(namespace, name, ref["kind"].string() or "Deployment", ref["name"].string(), low,
                      max(high, low), root.origin, kind="ScaledObject")


def build_hpa(namespace: str, name: str, root: Field) -> Autoscaler:
    """autoscaling/v1 or v2 HorizontalPodAutoscaler: its target and its replica range."""
    spec, ref = _spec_and_target(root)
    minimum = spec["minReplicas"].optional_integer()
    maximum_field = spec["maxReplicas"]
    maximum = maximum_field.optional_integer()
    if maximum is None:
        maximum_field.required("maxReplicas is required")
        maximum = 0
    low = 1 if minimum is None else minimum
    if minimum is not None and minimum < 0:
        spec["minReplicas"].invalid("must be greater than or equal to 0")
    if maximum < max(low, 1):
        maximum_field.invalid("must be greater than or equal to `minReplicas` and 1")
    return Autoscaler(namespace, name, ref["kind"].string(), ref["name"].string(), low, max(maximum, low),
                      root.origin)


@dataclass
class Scaler:
    """Picks each workload's count (see the module docstring) and remembers what it matched."""

    options: ScaleOptions = field(default_factory=ScaleOptions)
    autoscalers: list[Autoscaler] = field(default_factory=list)
    matched: dict[ReplicaOverride, list[str]] = field(default_factory=dict)
    scaled: set[int] = field(default_factory=set)  # ids of the autoscalers that found their workload
    workloads: list[tuple[str, int, Origin]] = field(default_factory=list)  # `ns Kind/name`, count, where
    changed: list[tuple[Origin, str]] = field(default_factory=list)  # counts an autoscaler changed, said
    by_target: dict[tuple[str, str, str], Autoscaler] = field(default_factory=dict)  # the first per workload

    def add(self, autoscaler: Autoscaler) -> None:
        self.autoscalers.append(autoscaler)
        key = (autoscaler.namespace, autoscaler.target_kind, autoscaler.target_name)
        self.by_target.setdefault(key, autoscaler)

    def count(self, namespace: str, kind: str, name: str, declared: int, origin: Origin) -> int:
        explicit = [o for o in self.options.replicas if o.matches(namespace, kind, name)]
        for o in explicit:
            self.matched.setdefault(o, []).append(f"{kind}/{name}")
        hpa = self.by_target.get((namespace, kind, name))
        if hpa is not None:  # an autoscaler of a workload in the input, whatever picks the count: no stray one
            self.scaled.add(id(hpa))
            self._also_scaling(hpa)
        if explicit:  # the flag wins
            count = explicit[-1].count
            if hpa is not None and not hpa.min_replicas <= count <= hpa.max_replicas:
                self.changed.append((hpa.origin, (
                    f"{kind}/{name} is planned with {count} replicas ({REPLICAS_FLAG}), outside "
                    f"{hpa.min_replicas}..{hpa.max_replicas}, the bounds of {hpa.kind} {hpa.name}, "
                    f"which would scale it back within them")))
        else:
            count = declared
            if hpa is not None:
                count = {"min": hpa.min_replicas, "max": hpa.max_replicas}.get(
                    self.options.hpa, min(max(declared, hpa.min_replicas), hpa.max_replicas))
                if count != declared:
                    why = {"min": "its minReplicas", "max": "its maxReplicas"}.get(
                        self.options.hpa, f"its {declared} replicas kept within {hpa.min_replicas}..{hpa.max_replicas}")
                    self.changed.append((hpa.origin, f"{kind}/{name} is planned with {count} replicas, not {declared}: "
                                                     f"{hpa.kind} {hpa.name} scales it ({why}, "
                                                     f"--hpa {self.options.hpa})"))
            if self.options.factor is not None:
                count = math.ceil(count * self.options.factor - 1e-9)
        self.workloads.append((f"{namespace} {kind}/{name}", count, origin))
        return count

    def _also_scaling(self, first: Autoscaler) -> None:
        """A second autoscaler of one workload (alternatives side by side: kubernetes/examples' vLLM HPAs on GPU
        and on server metrics) is no autoscaler of a workload missing from the input: say what it does."""
        key = (first.namespace, first.target_kind, first.target_name)
        for other in self.autoscalers:
            if other is first or id(other) in self.scaled or (other.namespace, other.target_kind, other.target_name) != key:
                continue
            self.scaled.add(id(other))
            self.changed.append((other.origin, (
                f"{other.kind} {other.namespace}/{other.name} scales {other.target_kind}/{other.target_name}, "
                f"as {first.kind} {first.name} ({first.origin}) does: the HPA controller scales neither "
                f"while two select its pods (AmbiguousSelector); karpplan planned it with {first.name}'s bounds, so "
                "keep one of them")))

    def check(self) -> None:
        """A `--replicas` that named no workload, or several of different kinds, is bad input."""
        problems = []
        for o in self.options.replicas:
            where = self.matched.get(o, [])
            if not where:
                elsewhere = _elsewhere(o, self.workloads)
                problems.append(InputProblem(Origin(REPLICAS_FLAG), (
                    f"{o.text!r} matches no workload in namespace {o.namespace}; did you mean {elsewhere}?"
                    if elsewhere else f"{o.text!r} matches no workload in the input ({_known(self.workloads)})")))
            elif len(set(where)) > 1:
                first = where[0].split("/", 1)
                problems.append(InputProblem(Origin(REPLICAS_FLAG),
                                             f"{o.text!r} matches {' and '.join(sorted(set(where)))}; say which, "
                                             f"e.g. {o.namespace}/{first[0]}/{first[1]}={o.count}"))
        if problems:
            raise InputError(problems)

    def notices(self, nothing_pending: bool) -> list[tuple[Origin, str]]:
        """What the plan should say: autoscalers whose workload is not in the input, and, when no pod is
        pending, that every workload has zero replicas (upstream examples ship so) and the option to use."""
        out = list(self.changed)
        out += [(a.origin, f"{a.kind} {a.namespace}/{a.name} scales {a.target_kind}/{a.target_name}, "
                          "which is not in the input; it changes nothing here")
               for a in self.autoscalers if id(a) not in self.scaled]
        if nothing_pending and self.workloads and all(count == 0 for _, count, _ in self.workloads):
            name, _, origin = self.workloads[0]
            namespace, _, workload = name.partition(" ")
            example = f"{namespace}/{workload.partition('/')[2]}=3"
            out.append((origin, f"every workload in the input has 0 replicas ({_known(self.workloads)}), so there is "
                                f"no pod to plan; to plan some, give a count, e.g. {REPLICAS_FLAG} {example}"
                                + (f" ({SCALE_FLAG} multiplies, and 0 stays 0)" if self.options.factor else "")))
        return out


def _elsewhere(override: ReplicaOverride, workloads: Sequence[tuple[str, int, Origin]]) -> str:
    """The flag as it would match the workloads of that name (and kind) in other namespaces: `shop/web=3`
    for `web=3` (a bare name means namespace default) when web is only in shop; "" when there is none."""
    found: dict[str, set[str]] = {}
    for written, _, _ in workloads:
        namespace, _, workload = written.partition(" ")
        kind, _, name = workload.partition("/")
        if name == override.name and (override.kind is None or kind.lower() == override.kind):
            found.setdefault(namespace, set()).add(kind)
    flags: list[str] = []
    for ns, kinds in sorted(found.items()):
        if override.kind or len(kinds) > 1:
            flags.extend(f"{ns}/{kind}/{override.name}" for kind in sorted(kinds))
        else:
            flags.append(f"{ns}/{override.name}")
    return " or ".join(f"{REPLICAS_FLAG} {flag}={override.count}" for flag in flags[:3])


def _known(workloads: Sequence[tuple[str, int, Origin]], most: int = 5) -> str:
    names = [name.replace(" ", "/", 1) for name, _, _ in workloads]
    if not names:
        return "there are none"
    shown = ", ".join(names[:most])
    return f"workloads: {shown}" + (f" and {len(names) - most} more" if len(names) > most else "")
