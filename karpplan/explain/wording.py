"""Say it plainly: one sentence per reason, one paragraph per item, naming the object and the field."""

from __future__ import annotations

from dataclasses import dataclass, replace

from karpplan.explain import known, restricted_domain
from karpplan.explain import structure as reason_kind
from karpplan.explain.cut_clause import cut_plain, unparsed_sentence
from karpplan.explain.describe_pod import context_sentences
from karpplan.explain.dialects import (
    admission,
    azure,
    ca_filtered,
    claim_rejected,
    disruption,
    fargate,
    launch,
    multi_attach,
    nodeclass,
    not_for_karpenter,
    plugin_error,
    pod_network,
    relaxed,
    scale_down,
    volume_topology,
)
from karpplan.explain.dialects import karpenter as K
from karpplan.explain.host_ports import is_host_port, karpenter_host_port_plain, servicelb_note
from karpplan.explain.label_hint import guess_plain, waiting_on_limits
from karpplan.explain.node_filter_wording import node_filter_plain
from karpplan.explain.pinned_pool import pinned_unlaunchable_pool
from karpplan.explain.structure import CLUSTER_AUTOSCALER, KUBE_SCHEDULER, Item, Parsed, PoolReasons, Reason
from karpplan.explain.topology_wording import topology_plain
from karpplan.explain.volume_wording import volume_plain
from karpplan.model.labels import ZONE

_WELL_KNOWN_POOL_KEYS = ("karpenter.sh/nodepool", "karpenter.sh/provisioner-name")
_HOSTNAME = "kubernetes.io/hostname"
# causes a record states of no pod: a node class, an EC2 launch, a NodeClaim the API server refused
_NO_FAILURE = (admission.CAUSE, multi_attach.CAUSE, pod_network.CAUSE, scale_down.CAUSE, ca_filtered.CAUSE, relaxed.CAUSE, volume_topology.CAUSE, not_for_karpenter.CAUSE)
_NO_POD_CAUSES = (*nodeclass.CAUSES, *launch.CAUSES, *azure.CAUSES, *claim_rejected.CAUSES, restricted_domain.POOL_CAUSE,
                  pod_network.TYPE_CAUSE)


@dataclass(frozen=True)
class PoolFields:
    """Where a pool kind keeps what a reason is about (a Provisioner has no template)."""

    requirements: str
    labels: str
    taints: str
    limits: str


NODEPOOL_FIELDS = PoolFields("spec.template.spec.requirements", "spec.template.metadata.labels",
                             "spec.template.spec.taints", "spec.limits")
PROVISIONER_FIELDS = PoolFields("spec.requirements", "spec.labels", "spec.taints", "spec.limits.resources")


def fields_of(pool: PoolReasons | None, dialect: str | None = None, reason: Reason | None = None) -> PoolFields:
    """The fields of the pool kind the log speaks of: its pool's kind, else its dialect's, else a requirement on
    `karpenter.sh/provisioner-name` (only a v1alpha5 Provisioner's nodes carry it) in the reason."""
    kind = pool.kind if pool is not None else ("provisioner" if dialect in _PROVISIONER_DIALECTS else "nodepool")
    if pool is None and reason is not None and any(q.key == PROVISIONER_NAME for q in reason.requirements):
        kind = "provisioner"
    return PROVISIONER_FIELDS if kind == "provisioner" else NODEPOOL_FIELDS


PROVISIONER_NAME = "karpenter.sh/provisioner-name"


_PROVISIONER_DIALECTS = (K.V05, K.V06, K.V016)


def _pool_name(pool: PoolReasons | None, dialect: str | None = None) -> str:
    if pool is None:
        return "a Provisioner" if dialect in _PROVISIONER_DIALECTS else "a NodePool"
    return f'{"Provisioner" if pool.kind == "provisioner" else "NodePool"} "{pool.name}"'


def _pools_named(pools: list[PoolReasons]) -> str:
    kind = "Provisioners" if pools[0].kind == "provisioner" else "NodePools"
    names = [f'"{p.name}"' for p in pools]
    return f"each of {kind} " + (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0])


def _taint_text(r: Reason) -> str:
    text = r.key or "?"
    if r.value:
        text += f"={r.value}"
    if r.effect:
        text += f":{r.effect}"
    return text


def _startup_taint(r: Reason, nodes: str) -> str | None:
    """The wording for a taint that its owner removes by itself, or None for an ordinary taint."""
    if r.key == "node.kubernetes.io/unreachable":  # no startup taint: a node that stopped reporting
        return (f"{nodes} carry the taint {r.key}: their kubelet stopped reporting to the API server (the instance is "
                "down or stopped, its network is cut, or the kubelet died); the node lifecycle controller removes by itself "
                "the taint once the node reports again, so do not add a toleration: bring the node back or replace it "
                "(kubectl describe node shows since when its conditions are Unknown); while no other node has room, "
                "nothing can take the pod.")
    owner = known.transient_taint(r.key)
    if owner is not None:
        who, when = owner
        return (f"{nodes} still carry the taint {r.key}, which {who} removes by itself {when}: it is transient, so do "
                "not add a toleration for it. The pod lands once the taint is gone; if it stays on a node that has "
                "been up for minutes, the component that should remove it is failing (check the node's conditions and "
                "events, the CNI / aws-node pods and the Karpenter or cloud-controller logs).")
    if (pressure := known.pressure_taint(r.key)) is not None:
        return (f"{nodes} carry {r.key}, kept there while the node's kubelet reports {pressure}. Do not add a "
                "toleration for it: the node has no room for more pods until then.")
    why = known.disruption_taint(r.key)
    if why is not None:
        return (f"{nodes} carry {r.key}: {why}, so no new pod may land there; this is expected and transient, "
                "do not tolerate it.")
    return None


def reason_plain(r: Reason, pool: PoolReasons | None = None, source: str = "karpenter",
                 dialect: str | None = None, where: str | None = None) -> str:
    """One reason in plain words; `where` names the pool(s) when one sentence stands for several pools."""
    where = where or _pool_name(pool, dialect)
    if r.truncated and (cut := cut_plain(r, where)) is not None:
        return cut
    f = fields_of(pool, dialect, r)
    if r.kind == reason_kind.TAINT:
        return _taint_plain(r, where, f, source, in_pool=pool is not None)
    if r.kind == reason_kind.UNKNOWN_LABEL:
        return _unknown_label_plain(r, where, f)
    if r.kind == reason_kind.REQUIREMENT_CONFLICT:
        return _conflict_plain(r, where, f, in_pool=pool is not None)
    if r.kind == reason_kind.NO_INSTANCE_TYPE:
        return no_type_plain(r, pool, f)
    if r.kind == reason_kind.LIMITS:
        return _limits_plain(r, where, f, source)
    if r.kind == reason_kind.EXCLUDED_TYPES:
        return (f"{r.excluded} of {r.total} instance types were left out because they would breach the pool's "
                f"{f.limits}; raise its cpu / memory limits if the larger types are wanted.")
    if r.kind == reason_kind.TOPOLOGY:
        return topology_plain(r, where, source)
    if r.kind == reason_kind.VOLUME:
        return volume_plain(r.text, f.requirements)
    if r.kind == reason_kind.MIN_VALUES:
        return (f"the pool's minValues ({f.requirements}[].minValues) asks for more distinct values than the "
                "instance types left after filtering offer; lower minValues or widen the requirements.")
    if r.kind == reason_kind.UNSUPPORTED:
        return _unsupported_plain(r, f, source)
    if r.kind == reason_kind.NODE_FILTER:
        if source == "karpenter" and is_host_port(r.text):
            return karpenter_host_port_plain(r.text, where)
        return node_filter_plain(r, source)
    return r.text


def _taint_plain(r: Reason, where: str, f: PoolFields, source: str, *, in_pool: bool) -> str:
    """An untolerated taint: a pool's (Karpenter names the pool and its field), or some nodes' (the scheduler's
    and cluster-autoscaler's logs do not say whose); a start-up taint reads as a node not ready yet."""
    if source != "karpenter":
        return _startup_taint(r, "some nodes") or (
            f"some nodes carry the taint {_taint_text(r)} and the pod has no matching entry in "
            "spec.tolerations; add one only if the pod may run there.")
    startup = _startup_taint(r, f"the nodes of {where}" if in_pool else "the nodes")
    if startup is not None:
        return startup
    if r.key == known.LEGACY_TAINT:
        return known.legacy_taint_plain(where if in_pool else "a Provisioner")  # only Provisioners carry it
    effect = r.effect or "NoSchedule"
    return (f"{where} taints its nodes with {_taint_text(r)} ({f.taints}) and the pod's spec.tolerations has no "
            f"entry for it; add a toleration (key: {r.key}, operator: {'Equal' if r.value else 'Exists'}"
            f"{', value: ' + r.value if r.value else ''}, effect: {effect}) if the pod belongs there, "
            f"or leave it out if the taint is meant to keep it away.")


def _unknown_label_plain(r: Reason, where: str, f: PoolFields) -> str:
    """A label the pool never puts on its nodes: a node group's own label (the pod is not this pool's), else
    a label the pool could add, with Karpenter's spelling hint and the v1 rename of provisioner-name."""
    capacity = known.node_group_capacity(r.key)
    if capacity is not None:
        return (f'the pod selects on "{r.key}", a label only nodes of {capacity} carry (node group / '
                f"profile capacity, not Karpenter's): no node {where} can launch ever has it, so this pool is "
                "not meant for the pod and Karpenter logging it is expected. The pod belongs on that node group: "
                "if it stays Pending, look at the node group (its size and max size, its scaling), not at the "
                "Karpenter pool.")
    hint = guess_plain(r.key, r.suggestion) if r.suggestion else ""
    renamed = (" (Karpenter v1 renamed karpenter.sh/provisioner-name to karpenter.sh/nodepool.)"
               if r.key == "karpenter.sh/provisioner-name" and f is NODEPOOL_FIELDS else "")
    advice = known.restricted_label(r.key, v0=f is not NODEPOOL_FIELDS) or (
        f"If the pod belongs to such a pool, add the label there ({f.labels} - a label in the pool object's own "
        "metadata.labels never reaches its nodes), or, when the pools' labels were renamed since the pod's manifest "
        "was written, change the pod's selector to the label they set now; otherwise the pool is simply not meant "
        "for the pod.")
    return (f'the pod selects on label "{r.key}" (spec.nodeSelector or spec.affinity.nodeAffinity), but {where} '
            f"launches no node carrying that label: it is neither a well-known label nor in the pool's "
            f"{f.labels} or {f.requirements}. {advice}{hint}{renamed}")


def _limits_plain(r: Reason, where: str, f: PoolFields, source: str) -> str:
    """Limits reached: cluster-autoscaler's (the whole cluster's flags, or node groups at their max size), or
    a Karpenter pool's on nodes or on cpu / memory."""
    if source == "cluster-autoscaler":
        if "group" not in r.text and "max limit reached" not in r.text:
            return (f"{r.text}: the cluster as a whole is at cluster-autoscaler's limit (--max-nodes-total, "
                    "--cores-total or --memory-total); raise that flag or free capacity.")
        who = r.text.split(":", 1)[0] + ": " if r.text.startswith("node group ") else ""
        return (f"{who}the node groups this pod would fit are already at their maximum size ('max node group size "
                "reached'): raise the max size of such a node group (the autoscaling group's MaxSize, the "
                "managed node group's maxSize, or the node pool's autoscaling maximum) so cluster-autoscaler "
                "may add a node. The max it holds is the smaller of the group's own and its --nodes=<min>:<max>:<group> "
                "flag when that is set, so a group below its MaxSize can still be 'at max' (kubectl -n kube-system get "
                "configmap cluster-autoscaler-status shows the maxSize it uses).")
    kind_name = "Provisioner" if f is PROVISIONER_FIELDS else "NodePool"
    name = f'{kind_name} "{r.node_pool}"' if r.node_pool else where
    if "node limits" in r.text:
        return f"{name} has reached its limit on nodes ({f.limits}); raise it or free nodes."
    return (f"{name} has reached its {f.limits} (any resource they name: cpu, memory, nvidia.com/gpu, ...): every "
            "instance type it could launch would exceed what is left, so Karpenter does not try it for this pod. "
            "Raise the limits, or let another pool take the pod. (Karpenter also says this when the pool's node "
            "class is missing or not ready.)")


def _unsupported_plain(r: Reason, f: PoolFields, source: str) -> str:
    """What the scheduler cannot do for the pod: Fargate's refusals, Karpenter's restricted label domains, or a
    feature this Karpenter version lacks."""
    if source == fargate.SOURCE:
        return fargate_plain(r)
    if r.cause == plugin_error.CAUSE:
        return plugin_error.plain(r)
    if r.cause == K.DRA_IGNORED:
        return ("Karpenter does not launch nodes for pods that use Dynamic Resource Allocation (spec.resourceClaims): "
                "with IGNORE_DRA_REQUESTS (--ignore-dra-requests, true by default until its DRA support is GA) it "
                "refuses them outright (kubernetes-sigs/karpenter#2384). The pod needs an existing node whose driver "
                "publishes the devices its claims ask for (a node group with the DRA driver), or a Karpenter release "
                "and NodePool set up for DRA with that setting off; its CPU and memory are not the cause.")
    if r.cause == "restricted label":
        return (f"Karpenter ignores the pod because it selects on {r.key}, a label in a domain Karpenter restricts "
                "(karpenter.sh/..., kubernetes.io/... other than the well-known labels): it never launches a node "
                "for such a pod. Select on a well-known label, or on a label of your own that the Provisioner sets "
                f"({f.labels} or {f.requirements}); Karpenter v0.15 also restricted karpenter.sh/provisioner-name, "
                "which v0.16 allows again.")
    if r.cause == restricted_domain.CLAIM_CAUSE:
        return restricted_domain.claim_plain(r.value, r.text, r.key, f.labels)
    if r.cause == restricted_domain.POOL_CAUSE:
        return restricted_domain.pool_plain(r.node_pool, r.value, r.key)
    return f"this Karpenter version does not support it ({r.text}); upgrade Karpenter or drop the constraint."


def no_type_plain(r: Reason, pool: PoolReasons | None, f: PoolFields, advice: tuple[str, ...] = (),
                  only: str | None = None) -> str:
    """Karpenter's "no instance type" clause with what it asked for, then the catalog's advice (or what to check).
    `only` is the one resource that is the whole cause (an extended resource no allowed type offers): the only
    one quoted then, the pod's CPU and memory being beside the point."""
    asked = ", ".join(f"{k} {v}" for k, v in (r.resources or {}).items() if k != "pods" and (only is None or k == only))
    cause = f" ({r.cause})" if r.cause else ""
    if "reserved offering" in (r.cause or "") and (meaning := K.filter_meaning(r.cause)) is not None:
        return f"Karpenter says: {r.cause}. {meaning}"  # capacity reservations held for other claims: no misfit
    reqs = ", ".join(str(q) for q in r.requirements)
    head = (f"no instance type {_pool_name(pool)} may launch "
            f"{'is offered for' if K.offering_only(r.cause) else 'fits'} the pod{cause}"
            + (f": it asks for {asked}" + ("" if only else " (with DaemonSet overhead)") if asked else "")
            + (f" under the requirements {reqs}" if reqs else "") + ".")
    if advice and not K.offering_only(r.cause):
        return head + " " + " ".join(advice)
    if (meaning := K.filter_meaning(r.cause)) is not None:
        return head + " " + meaning
    return (head + " Whether the pod is too big, asks for a resource no allowed type offers, or the requirements "
            f"leave no type with an offering decides the fix: compare the request with the largest type "
            f"{f.requirements} allows, and check the pool's limits ({f.limits}).")


def _placeholder_pinned_plain(r: Reason, where: str, pod_side: str) -> str:
    """A pool's template check against the hostname placeholder: it fails the same way on every attempt."""
    empty = _empty_side(pod_side)
    what = (f"the pod's {r.key} requirements leave no host at all ({pod_side}: an empty intersection)" if empty
            else f"the pod requires {pod_side or r.key}, one particular host")
    return (f"the pod is pinned to a host: {what}, so it can never match a new node of {where} "
            f"({known.PLACEHOLDER}... stands for the hostname of the node the pool would launch). This is Karpenter's "
            "NodePool template check and it fails the same way on every attempt: it is not transient. The pin comes "
            "from a local PersistentVolume bound to a node (its spec.nodeAffinity on kubernetes.io/hostname; local / "
            "hostPath storage such as local-path or OpenEBS LocalPV), or from the pod's own nodeSelector / node "
            "affinity or pod affinity on kubernetes.io/hostname. Check the pod's claims (kubectl get pvc, then "
            "kubectl get pv -o yaml for nodeAffinity): when that node is gone the pod can never run until the claim "
            "is deleted and provisioned again (the data on it is lost), or a node with that name comes back. With "
            "required pod affinity on kubernetes.io/hostname instead, the pod may only join the node its peers run on: "
            "when that node is still starting it must wait for it (kube-scheduler says 'didn't match pod affinity "
            "rules' meanwhile), and older Karpenter could leave it Pending even then (kubernetes-sigs/karpenter#270: "
            "upgrade).")


def _conflict_plain(r: Reason, where: str, f: PoolFields, in_pool: bool = False) -> str:
    pod_side = r.pod_side or ""
    pool_side = r.pool_side or ""
    if r.key in _WELL_KNOWN_POOL_KEYS and pod_side.endswith("DoesNotExist"):
        # DoesNotExist pins no other pool: it keeps the pod off every node Karpenter launches (aws#2383: the
        # Karpenter controller's own pod, whose chart affinity says so).
        return (f"the pod requires {pod_side}: it keeps off every node Karpenter launches, so no NodePool will ever "
                f"take it ({where} included). Karpenter's own controller pod carries this affinity in its Helm chart, as "
                "do pods meant for a managed node group or Fargate; such a pod needs a node Karpenter does not manage: "
                "an EKS managed node group, or a Fargate profile for its namespace.")
    if r.key in _WELL_KNOWN_POOL_KEYS:
        return (f"the pod asks for {pod_side or 'a different pool'} but this is {where}"
                f" ({pool_side or r.key}); that is expected when the pod pins another pool through "
                f"nodeSelector / nodeAffinity on {r.key}. If no pool of that name exists (kubectl get "
                f"{'provisioners' if f is PROVISIONER_FIELDS else 'nodepools'}), nothing "
                "will ever launch a node for the pod: correct the name it selects.")
    if known.PLACEHOLDER in pod_side + pool_side and (in_pool or _empty_side(pod_side)):
        return _placeholder_pinned_plain(r, where, pod_side)
    if known.PLACEHOLDER in pod_side + pool_side:
        return (f"{known.PLACEHOLDER}... is the hostname Karpenter gives a NodeClaim it is still launching (not a node "
                f"yet, and not a fault of {where}): the pod's {r.key} requirement ({pod_side or r.key}) does not admit "
                "that in-flight node, so Karpenter did not add the pod to it. This alone is transient; if the pod stays "
                "Pending it is pinned to one host - a local PersistentVolume bound to a node that is gone, or "
                "pod affinity on kubernetes.io/hostname - so check the pod's PVs (spec.nodeAffinity) first.")
    empty = _empty_side(pod_side)
    if r.key == ZONE and empty:
        return (f"the pod can run in no zone at all ({pod_side}): Karpenter intersected the zones of the pod's bound "
                "PersistentVolumes with its nodeSelector / node affinity and nothing was left (an empty zone set is "
                "printed as DoesNotExist). Typically two volumes of the pod sit in different zones, or a volume's zone "
                f"is not one the pod selects. Widening {where} cannot help: fix the volumes (kubectl get pv -o wide "
                "shows each volume's zone): recreate one in the other's zone (e.g. from a snapshot) or delete the "
                "stale PVC so it is provisioned again, and use a StorageClass with volumeBindingMode: "
                "WaitForFirstConsumer so new volumes follow the pod.")
    if r.key == _HOSTNAME and empty:
        return (f"the pod can run on no host ({pod_side}): its kubernetes.io/hostname requirements (a local "
                "PersistentVolume's node, pod affinity) leave no node; check the pod's PVs for a node that is gone. "
                "Karpenter v0.6 also derived such a requirement from a topology spread constraint on "
                "kubernetes.io/hostname and could leave it empty once the pods' nodes were deleted (fixed later): upgrade, or drop "
                "that constraint (or make it whenUnsatisfiable: ScheduleAnyway).")
    if r.key and pool_side.strip() in ("[]", "[ ]"):  # v0.5-v0.6: the pool gives that key no value at all
        return (f"the pod requires {r.key} {pod_side} (spec.nodeSelector or spec.affinity.nodeAffinity) but {where} "
                f"gives its nodes no {r.key} label at all ([]): early Karpenter (v0.5) took custom labels only from the "
                f"Provisioner's spec.labels, its spec.requirements admitting well-known labels alone - set {r.key} "
                "there (spec.labels), or upgrade; if the pod is not meant for this pool, this refusal is expected.")
    if r.key:
        zone_hint = (" (a pod's zone requirement can also come from the zone of a bound PersistentVolume)"
                     if r.key == ZONE else "")
        return (f"the pod requires {pod_side or r.key} (spec.nodeSelector or spec.affinity.nodeAffinity){zone_hint} "
                f"but {where} only allows {pool_side or 'other values'} ({f.requirements}, key {r.key}); if the pod "
                "belongs to this pool, widen the pool's requirement or change the pod's selector so the two overlap.")
    return f"the pod's node selector and {where}'s requirements do not overlap."


def _empty_side(side: str) -> bool:
    return side.endswith(("DoesNotExist", "In []", "In [ ]")) or side.strip() in ("[]", "[ ]")  # v0.6: bare `[]`


def _no_zone(r: Reason) -> bool:
    return r.kind == reason_kind.REQUIREMENT_CONFLICT and r.key == ZONE and _empty_side(r.pod_side or "")


def fargate_plain(r: Reason) -> str:
    if r.cause == "Misconfigured Fargate Profile":
        return (f"the Fargate profile{' ' + r.value if r.value else ''} is blocked for new pods ({r.text}): fix the "
                "profile itself - its pod execution role must exist and trust eks-fargate-pods.amazonaws.com (and be "
                "in the cluster's auth config: with authentication mode API or API_AND_CONFIG_MAP an access entry of type "
                "FARGATE_LINUX for that role, else its mapping in the aws-auth ConfigMap; a cluster switched to access "
                "entries without one for the role blocks the profile), and its subnets must be private ones in zones "
                "Fargate supports. A profile cannot be edited: recreate it after fixing its role.")
    if r.cause == "account blocked":
        return (f"{r.text}: AWS refuses Fargate launches for the whole account, whatever the pod or profile - a new "
                "account still being verified, or one AWS has suspended or limited (billing, its Fargate vCPU quota). "
                "Nothing in the cluster fixes it: ask AWS Support to unblock the account, or run the pods on EC2 "
                "nodes meanwhile.")
    if r.cause == "timed out":
        return (f"{r.text}: a Fargate profile selected the pod but its Fargate node did not come up in time, and "
                "fargate-scheduler keeps retrying. Nothing in the pod spec is refused; the profile's network or the "
                "account's capacity is: its private subnets need a route out - a NAT gateway, or in a private "
                "cluster VPC endpoints for ecr.api, ecr.dkr, s3 (gateway) and sts - to pull the image and reach "
                "the API server, and the account's Fargate vCPU quota (Service Quotas) must have room. Fix the "
                "subnets' route tables (or add the endpoints); the retries then succeed.")
    if r.cause == "zone":
        return (f"{r.text}: Fargate is not offered in a zone of the profile's subnets; give the Fargate profile "
                "private subnets in supported zones only.")
    where = f" ({r.key})" if r.key else ""
    volumes = fargate.volume_note(r.text)
    if fargate.claim_not_ready(r.text):
        return (f"a Fargate profile selects this pod and Fargate refused {r.text}{where}: the pod's "
                f"PersistentVolumeClaim was not ready when the pod was created.{volumes}")
    return (f"a Fargate profile selects this pod but Fargate refuses {r.text}{where}; the pod does not fall back to "
            "EC2. Drop the field, or keep the pod out of the profile's selectors (its namespace and labels) so it "
            f"runs on EC2 nodes (a node group or a Karpenter NodePool).{volumes}{fargate.injected_note(r.text)}")


def with_plain(parsed: Parsed) -> Parsed:
    # A record of no known version whose requirements name karpenter.sh/provisioner-name is a Provisioner's
    # (v0.31 or older): every reason of it is worded with the Provisioner's fields (spec.taints, spec.requirements).
    everything = [*parsed.reasons, *(r for p in parsed.pools for r in p.reasons)]
    dialect = parsed.dialect
    if dialect is None and any(q.key == PROVISIONER_NAME for r in everything for q in r.requirements):
        dialect = K.V016

    def word(r: Reason, pool: PoolReasons | None) -> Reason:
        return replace(r, plain=reason_plain(r, pool, parsed.source, dialect))

    pools = tuple(replace(p, reasons=tuple(word(r, p) for r in p.reasons)) for p in parsed.pools)
    return replace(parsed, pools=pools, reasons=tuple(word(r, None) for r in parsed.reasons))


_CLAIM_EVENTS = ("waiting for a volume to be created", "no storage class is set")


def _header(p: Parsed, who: str) -> str:
    if p.source == KUBE_SCHEDULER:
        if p.reasons and all(r.kind == reason_kind.VOLUME for r in p.reasons) and (
                (p.scheduler or "").endswith("-controller")
                or all(any(w in r.text for w in _CLAIM_EVENTS) for r in p.reasons)):  # a claim's event, not a scheduler's
            return f"{who} waits for its volume: the PersistentVolumeClaim it mounts is not bound (an event on the claim)."
        if p.scheduler and p.scheduler not in ("default-scheduler", KUBE_SCHEDULER):
            return (f"{who} could not be placed on any existing node by the scheduler {p.scheduler} (the pod's "
                    "spec.schedulerName, a scheduler other than the cluster's default-scheduler).")
        return f"{who} could not be placed on any existing node (kube-scheduler)."
    if p.source == CLUSTER_AUTOSCALER:
        if any(r.kind == reason_kind.LIMITS for r in p.reasons):
            return f"{who} did not make cluster-autoscaler add a node."
        if p.event == "FailedToScaleUpGroup":
            return f"{who} got no node from cluster-autoscaler: a node group could not be scaled up."
        counted = [why for r in p.reasons for why in (r.counts or {})]
        if counted and all("backoff" in why for why in counted):
            return f"{who} got no node from cluster-autoscaler: the node group that could take it is in backoff."
        return f"{who} did not make cluster-autoscaler add a node: no node group's template node would take it."
    if p.source == fargate.SOURCE:
        return f"{who} was not scheduled by the EKS Fargate scheduler (fargate-scheduler)."
    log = f" ({p.dialect} log)" if p.dialect else ""
    if p.reasons and not p.pools and all(r.kind == reason_kind.EXCLUDED_TYPES for r in p.reasons):
        return (f"Karpenter narrowed the instance types of a pool for {'the pod' if who == 'The pod' else who}{log}: not "
                "a failure by itself (the types left were still tried); its error line, if any, says why it failed.")
    return f"{who} could not be scheduled by Karpenter{log}."


def _ordinary_taints(reasons: tuple[Reason, ...]) -> list[Reason]:
    return [r for r in reasons if r.kind == reason_kind.TAINT and not r.truncated and known.transient_taint(r.key) is None
            and known.disruption_taint(r.key) is None and known.pressure_taint(r.key) is None]


def _on_every_node(p: Parsed, taints: list[Reason]) -> list[str]:
    """The keys of those taints that every node the scheduler counted carries (or all, when it counted none)."""
    counted = [r for r in p.reasons if r.kind == reason_kind.NODE_FILTER and r.counts and r.total]
    if not counted:
        return [t.key or "" for t in taints]
    return [t.key or "" for t in taints for r in counted for why, n in (r.counts or {}).items()
            if n == r.total and t.key and t.key in why]


def _grouped_taints(p: Parsed, taints: list[Reason]) -> str:
    listed = ", ".join(_taint_text(t) for t in taints)
    if p.source != "karpenter":
        return ("Untolerated taints: " + listed + "; add tolerations to spec.tolerations only if the pod may run on "
                "those nodes"
                + (known.FARGATE_NODES if any("fargate" in (t.value or "") + (t.key or "") for t in taints) else "")
                + "." + known.control_plane_note(_on_every_node(p, taints)))
    f = fields_of(None, p.dialect)
    return (f"The pod tolerates none of the {len(taints)} distinct taints on the pools Karpenter checked: {listed} "
            f"({f.taints}; this Karpenter version prints one clause per pool without naming it). Each such pool is "
            "reserved for pods that tolerate its taint: add a toleration only for the pool the pod belongs to; if none "
            "of them is meant for it, it needs a pool without a taint it cannot tolerate.")


def _nominated_plain(who: str, p: Parsed) -> str:
    return (f"{who}: Karpenter found room for it and nominated {p.nominated}; it binds once that node is ready. "
            "If the nomination repeats for minutes (kubectl describe shows 'xN over M'), that node cannot take the "
            "pod: the scheduler's FailedScheduling event for the pod says why (often a volume in another zone).")


def _pool_sentences(p: Parsed) -> list[str]:
    """A sentence per pool's reason; a clause several pools share (or an empty zone set against each) said once."""
    sentences: list[str] = []
    no_zone = [(r, pool) for pool in p.pools for r in pool.reasons if _no_zone(r)]
    # a NodePool and a Provisioner (v0.32-v0.37 ran both) keep the clause in different fields: said apart
    same: dict[tuple[str, str, str], list[PoolReasons]] = {}
    for pool in p.pools:
        for r in pool.reasons:
            if r.kind != reason_kind.NO_INSTANCE_TYPE and not _no_zone(r):
                same.setdefault((r.kind, r.text, pool.kind), []).append(pool)
    said: set[tuple[str, str, str]] = set()
    for pool in p.pools:
        for r in pool.reasons:
            if len(no_zone) > 1 and _no_zone(r):
                continue
            pools = same.get((r.kind, r.text, pool.kind), [])
            if len(pools) > 1:  # the same clause for several pools: one sentence naming them all
                if (r.kind, r.text, pool.kind) not in said:
                    said.add((r.kind, r.text, pool.kind))
                    sentences.append(capital(reason_plain(r, pool, p.source, p.dialect, where=_pools_named(pools))))
                continue
            sentences.append(capital(r.plain or reason_plain(r, pool, p.source, p.dialect)))
        if not pool.reasons:
            sentences.append(f"{_pool_name(pool)}: the reason was cut off in the log.")
    if len(no_zone) > 1:  # the same empty zone set against every pool: say it once, for all of them
        names = ", ".join(_pool_name(pool) for _, pool in no_zone)
        sentences.append(capital(_conflict_plain(no_zone[0][0], names, fields_of(no_zone[0][1], p.dialect))))
    return sentences


def item_plain(item: Item) -> str:
    p = item.parsed
    who = f"Pod {p.pod}" if p.pod else "The pod"
    if item.workload:
        who += f" ({item.workload})"
    if p.event == "Nominated":
        return _nominated_plain(who, p)
    if any(r.cause in _NO_FAILURE for r in p.reasons):  # bound and refused, kept, relaxed, volumes read: no failure
        return f"{who}: " + " ".join(r.plain[:1].lower() + r.plain[1:] for r in p.reasons)
    if p.event in disruption.EVENTS:  # a node kept or removed, no pod: the message says which and why
        return " ".join([capital(disruption.plain(p.message, tuple(item.nodes))),
                         *([f"(Seen {item.count} times, lines {item.line}-{item.last_line}.)"] if item.count > 1 else [])])
    if p.reasons and (all(r.cause == K.STATE_INVARIANT for r in p.reasons)  # names a pod, but no failure of it
                      or not p.pod and all(r.cause in _NO_POD_CAUSES for r in p.reasons)):  # no pod's
        return " ".join([*dict.fromkeys(capital(r.plain) for r in p.reasons),
                         *([f"(Seen {item.count} times, lines {item.line}-{item.last_line}.)"] if item.count > 1 else [])])
    sentences: list[str] = [_header(p, who)]
    # A pool at its limits is never compared with the pod (Karpenter checks limits first): often the very pool
    # meant for it (the GPU pool of aws/karpenter-provider-aws#8068), so it is said before the other pools' misfits.
    at_limits = [r for r in p.reasons if r.kind == reason_kind.LIMITS]
    sentences += [capital(r.plain or reason_plain(r, None, p.source, p.dialect)) for r in at_limits]
    if p.source == "karpenter" and p.pools and any(r.node_pool is None for r in at_limits):
        # Karpenter checks a pool's limits before the pod and says no more of it: the pool is one it does not name
        sentences.append(f"That pool is none of those named after it ({', '.join(_pool_name(q) for q in p.pools)}): "
                         "the one at its limits may be the very pool meant for the pod - kubectl get "
                         f"{'provisioners' if p.pools[0].kind == 'provisioner' else 'nodepools'} lists them all.")
    sentences += _pool_sentences(p)
    grouped = _ordinary_taints(p.reasons)
    if p.source == "karpenter" and len(grouped) < 2:
        grouped = []
    for r in p.reasons:
        if r in grouped or r in at_limits:
            continue
        sentences.append(capital(r.plain or reason_plain(r, None, p.source, p.dialect)))
    if grouped:
        sentences.append(_grouped_taints(p, grouped))
    refused = [r for r in p.reasons if r.cause == "Pod not supported on Fargate"]
    if len(refused) > 1:
        sentences = [x for x in sentences if x not in {capital(r.plain) for r in refused}]
        sentences.append(capital(fargate_plain(replace(
            refused[0], text="; ".join(r.text + (f" ({r.key})" if r.key else "") for r in refused), key=None))))
    sentences += [pinned_unlaunchable_pool(p.reasons, p.pools) or "", waiting_on_limits(p.reasons, p.pools), *item.advice]
    sentences += context_sentences(p.described, p.reasons)  # a `kubectl describe pod`'s own fields
    if any(is_host_port(r.text) for r in p.reasons):
        sentences.append(servicelb_note(p.pod))
    if p.unparsed:
        sentences.append(unparsed_sentence(p.unparsed))
    if item.count > 1:
        sentences.append(f"(Seen {item.count} times, lines {item.line}-{item.last_line}.)")
    return " ".join(dict.fromkeys(s for s in sentences if s))


def capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
