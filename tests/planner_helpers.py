"""Small builders for planner tests: manifests and catalogs as YAML text, planned through the library API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from karpplan.catalog import load_catalog
from karpplan.model.build import load_inventory
from karpplan.plan import Plan, PreferencePolicy
from karpplan.planner import Engine, PlanOptions, make_plan

FAKE_CATALOG = """
apiVersion: karpplan.io/v1alpha1
kind: InstanceCatalog
metadata: {name: test}
zones: [zone-a, zone-b, zone-c]
instanceTypes:
  - name: small
    arch: amd64
    os: linux
    capacity: {cpu: "2", memory: 2Gi, pods: "5"}
    allocatable: {cpu: 1900m, memory: 2038Mi, pods: "5"}
    offerings:
      - {zone: zone-a, capacityType: on-demand, price: 0.4}
      - {zone: zone-b, capacityType: on-demand, price: 0.4}
      - {zone: zone-c, capacityType: on-demand, price: 0.4}
  - name: large
    arch: amd64
    os: linux
    capacity: {cpu: "4", memory: 4Gi, pods: "5"}
    allocatable: {cpu: 3900m, memory: 4086Mi, pods: "5"}
    offerings:
      - {zone: zone-a, capacityType: on-demand, price: 0.7}
      - {zone: zone-b, capacityType: on-demand, price: 0.7}
      - {zone: zone-c, capacityType: on-demand, price: 0.7}
"""

POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
"""


def plan_text(tmp_path: Path, manifests: str, *, catalog: str | None = FAKE_CATALOG, engine: Engine = "optimal",
              region: str | None = None, time_limit: float = 5.0, preferences: PreferencePolicy = "honour") -> Plan:
    """Plan manifests (YAML text) against a catalog (YAML text, or the embedded one when None)."""
    path = tmp_path / "manifests.yaml"
    path.write_text(textwrap.dedent(manifests))
    catalog_file = None
    if catalog is not None:
        catalog_path = tmp_path / "catalog.yaml"
        catalog_path.write_text(textwrap.dedent(catalog))
        catalog_file = str(catalog_path)
    inventory = load_inventory([str(path)])
    cat = load_catalog(region or inventory.region, catalog_file)
    return make_plan(inventory, cat, PlanOptions(engine=engine, time_limit=time_limit, preferences=preferences))


def node_of(plan: Plan, pod_key: str) -> str | None:
    return next((p.node for p in plan.pods if p.key == pod_key), None)


def nodes_by_name(plan: Plan) -> dict[str, object]:
    return {n.name: n for n in plan.nodes}


def deployment(name: str, replicas: int, cpu: str = "100m", extra: str = "", labels: str = "",
               memory: str = "64Mi") -> str:
    """A Deployment of `replicas` pods requesting `cpu` and `memory`; `extra` is YAML appended to the pod spec
    (indented six spaces), `labels` extra pod labels (', key: value' pairs)."""
    return f"""
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}{labels}}}}}
    spec:
      containers:
      - name: app
        image: nginx
        resources: {{requests: {{cpu: "{cpu}", memory: {memory}}}}}
{extra}"""


def existing_node(name: str, zone: str, cpu: str = "100m") -> str:
    """A Ready node in `zone` with `cpu` allocatable (8Gi, 110 pods), named by its hostname label."""
    return f"""
---
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{kubernetes.io/hostname: {name}, topology.kubernetes.io/zone: {zone}}}
status:
  allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}
"""


def bound_pod(name: str, app: str, node: str, cpu: str = "100m") -> str:
    """A pod labelled app=`app` already bound to `node`, requesting `cpu` and 64Mi."""
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: {app}}}}}
spec:
  nodeName: {node}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: {cpu}, memory: 64Mi}}}}}}]
"""


def plan_json(path: Path, *args: str, time_limit: str = "5") -> dict[str, Any]:
    """`karpplan plan PATH -o json` in a real process (the JSON contract is what these tests read)."""
    result = subprocess.run(
        [sys.executable, "-m", "karpplan.cli.main", "plan", str(path), "-o", "json", "--time-limit", time_limit, *args],
        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode in (0, 1, 3), result.stderr  # 3: the time limit cut the plan
    document: dict[str, Any] = json.loads(result.stdout)
    return document
