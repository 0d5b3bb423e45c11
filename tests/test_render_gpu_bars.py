"""A GPU node's bars show its GPUs beside CPU and memory: a game studio's g6.12xlarge with all 4 GPUs taken read
"cpu 25% / mem 28%", an invitation to right-size a node that is full."""

from __future__ import annotations

from dataclasses import replace

from karpplan.model.resources import Resources
from tests.test_render_plan import sample_plan, table_text


def _with_gpus(used: int) -> str:
    plan = sample_plan()
    node = plan.nodes[0]
    gpu = replace(node, allocatable=node.allocatable + Resources({"nvidia.com/gpu": 4}),
                  requested=node.requested + Resources({"nvidia.com/gpu": used}))
    return table_text(replace(plan, nodes=(gpu, *plan.nodes[1:])), width=80)


def test_a_gpu_node_shows_a_gpu_bar_and_others_do_not() -> None:
    text = _with_gpus(4)
    lines = [line for line in text.splitlines() if "gpu " in line]
    assert len(lines) == 1 and lines[0].rstrip().endswith("100%"), lines
    assert "gpu " not in table_text(sample_plan(), width=80)
    assert [line for line in _with_gpus(1).splitlines() if "gpu " in line][0].rstrip().endswith("25%")
