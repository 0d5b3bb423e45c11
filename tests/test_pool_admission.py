"""A NodePool's taint and requirement checks are answered once per (pool, tolerations, node affinity) and
remembered (`scheduling/pool_admission.py`): every group reads the verdict, the reason and the kind it would read
checked alone, and a chart repository's many groups sharing a nodeSelector cost one check per pool."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from karpplan.catalog import load_catalog
from karpplan.model.build import load_inventory
from karpplan.model.pods import PodTemplate
from karpplan.model.pools import NodePool
from karpplan.planner import make_problem
from karpplan.scheduling import pool_admission as admission
from karpplan.scheduling.problem import Problem

from planner_helpers import FAKE_CATALOG, deployment


def _pool(name: str, team: str, taint: str = "") -> str:
    taints = f"\n      taints: [{taint}]" if taint else ""
    return f"""
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
      - {{key: team, operator: In, values: [{team}]}}{taints}
"""


SELECT_A = "      nodeSelector: {team: a}"
SELECT_B = "      nodeSelector: {team: b}"
TOLERATE = "      tolerations: [{key: dedicated, operator: Exists}]"
POOLS = (_pool("pool-a", "a") + _pool("pool-b", "b", "{key: dedicated, value: x, effect: NoSchedule}")
         + _pool("pool-soft", "a", "{key: soft, value: x, effect: PreferNoSchedule}"))
# Two Deployments of each shape (equal templates, distinct objects), and shapes failing on taints, on
# requirements, on both, and passing with only a PreferNoSchedule taint untolerated.
MANIFESTS = POOLS + "".join(
    deployment(f"{shape}-{i}", 1, extra=extra)
    for shape, extra in (("a", SELECT_A), ("b", SELECT_B), ("b-tol", SELECT_B + "\n" + TOLERATE), ("none", ""))
    for i in range(2))


def _problem(tmp_path: Path) -> Problem:
    (tmp_path / "m.yaml").write_text(textwrap.dedent(MANIFESTS))
    (tmp_path / "c.yaml").write_text(textwrap.dedent(FAKE_CATALOG))
    inventory = load_inventory([str(tmp_path / "m.yaml")])
    return make_problem(inventory, load_catalog(None, str(tmp_path / "c.yaml")), list(inventory.pending))


def _verdicts(problem: Problem) -> dict[tuple[str, str], tuple[bool, str, str, bool]]:
    return {(g.group.pods[0].name.rsplit("-", 1)[0], v.pool.name): (v.ok, v.reason, v.kind, v.prefer_no_schedule)
            for g in problem.groups for v in g.verdicts}


def test_each_group_reads_the_verdict_it_would_read_checked_alone(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    remembered = _verdicts(_problem(tmp_path))
    # Every answer computed afresh: nothing remembered between two checks.
    monkeypatch.setattr(admission, "ADMISSION_ENTRIES", 0)
    alone = _verdicts(_problem(tmp_path))
    assert remembered == alone
    assert remembered[("a-0", "pool-a")][0] and remembered[("a-1", "pool-a")][0]
    assert remembered[("a-0", "pool-soft")][:3] == (True, "", "") and remembered[("a-0", "pool-soft")][3]
    assert remembered[("b-0", "pool-b")][2] == "taint" and "dedicated" in remembered[("b-0", "pool-b")][1]
    assert remembered[("b-tol-0", "pool-b")][0]
    assert remembered[("b-tol-0", "pool-a")][2] == "requirements"
    assert "team" in remembered[("b-tol-0", "pool-a")][1]


def test_groups_sharing_a_node_selector_are_checked_once_per_pool(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[tuple[str, str]] = []
    inner = admission._admission

    def counting(template: PodTemplate, pool: NodePool, well_known: frozenset[str]) -> tuple[str, str, bool]:
        checked.append((template.namespace, pool.name))
        return inner(template, pool, well_known)

    monkeypatch.setattr(admission, "_admission", counting)
    admission._forget()
    _problem(tmp_path)
    # Four shapes of (tolerations, node affinity) against three pools, each shape two Deployments.
    assert len(checked) == 4 * 3
    _problem(tmp_path)  # read again: new NodePool objects, whose answers are not taken for the old ones'
    assert len(checked) == 2 * 4 * 3
