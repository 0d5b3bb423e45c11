"""`karpplan catalog`: listing, pool-aware filtering, daemon overhead, --info, and exit codes."""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from karpplan.catalog import load_catalog
from karpplan.cli.main import app

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
"""

DAEMONSETS = """\
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      tolerations: [{operator: Exists}]
      containers: [{name: a, image: agent, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: arm-only, namespace: kube-system}
spec:
  selector: {matchLabels: {app: arm}}
  template:
    metadata: {labels: {app: arm}}
    spec:
      nodeSelector: {kubernetes.io/arch: arm64}
      containers: [{name: a, image: arm, resources: {requests: {cpu: "1"}}}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: gpu-only, namespace: kube-system}
spec:
  selector: {matchLabels: {app: gpu}}
  template:
    metadata: {labels: {app: gpu}}
    spec:
      nodeSelector: {gpu: "true"}
      containers: [{name: a, image: gpu, resources: {requests: {cpu: "1"}}}]
"""


def run(*args: str) -> Any:
    """`karpplan catalog ARGS` on a wide terminal: each of the listing's notes on one line."""
    return CliRunner().invoke(app, ["catalog", *args], env={"COLUMNS": "4000"})


def listing(*args: str) -> dict[str, Any]:
    result = run(*args, "-o", "json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def manifests(tmp_path: Path, text: str) -> str:
    path = tmp_path / "manifests.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_prices_per_region() -> None:
    seoul = {t["name"]: t for t in listing("--region", "ap-northeast-2")["instanceTypes"]}
    on_demand = {o["price"] for o in seoul["m5.large"]["offerings"] if o["capacityType"] == "on-demand"}
    assert on_demand == {0.118}
    assert {o["price"] for o in seoul["t3a.micro"]["offerings"] if o["capacityType"] == "on-demand"} == {0.0117}
    assert seoul["m5.large"]["allocatable"] == {
        "cpu": "1930m",
        "ephemeral-storage": "17Gi",
        "memory": "6903Mi",
        "pods": "29",
        "vpc.amazonaws.com/pod-eni": "9",
    }


def test_cheapest_first_and_pod_size_filter() -> None:
    data = listing("--cpu", "2", "--memory", "4Gi")
    prices = [t["price"] for t in data["instanceTypes"]]
    assert prices == sorted(prices)
    assert data["request"] == {"cpu": "2", "memory": "4Gi", "pods": "1"}
    names = {t["name"] for t in data["instanceTypes"]}
    assert "m5.large" not in names  # 1930m allocatable < 2 CPUs
    assert "m5.xlarge" in names
    for t in data["instanceTypes"]:
        alloc = t["allocatable"]
        assert load_catalog(None).by_name()[t["name"]].allocatable["cpu"] >= 2000, alloc


def test_nodepool_requirements_select_exactly_the_matching_types(tmp_path: Path) -> None:
    path = manifests(tmp_path, POOL)
    data = listing("--nodepool", "general", path)
    got = {t["name"] for t in data["instanceTypes"]}
    csv_path = SHARED_DATA / "ec2-instance-types.csv"
    if not csv_path.exists():
        pytest.skip("../shared/data is not available")
    priced = {it.name for it in load_catalog("us-east-1").instance_types}
    with csv_path.open(newline="") as fh:
        expected = {
            row["name"]
            for row in csv.DictReader(fh)
            if row["category"] in ("c", "m", "r") and int(row["generation"]) > 4 and row["name"] in priced
        }
    assert got == expected
    assert data["nodepool"] == "general"


def test_options_may_follow_the_paths_and_the_only_pool_is_used(tmp_path: Path) -> None:
    path = manifests(tmp_path, POOL)
    data = listing(path, "--cpu", "4", "--region", "eu-west-1")
    assert data["nodepool"] == "general"
    assert data["catalog"]["region"] == "eu-west-1"
    assert all(t["name"].split(".")[0][0] in "cmr" for t in data["instanceTypes"])


def test_daemon_overhead_counts_only_daemonsets_that_would_run(tmp_path: Path) -> None:
    path = manifests(tmp_path, POOL + DAEMONSETS)
    types = {t["name"]: t for t in listing("--nodepool", "general", path, "--cpu", "1")["instanceTypes"]}
    m6g = types["m6g.xlarge"]  # arm64: agent + arm-only
    assert m6g["daemonOverhead"] == {"cpu": "1500m", "memory": "512Mi", "pods": "2"}
    assert sorted(m6g["daemonSets"]) == ["kube-system/agent", "kube-system/arm-only"]
    # 1 CPU + 1.5 CPUs of daemons exceed m6g.large's 1930m, though 1 CPU + the agent would fit it.
    assert "m6g.large" not in types
    m5 = types["m5.large"]
    assert m5["daemonSets"] == ["kube-system/agent"]  # gpu-only needs a label the pool never sets
    assert m5["daemonOverhead"] == {"cpu": "500m", "memory": "512Mi", "pods": "1"}


def test_taints_keep_intolerant_daemonsets_off(tmp_path: Path) -> None:
    tainted = POOL.replace(
        "      requirements:", "      taints: [{key: dedicated, value: x, effect: NoSchedule}]\n      requirements:"
    )
    path = manifests(tmp_path, tainted + DAEMONSETS)
    types = {t["name"]: t for t in listing(path)["instanceTypes"]}
    assert types["m6g.large"]["daemonSets"] == ["kube-system/agent"]  # arm-only does not tolerate the taint


def test_kubelet_settings_of_the_node_class_apply(tmp_path: Path) -> None:
    path = manifests(tmp_path, POOL + "  kubelet: {maxPods: 110}\n")
    types = {t["name"]: t for t in listing(path)["instanceTypes"]}
    assert types["m5.large"]["maxPods"] == 110
    assert types["m5.large"]["allocatable"]["memory"] == "6903Mi"


def test_user_catalog_and_info(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        "apiVersion: karpplan.io/v1alpha1\nkind: InstanceCatalog\nmetadata: {name: fake}\n"
        "zones: [z1]\ninstanceTypes:\n- name: small\n  capacity: {cpu: '2', memory: 2Gi, pods: '5'}\n"
        "  offerings: [{zone: z1, capacityType: on-demand, price: 0.5}]\n"
    )
    data = listing("--catalog", str(catalog))
    assert [t["name"] for t in data["instanceTypes"]] == ["small"]
    assert data["catalog"]["kind"] == "user"
    info = run("--catalog", str(catalog), "--info")
    assert info.exit_code == 0 and "fake (user)" in info.stdout


def test_info_shows_source_dates() -> None:
    result = run("--info")
    assert result.exit_code == 0
    assert "2026-07-20" in result.stdout and "us-east-1a" in result.stdout
    seoul = run("--region", "ap-northeast-2", "--info")
    assert "2022-09-03" in seoul.stdout
    assert "estimated at 0.4" in seoul.stdout


def test_table_marks_estimates() -> None:
    result = run("--region", "ap-northeast-2", "--allow-estimated-prices", "--limit", "3")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split()[:2] == ["NAME", "ARCH"]
    # header, 3 types, count, estimate footnote, the types no price list prices, the region
    assert len(lines) == 1 + 3 + 4
    assert "* estimated price" in result.stdout
    assert lines[-1].startswith("not listed: 18 types of 8 families (dl2q, hpc6a,")
    assert "--allow-estimated-prices" not in lines[-1]  # already given
    assert lines[-2] == "region ap-northeast-2 (--region)"


def test_malformed_catalog_exits_2_with_file_and_line(tmp_path: Path) -> None:
    catalog = tmp_path / "bad.yaml"
    catalog.write_text(
        "apiVersion: karpplan.io/v1alpha1\nkind: InstanceCatalog\ninstanceTypes:\n- name: a\n"
        "  capacity: {cpu: four}\n"
    )
    result = run("--catalog", str(catalog))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert f"{catalog}:5:" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--region", "mars-1"], "unknown region"),
        (["--cpu", "two"], "--cpu"),
        (["--request", "gpu"], "NAME=QUANTITY"),
        (["-o", "xml"], "'xml' is not one of 'table', 'json', 'yaml'"),
        (["--nodepool", "x"], "needs the manifests"),
    ],
)
def test_bad_usage_exits_2(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_unknown_nodepool(tmp_path: Path) -> None:
    result = run("--nodepool", "nope", manifests(tmp_path, POOL))
    assert result.exit_code == 2
    assert "no NodePool or Provisioner named 'nope'" in result.stderr


def test_the_listing_says_which_region_it_prices_and_why(tmp_path: Path) -> None:
    """A user in us-east-2 who lists a NodePool without --region saw us-east-1 prices and nothing saying so (a new
    user's migration trial): the table names the region and where it came from."""
    result = run("--cpu", "2")
    assert result.exit_code == 0, result.output
    assert "region us-east-1 (default: nothing names a region; --region R to choose)" in result.stdout
    assert "region eu-west-1 (--region)" in run("--region", "eu-west-1", "--cpu", "2").stdout
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: prod, region: us-east-2}\n")
    assert f"region us-east-2 (from ClusterConfig prod, {cluster}:3)" in run(str(cluster), "--cpu", "2").stdout
