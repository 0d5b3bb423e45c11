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
