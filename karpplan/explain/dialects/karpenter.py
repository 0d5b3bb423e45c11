"""The grammar of Karpenter's "could not schedule" messages, v0.6 to v1.5+.

An error is per-pool errors joined by `; ` (multierr). Each is either prefixed
(`incompatible with nodepool "X", daemonset overhead={...}, <reason>`, ≤v1.4; `provisioner` up to v0.31)
or bare (v1.5+). A reason is one of the building blocks of karpenter-scheduler.md §12. Messages cut short
(Karpenter truncates, users paste fragments) still yield every clause they hold.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from karpplan.explain import structure as reason_kind
from karpplan.explain.cut_clause import cut_off
from karpplan.explain.structure import ParsedRequirement, PoolReasons, Reason

V05 = "v0.5-v0.15"  # `Could not schedule pod, matched 0/N provisioners, tried provisioner/X: ...`
V06 = "v0.6"
V016 = "v0.16-v0.31"
V032 = "v0.32-v0.37"
V10 = "v1.0-v1.4"
V15 = "v1.5+"
DRA_IGNORED = "DRA requests ignored"

_ELLIPSIS = re.compile(r"\s*(?:…|\.\.\.)\s*$")
_ENVELOPE = re.compile(
    r"^\s*(?:(?:Could not|could not|Failed to) schedule pod(?:,\s*|\s*$)|Unable to schedule pod (?P<pod>\S+?),\s*"
    r"|Failed to compute packing,\s*(?=pod\(s\) \[(?P<packed>[^\]\s]+)))"
    r"(?P<matched>matched \d+/\d+ provisioners?,?\s*)?"
)
# v0.9-v0.15: `matched 0/N provisioners, tried provisioner/X: <reason>; tried provisioner/Y: <reason>`
_TRIED = re.compile(r"^\s*tried (?P<kind>provisioner|nodepool)/(?P<name>[^:\s]+):\s*")
_POOL = re.compile(
    r'^\s*(?:(?P<compat>compatible)|incompatible) with (?P<kind>nodepool|provisioner) "(?P<name>[^"]*)"'
    r"(?: but failed to add pod while adhering to reservation fallback policy)?"
    r"(?:,\s*daemonset overhead=(?P<overhead>\{[^}]*\}?))?(?:,\s*|\s*$)"
)
_TAINT = re.compile(r"^did not tolerate (?:taint \((?:taint=)?(?P<v15>[^)]*)\)?|(?P<old>\S+))")
# v0.16+ `label "K" does not have known values`; v0.15 and before said `key K does not have known values`; a paste
# may cut it after `known`
_UNKNOWN_LABEL = re.compile(
    r'^(?:incompatible requirements, )?(?:label "(?P<key>[^"]*)"|key (?P<bare>[^\s",]+)) does not have known(?: values|\s*$)'
    r'(?: \(typo of "(?P<typo>[^"]*)"\?\))?'
)
_CUT_LABEL = re.compile(r'^(?:incompatible requirements, )?label "(?P<key>[^"]+)$')
_CUT_KINDS = (reason_kind.UNKNOWN_LABEL, reason_kind.TAINT, reason_kind.REQUIREMENT_CONFLICT)  # cut_clause.py words them
_CONFLICT = re.compile(r"^(?:incompatible requirements, )?key (?P<key>[^,\s]+),\s*(?P<a>.*?) not in (?P<b>.*)$", re.S)
_CUT_KEY = re.compile(r"^(?:incompatible requirements, )?key (?P<key>[^,\s]+)\s*$")
# v0.5: `invalid nodeSelector "dwh", [yes-dwh] not in []` - the pod's value against the values the provisioner offers
_SELECTOR_V05 = re.compile(r'^invalid (?:nodeSelector|node selector) "(?P<key>[^"]+)",\s*(?P<a>\[[^\]]*\]) not in (?P<b>\[[^\]]*\])')
_CONFLICT_V06 = re.compile(r"^incompatible requirements, (?P<a>.*?) not in (?P<b>.*?), key (?P<key>\S+)", re.S)
# v0.5-v0.6's bin-packing failure: `Failed to compute packing, pod(s) [ns/p] did not fit in instance type option(s) [r5.12xlarge]`
_PACKING = re.compile(r"^pod\(s\) \[[^\]]*\] did not fit in instance type option\(s\) \[(?P<types>[^\]]*)\]?")
_OLD_NO_TYPE = re.compile(
    r"^no instance type satisfied resources (?P<res>\{[^}]*\}?)(?: and requirements (?P<reqs>.*?))?"
    r"(?: \((?P<cause>no instance type[^)]*)\)?)?\s*$", re.S)
_NEW_NO_TYPE = re.compile(
    r"^(?P<cause>no instance type.*?)(?:, requirements=(?P<reqs>.*?))?(?:, resources=(?P<res>.*))?\s*$", re.S)
_LIMITS = re.compile(
    r"^(?:all available instance types exceed (?:(?:provisioner|nodepool) )?limits"
    r"(?: for (?:(?:nodepool|provisioner):? ?)?(?:\"(?P<q>[^\"]*)\"?|\(NodePool=(?P<n>[^)]*)\)?))?"
    r"|node limits have been exhausted for nodepool(?: \(NodePool=(?P<n2>[^)]*)\)?)?)")
_EXCLUDED = re.compile(
    r"(?P<n>\d+) out of (?P<m>\d+) instance types were excluded because they would breach "
    r"(?:(?P<kind>provisioner|nodepool) )?limits")
# the key and counts may be missing: a user quotes the head of the message alone
_TOPOLOGY = re.compile(
    r"^unsatisfiable topology constraint for (?P<c>topology spread|pod affinity|pod anti-affinity)(?:,\s*"
    r"key=(?P<key>[^\s(,]+)(?: \(counts = (?P<rest>.*))?)?", re.S)
_RESERVED = re.compile(r"^(?:one or more instance types with compatible reserved offerings are available, but could "
                       r"not be reserved|satisfying updated nodeclaim constraints would remove all compatible reserved "
                       r"offering options)")
_NODEPOOL_FIELD = re.compile(r"\((?:NodePool|nodepool)=(?P<n>[^)]*)\)")
_REQ_SPLIT = re.compile(r",\s+(?=[^\s,]+ (?:In|NotIn|Exists|DoesNotExist|Gt|Lt|Gte|Lte)\b)")
_REQ = re.compile(r"^(?P<key>\S+) (?P<op>In|NotIn|Exists|DoesNotExist|Gt|Lt|Gte|Lte)(?: \[(?P<vals>[^\]]*)\]?)?"
                  r"(?P<extra>.*)$", re.S)
# a domain may be named by the empty string (a node or offering carrying the key with an empty value): pretty.Map
# sorts it first, `counts = : 0, eastus2-1: 2`, and Go's map print shows `map[:0 a:1]`
STATE_INVARIANT = "state invariant"
_COUNT = re.compile(r"(?:^|(?<=[\s,\[]))([^\s,:\[\]]*):\s?(-?\d+)")
_OTHERS = re.compile(r"and (\d+) other\(s\)?")  # its ")" may be stripped with the list's
_QUANTITY_PAIR = re.compile(r'"([^"]+)"\s*:\s*"([^"]*)"')


def split_clauses(text: str) -> list[str]:
    """Split on `;` outside brackets and braces (parentheses stay open in v0.34+ topology errors)."""
    out: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        elif ch == ";" and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [c.strip() for c in out if c.strip() and c.strip() not in (",", '"', '",')]


def parse_resources(text: str) -> dict[str, str]:
    """A resources JSON object, or what a truncated one still holds."""
    text = text.strip()
    try:
        value = json.loads(text)
        if isinstance(value, dict):
            return {str(k): str(v) for k, v in value.items()}
    except ValueError:
        pass
    return {k: v for k, v in _QUANTITY_PAIR.findall(text)}


def parse_requirements(text: str) -> tuple[ParsedRequirement, ...]:
    out: list[ParsedRequirement] = []
    for part in _REQ_SPLIT.split(text.strip().rstrip(",")):
        m = _REQ.match(part.strip())
        if m is None:
            continue
        vals = tuple(v for v in (m.group("vals") or "").split() if v)
        if m.group("vals") is not None and "]" not in part[m.start("vals"):]:
            vals += ("…",)  # the paste ends inside the list: its values are not all known, so nothing is judged
        out.append(ParsedRequirement(m.group("key"), m.group("op"), vals, m.group("extra").strip()))
    return tuple(out)


def parse_taint(text: str) -> tuple[str, str, str]:
    """`key[=value]:effect` -> (key, value, effect)."""
    text = text.strip().rstrip(",;")
    effect = ""
    if ":" in text:
        text, effect = text.rsplit(":", 1)
    key, _, value = text.partition("=")
    return key, value, effect


def _topology(m: re.Match[str], clause: str) -> Reason:
    rest = m.group("rest") or ""
    counts_text, pod_domains, node_domains = rest, None, None
    if ", podDomains = " in rest:
        counts_text, _, tail = rest.partition(", podDomains = ")
        pod_domains, _, node_domains_text = tail.partition(", nodeDomains = ")
        node_domains = node_domains_text.rstrip(")").strip() or None
        pod_domains = pod_domains.strip()
    counts_text = counts_text.strip().removeprefix("map[").rstrip("])")
    others = _OTHERS.search(counts_text)
    counts = {k: int(v) for k, v in _COUNT.findall(_OTHERS.sub("", counts_text))}
    return Reason(reason_kind.TOPOLOGY, clause, key=(m.group("key") or "").rstrip("…") or None, constraint=m.group("c"),
                  counts=counts if m.group("rest") is not None else None,
                  others=int(others.group(1)) if others else None,
                  pod_domains=pod_domains, node_domains=node_domains)


def parse_reason(clause: str) -> Reason | None:
    """One building block, or None when the clause is none of them."""
    clause = clause.strip().strip('"').strip()
    truncated = bool(_ELLIPSIS.search(clause))
    body = _ELLIPSIS.sub("", clause)
    if (m := _CUT_LABEL.match(body)) is not None:  # `label "node-role.kubernetes.io/control-p`
        return Reason(reason_kind.UNKNOWN_LABEL, clause, key=m.group("key"), truncated=True)
    reason = _parse_body(body, clause)
    if reason is not None and (truncated or reason.kind in _CUT_KINDS and cut_off(body)):
        reason = replace(reason, truncated=True)
    return reason


def _parse_body(body: str, clause: str) -> Reason | None:
    if (m := _TAINT.match(body)) is not None:
        key, value, effect = parse_taint(m.group("v15") if m.group("v15") is not None else m.group("old"))
        return Reason(reason_kind.TAINT, clause, key=key, value=value or None, effect=effect or None)
    if (m := _UNKNOWN_LABEL.match(body)) is not None:
        return Reason(reason_kind.UNKNOWN_LABEL, clause, key=m.group("key") or m.group("bare"), suggestion=m.group("typo"))
    if (m := _SELECTOR_V05.match(body)) is not None:
        return Reason(reason_kind.REQUIREMENT_CONFLICT, clause, key=m.group("key"), pod_side=m.group("a"),
                      pool_side=m.group("b"))
    if (m := _CONFLICT_V06.match(body)) is not None and not body.startswith("incompatible requirements, key "):
        return Reason(reason_kind.REQUIREMENT_CONFLICT, clause, key=m.group("key"), pod_side=m.group("a").strip(),
                      pool_side=m.group("b").strip())
    if (m := _CONFLICT.match(body)) is not None:
        pool_side = _NODEPOOL_FIELD.sub("", m.group("b")).strip()
        return Reason(reason_kind.REQUIREMENT_CONFLICT, clause, key=m.group("key"), pod_side=m.group("a").strip(),
                      pool_side=pool_side)
    if (m := _CUT_KEY.match(body)) is not None:  # `incompatible requirements, key node-role.kubernetes.io/control-p`
        return Reason(reason_kind.REQUIREMENT_CONFLICT, clause, key=m.group("key"), truncated=True)
    if body.startswith("incompatible requirements"):
        return Reason(reason_kind.REQUIREMENT_CONFLICT, clause)
    if (m := _PACKING.match(body)) is not None:
        types = tuple(t.strip(",") for t in m.group("types").split() if t.strip(","))
        return Reason(reason_kind.NO_INSTANCE_TYPE, clause, resources={},
                      requirements=(ParsedRequirement("node.kubernetes.io/instance-type", "In", types, ""),),
                      cause="did not fit in instance type option(s)")
    if (m := _OLD_NO_TYPE.match(body)) is not None:
        return Reason(reason_kind.NO_INSTANCE_TYPE, clause, resources=parse_resources(m.group("res")),
                      requirements=parse_requirements(m.group("reqs") or ""), cause=m.group("cause"))
    if (m := _NEW_NO_TYPE.match(body)) is not None:
        res = m.group("res")
        return Reason(reason_kind.NO_INSTANCE_TYPE, clause, resources=parse_resources(res) if res else None,
                      requirements=parse_requirements(m.group("reqs") or ""),
                      cause=m.group("cause").strip().rstrip("`'\"").strip())  # (a paste's closing quote)
    if body.startswith("pod has Dynamic Resource Allocation requirements"):  # IGNORE_DRA_REQUESTS (the default)
        return Reason(reason_kind.UNSUPPORTED, clause, cause=DRA_IGNORED)
    if _RESERVED.match(body):  # v1.3+ reserved capacity (ReservedOfferingModeStrict): the pod waits its turn
        return Reason(reason_kind.NO_INSTANCE_TYPE, clause, cause=body.strip())
    if (m := _LIMITS.match(body)) is not None:
        return Reason(reason_kind.LIMITS, clause, node_pool=m.group("q") or m.group("n") or m.group("n2"))
    if (m := _EXCLUDED.search(body)) is not None:
        return Reason(reason_kind.EXCLUDED_TYPES, clause, excluded=int(m.group("n")), total=int(m.group("m")))
    if (m := _TOPOLOGY.match(body)) is not None:
        return _topology(m, clause)
    if "minValues" in body:
        return Reason(reason_kind.MIN_VALUES, clause)
    if "volume" in body:
        return Reason(reason_kind.VOLUME, clause)
    if "is not supported" in body:
        return Reason(reason_kind.UNSUPPORTED, clause)
    if re.match(r"^nodepool requirements filtered out all", body, re.I) or re.match(
            r"^no (?:dynamic )?(?:nodepools|provisioners) found", body):
        return Reason(reason_kind.NO_INSTANCE_TYPE, clause, cause=body)
    if body.startswith("invariant violated"):  # Karpenter's own bookkeeping, logged with a pod but no failure of it
        return Reason(reason_kind.NODE_FILTER, clause, cause=STATE_INVARIANT)
    if body.startswith(("exceeds node resources", "checking host port usage")):
        return Reason(reason_kind.NODE_FILTER, clause)
    return None


def parse_error(text: str) -> tuple[str | None, list[PoolReasons], list[Reason], list[str], str | None]:
    """(pod named by a v0.6 envelope, per-pool reasons, bare reasons, clauses not understood, dialect hint)."""
    pod = None
    hint: str | None = None
    if (m := _ENVELOPE.match(text)) is not None:
        pod = m.group("pod") or m.group("packed")
        if pod is not None:
            hint = V06
        text = text[m.end():]
    pools: dict[tuple[str, str], tuple[dict[str, str] | None, list[Reason]]] = {}
    bare: list[Reason] = []
    unparsed: list[str] = []
    kinds: set[str] = set()
    if m is not None and m.group("matched"):
        hint = V05
    last: tuple[str, str] | None = None  # the pool of the clause before
    for clause in split_clauses(text):
        pm = _POOL.match(clause) or _TRIED.match(clause)
        # Karpenter joins a pool's several requirement conflicts with "; " too (`..., key role, ...; key
        # topology.kubernetes.io/zone, ...`): the second one is still that pool's
        # and a pool's head ended by "; " (`daemonset overhead={...}; incompatible requirements, ...`) has its one
        # reason in the next clause
        if pm is None and last is not None and (clause.lstrip().startswith("key ") or not pools[last][1]) and (
                reason := parse_reason(clause)) is not None:
            if reason not in pools[last][1]:
                pools[last][1].append(reason)
            continue
        last = None
        if pm is not None:
            kind = pm.group("kind")
            kinds.add(kind)
            overhead_text = pm.groupdict().get("overhead")
            overhead = parse_resources(overhead_text) if overhead_text else None
            body = clause[pm.end():]
            reason = parse_reason(body) if body.strip() else None
            last = (kind, pm.group("name"))
            entry = pools.setdefault(last, (overhead, []))
            if reason is not None and reason not in entry[1]:
                entry[1].append(reason)
            elif body.strip() and not _ELLIPSIS.search(body):
                unparsed.append(clause)
            continue
        reason = parse_reason(clause)
        if reason is None:
            if not _ELLIPSIS.search(clause):  # a clause cut off by the paste says nothing more
                unparsed.append(clause)
            continue
        if reason.node_pool is None and (nm := _NODEPOOL_FIELD.search(clause)) is not None:
            reason = replace(reason, node_pool=nm.group("n"))
        if reason in bare:  # v1.5+ prints one clause per NodePool without its name: say each once
            continue
        bare.append(reason)
    result = [PoolReasons(name, kind, tuple(rs), overhead) for (kind, name), (overhead, rs) in pools.items()]
    return pod, result, bare, unparsed, hint if hint is not None else _dialect_hint(text, kinds, bare, m is not None)


def _dialect_hint(text: str, kinds: set[str], bare: list[Reason], enveloped: bool) -> str | None:
    """The dialect the words of a message show, when its envelope did not. A bare reason says v1.5+ only behind
    an envelope (`Failed to schedule pod, <reason>`): pasted alone it may be any version's clause with its
    pool prefix cut off, and nothing is claimed."""
    if {"provisioner", "nodepool"} <= kinds or "karpenter.sh/legacy" in text:  # v0.32 ran both (migration taint)
        return V032
    if "provisioner" in kinds or any("provisioner" in r.text for r in bare if r.kind in (reason_kind.LIMITS, reason_kind.EXCLUDED_TYPES)):
        return V016
    if "did not tolerate taint (taint=" in text or "(NodePool=" in text:
        return V15
    if "nodepool" in kinds:
        return V10
    if enveloped and bare and not any(r.kind in (reason_kind.LIMITS, reason_kind.EXCLUDED_TYPES) for r in bare):
        return V15
    return None


# Karpenter's InstanceTypeFilterError names which of three sets of instance types - those the requirements allow,
# those large enough, those with an offering left - has no type in common with the others; what each means
_FILTER_ERRORS = (
    # v0.5-v0.6's bin-packing: the pod (with the DaemonSets) fits none of the listed types' allocatable
    ("did not fit in instance type option",
     "Karpenter packed the pod's requests, with the DaemonSets' requests, onto each listed type and none held them: "
     "a type's allocatable is its EC2 size less the kubelet's reservations (kube-reserved, which grows with the "
     "size, the eviction threshold) and Karpenter's VM overhead estimate, so a pod sized near an instance's "
     "nominal CPU or memory fits only a larger type (a pod asking for 350Gi fits no r5.12xlarge, with its 384GiB, "
     "but an r5.16xlarge). Allow a larger type in the Provisioner, or lower the pod's requests."),
    # v1: only the offering is missing - the requirements allow types large enough (Karpenter's own word, above any
    # catalog's): capacity or a zone's subnet, not the labels or the size (aws/karpenter-provider-aws#8712)
    ("has the required offering",
     "Karpenter found instance types that the requirements allow and that are large enough for the pod, but none of "
     "them is offered right now in the allowed zones and capacity types: no capacity there (Karpenter remembers an "
     "insufficient-capacity error for a few minutes, and a zone can lack a type for hours), or no subnet of the node "
     "class in that zone. The pod's labels and requests are not the cause. Allow more instance types, zones or "
     "capacity types, or wait for capacity; kubectl describe on the EC2NodeClass shows the zones of its subnets."),
    ("met the scheduling requirements and had enough resources, had a required offering",
     "Types the requirements allow are large enough for the pod, but none of them has an offering left: no capacity "
     "for them in the allowed zones and capacity types right now (Karpenter remembers an insufficient-capacity error "
     "for a few minutes), or no subnet of the node class in those zones. Allow more instance types, zones or "
     "capacity types, or wait for capacity."),
    ("had enough resources and the required offering met the scheduling requirements",
     "Types large enough for the pod and offered right now exist, but the requirements allow none of them: the types "
     "they allow are either too small or have no offering left (e.g. AWS has no capacity for them at the moment). "
     "Allow more families or sizes, so that Karpenter can pick a type that is both large enough and available."),
    ("met the scheduling requirements and the required offering had the required resources",
     "Types the requirements allow are offered, but none is large enough for the pod's requests (with DaemonSet "
     "overhead): allow larger types, or lower the requests."),
    # v1.7+ scheduler error, and the NodePool's NoCompatibleInstanceTypes event (`NodePool requirements filtered out
    # all compatible available instance types`): no type is left before any pod is looked at
    # v1.3+ reserved capacity: Karpenter holds reserved offerings for the NodeClaims it made in this round without
    # knowing which type each will launch, so it may run out of reservations to hold while some remain; in strict
    # mode it then neither falls back to on-demand / spot nor fails the pod for good (kubernetes-sigs/karpenter#2056)
    ("compatible reserved offerings are available, but could not be reserved",
     "Not a failure of the pod: capacity reservations (karpenter.sh/capacity-type: reserved) that fit it exist, but "
     "Karpenter had already set them aside for other NodeClaims of the same scheduling round (it holds a reservation "
     "for every compatible offering of a claim, not knowing which one will launch), and while reserved offerings "
     "are available it does not fall back to on-demand or spot. The pod is taken up again in the next round, once "
     "those claims have launched; if it waits long, the reservations are used up - add capacity to them, or allow "
     "on-demand / spot in the NodePool's karpenter.sh/capacity-type requirement for the rest "
     "(kubernetes-sigs/karpenter#2056)."),
    ("would remove all compatible reserved offering options",
     "Adding the pod to a NodeClaim meant for a capacity reservation would leave that claim no reserved offering it "
     "can still launch into: Karpenter keeps the claim as it is and places the pod elsewhere in a later round; only "
     "a pod that fits no reservation at all waits for on-demand or spot capacity the NodePool allows."),
    ("filtered out all",
     "This is not about the pod's size: the NodePool's requirements, together with its node class (the image's "
     "architecture and generation, the kubelet's settings) and the instance types the cloud provider lists right now, "
     "leave no instance type at all. If the requirements did not change, the provider's list did - types no longer "
     "offered to the subscription or account in that region (a restriction, a quota, a partial catalogue): the "
     "NodePool's status and the controller's instance-type discovery log say which; otherwise widen the requirements "
     "(families, sizes, architectures, capacity types). On EKS Auto Mode the list is narrower than EC2's: it launches "
     "only types with more than one vCPU and never nano, micro or small sizes (aws/containers-roadmap#2516), so a "
     "NodePool that allows only those launches nothing; and a type with no capacity left in the allowed zones and "
     "capacity type (an insufficient-capacity error for spot, say) drops out for a while."),
)


def offering_only(cause: str | None) -> bool:
    """Karpenter's clause says the types fit and meet the requirements and only an offering is missing."""
    return "has the required offering" in (cause or "").lower()


def filter_meaning(cause: str | None) -> str | None:
    """What Karpenter's `no instance type which ...` clause says about the three sets, or None."""
    for words, meaning in _FILTER_ERRORS:
        if cause and words in cause.lower():
            return meaning
    return None
