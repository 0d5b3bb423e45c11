"""A NodeOverlay's price changed by a review (a game studio's `priceAdjustment: +45%` -> `+90%` on its spot pool):
the diff names the overlay and says its price steers Karpenter's choice, not a bill. Before, the diff said only
"+31.0%" and "spot-general unchanged", and failed a --fail-on-increase gate on a change AWS would not bill."""

from __future__ import annotations

import json
from pathlib import Path

from diff_helpers import deployment, karpplan, write
from manifests import CAPACITY_TYPE, ZONE, ec2nodeclass, nodepool

OVERLAY = """\
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {{name: penalise}}
spec:
  weight: 10
  requirements:
    - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
  priceAdjustment: "{adjustment}"
"""


def test_a_changed_overlay_price_is_named_and_said_not_to_be_a_bill(tmp_path: Path) -> None:
    pool = "---\n".join([nodepool("default", requirements={CAPACITY_TYPE: ("on-demand",), ZONE: ("us-east-1a",)}),
                         ec2nodeclass()])
    write(tmp_path / "base" / "all.yaml", pool, OVERLAY.format(adjustment="+10%"), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool, OVERLAY.format(adjustment="+50%"), deployment("web", 2))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    doc = json.loads(out.stdout)
    assert doc["delta"]["hourlyCost"] > 0  # the plans price the overlaid offerings as Karpenter's simulation does
    (note,) = [n for n in doc["notes"] if n.startswith("NodeOverlay penalise")]
    assert "changed (spec.priceAdjustment: +10% -> +50%)" in note
    assert "not a bill" in note


def test_an_unchanged_overlay_is_not_said(tmp_path: Path) -> None:
    pool = "---\n".join([nodepool("default", requirements={CAPACITY_TYPE: ("on-demand",), ZONE: ("us-east-1a",)}),
                         ec2nodeclass()])
    write(tmp_path / "base" / "all.yaml", pool, OVERLAY.format(adjustment="+10%"), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool, OVERLAY.format(adjustment="+10%"), deployment("web", 3))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    assert not [n for n in json.loads(out.stdout)["notes"] if "NodeOverlay" in n]
