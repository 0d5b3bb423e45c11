"""A node whose instance type the region's embedded catalog has no price for (a game studio's g6.12xlarge in
ap-northeast-1, whose public prices predate g6): karpplan takes no action on it, says why in its own words, and
never shows its cost as $0. Before, the empty node was "Deleted through emptiness (saves $0.0000/h)", a non-empty
one was kept with Karpenter's own "Instance Type not found", and the JSON gave both an hourlyCost of 0.0."""

from __future__ import annotations

from pathlib import Path

import yaml
from test_consolidate_semantics import NODECLASS, node, nodepool, pod

from karpplan.consolidate.run import ConsolidateOptions, consolidate


def test_an_unpriced_node_is_not_acted_on_and_its_cost_is_not_zero(tmp_path: Path) -> None:
    docs = [nodepool(families=("g6", "m5")), NODECLASS,
            node("empty-gpu", "g6.12xlarge", zone="ap-northeast-1a"),
            node("busy", "m5.large", zone="ap-northeast-1a"), pod("web-1", "busy")]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    report = consolidate(ConsolidateOptions(paths=(str(path),), region="ap-northeast-1", time_limit=2.0))
    assert not any(n.name == "empty-gpu" for a in report.actions for n in a.nodes)
    verdict = next(v for v in report.nodes if v.node.name == "empty-gpu")
    assert verdict.reason.startswith('Instance Type "g6.12xlarge" not found in karpplan\'s catalog (no price here)')
    assert "Karpenter, which has its price, may consolidate it" in verdict.reason
    doc = report.to_document()
    (gpu,) = [n for n in doc["nodes"] if n["name"] == "empty-gpu"]
    assert gpu["hourlyCost"] is None
    assert any("g6.12xlarge" in w and "lacks" in w for w in report.warnings)
