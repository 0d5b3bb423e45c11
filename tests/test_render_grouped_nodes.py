"""Alike new nodes share one `×N` row of the plan's table (render/node_rows.py): a plan of thirty identical
nodes reads in a few lines, while `-o json` lists every node. Golden files: tests/golden/plan-table-grouped*.txt
(UPDATE_GOLDEN=1 rewrites them).
"""

from __future__ import annotations

import json
from dataclasses import replace

from test_render_plan import GIB, AsciiFile, check_golden, node_labels, pod, res, table_text, with_summary

from karpplan.plan import Plan, PlanNode, Summary
from karpplan.render.documents import render_json
from karpplan.render.node_rows import names_range


def new_node(name: str, zone: str, pods: tuple[str, ...], *, pool: str = "default", type_: str = "m5.large",
             capacity: str = "on-demand", price: float = 0.096, requested_cpu: int = 1750,
             allocatable_cpu: int = 1930) -> PlanNode:
    return PlanNode(name, True, pool, type_, zone, capacity, price, False, node_labels(name, zone), (),
                    res(allocatable_cpu, 7 * GIB, 29), res(requested_cpu, 2 * GIB, len(pods)), res(100, 128 * GIB // 1024),
                    pods)


def thirty_alike() -> Plan:
    """30 alike m5.large nodes (web x3, api each), one m5.large with other pods, two alike spot nodes."""
    pods = []
    nodes = []
    for i in range(1, 31):
        name = f"default-m5-large-us-east-1a-{i}"
        keys = []
        for j in range(3):
            pods.append(pod(f"web-{i}-{j}", "Deployment/web", name))
            keys.append(f"default/web-{i}-{j}")
        pods.append(pod(f"api-{i}", "Deployment/api", name, cpu=250))
        keys.append(f"default/api-{i}")
        nodes.append(new_node(name, "us-east-1a", tuple(keys)))
    odd = "default-m5-large-us-east-1a-31"
    pods.append(pod("api-31", "Deployment/api", odd, cpu=250))
    nodes.append(new_node(odd, "us-east-1a", ("default/api-31",), requested_cpu=350))
    for i in (1, 2):
        name = f"batch-c5-xlarge-us-east-1b-{i}"
        pods.append(pod(f"cruncher-{i}", "StatefulSet/cruncher", name, cpu=3000))
        nodes.append(new_node(name, "us-east-1b", (f"default/cruncher-{i}",), pool="batch", type_="c5.xlarge",
                              capacity="spot", price=0.0681, requested_cpu=3100, allocatable_cpu=3920))
    cost = sum(n.hourly_price for n in nodes)
    summary = Summary(pods=len(pods), scheduled=len(pods), unschedulable=0, gated=0, bound=0,
                      new_nodes=len(nodes), hourly_cost=cost, lower_bound=cost, engine="karpenter",
                      status="feasible", solve_seconds=0.5, region="us-east-1", catalog="aws-embedded",
                      spot_prices="file:spot.json")
    return Plan(summary, tuple(nodes), tuple(pods), (), ())


def test_thirty_alike_nodes_read_in_one_row_at_120_columns() -> None:
    text = table_text(thirty_alike())
    check_golden("plan-table-grouped.txt", text)
    assert "Nodes (33) by zone" in text and "NEW ×30" in text and "NEW ×2" in text
    assert "default-m5-large-us-east-1a-1..30" in text and "default-m5-large-us-east-1a-31" in text
    assert len(text.splitlines()) < 30  # a row each: two lines per node, over 70 lines


def test_grouped_rows_at_80_columns_in_ascii() -> None:
    text = table_text(thirty_alike(), width=80, file=AsciiFile())
    check_golden("plan-table-grouped-80.txt", text)
    assert "NEW x30" in text and "\u00d7" not in text


def test_json_still_lists_every_node() -> None:
    document = json.loads(render_json(thirty_alike()))
    assert len(document["nodes"]) == 33
    assert len({n["name"] for n in document["nodes"]}) == 33


def test_nodes_that_differ_in_anything_shown_keep_their_own_rows() -> None:
    plan = thirty_alike()
    first, second = plan.nodes[0], plan.nodes[1]
    changes = {"zone": "us-east-1b", "capacity_type": "spot", "instance_type": "m5.xlarge", "node_pool": "other",
               "hourly_price": 0.1, "price_estimated": True, "requested": res(1, 1, 1)}
    for field, value in changes.items():
        two = replace(plan, nodes=(first, replace(second, **{field: value})))
        text = table_text(with_summary(two, new_nodes=2))
        assert "\u00d72" not in text, field
    alike = table_text(with_summary(replace(plan, nodes=(first, second)), new_nodes=2))
    assert "NEW ×2" in alike


def test_existing_nodes_are_never_folded() -> None:
    plan = thirty_alike()
    existing = tuple(replace(n, new=False, hourly_price=0.0) for n in plan.nodes[:3])
    text = table_text(with_summary(replace(plan, nodes=existing), new_nodes=0))
    assert "×" not in text
    assert [line.split()[:2] for line in text.splitlines() if line.startswith("default-m5")] == [
        [f"default-m5-large-us-east-1a-{i}", "existing"] for i in (1, 2, 3)]


def test_a_range_of_names_keeps_whole_numbers() -> None:
    assert names_range([f"default-m5-large-1a-{i}" for i in range(10, 20)]) == "default-m5-large-1a-10..19"
    assert names_range(["a-1", "a-2"]) == "a-1..2"
    assert names_range(["alpha", "zulu-node"]) == "alpha.."
    assert names_range(["only"]) == "only"
    # Six nodes whose ordinals skip one (another row holds node 4) never read as 1..7.
    assert names_range([f"spot-c7a-1a-{i}" for i in (1, 2, 3, 5, 6, 7)]) == "spot-c7a-1a-1..3,5..7"
    assert names_range([f"p-{i}" for i in (1, 3, 5, 7, 9)]) == "p-1,3,5,…"
