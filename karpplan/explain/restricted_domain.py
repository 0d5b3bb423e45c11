"""The API server refusing a Karpenter object for a requirement in a restricted label domain:

    NodeClaim.karpenter.sh "default-abc12" is invalid: spec.requirements[3].key: Invalid value: "string": label
        domain "kubernetes.io" is restricted        (Karpenter made the claim from a pod's node selection)
    The NodePool "apppool02" is invalid: spec.template.spec.requirements[0].key: Invalid value: "string": label
        domain "kubernetes.io" is restricted        (kubectl apply of the user's own NodePool)

The CRDs' validation admits, in the kubernetes.io, karpenter.sh and provider domains, only the well-known labels.
AKS node auto-provisioning (karpenter-provider-azure) refused topology.kubernetes.io/zone itself for a time: on a
NodeClaim until PR #340 (a pod's zone affinity put it there, Azure/karpenter-provider-azure#339), in a NodePool
until zone requirements came with v1.4 (Azure/karpenter-provider-azure#785, PR #805).
"""

from __future__ import annotations

import re

CLAIM_CAUSE = "restricted label domain"
POOL_CAUSE = "nodepool rejected: restricted label domain"
POOL_RESTRICTED = re.compile(r'NodePool(?:\.karpenter\.sh)? \\?"(?P<pool>[^"\\]+)\\?" is invalid: (?P<field>spec\.template'
                             r'\.spec\.requirements\[(?P<index>\d+)\]\.key)[^\n]*?label domain \\?"(?P<domain>[^"\\]+)'
                             r'\\?" is restricted')
_ALLOWED = ("topology.kubernetes.io/zone, topology.kubernetes.io/region, kubernetes.io/arch, kubernetes.io/os, "
            "kubernetes.io/hostname, node.kubernetes.io/instance-type, and any node.kubernetes.io/... or "
            "node-restriction.kubernetes.io/... key")
_AKS_ZONE = ("On AKS node auto-provisioning (karpenter-provider-azure) topology.kubernetes.io/zone itself was refused "
             "in a NodePool until zone requirements came with v1.4 (Azure/karpenter-provider-azure#785): there, "
             "leave the zone out or upgrade (the AKS release that carries it).")


def claim_plain(claim: str | None, text: str, domain: str | None, labels: str) -> str:
    """A NodeClaim the API server refused: a requirement Karpenter took from its pods' node selection is in a
    restricted domain."""
    own = (f"Select on a label of your own that the NodePool sets ({labels}) instead; node.kubernetes.io/... and "
           "node-restriction.kubernetes.io/... keys are allowed.")
    if domain and domain.startswith("karpenter.") and domain != "karpenter.sh":
        return (f"the API server rejected NodeClaim {claim} ({text}): the requirement is a key in {domain}, the "
                "provider's own domain, which the NodeClaim CRD admits only for the well-known labels it lists. Such "
                "a key comes from the NodePool's requirements (or a pod's node selection); when it is a real label "
                "of the provider (e.g. an instance-family or instance-cpu key), the CRDs in the cluster do not match "
                "the controller - older than it (a label a later release added; the CRDs are not upgraded by the "
                "controller's chart: apply the karpenter-crd chart of the same release), or a provider whose CRD "
                "lacks its own domain (the kwok provider's did, kubernetes-sigs/karpenter#968: upgrade). A misspelt "
                "key is refused the same way: check it against the provider's well-known labels.")
    if domain != "kubernetes.io":
        return (f"the API server rejected NodeClaim {claim} ({text}): a pod it was made for selects (nodeSelector / "
                f"required node affinity) a label in the {domain} domain that is not one of its well-known labels, and "
                "a NodeClaim may not carry such a requirement, so the node is never created and its pods stay pending. "
                + own)
    return (f"the API server rejected NodeClaim {claim} ({text}): a requirement Karpenter took from the node selection "
            "of the pods it was made for is a kubernetes.io key the NodeClaim CRD does not admit, so the node is never "
            "created and its pods stay pending. Either a pod selects (nodeSelector / required node affinity) a "
            "kubernetes.io label that is not a well-known one (e.g. node-role.kubernetes.io/<role>). " + own
            + " Or, on AKS node auto-provisioning (karpenter-provider-azure) before PR #340, it is the zone: a pod's "
            "zone affinity or anti-affinity, even a preferred one, put topology.kubernetes.io/zone on the claim, which "
            "that CRD refused (Azure/karpenter-provider-azure#339) - upgrade (the AKS release that carries the fix).")


def pool_plain(pool: str | None, field: str | None, domain: str | None) -> str:
    """The user's NodePool refused at apply time for a requirement key in a restricted domain."""
    if domain == "kubernetes.io":
        allowed = (f"only the well-known labels may be used there ({_ALLOWED}); a key such as "
                   "node-role.kubernetes.io/<role> may not. " + _AKS_ZONE)
    else:
        allowed = (f"only the well-known keys of {domain} may be used there (a misspelt one is refused too): check the "
                   "key against the provider's list of well-known labels, or use a label of your own.")
    return (f"The API server refused NodePool {pool} itself, so it was never created or changed: its requirement "
            f"{field or 'spec.template.spec.requirements[].key'} is a key in the restricted {domain} domain, and {allowed} "
            "Nothing is wrong with any pod.")
