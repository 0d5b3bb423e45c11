"""What a region's embedded catalog lacks is said wherever an answer depends on it: `catalog --info` states each
region's coverage and the date of its prices, a listing names the types it leaves out, and a plan whose static
NodePool allows only such types says the catalog lacks them (not that the pool launches none) and what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from karpplan.catalog import load_catalog
from karpplan.catalog.coverage import lacking_types, region_coverage
from karpplan.cli.main import app
from karpplan.model.requirements import Requirement, Requirements
from tests.planner_helpers import plan_text

STATIC_GPU_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu-static}
spec:
  replicas: 1
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: ["g6e.8xlarge"]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
"""


def catalog(*args: str, columns: int = 4000) -> Any:
    """`karpplan catalog ARGS` on a terminal `columns` wide (wide by default: one note per line)."""
    return CliRunner().invoke(app, ["catalog", *args], env={"COLUMNS": str(columns)})


def test_info_and_notes_fit_an_80_column_terminal(tmp_path: Path) -> None:
    pools = tmp_path / "pools.yaml"
    pools.write_text(STATIC_GPU_POOL)
    for args in (("--region", "us-west-2", "--info"), ("--region", "us-west-2", str(pools))):
        result = catalog(*args, columns=80)
        assert result.exit_code == 0
        notes = [line for line in result.stdout.splitlines() if not line.startswith("NAME ")]  # rows stay whole
        assert max(len(line) for line in notes) <= 80
        said = " ".join(result.stdout.split())  # the wrapped text, read as one
        assert "`karpplan catalog refresh --region us-west-2` writes one from AWS" in said


def test_info_states_the_regions_coverage_its_date_and_the_remedy() -> None:
    result = catalog("--region", "us-west-2", "--info")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("coverage:"))
    known = region_coverage("us-west-2").known
    assert f"523 of {known} known instance types priced in us-west-2" in line
    assert "as of 2022-09-03" in line
    assert "c7i" in line and "families" in line  # what is missing, by family
    assert "karpplan catalog refresh --region us-west-2" in line and "--allow-estimated-prices" in line
    # every embedded region, with its coverage and the date of its prices
    rows = {x.split()[0]: x for x in result.stdout.splitlines() if x.startswith("  ")}
    assert rows["us-east-1"].split()[1:4] == ["1345", "of", str(known)] and "2026-07-20" in rows["us-east-1"]
    assert "2022-09-03" in rows["eu-central-1"] and len(rows) >= 21


def test_info_json_carries_the_coverage() -> None:
    data = json.loads(catalog("--region", "eu-central-1", "--info", "-o", "json").stdout)
    assert data["coverage"]["priced"] < data["coverage"]["known"]
    assert {"c7g", "m7g", "c7i"} <= set(data["coverage"]["missingFamilies"])
    assert {r["region"] for r in data["regions"]} >= {"us-east-1", "us-west-2", "eu-central-1"}


def test_a_listing_names_the_types_the_region_lacks(tmp_path: Path) -> None:
    pools = tmp_path / "pools.yaml"
    pools.write_text(STATIC_GPU_POOL)
    result = catalog("--region", "us-west-2", str(pools))
    assert result.exit_code == 0
    footer = result.stdout.splitlines()[-1]
    assert footer.startswith("not listed (NodePool gpu-static allows it): g6e.8xlarge, which the embedded "
                             "us-west-2 catalog lacks")
    assert "--catalog FILE" in footer
    doc = json.loads(catalog("--region", "us-west-2", str(pools), "-o", "json").stdout)
    assert doc["count"] == 0 and doc["lacking"] == ["g6e.8xlarge"]
    # in us-east-1 the type is there: nothing is said
    assert "not listed" not in catalog("--region", "us-east-1", str(pools)).stdout


def test_lacking_types_follow_the_requirements_and_are_none_where_the_region_prices_them() -> None:
    west = load_catalog("eu-central-1")
    family = Requirements([Requirement("karpenter.k8s.aws/instance-family", frozenset(["c7g"]))])
    lacking = lacking_types(west, family)
    assert "c7g.medium" in lacking and all(n.startswith("c7g.") for n in lacking)
    assert lacking_types(load_catalog("us-east-1"), family) == []


def test_a_static_pool_of_types_the_region_lacks_says_so_and_how_to_plan_it(tmp_path: Path) -> None:
    plan = plan_text(tmp_path, STATIC_GPU_POOL, catalog=None, region="us-west-2")
    warning = next(w for w in plan.warnings if "NodePool gpu-static is static" in w)
    assert "g6e.8xlarge, which the embedded us-west-2 catalog lacks" in warning
    assert "not planned and not in the plan's cost" in warning
    assert "--catalog FILE" in warning and "karpplan catalog refresh --region us-west-2" in warning
    assert "no instance type of the catalog meets" not in warning
    # where the catalog has the type, the node is planned
    east = plan_text(tmp_path, STATIC_GPU_POOL, catalog=None, region="us-east-1")
    assert any("g6e.8xlarge" in n.instance_type for n in east.nodes if n.instance_type)


DYNAMIC_GPU_POOL = STATIC_GPU_POOL.replace("  replicas: 1\n", "").replace(
    "node.kubernetes.io/instance-type, operator: In, values: [\"g6e.8xlarge\"]",
    "karpenter.k8s.aws/instance-family, operator: In, values: [\"g6e\"]") + """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: infer, namespace: ml}
spec:
  replicas: 1
  selector: {matchLabels: {app: infer}}
  template:
    metadata: {labels: {app: infer}}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists}]
      containers:
        - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}, requests: {cpu: "4", memory: 16Gi}}}
"""


def test_a_pool_of_types_the_region_lacks_is_said_beside_its_unschedulable_pods(tmp_path: Path) -> None:
    plan = plan_text(tmp_path, DYNAMIC_GPU_POOL, catalog=None, region="us-west-2")
    assert [u.pod for u in plan.unschedulable] == ["ml/infer-0"]
    warning = next(w for w in plan.warnings if "NodePool gpu-static launches nothing" in w)
    assert "g6e.8xlarge" in warning and "which the embedded us-west-2 catalog lacks" in warning
    assert "--catalog FILE" in warning and "--allow-estimated-prices" in warning
    # in us-east-1 the pool launches, and nothing is said
    east = plan_text(tmp_path, DYNAMIC_GPU_POOL, catalog=None, region="us-east-1")
    assert not east.unschedulable and not any("launches nothing" in w for w in east.warnings)


GRAVITON_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: graviton}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [c7g, m7g, m6g]}
"""


def test_a_plan_names_the_families_its_pools_allow_that_the_region_does_not_price(tmp_path: Path) -> None:
    # eu-central-1's public list (2022) has m6g but no c7g or m7g: a new user's Graviton pool was planned on m6g
    # alone, against a Karpenter baseline held to the same, and the summary said only "371 of 1363 types priced".
    from karpplan.catalog.coverage import plan_coverage
    from karpplan.model.build import load_inventory

    (tmp_path / "pool.yaml").write_text(GRAVITON_POOL)
    region = "eu-central-1"
    assert {"c7g", "m7g"} <= set(region_coverage(region).missing_families)
    assert "m6g" not in region_coverage(region).missing_families
    pools = load_inventory([str(tmp_path / "pool.yaml")]).nodepools
    line = plan_coverage(load_catalog(region, None), pools)
    assert "the NodePools also allow 2 families unpriced here (c7g, m7g)" in line
    assert "Karpenter baseline both leave out" in line
    assert "families unpriced" not in plan_coverage(load_catalog(region, None), ())
    assert plan_coverage(load_catalog("us-east-1", None), pools) == ""  # us-east-1 prices (nearly) all


NVME_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: nvme}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: nvme}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [i4i]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: nvme}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  instanceStorePolicy: RAID0
---
apiVersion: v1
kind: Pod
metadata: {name: cache}
spec:
  containers:
    - name: c
      image: redis
      resources: {requests: {cpu: "2", memory: 8Gi, ephemeral-storage: 400Gi}}
"""


def test_a_pod_asking_for_instance_store_on_types_the_region_lacks_is_told_the_catalogs_gap(tmp_path: Path) -> None:
    # A game studio's NVMe cache (400Gi ephemeral storage on i4i, RAID0) in ap-northeast-1, whose prices predate
    # i4i: the reason said only "no instance type met ... enough resources", as if the storage could not fit.
    path = tmp_path / "nvme.yaml"
    path.write_text(NVME_POOL)
    result = CliRunner().invoke(app, ["plan", str(path), "--region", "ap-northeast-1", "-o", "json"])
    assert result.exit_code == 1
    (pod,) = json.loads(result.stdout)["unschedulable"]
    assert pod["reasons"][0].startswith("no type with a price here fits the pod: its NodePools allow")
    assert "i4i" in pod["reasons"][0]
