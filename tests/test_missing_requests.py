"""Pods without requests (issue 24, item 5): placed as kube-scheduler does (zero for fit), named in one
warning with file:line and how many; `--default-requests` gives their containers requests, and a namespace's
LimitRange defaults still win."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from karpplan.model.build import load_inventory
from karpplan.model.missing_requests import parse_default_requests

MANIFESTS = Path(__file__).parent / "data" / "manifests" / "no-requests.yaml"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "karpplan.cli.main", "plan", str(MANIFESTS), *args,
                           "--time-limit", "3"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "80"})


def _json(*args: str) -> dict[str, Any]:
    result = _run(*args, "-o", "json")
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _requests(plan: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {p["name"]: p["requests"] for p in plan["pods"]}


def test_pods_without_requests_are_placed_at_zero_and_named_in_one_warning() -> None:
    plan = _json()
    requests = _requests(plan)
    assert requests["web-0"] == {} and requests["sized"] == {"cpu": "1", "memory": "1Gi"}
    assert requests["api-0"] == {"cpu": "250m", "memory": "256Mi"}  # the LimitRange's defaultRequest
    mentions = [w for w in plan["warnings"] if "no CPU or memory requests" in w]
    assert len(mentions) == 1, "one warning for every such workload, not one per pod"
    [warning] = mentions
    assert warning.startswith("4 pods of 2 workloads")
    assert f"Deployment/default/web (3 pods; container web) at {MANIFESTS}:25" in warning
    assert f"Pod/default/sized (1 pod; container logger) at {MANIFESTS}:45" in warning
    assert "api" not in warning.replace("planned", "")  # the LimitRange gave it requests
    assert "--default-requests cpu=100m,memory=128Mi" in warning


def test_default_requests_fill_what_containers_leave_unset_and_limit_ranges_win() -> None:
    plan = _json("--default-requests", "cpu=500m,memory=512Mi")
    requests = _requests(plan)
    assert requests["web-0"] == {"cpu": "500m", "memory": "512Mi"}
    assert requests["api-0"] == {"cpu": "250m", "memory": "256Mi"}
    assert requests["sized"] == {"cpu": "1500m", "memory": "1536Mi"}  # its logger container gets them too
    [warning] = [w for w in plan["warnings"] if "no CPU or memory requests" in w]
    assert "planned with --default-requests cpu=500m,memory=512Mi" in warning
    assert plan["summary"]["hourlyCost"] > _json()["summary"]["hourlyCost"]


def test_the_table_names_them_in_plain_words() -> None:
    result = _run()
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "4 pods of 2 workloads set no CPU or memory requests" in text
    assert "planned at zero requests, as kube-scheduler places them" in text


@pytest.mark.parametrize("flag", ["cpu", "cpu=lots", "gpu=1", "cpu=0", "memory=-1Mi"])
def test_bad_default_requests_are_a_usage_error(flag: str) -> None:
    result = _run("--default-requests", flag)
    assert result.returncode == 2 and result.stdout == ""
    assert "--default-requests" in result.stderr
    with pytest.raises(ValueError):
        parse_default_requests(flag)


def test_a_limit_counts_as_a_request_and_init_containers_do_not_count(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text("""\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
    - {name: wait, image: busybox}
    - {name: proxy, image: envoy, restartPolicy: Always}
  containers:
    - name: app
      image: nginx
      resources: {limits: {memory: 1Gi}}
""")
    [pod] = load_inventory([str(path)]).pending
    assert pod.template.unrequested == ("proxy",)  # a sidecar runs beside the app; `wait` only raises the peak
