"""Every commercial region plans, and an unknown region is blamed on where it was written (issue 14, item 10)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

QUICKSTART = Path(__file__).resolve().parent.parent / "fixtures" / "quickstart"
CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata:
  name: prod
  region: {region}
"""


def _plan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "karpplan.cli.main", "plan", *args, "--time-limit", "3", "-o", "json"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"},
    )


@pytest.mark.parametrize("region", ["ap-northeast-1", "us-east-2", "eu-central-1", "ap-southeast-1"])
def test_regions_new_users_asked_for_plan(tmp_path: Path, region: str) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER.format(region=region))
    result = _plan(str(cluster), str(QUICKSTART))
    assert result.returncode in (0, 1), result.stderr
    assert f'"region": "{region}"' in result.stdout


def test_a_clusterconfig_region_is_blamed_at_its_line(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER.format(region="eu-mars-1"))
    result = _plan(str(cluster), str(QUICKSTART))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"{cluster}:5: metadata.region: unknown region 'eu-mars-1'")


def test_a_flag_region_is_blamed_on_the_flag() -> None:
    result = _plan(str(QUICKSTART), "--region", "eu-mars-1")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("--region: unknown region 'eu-mars-1'")


def test_a_real_region_newer_than_the_catalog_is_not_called_unknown() -> None:
    """Melbourne (ap-southeast-4) is an AWS region the embedded price list predates: the answer says so and how to
    plan there, not "unknown region" (a new user's trial)."""
    result = _plan(str(QUICKSTART), "--region", "ap-southeast-4")
    assert result.returncode == 2 and result.stdout == ""
    assert "unknown region" not in result.stderr
    assert result.stderr.startswith("--region: ap-southeast-4 is an AWS region the embedded catalog does not cover")
    assert "karpplan catalog refresh --region ap-southeast-4" in result.stderr and "--catalog" in result.stderr


NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-1-10.{region}.compute.internal
  labels:
    kubernetes.io/os: linux
    node.kubernetes.io/instance-type: m5.large
    topology.kubernetes.io/zone: {zone}
{region_label}status:
  allocatable: {{cpu: 1930m, memory: 7052Mi, pods: "29"}}
"""


def _node(tmp_path: Path, zone: str, region: str | None) -> Path:
    label = f"    topology.kubernetes.io/region: {region}\n" if region else ""
    node = tmp_path / "nodes.yaml"
    node.write_text(NODE.format(region=region or "local", zone=zone, region_label=label))
    return node


@pytest.mark.parametrize(("zone", "region", "expected"), [("eu-central-1b", "eu-central-1", "eu-central-1"),
                                                          ("eu-central-1b", None, "eu-central-1"),
                                                          ("us-west-2-lax-1a", None, "us-west-2")])
def test_a_pasted_node_list_sets_the_region(tmp_path: Path, zone: str, region: str | None, expected: str) -> None:
    # `kubectl get nodes -o yaml | karpplan plan - pools/` from an eu-central-1 cluster was planned and priced as
    # us-east-1, its new nodes in us-east-1 zones: the Nodes' region (or their zones') is the cluster's.
    result = _plan(str(_node(tmp_path, zone, region)), str(QUICKSTART))
    assert result.returncode in (0, 1), result.stderr
    assert f'"region": "{expected}"' in result.stdout


def test_another_clouds_region_label_is_not_read_as_an_aws_region(tmp_path: Path) -> None:
    result = _plan(str(_node(tmp_path, "eastus2-1", "eastus2")), str(QUICKSTART))
    assert '"region": "us-east-1"' in result.stdout, result.stderr


def test_a_node_region_is_blamed_at_the_node(tmp_path: Path) -> None:
    node = _node(tmp_path, "eu-mars-1a", "eu-mars-1")
    result = _plan(str(node), str(QUICKSTART))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"{node}:1: Node ip-10-0-1-10.eu-mars-1.compute.internal's region label: "
                                    "unknown region 'eu-mars-1'")


def test_the_command_line_region_wins_over_the_nodes(tmp_path: Path) -> None:
    result = _plan(str(_node(tmp_path, "eu-central-1b", "eu-central-1")), str(QUICKSTART), "--region", "us-east-2")
    assert '"region": "us-east-2"' in result.stdout, result.stderr
