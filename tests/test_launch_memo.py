"""The launch options of the same inputs are built once: a plan's second problem and its steady state reuse them,
and a change the options would show (the custom label values pods ask for, another catalog) builds them anew."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from karpplan.catalog import instance_types_for, load_catalog, node_labels
from karpplan.catalog.types import Catalog
from karpplan.model.build import load_inventory
from karpplan.model.inventory import Inventory
from karpplan.model.pools import order_by_weight
from karpplan.scheduling.candidates import LaunchOption, build_launch_options
from karpplan.scheduling.launch_memo import launch_options

POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      requirements:
      - {key: example.com/team, operator: Exists}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec: {amiSelectorTerms: [{alias: al2023@latest}]}
"""

APP = """
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {example.com/team: TEAM}
      containers:
      - {name: c, image: x, resources: {requests: {cpu: 500m, memory: 512Mi}}}
"""


def _inventory(tmp_path: Path, team: str) -> Inventory:
    path = tmp_path / f"{team}.yaml"
    path.write_text(POOL + APP.replace("TEAM", team))
    return load_inventory([str(path)])


def _options(inv: Inventory, catalog: Catalog) -> list[LaunchOption]:
    return launch_options(order_by_weight(list(inv.nodepools)), inv.nodeclasses, catalog, inv.daemonsets, inv.pending,
                          instance_types_for, node_labels)


def test_the_same_inputs_reuse_the_options_and_other_inputs_build_them(tmp_path: Path) -> None:
    catalog = load_catalog(None, None)
    red = _inventory(tmp_path, "red")
    first = _options(red, catalog)
    again = _options(red, catalog)
    assert first and again == first and all(a is b for a, b in zip(first, again, strict=True))
    assert again is not first  # a copy of the list: a caller may extend its own
    fresh = build_launch_options(order_by_weight(list(red.nodepools)), red.nodeclasses, catalog, red.daemonsets,
                                 red.pending, instance_types_for, node_labels)
    assert [(o.index, o.instance_type.name, o.zone, o.capacity_type, dict(o.labels)) for o in first] == \
        [(o.index, o.instance_type.name, o.zone, o.capacity_type, dict(o.labels)) for o in fresh]
    # Pods asking for another value of the pool's open custom key: nodes with that label, not the cached ones.
    blue = _options(_inventory(tmp_path, "blue"), catalog)
    teams = {o.labels["example.com/team"] for o in blue}
    assert "blue" in teams and "red" not in teams
    assert "red" in {o.labels["example.com/team"] for o in first}
    # Another catalog object (a NodeOverlay's, say) is never answered from the first one's options.
    other = replace(catalog)
    rebuilt = _options(red, other)
    assert rebuilt and all(a is not b for a, b in zip(rebuilt, first, strict=False))
