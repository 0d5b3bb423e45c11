"""When an extended resource no allowed type offers is the whole cause, the answer quotes that resource alone:
the pod's CPU and memory are beside the point (issue 25 item 2)."""

from __future__ import annotations

from karpplan.explain.enrich import catalog_loader, enrich
from karpplan.explain.report import explain_text

# https://github.com/aws/karpenter-provider-aws/issues/2899 (v0.19 console, github.com/fuse; the requirements shortened)
FUSE = ('2022-12-05T09:58:42.908Z\tERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with '
        'provisioner "internal-services-tenant", no instance type satisfied resources {"cpu":"7","github.com/fuse":"4",'
        '"memory":"8692Mi","pods":"1"} and requirements node.kubernetes.io/instance-type In [m5d.2xlarge m5d.4xlarge '
        'm5d.xlarge], topology.kubernetes.io/zone In [eu-central-1a eu-central-1b eu-central-1c], kubernetes.io/arch '
        'In [amd64]\t{"commit": "27a51c0", "pod": "runners/runner-0"}')
GPU = ('{"level":"ERROR","time":"2024-05-01T10:00:00Z","logger":"controller","message":"could not schedule pod","Pod":'
       '{"name":"gpu-0","namespace":"ml"},"error":"incompatible with nodepool \\"gpu\\", daemonset overhead={\\"cpu\\":'
       '\\"405m\\"}, no instance type satisfied resources {\\"cpu\\":\\"1405m\\",\\"memory\\":\\"2788Mi\\",'
       '\\"nvidia.com/gpu\\":\\"1\\",\\"pods\\":\\"7\\"} and requirements karpenter.k8s.aws/instance-family In [m5 c5], '
       'kubernetes.io/arch In [amd64] (no instance type has enough resources)"}')


def _no_type_plain(log: str) -> str:
    out = explain_text(log)
    enrich(out, catalog_loader(None, None))
    [item] = out.item_list()
    return next(r.plain for r in item.all_reasons() if r.kind == "no-instance-type")


def test_a_resource_no_type_reports_is_quoted_alone() -> None:
    plain = _no_type_plain(FUSE)
    assert "it asks for github.com/fuse 4 under" in plain
    assert "cpu 7" not in plain and "8692Mi" not in plain


def test_a_gpu_no_allowed_family_offers_is_quoted_alone_with_the_types_that_would() -> None:
    plain = _no_type_plain(GPU)
    assert "it asks for nvidia.com/gpu 1 under" in plain and "1405m" not in plain
    assert "g4dn.xlarge" in plain


def test_a_pod_too_big_still_quotes_cpu_and_memory() -> None:
    big = GPU.replace('\\"nvidia.com/gpu\\":\\"1\\",', "").replace('\\"1405m\\"', '\\"900\\"')
    plain = _no_type_plain(big)
    assert "cpu 900" in plain and "(with DaemonSet overhead)" in plain


# security groups for pods on a NodePool that allows only t3 types (not trunking compatible: no branch interfaces)
POD_ENI_T3 = GPU.replace('\\"nvidia.com/gpu\\":\\"1\\"', '\\"vpc.amazonaws.com/pod-eni\\":\\"1\\"').replace(
    "karpenter.k8s.aws/instance-family In [m5 c5]", "karpenter.k8s.aws/instance-family In [t3]")


def test_pod_eni_names_the_branch_interface_limit_and_the_types_without_one() -> None:
    """A pod with a security group needs a branch interface: t3 has none, m5.large 9; the answer says so and sends
    the pod to a trunking-compatible type, not to smaller requests."""
    plain = _no_type_plain(POD_ENI_T3)
    assert "branch-interface limit" in plain and "m5.large 9" in plain
    assert "t3 and t4g" in plain and "not trunking compatible" in plain
    assert "has-trunk-attached" in plain


def test_pod_eni_on_full_nodes_asks_for_another_node() -> None:
    """`Insufficient vpc.amazonaws.com/pod-eni` on existing nodes: every branch interface is taken."""
    [item] = explain_text("0/12 nodes are available: 12 Insufficient vpc.amazonaws.com/pod-eni.\n").item_list()
    assert "the pod needs another node or a larger type, not smaller requests" in item.plain


def test_the_types_that_would_offer_it_keep_the_pods_architecture() -> None:
    """The pool asks kubernetes.io/arch In [amd64]: an arm64 type (a1, c6g, c7g) offering pod-eni is no fix."""
    plain = _no_type_plain(POD_ENI_T3)
    would = plain.split("though these would: ", 1)[1].split(".", 1)[0]
    assert would and not any(arm in would for arm in ("a1.", "c6g.", "c7g.", "m6g.", "t4g."))
