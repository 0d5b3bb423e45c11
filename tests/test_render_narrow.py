"""The plan's table at 80 columns on real names: Argo CD's and kube-prometheus' workloads, a NodePool named
`limitcpu100`, EC2 node names, an eu-central-1 zone. Names wrap between words or after their separators, never in
the middle of a word (rich's own folding printed `argocd-applicationse` / `t-controller`, `node-exporter-` / `0`
and `eu-central-1a (4` / `nodes)`)."""

from __future__ import annotations

import re

from karpplan.plan import Plan, PlanNode, Summary
from karpplan.render.wrap import wrap_words
from tests.test_render_plan import GIB, MIB, check_golden, node_labels, pod, res, table_text

ARGO = ("argocd-applicationset-controller", "argocd-notifications-controller", "argocd-redis-ha-haproxy",
        "argocd-redis-ha-server", "argocd-repo-server", "argocd-server", "argocd-dex-server")


def argo_plan() -> Plan:
    new = "limitcpu100-c6a-4xlarge-eu-central-1a-1"
    existing = "ip-10-0-1-21.eu-central-1.compute.internal"
    spot = "spot-c5a-xlarge-eu-central-1b-2"
    pods = (
        *(pod(f"{name}-0", f"Deployment/{name}", new, cpu=100) for name in ARGO),
        pod("cassandra-0", "StatefulSet/cassandra", new, namespace="data", cpu=1000, memory=4 * GIB),
        pod("cassandra-1", "StatefulSet/cassandra", new, namespace="data", cpu=1000, memory=4 * GIB),
        pod("node-exporter-0", "", existing, bound=True, namespace="monitoring", cpu=100),
        pod("grafana-7d9f-abcde", "", existing, bound=True, namespace="monitoring", cpu=100),
        pod("kube-state-metrics-5c4-xyz", "", existing, bound=True, namespace="monitoring", cpu=100),
        pod("web-0", "Deployment/web", existing, namespace="shop", cpu=1000),
        pod("web-1", "Deployment/web", spot, namespace="shop", cpu=1000),
    )
    keys = [p.key for p in pods]
    nodes = (
        PlanNode(new, True, "limitcpu100", "c6a.4xlarge", "eu-central-1a", "on-demand", 0.612, False,
                 node_labels(new, "eu-central-1a"), (), res(15890, 29 * GIB, 234), res(2700, 8 * GIB + 700 * MIB, 9),
                 res(100, 128 * MIB), tuple(keys[:9])),
        PlanNode(existing, False, "limitcpu100", "m5.2xlarge", "eu-central-1a", "on-demand", 0.0, False,
                 node_labels(existing, "eu-central-1a"), (), res(7910, 29 * GIB, 58), res(1300, 2 * GIB, 4),
                 res(100, 128 * MIB), tuple(keys[9:13])),
        PlanNode(spot, True, "spot", "c5a.xlarge", "eu-central-1b", "spot", 0.0696, True,
                 node_labels(spot, "eu-central-1b"), (), res(3920, 6 * GIB, 58), res(1000, 512 * MIB, 1),
                 res(100, 0), (keys[13],)),
    )
    summary = Summary(
        pods=14, scheduled=14, unschedulable=0, gated=0, bound=3, new_nodes=2, hourly_cost=0.6816,
        lower_bound=0.6816, engine="optimal", status="optimal", solve_seconds=0.8, region="eu-central-1",
        catalog="aws-eu-central-1", karpenter_cost=0.7, karpenter_new_nodes=2, karpenter_scheduled=14,
        karpenter_batches=1, estimated_prices=True, seed=0, time_limit=10.0, bound_source="configuration-lp",
        spot_prices="estimated: 0.4 x on-demand",
    )
    return Plan(summary, nodes, pods, (), ())


def test_real_names_at_80_columns_match_the_golden_file() -> None:
    check_golden("plan-table-80-names.txt", table_text(argo_plan(), width=80))


def test_no_name_is_broken_inside_a_word_at_80_columns() -> None:
    text = table_text(argo_plan(), width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    body = text.split("\n\n")[0].splitlines()[3:]  # the nodes table below its header
    cells = [line[:22].strip() for line in body if line[:22].strip()]
    for above, below in zip(body, body[1:], strict=False):
        first_of_row = "existing" in below[22:34] or "NEW" in below[22:34]
        same_part = above.startswith("  ") == below.startswith("  ")  # a node's name, or its workloads
        if above[:22].strip() and below[:22].strip() and same_part and not first_of_row:
            a, b = above[:22].strip(), below[:22].strip()
            assert not (a[-1].isalnum() and b[0].isalnum()), f"{a!r} / {b!r} breaks a word"
    joined = "".join(cells)  # lines broken after a separator join back into the whole name
    for name in (*ARGO[:2], "monitoring/kube-state-metrics-5c4-xyz", "limitcpu100-c6a-4xlarge-1"):
        assert name in joined
    assert re.search(r"^eu-central-1a +\$0\.6120 +13\n\(2 nodes, 1 new\)\n", text, re.M)


def test_wrap_words_breaks_between_words_then_after_separators() -> None:
    assert wrap_words("argocd-applicationset-controller, argocd-dex-server", 20) == [
        "argocd-", "applicationset-", "controller,", "argocd-dex-server"]
    assert wrap_words("monitoring/kube-state-metrics-5c4-xyz", 20) == ["monitoring/", "kube-state-metrics-", "5c4-xyz"]
    assert wrap_words("monitoring/node-exporter-0", 20) == ["monitoring/", "node-exporter-0"]
    assert wrap_words("web\u00a0x2, +3\u00a0more", 8) == ["web x2,", "+3 more"]
    assert wrap_words("a" * 30, 10) == ["a" * 9 + "…"]
    assert wrap_words("a" * 30, 10, ascii_only=True) == ["a" * 9 + "~"]
