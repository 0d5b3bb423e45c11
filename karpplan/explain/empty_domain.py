"""A topology spread whose counts hold a domain with an empty name (`counts = : 0, eastus2-1: 2, ...`).

Karpenter builds a spread's domains from every value its NodePools' offerings, requirements and labels and the
existing nodes carry for the key. When something carries the key with an EMPTY value, "" becomes a domain: it holds
no matching pod, so it is the spread's global minimum (0), and no new node is ever placed in it (Karpenter uses "" as
its own "no domain" sentinel). Every real domain that already holds maxSkew matching pods is then out of reach, and
the pod fails though the real zones are balanced. Raising maxSkew is not the fix: the empty domain stays at 0.

The case the threads established (Azure/karpenter-provider-azure#1384, fixed by PR #1615 and #1613): the Azure
provider gave VM sizes with no usable zone (all zones restricted for the subscription, or regional sizes) offerings in
zone "". The cure is on the side that makes the empty value, or keeping it out of the pod's domains.
"""

from __future__ import annotations

from karpplan.explain.structure import Reason
from karpplan.model.labels import ZONE

AZURE_THREAD = "Azure/karpenter-provider-azure#1384"


def shown(domain: str) -> str:
    """A domain name as the answer prints it (the empty one visibly)."""
    return domain if domain else '"" (empty)'


def has_empty_domain(r: Reason) -> bool:
    return r.constraint == "topology spread" and r.counts is not None and "" in r.counts


def empty_domain_plain(r: Reason, field: str, counts: str) -> str:
    """The answer for a spread whose counts name the empty domain."""
    key = r.key or "the key"
    real = [d for d in (r.counts or {}) if d]
    listed = " ".join(real) if real and not r.others else "<your real " + ("zones" if key == ZONE else "values") + ">"
    head = (f"the pod's {field} on {key} counts a domain whose name is EMPTY (the `: 0` in Karpenter's counts){counts}. "
            "No node is ever placed in that domain, yet its 0 is the spread's global minimum, so every real domain "
            "that already holds maxSkew matching pods is refused and the pod waits though the real domains are "
            "balanced; this is not the pod's maxSkew (the empty domain stays at 0 whatever it is). Something carries "
            f"{key} with an empty value: ")
    if key == ZONE:
        source = ("an instance type offered in zone \"\" - on Azure, karpenter-provider-azure gave VM sizes whose zones "
                  "are all restricted for the subscription, and regional (non-zonal) sizes, the zone \"\" "
                  f"({AZURE_THREAD}; fixed by using zone \"0\" for regional VMs and dropping offerings with no usable "
                  "zone): upgrade the provider (AKS node auto-provisioning: the AKS release that carries it). "
                  "Another provider or a node labelled topology.kubernetes.io/zone=\"\" does the same. ")
    else:
        source = (f"a node labelled {key}=\"\", or a NodePool whose template labels or requirements give {key} the "
                  "value \"\" (In [\"\"]): give it a real value or remove it. ")
    until = (f"To work around it, keep the empty value out of the pod's domains: give every NodePool the pod may use the "
             f"requirement {key} In [{listed}] (then no empty-valued offering makes a domain), or give the pod a "
             f"required node affinity {key} In [{listed}] (the minimum is taken over the pod's own domains only). "
             f"kubectl get nodes -L {key} shows a node carrying the key with an empty value.")
    return head + source + until


def keyless_plain(field: str) -> str:
    """Karpenter's `unsatisfiable topology constraint for ...` quoted without its key and counts: what it means,
    and where the rest of the message is."""
    return (f"the pod's {field}: Karpenter found no domain of the constraint's topologyKey where the pod can go and "
            "keep it (the message as quoted stops before its key=... and the pods counted per domain, which say which "
            "key and whether Karpenter knew any domain at all: its log line holds them). Empty counts mean no "
            "NodePool offers the key at all - e.g. a zone spread in a region the provider takes for one without "
            "zones (Azure/karpenter-provider-azure#731, a region missing from its list of zonal regions: upgrade the "
            "provider); counts that only break maxSkew mean raising maxSkew, whenUnsatisfiable: ScheduleAnyway, or "
            "letting the pool reach more domains.")


# the deprecated node labels and their stable names (kubelet still sets both on a node it registers)
DEPRECATED_KEYS = {"failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
                   "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
                   "beta.kubernetes.io/arch": "kubernetes.io/arch", "beta.kubernetes.io/os": "kubernetes.io/os",
                   "beta.kubernetes.io/instance-type": "node.kubernetes.io/instance-type"}


def deprecated_key_plain(r: Reason, field: str, counts: str) -> str | None:
    """A topology term whose topologyKey is a deprecated label: Karpenter knows its domains only from the nodes
    that carry it, never from a node it would launch (those carry the requirements' stable names)."""
    stable = DEPRECATED_KEYS.get(r.key or "")
    if stable is None:
        return None
    known = ", ".join(shown(d) for d in r.counts or {}) or "none"
    return (f"the pod's {field} on {r.key}{counts}: that is the deprecated name of {stable}. Karpenter counts the "
            f"term's domains by the key as written - only those of existing nodes that carry it ({known}) - while a "
            f"node it would launch has only the requirements' stable name ({stable}, as podDomains / nodeDomains "
            "show), so it can place the pod in no other domain. Use topologyKey: " + stable + ", which every node "
            "carries (aws/karpenter-provider-aws#6440); the pod's term and the pool's zones are not the cause.")
