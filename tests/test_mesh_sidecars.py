"""Service-mesh sidecars injected at admission (Istio's istio-proxy, Linkerd's linkerd-proxy): in no manifest,
yet Karpenter sees the injected pod. The plan adds the proxy's requests and says so, naming why it thinks the
proxy is injected; a pod that opts out, or already holds the proxy, gets nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from karpplan.cli.main import app

from conftest import FIXTURES

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
"""


def _plan(*paths: str, args: tuple[str, ...] = ()) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["plan", *paths, "--engine", "karpenter", "--zones", "us-east-1a", "-o", "json",
                                      *args])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _pool(tmp_path: Path) -> str:
    path = tmp_path / "pool.yaml"
    path.write_text(POOL)
    return str(path)


# https://github.com/istio/istio/blob/master/samples/bookinfo/platform/kube/bookinfo.yaml
def test_bookinfo_in_an_injected_namespace_is_planned_with_istios_proxy(tmp_path: Path) -> None:
    plan = _plan(str(FIXTURES / "real" / "istio-bookinfo.yaml"), _pool(tmp_path), args=("-n", "bookinfo"))
    requests = {p["name"]: p["requests"] for p in plan["pods"]}
    # the app containers request nothing: the pods request what istio-proxy does by default
    assert requests == {name: {"cpu": "100m", "memory": "128Mi"}
                        for name in ("details-v1-0", "reviews-v1-0", "productpage-v1-0")}
    notes = [w for w in plan["warnings"] if "istio-proxy" in w]
    assert len(notes) == 1
    assert "3 pod(s) of Deployment/bookinfo/details-v1" in notes[0]
    assert "namespace bookinfo is labelled istio-injection=enabled" in notes[0]
    # in another namespace nothing is injected, and nothing is said
    plain = _plan(str(FIXTURES / "real" / "istio-bookinfo.yaml"), _pool(tmp_path))
    assert all(p["requests"] == {} for p in plain["pods"])
    assert not [w for w in plain["warnings"] if "istio-proxy" in w]


def _deployment(annotations: str, labels: str = "{app: api}", containers: str = "") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: api, namespace: shop}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: api}}}}
  template:
    metadata:
      labels: {labels}
      annotations: {annotations}
    spec:
      containers:
        - {{name: api, image: x, resources: {{requests: {{cpu: 500m, memory: 512Mi}}}}}}
{containers}"""


def _requests(tmp_path: Path, text: str) -> tuple[dict[str, str], list[str]]:
    path = tmp_path / "app.yaml"
    path.write_text(text)
    plan = _plan(str(path), _pool(tmp_path))
    return plan["pods"][0]["requests"], plan["warnings"]


def test_istio_proxy_annotations_set_its_requests_and_a_pod_label_injects_it(tmp_path: Path) -> None:
    requests, warnings = _requests(tmp_path, _deployment(
        "{sidecar.istio.io/proxyCPU: 250m, sidecar.istio.io/proxyMemory: 256Mi}",
        labels="{app: api, sidecar.istio.io/inject: 'true'}"))
    assert requests == {"cpu": "750m", "memory": "768Mi"}
    assert any("istio-proxy (250m CPU, 256Mi memory)" in w and "labelled sidecar.istio.io/inject=true" in w
               for w in warnings)


def test_linkerds_proxy_requests_only_what_its_annotations_set(tmp_path: Path) -> None:
    requests, warnings = _requests(tmp_path, _deployment(
        "{linkerd.io/inject: enabled, config.linkerd.io/proxy-cpu-request: 100m, "
        "config.linkerd.io/proxy-memory-request: 20Mi}"))
    assert requests == {"cpu": "600m", "memory": "532Mi"}
    assert any("linkerd-proxy (100m CPU, 20Mi memory)" in w for w in warnings)
    bare, said = _requests(tmp_path, _deployment("{linkerd.io/inject: enabled}"))
    assert bare == {"cpu": "500m", "memory": "512Mi"}
    assert any("linkerd-proxy (no requests)" in w for w in said)  # still said: an install may set some


def test_a_pod_that_opts_out_or_already_holds_the_proxy_gets_nothing_more(tmp_path: Path) -> None:
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: enabled}}\n---\n"
    out, _ = _requests(tmp_path, namespace + _deployment("{}", labels="{app: api, sidecar.istio.io/inject: 'false'}"))
    assert out == {"cpu": "500m", "memory": "512Mi"}
    held = "        - {name: istio-proxy, image: proxyv2, resources: {requests: {cpu: 10m, memory: 40Mi}}}\n"
    injected_by_hand, _ = _requests(tmp_path, namespace + _deployment("{}", containers=held))
    assert injected_by_hand == {"cpu": "510m", "memory": "552Mi"}


def test_a_daemonset_in_an_injected_namespace_carries_the_proxy_on_every_node(tmp_path: Path) -> None:
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: enabled}}\n---\n"
    agent = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: x, resources: {requests: {cpu: 50m, memory: 64Mi}}}]
---
"""
    path = tmp_path / "app.yaml"
    path.write_text(namespace + agent + _deployment("{}", labels="{app: api, sidecar.istio.io/inject: 'false'}"))
    plan = _plan(str(path), _pool(tmp_path))
    # the api pods opt out; the agent beside them on each node requests its own 50m and the proxy's 100m
    assert {n["requested"]["cpu"] for n in plan["nodes"]} == {"1150m"}
    assert any("DaemonSet/shop/agent (every node)" in w and "istio-proxy" in w for w in plan["warnings"])


def test_fargate_refuses_an_injected_pod_and_a_pod_that_adds_capabilities(tmp_path: Path) -> None:
    profile = ("apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: us-east-1}\n"
               "fargateProfiles:\n  - name: shop\n    selectors: [{namespace: shop}]\n---\n")
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: enabled}}\n---\n"
    path = tmp_path / "app.yaml"
    path.write_text(profile + namespace + _deployment("{}"))
    result = CliRunner().invoke(app, ["plan", str(path), "--engine", "karpenter", "-o", "json"])
    assert result.exit_code == 1, result.stderr
    reasons = " ".join(json.loads(result.stdout)["unschedulable"][0]["reasons"])
    assert "Capabilities added: NET_ADMIN, NET_RAW (the istio-init container injected with istio-proxy" in reasons
    # the same pods outside the mesh run on Fargate; one that adds a capability itself does not
    chown = "          securityContext: {capabilities: {add: [CHOWN]}}\n"
    path.write_text(profile + _deployment("{}", containers=f"        - name: init\n          image: x\n{chown}"))
    result = CliRunner().invoke(app, ["plan", str(path), "--engine", "karpenter", "-o", "json"])
    assert result.exit_code == 1, result.stderr
    assert "Capabilities added: CHOWN" in " ".join(json.loads(result.stdout)["unschedulable"][0]["reasons"])
    path.write_text(profile + _deployment("{}"))
    assert CliRunner().invoke(app, ["plan", str(path), "--engine", "karpenter", "-o", "json"]).exit_code == 0
