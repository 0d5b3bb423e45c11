"""What one record says about another, once the whole log is read.

- Node classes: a NodePool whose node class is missing or not ready resolves no instance types, and
  Karpenter then reports its pods as "all available instance types exceed limits" (kubernetes-sigs/karpenter
  #1165). The node-class error lines become items of their own, and a limits reason for the same pool is
  worded as the side effect it is, with the node-class fix first.
- Nominations: Karpenter's `Pod should schedule on ...` is reassuring only once; beside a kube-scheduler
  rejection of the same pod, or repeated over minutes, the nominated node cannot take the pod.
- Scheduled: a later `Successfully assigned <pod> to <node>` row of the same pod's events means the rejections
  before it were the wait for a node; if the pod is still not running, scheduling is not what stops it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from karpplan.explain import nomination
from karpplan.explain.dialects import karpenter as K
from karpplan.explain.dialects import nodeclass
from karpplan.explain.dialects.nodeclass import NodeClassError
from karpplan.explain.dialects.nodeclass import plain as node_class_plain
from karpplan.explain.report import Explanation
from karpplan.explain.structure import (
    KUBE_SCHEDULER,
    LIMITS,
    NO_INSTANCE_TYPE,
    NODE_FILTER,
    Item,
    Parsed,
    Reason,
)
from karpplan.explain.wording import capital, item_plain

REPEATED_SECONDS = 120  # a nomination still repeated after this long is not a node on its way


def _limits_plain(r: Reason, e: NodeClassError, dialect: str | None) -> str:
    pool = r.node_pool or e.pool
    provisioner = dialect == K.V016 or e.provisioner  # a v0.2x Provisioner, its node template an AWSNodeTemplate
    return (f'{"Provisioner" if provisioner else "NodePool"} "{pool}" is not really at its limits. '
            + node_class_plain(replace(e, pool=pool, provisioner=provisioner))
            + f" Do not raise {'spec.limits.resources' if provisioner else 'spec.limits'} for this.")


def _node_class_errors(explanation: Explanation) -> list[NodeClassError]:
    """The node-class errors the log reports (parse.py reads their lines as items of their own)."""
    found: list[NodeClassError] = []
    for item in explanation.items.values():
        for r in item.parsed.reasons:
            if r.kind == NO_INSTANCE_TYPE and r.cause in nodeclass.CAUSES and item.parsed.pod is None:
                e = nodeclass.parse(r.text)
                if e is not None:
                    e = replace(e, pool=e.pool or r.node_pool)
                    if e not in found:
                        found.append(e)
    return found


def _behind(r: Reason, errors: list[NodeClassError]) -> NodeClassError | None:
    if r.kind != LIMITS or "node limits" in r.text:
        return None
    same = [e for e in errors if e.pool == r.node_pool]
    unnamed = [e for e in errors if e.pool is None or r.node_pool is None]
    return (same or unnamed)[0] if same or unnamed else None


def merge_pod_names(explanation: Explanation) -> None:
    """A pod named without its namespace on one line (cluster-autoscaler's predicate lines, klog) and with it on
    another (its events) is one pod: the bare name takes the namespace when exactly one namespaced pod has it."""
    named: dict[str, set[str]] = {}
    for item in explanation.items.values():
        full_name = item.parsed.pod or ""
        if "/" in full_name:
            named.setdefault(full_name.rpartition("/")[2], set()).add(full_name)
    merged: dict[tuple[object, ...], Item] = {}
    for key, item in list(explanation.items.items()):
        pod = item.parsed.pod
        full = named.get(pod or "", set()) if pod and "/" not in pod else set()
        if len(full) == 1:
            item.parsed = replace(item.parsed, pod=next(iter(full)))
            key = item.parsed.signature()
        mine = merged.get(key)
        if mine is None:
            merged[key] = item
            continue
        mine.count += item.count
        mine.line, mine.last_line = min(mine.line, item.line), max(mine.last_line, item.last_line)
    if len(merged) != len(explanation.items) or any(a is not b for a, b in zip(merged, explanation.items, strict=True)):
        explanation.items = merged
        for item in merged.values():
            item.plain = item_plain(item)


def link_node_classes(explanation: Explanation) -> None:
    errors = _node_class_errors(explanation)
    if not errors:
        return
    for item in explanation.items.values():
        p = item.parsed
        changed = False

        def reword(r: Reason, dialect: str | None = p.dialect) -> Reason:
            nonlocal changed
            e = _behind(r, errors)
            if e is None:
                return r
            changed = True
            return replace(r, plain=capital(_limits_plain(r, e, dialect)))

        reasons = tuple(reword(r) for r in p.reasons)
        pools = tuple(replace(pool, reasons=tuple(reword(r) for r in pool.reasons)) for pool in p.pools)
        if changed:
            item.parsed = replace(p, reasons=reasons, pools=pools)
            item.plain = item_plain(item)


def _seconds(a: str | None, b: str | None) -> float | None:
    try:
        if a and b:
            return abs((datetime.fromisoformat(b.replace("Z", "+00:00")) -
                        datetime.fromisoformat(a.replace("Z", "+00:00"))).total_seconds())
    except ValueError:
        return None
    return None


_AGE_REPEATS = re.compile(r"\(x(?P<n>\d+) over (?P<d>[\dhms.]+)\)")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([hms])")
_AGE = re.compile(r"(?:\d+[dhms])+(?!\w)")
_DURATION_D = re.compile(r"(\d+)([dhms])")


def _age_seconds(age: str | None) -> float | None:
    """Seconds of kubectl's event age (`54s`, `3m20s`, `2m28s (x8 over 9m3s)`: its first part), or None."""
    m = _AGE.match((age or "").strip())
    if m is None:
        return None
    return sum(float(n) * {"d": 86400, "h": 3600, "m": 60, "s": 1}[u] for n, u in _DURATION_D.findall(m.group(0)))


def _repeats(age: str | None) -> tuple[int, float | None]:
    """(times, seconds) from kubectl's event age `18s (x6 over 10m)`; (1, None) when it shows no repetition."""
    m = _AGE_REPEATS.search(age or "")
    if m is None:
        return 1, None
    seconds = sum(float(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in _DURATION.findall(m.group("d")))
    return int(m.group("n")), seconds


def _rejections(explanation: Explanation, pod: str | None) -> list[Item]:
    pods = {i.parsed.pod for i in explanation.items.values()}
    return [i for i in explanation.items.values() if i.parsed.source == KUBE_SCHEDULER and i.parsed.event !=
            "Nominated" and (i.parsed.pod == pod or len(pods) == 1)]


def _volume_zone(said: list[Reason]) -> bool:
    return any("volume node affinity conflict" in w for r in said for w in (r.counts or {}))


def _renominated(explanation: Explanation, pod: str | None) -> list[str]:
    """The NodeClaims (Machines before v0.32) Karpenter nominated the pod for, in order, when it named more than one
    and none of the earlier ones was nominated for longer than Karpenter waits for a node to register (15 minutes):
    such a claim did become a node, which the scheduler then rejected (aws/karpenter-provider-aws#4450)."""
    pods = {i.parsed.pod for i in explanation.items.values()}
    nominated = [i for i in sorted(explanation.items.values(), key=lambda i: i.line)
                 if i.parsed.event == "Nominated" and i.parsed.nominated and (i.parsed.pod == pod or len(pods) == 1)]
    claims = list(dict.fromkeys((i.parsed.nominated or "").split(",")[0].strip() for i in nominated))
    if len(claims) < 2 or not all(c.startswith(("nodeclaim/", "machine/")) for c in claims):
        return []  # nominations to existing nodes may move as pods come and go
    for i in nominated:
        if (i.parsed.nominated or "").split(",")[0].strip() != claims[-1] and (_repeats(i.parsed.age)[1] or 0) > 900:
            return []
    return claims


def _renominated_plain(p: Parsed, claims: list[str]) -> str:
    """A pod nominated for one NodeClaim after another: the earlier ones never became nodes."""
    who = f"Pod {p.pod}" if p.pod else "The pod"
    this = (p.nominated or "").split(",")[0].strip()
    earlier = claims[:claims.index(this)] if this in claims else []
    if not earlier:
        later = ", ".join(claims[1:])
        return (f"{who}: Karpenter nominated {p.nominated}, then {later} for the same pod: a new "
                "NodeClaim means the earlier one never became a node that could take the pod - it failed "
                "to launch (no capacity for its instance types, a quota, a launch error) or its node never "
                "registered or initialized, and Karpenter replaced it. The scheduler's rejections count "
                "only the nodes that exist, not a NodeClaim still launching, so they do not say why. Look "
                "at the NodeClaim (kubectl describe nodeclaim: its Launched / Registered / Initialized "
                "conditions and their messages) and Karpenter's log ('failed launching nodeclaim', "
                "'registration').")
    return (f"{who}: Karpenter nominated {p.nominated}, after {', '.join(earlier)} for the same pod, "
            "which never became a node that took it. The scheduler's rejections count only nodes that "
            f"exist, not {this} while it launches. If it too does not become a Ready node within "
            "minutes, kubectl describe nodeclaim and Karpenter's log say why (its launch or "
            "registration error); otherwise the pod binds once it is ready.")


# seconds an instance needs at the least to boot and register as a node: a rejection less than this after the
# nomination of a claim still counted only the nodes that were there before it
NO_NODE_YET = 30


def _rejected_before_the_claim(p: Parsed, line: int, rejected: list[Item]) -> bool:
    """A nomination to a NodeClaim not yet a node (`nodeclaim/x`, no `node/`) beside rejections that all came before
    its node could exist (older than the nomination, or younger by less than NO_NODE_YET; a rejection kubectl shows
    repeated only so, its last repeat being the age it prints): the scheduler's FailedScheduling is what made
    Karpenter launch the claim, of the nodes that existed before it (aws/karpenter-provider-aws#5267, #4341), not a
    refusal of the claim's node."""
    target = (p.nominated or "").strip()
    if not target.startswith(("nodeclaim/", "machine/")) or "node/" in target.replace("nodeclaim/", ""):
        return False
    nominated = _age_seconds(p.age)
    for i in rejected:
        age = _age_seconds(i.parsed.age)
        if i.count > 1 or _repeats(i.parsed.age)[0] > 1 and (age is None or nominated is None):
            return False  # repeated, with no age to place the last one
        if age is not None and nominated is not None and age != nominated:
            if nominated - age > NO_NODE_YET:  # the rejection came long after: the claim's node was refused too
                return False
        elif i.line > line:  # no age, or the same (a watch's `0s`): the order of the lines
            return False
    return True


def _launching_claim_plain(who: str, p: Parsed, rejected: list[Item]) -> str:
    line = rejected[0].line
    claim = (p.nominated or "").split("/", 1)[-1].split(",")[0].strip()
    nominated, last = _age_seconds(p.age), min((a for i in rejected if (a := _age_seconds(i.parsed.age)) is not None),
                                               default=None)
    after = (f", the last of them {int(nominated - last)}s after the nomination, too soon for a new node to exist"
             if nominated is not None and last is not None and last < nominated else "")
    return (f"{who}: Karpenter launched {p.nominated} for it after the scheduler's rejection (line {line}{after}), "
            "which counted only the nodes that existed before that claim: this is the usual order, and the pod binds "
            "once the claim's node is Ready (a minute or two). The rejection's reasons are about those older nodes, "
            "not the claim's. If the pod stays Pending, the claim never became a node that took it: it failed to "
            "launch, its node never registered, or Karpenter removed the new node before the pod bound to it - "
            "consolidation of a node that still looks empty (aws/karpenter-provider-aws#4341: a later rejection "
            "counting one node more, with node(s) were unschedulable, or a 'disrupting' line naming it, shows that). "
            f"kubectl describe nodeclaim {claim} (its Launched / Registered / Initialized conditions, and whether it "
            "is still there) and Karpenter's log say which.")


def _grown(rejected: list[Item]) -> dict[str, int] | None:
    """The reasons that rose as the rejections' node count did, oldest rejection to newest (nomination.py)."""
    order = sorted(rejected, key=lambda i: (-(_age_seconds(i.parsed.age) or 0.0), i.line))
    return nomination.came_with_the_claim([list(i.parsed.reasons) for i in order]) if len(order) > 1 else None


def _came_without(rejected: list[Item], reason: str) -> bool:
    """Whether the nodes that joined between the rejections are known, and none of them failed for `reason`."""
    grown = _grown(rejected)
    return bool(grown) and not any(reason in t for t in grown or {})


def _claim_node_plain(p: Parsed, rejected: list[Item], said: list[Reason]) -> str:
    """What the rejections say of the nominated node: the reasons that rose as the node count did (a claim's node
    joining) when they show it - cordoned, or in conflict with the volume - else the volume's zone when it is a
    reason at all."""
    target = p.nominated or ""
    grown = _grown(rejected)
    if grown and target.startswith(("nodeclaim/", "machine/")):
        if any("were unschedulable" in t for t in grown):
            return nomination.cordoned_claim_plain(target, grown)
        if not any("volume node affinity conflict" in t for t in grown):
            return ""  # the volume's conflict is an older node's: the claim's node came up without it
    return nomination.volume_zone_plain(target) if _volume_zone(said) else ""


def link_nominations(explanation: Explanation) -> None:
    for item in explanation.items.values():
        p = item.parsed
        if p.event != "Nominated":
            continue
        rejected = _rejections(explanation, p.pod)
        if claims := _renominated(explanation, p.pod):
            item.plain = nomination.pressured_plain(f"Pod {p.pod}" if p.pod else "The pod", (p.nominated or "").split(",")[0].strip(), claims, [
                r for i in rejected for r in i.parsed.reasons]) or _renominated_plain(p, claims)
            continue
        span = _seconds(p.time, item.last_time) if item.count > 1 else None
        repeats = item.count
        times, over = _repeats(p.age)
        if times > 1 and over is not None and over > (span or 0):
            repeats, span = max(item.count, times), over
        if not rejected and (span is None or span <= REPEATED_SECONDS):
            continue
        who = f"Pod {p.pod}" if p.pod else "The pod"
        if rejected and _rejected_before_the_claim(p, item.line, rejected):
            item.plain = _launching_claim_plain(who, p, rejected)
        elif rejected:
            said = [r for i in rejected for r in i.parsed.reasons if r.plain]
            typed = [r for r in said if r.kind != NODE_FILTER] or said  # the volume / taint / topology, when named
            # the rejection is an item of the same answer, which words each cause: named here, not said twice
            item.plain = (f"{who}: Karpenter nominated {p.nominated}, but kube-scheduler keeps rejecting the pod "
                          f"(line {rejected[0].line}), so the nominated node cannot take it and waiting will not help: "
                          + nomination.fix_clause(said, typed, rejected[0].line) + nomination.leads_plain(said)
                          + _claim_node_plain(p, rejected, said)
                          + (" Nodes that did not match the pod's node affinity/selector can include the nominated one: "
                             "Karpenter releases before the fix for kubernetes-sigs/karpenter#343 compared only the "
                             "labels a node carries, so a node lacking a well-known label the pod selects (such as "
                             "karpenter.k8s.aws/instance-local-nvme) looked compatible - compare kubectl get node <node> "
                             "--show-labels with the pod's nodeSelector, and upgrade Karpenter." if any("node affinity/selector" in w for r in said
                                                         for w in (r.counts or {})) and not _came_without(rejected, "node affinity/selector")
                             else "")).strip()
        else:
            item.plain = (f"{who}: Karpenter nominated {p.nominated} again and again ({repeats} times over "
                          f"{int((span or 0) // 60)} minutes): a node that is ready but never gets the pod cannot take "
                          "it. Look at the pod's FailedScheduling events from the scheduler (kubectl describe pod): "
                          "its reason - often a volume in another zone (volume node affinity conflict), a taint or a "
                          "full node - is the cause to fix.")
        if item.count > 1:
            item.plain += f" (Seen {item.count} times, lines {item.line}-{item.last_line}.)"


_ASSIGNED = re.compile(r"Successfully assigned (?P<pod>\S+) to (?P<node>\S+)")


def link_scheduled(explanation: Explanation) -> None:
    """A pod the pasted events show scheduled after its FailedScheduling / Nominated rows."""
    assigned = [(line, m) for line, text in explanation.unrecognised_lines if (m := _ASSIGNED.search(text))]
    if not assigned:
        return
    pods = {i.parsed.pod for i in explanation.items.values()}
    for item in explanation.items.values():
        p = item.parsed
        if p.source != KUBE_SCHEDULER and p.event != "Nominated":
            continue
        later = [(line, m) for line, m in assigned if line > item.line and (
            p.pod is None and len(pods) == 1 or p.pod is not None and m.group("pod").split("/")[-1]
            == p.pod.split("/")[-1])]
        if not later:
            continue
        line, m = later[0]
        if p.event == "Nominated":
            item.plain = (f"Karpenter nominated {p.nominated} for the pod and it was then scheduled (line {line} assigns "
                          f"{m.group('pod')} to {m.group('node')}): the new node took it. If it is still not Running, "
                          "look at its containers and volumes (kubectl describe pod: init containers, "
                          "CrashLoopBackOff, FailedMount), not at scheduling.")
            continue
        item.plain = (f"The pod was scheduled in the end: line {line} assigns {m.group('pod')} to {m.group('node')}, "
                      "after this. These rejections came before it was placed (no node had room yet, or the node it went to "
                      "was not added or ready yet) and are not what keeps it from running now: if it is still not Running, look at its containers and volumes "
                      "(kubectl describe pod: init containers, CrashLoopBackOff, FailedMount), not at scheduling. "
                      "What the scheduler said before: " + item.plain)
