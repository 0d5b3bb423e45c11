"""explain on a seventh sweep of messages pasted in public issue threads (session 20), none cited elsewhere in tests/,
each with the cause its thread established. The sweep's gap was Karpenter's Azure provider (AKS node
auto-provisioning): its refusals of a NodeClaim were unrecognised, an Azure pool's no-instance-type clause was judged
against the EC2 catalog (suggesting r5a.large for Standard_D sizes), an Azure disk's zone was worded as an EBS volume
with EC2NodeClass subnets, and a NodePool the API server refused was unrecognised. Beside it: a topology term on a
deprecated key, a topology clause quoted without its key, and classic DRA's Reserve wait.

Every message is copied as its thread shows it. `says` are words the answer must contain for the established cause;
`never` the misdiagnosis or misreading the code before this sweep gave (or one a reader would take for the fix).
"""

from __future__ import annotations

import pytest
from explain_pastes import Paste, check_new_threads, check_paste

from karpplan.explain.enrich import CatalogFor, catalog_loader, enrich
from karpplan.explain.report import explain_text

PASTES: dict[str, Paste] = {
    # AKS NAP: a NodePool requiring zone "0" (AKS's label of a regional VM) with zone-capable D-series sizes; before
    # regional provisioning (PR #1659, which "Fixes #1002") those sizes had offerings in numbered zones only
    'azure-zone-0-regional-vm': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/1002',
        'incompatible with nodepool "spotworkload-karpenter-nodepool", daemonset overhead={"cpu":"915m","memory":"20389'
        '22537","pods":"16"}, no instance type satisfied resources {"cpu":"1915m","memory":"10628857129","pods":"17"} a'
        'nd requirements gpupool In [workloads], karpenter.azure.com/sku-name In [Standard_D16s_v3 Standard_D32s_v3 St'
        'andard_D48s_v3 Standard_D4s_v3 Standard_D64s_v3 and 1 others], karpenter.sh/capacity-type In [spot], karpente'
        'r.sh/nodepool In [spotworkload-karpenter-nodepool], kubernetes.io/arch In [amd64], kubernetes.io/os In [linux'
        '], node-restriction.aurora.equinor.com/purpose In [workloads], topology.kubernetes.io/region In [northeurope]'
        ', topology.kubernetes.io/zone In [0] (no instance type met the scheduling requirements or had a required off'
        'ering)\n',
        {'no-instance-type'}, ('topology.kubernetes.io/zone "0"', 'regional VM', 'Drop the zone requirement'),
        ('r5a.large', 'ec2', 'breach limits')),
    # self-hosted Karpenter on AKS: a claim of the default StorageClass (no zone restriction) became an EMPTY zone
    # requirement, which no SKU meets (the reporter's analysis, triaged and fixed as a bug)
    'azure-default-storageclass-empty-zone-requirement': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/497',
        '{"level":"DEBUG","time":"2024-09-24T07:07:33.059Z","logger":"controller.provisioner","message":"adding requir'
        'ements derived from pod volumes, [{topology.disk.csi.azure.com/zone In []}]","commit":"846ef96","pod":"depend'
        'ency-track/dependency-track-apiserver-6689598c68-5258j"}\n',
        {'volume'}, ('Pod dependency-track/dependency-track-apiserver-6689598c68-5258j', 'empty list of zones',
                     'no node can meet', 'upgrade'),
        ('EBS volume', 'EC2NodeClass', 'may only run in the volumes')),
    # NAP: the NodeClaim's Launched condition - DefaultAzureCredential failed, the managed identity ambiguous among
    # several user-assigned identities (kubectl get nodeclaim -o yaml, folded by YAML)
    'azure-nodeclaim-credential-chain-failed': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/964',
        '  - lastTransitionTime: "2025-06-13T05:34:52Z"\n    message: getting backend pools: failed to get next loadbal'
        'ancer page: DefaultAzureCredential:\n      failed to acquire a token.\\nAttempted credentials:\\n\\tEnvironmentC'
        'redential:\n      missing environment variable AZURE_TENANT_ID\\n\\tWorkloadIdentityCredential:\n      no client'
        ' ID specified. Check pod configuration or set ClientID in the options\\n\\tManagedIdentityCredential:\n      fa'
        'iled to authenticate a system assigned identity. The endpoint responded with\n      {\\"error\\":\\"invalid_req'
        'uest\\",\\"error_description\\":\\"Multiple user assigned\n      identities exist, please specify the clientId /'
        ' resourceId of the identity in\n      the token request\\"}\\n\\tAzureCLICredential: fork/exec /bin/sh: no such'
        ' file\n      or directory\n',
        {'no-instance-type'}, ('could not authenticate to Azure', 'several user-assigned managed identities',
                               'client ID'),
        ('capacity', 'quota', 'fits the pod')),
    # AKS Automatic: the VM's creation refused for the Total Regional Cores quota of the subscription the error names
    'aks-automatic-total-regional-cores-quota': Paste(
        'https://github.com/Azure/AKS/issues/5808',
        '"errordetail": {\n    "code": "QuotaExceeded",\n    "message": "Create or update virtual machine /subscripti'
        'ons/<unknown_subscription_id>/resourceGroups/<resource_group>/providers/Microsoft.Compute/virtualMachines/<id'
        '> failed. Operation could not be completed as it results in exceeding approved Total Regional Cores quota. Ad'
        'ditional details - Deployment Model: Resource Manager, Location: northeurope, Current Limit: 100, Current Usa'
        'ge: 100, Additional Required: 4, (Minimum) New Limit Required: 104. Setup Alerts when Quota reaches threshold'
        '. Learn more at https://aka.ms/quotamonitoringalerting . Submit a request for Quota increase at ...\n}\n',
        {'no-instance-type'}, ('Total Regional Cores quota in northeurope',
                               'limit 100, in use 100, this VM needs 4 more: at least 104',
                               'not a subscription you own'),
        ('EC2', 'InsufficientInstanceCapacity')),
    # NAP in a region missing from the provider's list of zonal regions: a zone spread finds no zone domain at all
    # (the maintainer's own report; the thread quotes the head of Karpenter's message)
    'azure-zone-spread-in-region-taken-for-non-zonal': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/731',
        'unsatisfiable topology constraint for topology spread\n',
        {'topology'}, ('spec.topologySpreadConstraints', 'Empty counts mean no NodePool offers the key',
                       'a region the provider takes for one without zones'), ()),
    # NAP v0.4.0: a pod's preferred zone affinity put topology.kubernetes.io/zone on the NodeClaim, which the
    # provider's CRD refused; fixed by PR #340 ("Fixes #339")
    'azure-nodeclaim-zone-key-refused': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/339',
        'The NodeClaim "..." is invalid: spec.requirements[3].key: Invalid value: "string": label domain "kubernetes.'
        'io" is restricted\n',
        {'unsupported'}, ('topology.kubernetes.io/zone on the claim', 'even a preferred one', 'upgrade'), ()),
    # NAP: the user's NodePool with a topology.kubernetes.io/zone requirement refused at apply time (zone requirements
    # came with PR #805); it was unrecognised
    'azure-nodepool-zone-requirement-refused': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/785',
        'The NodePool "apppool02" is invalid: spec.template.spec.requirements[0].key: Invalid value: "string": label d'
        'omain "kubernetes.io" is restricted\n',
        {'unsupported'}, ('refused NodePool apppool02 itself', 'topology.kubernetes.io/zone itself was refused',
                          'Nothing is wrong with any pod'),
        ('pod could not be scheduled', 'Select on a label of your own')),
    # podAntiAffinity on the deprecated failure-domain.beta key: Karpenter counted only the zone of the existing node
    # carrying it, the claims it would launch carry the stable key
    'anti-affinity-on-deprecated-zone-key': Paste(
        'https://github.com/aws/karpenter-provider-aws/issues/6440',
        'unsatisfiable topology constraint for pod anti-affinity, key=failure-domain.beta.kubernetes.io/zone (counts ='
        ' us-east-1a: 1 , podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone E'
        'xists\n',
        {'topology'}, ('deprecated name of topology.kubernetes.io/zone',
                       'Use topologyKey: topology.kubernetes.io/zone'),
        ('every reachable domain already holds a pod', 'relax the term')),
    # cluster-autoscaler scaled down the node of zone b; the pods' volumes stayed there, the one node left is in a
    # (the reporter's analysis)
    'volume-zone-after-scale-down-with-taint-and-not-ready': Paste(
        'https://github.com/kubernetes/kubernetes/issues/71265',
        ' Warning  FailedScheduling   22m (x4 over 40m)   default-scheduler   0/3 nodes are available: 1 node(s) had no '
        "available volume zone, 1 node(s) had taints that the pod didn't tolerate, 1 node(s) were not ready.\n",
        {'node-filter', 'volume'}, ('a volume never moves', "The pod needs a node in the volume's zone"),
        ('Insufficient', 'lower the pod')),
    # an AKS node pool (no Karpenter) whose ARM VM size was not offered in the zone: Azure's allocation refusal
    'aks-overconstrained-zonal-allocation': Paste(
        'https://github.com/jenkins-infra/helpdesk/issues/3584',
        '`"statusMessage": "{\\"status\\":\\"Failed\\",\\"error\\":{\\"code\\":\\"ResourceOperationFailure\\",\\"messa'
        'ge\\":\\"The resource operation completed with terminal provisioning state \'Failed\'.\\",\\"details\\":[{\\"'
        'code\\":\\"OverconstrainedZonalAllocationRequest\\",\\"target\\":\\"11\\",\\"message\\":\\"Allocation failed.'
        ' VM(s) with the following constraints cannot be allocated, because the condition is too restrictive. Please r'
        'emove some constraints and try again. Constraints applied are:\\\\n  - Availability Zone\\\\n  - Differencing '
        '(Ephemeral) Disks\\\\n  - Networking Constraints (such as Accelerated Networking or IPv6)\\\\n  - VM Size\\\\n'
        '\\"}]}}",`\n',
        {'no-instance-type'}, ('no host meets every constraint', 'For an AKS node pool', 'zones that offer it'),
        ('EC2', 'InsufficientInstanceCapacity')),
    # Karpenter v0.7.4 on Azure did not mark an offering unavailable on OverconstrainedZonalAllocationRequest, so spot
    # never fell back to on-demand (fixed by PR #892, "Fixes #762"; the thread says it in prose)
    'azure-spot-overconstrained-no-fallback': Paste(
        'https://github.com/Azure/karpenter-provider-azure/issues/762',
        'When attempting to provision spot instances, the allocation fails with an "OverconstrainedZonalAllocationReque'
        'st" error from Azure.\n',
        {'no-instance-type'}, ('falling back to on-demand', 'upgrade'), ('EC2', 'fits the pod')),
    # the kwok provider's NodePool example on its own karpenter.kwok.sh labels: the NodeClaim CRD did not admit the
    # provider's domain (a maintainer's report, fixed); before, the bracketed list of refusals got only the generic
    # "find the field the message names" answer
    'nodeclaim-refused-for-the-providers-own-domain': Paste(
        'https://github.com/kubernetes-sigs/karpenter/issues/968',
        '{"level":"ERROR","time":"2024-01-25T23:43:33.913Z","logger":"controller.provisioner","message":"creating node'
        ' claim, NodeClaim.karpenter.sh \\"default-ksfnj\\" is invalid: [spec.requirements[0].key: Invalid value: \\"'
        'string\\": label domain \\"karpenter.kwok.sh\\" is restricted, spec.requirements[1].key: Invalid value: '
        '\\"string\\": label domain \\"karpenter.kwok.sh\\" is restricted]","commit":"eb8040d-dirty"}\n',
        {'unsupported'}, ("the provider's own domain", 'CRDs in the cluster do not match the controller',
                          'karpenter-crd chart'),
        ('find the field the message names', 'a pod it was made for selects')),
}


@pytest.fixture(scope="module")
def load() -> CatalogFor:
    return catalog_loader(None, None)


@pytest.mark.parametrize("name", sorted(PASTES))
def test_real_paste(name: str, load: CatalogFor) -> None:
    check_paste(PASTES[name], load)


def test_the_sweep_cites_threads_not_cited_before() -> None:
    """Each thread once, and none the earlier sweeps cite."""
    check_new_threads(PASTES.values(), __file__)


def test_classic_dra_reserve_wait_is_the_hand_over_to_the_driver() -> None:
    """Classic DRA (1.26-1.30): Reserve published the chosen node and waits for the driver's controller
    (dynamicresources.go); it is said as that step, not as a plugin failure or 1.35's scoring bug."""
    line = ('  Warning  FailedScheduling  89m   default-scheduler  running Reserve plugin "DynamicResources": waiting '
            'for resource driver to allocate resource\n')
    (item,) = explain_text(line).item_list()
    assert "normal step of classic DRA" in item.plain and "controller is not allocating" in item.plain, item.plain
    assert "failed with an error" not in item.plain and "139016" not in item.plain, item.plain


def test_an_azure_pool_without_a_regional_zone_gets_azure_advice(load: CatalogFor) -> None:
    """An Azure pool's no-instance-type clause is never judged with EC2 types; without zone "0" the advice names
    Azure's size keys and `az vm list-skus`."""
    line = ('incompatible with nodepool "general", daemonset overhead={"cpu":"200m","memory":"300Mi","pods":"5"}, no '
            'instance type satisfied resources {"cpu":"9","memory":"40Gi","pods":"6"} and requirements '
            'karpenter.azure.com/sku-family In [D], karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In '
            '[general], kubernetes.io/arch In [amd64] (no instance type has enough resources)\n')
    explanation = explain_text(line)
    enrich(explanation, load)
    (item,) = explanation.item_list()
    assert "az vm list-skus" in item.plain and "Azure VM sizes" in item.plain, item.plain
    assert "xlarge" not in item.plain and "EC2" not in item.plain and 'zone "0"' not in item.plain, item.plain


def test_a_zonal_azure_disk_is_not_called_an_ebs_volume() -> None:
    """The volume line's key says whose disk it is: an Azure managed disk, and no EC2NodeClass subnets."""
    line = ('{"level":"DEBUG","time":"2025-01-02T03:04:05.000Z","logger":"controller.provisioner","message":"adding '
            'requirements derived from pod volumes, [{topology.disk.csi.azure.com/zone In [westeurope-2]}]","pod":'
            '"db/pg-0"}\n')
    (item,) = explain_text(line).item_list()
    assert "Azure managed disk" in item.plain and "westeurope-2" in item.plain, item.plain
    assert "EBS" not in item.plain and "EC2NodeClass" not in item.plain, item.plain


def test_a_nodepool_refused_for_a_provider_domain_names_that_domain() -> None:
    """A NodePool refused for a karpenter.k8s.aws key: the provider's well-known keys only (no AKS note)."""
    line = ('The NodePool "gpu" is invalid: spec.template.spec.requirements[2].key: Invalid value: "string": label '
            'domain "karpenter.k8s.aws" is restricted\n')
    (item,) = explain_text(line).item_list()
    assert "refused NodePool gpu itself" in item.plain and "karpenter.k8s.aws" in item.plain, item.plain
    assert "AKS" not in item.plain and "could not be scheduled" not in item.plain, item.plain


@pytest.mark.parametrize(("line", "says"), [
    ('The regional capacity limit for your subscription has been reached. To scale beyond this limit, please review '
     'the quota increase process here: https://learn.microsoft.com/en-us/azure/quotas/regional-quota-requests\n',
     "quota"),
    ("We're currently unable to allocate resources in the selected zone (westeurope-1). Karpenter will try a "
     "different zone to fulfill your request.\n", "in westeurope-1"),
])
def test_karpenter_azures_own_launch_errors_are_read(line: str, says: str) -> None:
    """The provider's own customer-facing launch errors (instance.go): a quota, a zone without capacity."""
    (item,) = explain_text(line).item_list()
    assert says in item.plain and "Nothing on the pod is wrong" in item.plain, item.plain


def test_no_ami_for_the_claims_types_is_not_called_an_ec2_refusal() -> None:
    """`no instance types satisfy requirements of amis` is Karpenter's own launch-template check, made before any
    EC2 call (launchtemplate.go): said as AMIs and instance types with no matching architecture or accelerator."""
    line = ('{"level":"ERROR","time":"2024-10-14T05:52:56.624Z","logger":"controller","message":"Reconciler error",'
            '"NodeClaim":{"name":"kafka-nodepool-7dd28"},"error":"launching nodeclaim, creating instance, getting launch '
            'template configs, getting launch templates, no instance types satisfy requirements of amis '
            '[ami-06d9bcac32f727ddb]"}\n')
    (item,) = explain_text(line).item_list()
    assert "never sent to EC2" in item.plain and "ami-06d9bcac32f727ddb" in item.plain, item.plain
    assert "architecture" in item.plain and "EC2 refused" not in item.plain, item.plain


def test_an_aws_error_with_an_azure_word_in_it_stays_an_aws_error() -> None:
    """The Azure dialect reads its own errors only: an EC2 launch error whose code contains QuotaExceeded is still
    EC2's refusal, never Azure's quota."""
    line = 'launching nodeclaim, creating instance, with fleet error(s), ServiceQuotaExceededException: limit\n'
    (item,) = explain_text(line).item_list()
    assert "EC2" in item.plain and "Azure" not in item.plain, item.plain
