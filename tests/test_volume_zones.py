"""Volumes decide zones (issue 24, item 7): a pod whose volumes sit in different zones is unschedulable, and
the plan names the volumes, their zones and the PV or StorageClass file:line; its fix points there, never at
a node affinity the pod does not have."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "manifests"
POOL = DATA / "karpenter-general-nodepool.yaml"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "karpplan.cli.main", "plan", *args, "--time-limit", "3"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "100"},
    )


def _plan(*paths: Path) -> dict[str, Any]:
    result = _run(*map(str, paths), "-o", "json")
    assert result.returncode in (0, 1), result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_two_bound_ebs_volumes_in_different_zones_name_the_volumes_not_an_affinity() -> None:
    path = DATA / "volumes-two-zones.yaml"
    plan = _plan(path)
    [failed] = plan["unschedulable"]
    assert failed["pod"] == "default/db"
    first = failed["reasons"][0]
    assert "different zones" in first
    assert f"PV pv-data-a, zone us-east-1a) at {path}:23" in first  # the PV's nodeAffinity term
    assert f"PV pv-data-b, zone us-east-1b) at {path}:38" in first
    assert not any("In []" in r for r in failed["reasons"])
    [fix] = failed["fixes"]
    assert fix["object"] == "PersistentVolume/pv-data-b" and (fix["file"], fix["line"]) == (str(path), 38)
    assert "us-east-1a" in fix["action"]


def test_the_table_never_offers_to_remove_an_affinity_the_pod_does_not_have() -> None:
    result = _run(str(DATA / "volumes-two-zones.yaml"))
    assert result.returncode == 1
    assert "different zones" in result.stdout
    assert "required node affinity" not in result.stdout
    assert "zone In []" not in result.stdout


def test_a_bound_pv_against_a_storage_class_that_allows_another_zone() -> None:
    path = DATA / "volumes-class-vs-pv.yaml"
    plan = _plan(path, POOL)
    # Ordinal 0: data is a bound EBS PV in us-east-1a (legacy zone label), logs may only be provisioned in
    # us-east-1b. Ordinal 1 has no PV yet: it runs in us-east-1b, and its EFS claim adds no zone.
    [failed] = plan["unschedulable"]
    assert failed["pod"] == "default/db-0"
    assert "StorageClass gp3-b, zone us-east-1b" in failed["reasons"][0]
    assert "PV pv-data-0, zone us-east-1a" in failed["reasons"][0]
    [fix] = failed["fixes"]
    assert fix["object"] == "StorageClass/gp3-b" and fix["line"] == 17  # its allowedTopologies term
    zone_of = {n["name"]: n["zone"] for n in plan["nodes"]}
    placed = {p["name"]: zone_of[p["node"]] for p in plan["pods"] if p.get("node")}
    assert placed == {"db-1": "us-east-1b"}


def test_a_volume_outside_the_pools_zones_is_said_and_the_fix_widens_the_pool(tmp_path: Path) -> None:
    text = (DATA / "volumes-two-zones.yaml").read_text()
    text = text.replace(
        "        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n",
        "        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"
        "        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}\n",
    ).replace("    - {name: a, persistentVolumeClaim: {claimName: data-a}}\n", "")
    path = tmp_path / "pool-zone.yaml"
    path.write_text(text)
    plan = _plan(path)
    [failed] = plan["unschedulable"]
    assert failed["reasons"][0].startswith("the pod's volumes keep it in zone us-east-1b: PVC data-b")
    assert failed["fixes"], "widening the NodePool's zones is a real fix"
    for fix in failed["fixes"]:
        assert "required node affinity" not in fix["action"]
    assert any(f["object"] == "NodePool/default" for f in failed["fixes"])
