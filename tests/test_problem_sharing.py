"""build_problem shares what groups may use: groups whose allowed pools give the same launch options
(at the same tiers, with no per-pod option filter) get the same options list, tier map and id set, and
the same allowed verdict objects; what each group reads is what it would read unshared."""

from __future__ import annotations

import textwrap
from pathlib import Path

from karpplan.catalog import load_catalog
from karpplan.model.build import load_inventory
from karpplan.planner import make_problem
from karpplan.scheduling.candidates import option_table
from karpplan.scheduling.option_masks import OptionMasks
from karpplan.scheduling.problem import GroupInfo, Problem

from planner_helpers import FAKE_CATALOG, POOL, deployment

AFFINITY = """\
      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: a}}}"""


def _problem(tmp_path: Path) -> Problem:
    manifests = (POOL + deployment("a", 2) + deployment("b", 1) + deployment("big", 1, cpu="3")
                 + deployment("near", 1, extra=AFFINITY) + deployment("near2", 1, extra=AFFINITY))
    (tmp_path / "m.yaml").write_text(textwrap.dedent(manifests))
    (tmp_path / "c.yaml").write_text(textwrap.dedent(FAKE_CATALOG))
    inventory = load_inventory([str(tmp_path / "m.yaml")])
    return make_problem(inventory, load_catalog(None, str(tmp_path / "c.yaml")), list(inventory.pending))


def _by_name(problem: Problem) -> dict[str, GroupInfo]:
    return {g.group.pods[0].name.rsplit("-", 1)[0]: g for g in problem.groups}


def test_groups_with_the_same_verdicts_share_options_tiers_and_ids(tmp_path: Path) -> None:
    groups = _by_name(_problem(tmp_path))
    a, b, big = groups["a"], groups["b"], groups["big"]
    assert a.options is b.options and a.tier is b.tier and a.option_ids is b.option_ids
    assert [v for v in a.verdicts if v.ok] == [v for v in b.verdicts if v.ok]
    assert all(x is y for x, y in zip(a.verdicts, b.verdicts, strict=True) if x.ok)
    assert big.options is not a.options and big.option_ids < a.option_ids  # only the large type fits
    assert {o.instance_type.name for o in big.options} == {"large"}


def test_groups_with_an_option_filter_keep_their_own(tmp_path: Path) -> None:
    groups = _by_name(_problem(tmp_path))
    near, near2 = groups["near"], groups["near2"]
    assert near.options is not near2.options and near.tier is not near2.tier
    assert near.options == near2.options and near.tier == near2.tier and near.option_ids == near2.option_ids


def test_what_each_group_reads_is_its_allowed_verdicts_options(tmp_path: Path) -> None:
    for g in _problem(tmp_path).groups:
        allowed = [v for v in g.verdicts if v.ok]
        assert list(g.options) == [o for v in allowed for o in v.options]
        assert g.option_ids == frozenset(o.index for o in g.options)
        assert dict(g.tier) == dict.fromkeys(g.option_ids, 0)  # one pool, no PreferNoSchedule taint


def test_option_masks_follow_the_shared_sets(tmp_path: Path) -> None:
    problem = _problem(tmp_path)
    masks = OptionMasks(option_table(problem.options))
    groups = _by_name(problem)
    assert masks.group_mask(groups["a"]) is masks.group_mask(groups["b"])
    assert masks.tier_mask(groups["a"]) is masks.tier_mask(groups["b"])
    for g in problem.groups:
        assert masks.group_mask(g).sum() == len(g.option_ids)
