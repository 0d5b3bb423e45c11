"""LimitRange defaults give pods their requests as the cluster would (issue 14, item 7).

A pod without requests is not free: the LimitRanger admission plugin fills in the namespace's
`defaultRequest` (which itself defaults to `default`, then `max`, then `min`). Planned without it, such
pods would pack onto far too few nodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import assume, given
from hypothesis import strategies as st

from karpplan.inputs.loader import parse_documents
from karpplan.model.build import build_inventory

from planner_helpers import plan_json

MANIFEST = Path(__file__).parent / "data" / "manifests" / "limitrange-defaults.yaml"
MIB = 2**20




def test_pods_without_requests_get_the_namespaces_defaults() -> None:
    requests = {(p["namespace"], p["name"]): p["requests"] for p in plan_json(MANIFEST)["pods"]}
    deployment = [r for (ns, name), r in requests.items() if name.startswith("default-mem-demo-") and
                  ns == "default-mem-example" and r["memory"] == "256Mi"]
    assert len(deployment) == 4
    # cpu has no defaultRequest: it takes the default limit, 1 CPU.
    assert all(r["cpu"] == "1" for r in deployment)
    # A container with its own memory limit gets request = limit (API defaulting), not the LimitRange's.
    assert {"cpu": "1", "memory": "1Gi"} in requests.values()
    # Another namespace has no LimitRange: nothing is added.
    assert requests[("elsewhere", "no-limitrange")] == {}


def _requests_of(text: str) -> dict[str, dict[str, int]]:
    inventory = build_inventory(parse_documents(text, "in.yaml"))
    return {p.name: dict(p.template.requests) for p in inventory.pods}


LIMIT_RANGE = """\
apiVersion: v1
kind: LimitRange
metadata: {{name: {name}, namespace: team}}
spec:
  limits:
  - type: Container
    {fields}
---
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: team}}
spec:
  {node}
  containers: [{{name: c, image: x}}]
{status}
---
"""


def test_admitted_pods_keep_what_they_have() -> None:
    text = LIMIT_RANGE.format(name="lr", fields="defaultRequest: {memory: 64Mi}")
    text += POD.format(name="new", node="", status="")
    text += POD.format(name="bound", node="nodeName: ip-10-0-1-1", status="")
    text += POD.format(name="running", node="", status="status: {phase: Pending}")
    requests = _requests_of(text)
    assert requests["new"]["memory"] == 64 * MIB
    assert "memory" not in requests["bound"] and "memory" not in requests["running"]


def test_of_two_limit_ranges_the_first_by_name_wins() -> None:
    text = LIMIT_RANGE.format(name="b-second", fields="defaultRequest: {memory: 64Mi}")
    text += LIMIT_RANGE.format(name="a-first", fields="defaultRequest: {memory: 32Mi}")
    text += POD.format(name="p", node="", status="")
    assert _requests_of(text)["p"]["memory"] == 32 * MIB


quantities = st.none() | st.integers(min_value=1, max_value=4096)


@given(default_request=quantities, default=quantities, maximum=quantities, minimum=quantities)
def test_default_request_falls_back_through_default_max_and_min(
    default_request: int | None, default: int | None, maximum: int | None, minimum: int | None
) -> None:
    # The API server accepts only LimitRanges with min <= defaultRequest <= default <= max (ValidateLimitRange);
    # a pod of any other is refused at admission, and not planned (tests/test_admission.py).
    present = [v for v in (minimum, default_request, default, maximum) if v is not None]
    assume(present == sorted(present))
    item: dict[str, Any] = {"type": "Container"}
    for field, value in (("defaultRequest", default_request), ("default", default), ("max", maximum),
                         ("min", minimum)):
        if value is not None:
            item[field] = {"memory": f"{value}Mi"}
    limit_range = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "team"},
                   "spec": {"limits": [item]}}
    text = yaml.safe_dump(limit_range) + "---\n" + POD.format(name="p", node="", status="")
    expected = next((v for v in (default_request, default, maximum, minimum) if v is not None), None)
    got = _requests_of(text)["p"].get("memory")
    assert got == (expected * MIB if expected is not None else None)
