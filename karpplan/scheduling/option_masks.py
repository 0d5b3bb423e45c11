"""Masks over the problem's `OptionTable`: which launch options a group may use, which sit outside its
PreferNoSchedule tier, which are an eligible domain of a spread rule; and row-set helpers on the table.

Masks are built on first use and kept for the whole plan (the table never changes). Spread rules whose
eligibility agrees on every option share one mask id.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

import numpy as np
import numpy.typing as npt

from karpplan.scheduling.candidates import BoolArray, IndexArray, OptionTable
from karpplan.scheduling.pool_admission import cache_key
from karpplan.scheduling.problem import PREFER_NO_SCHEDULE_TIER, GroupInfo
from karpplan.scheduling.topology import SpreadRule


class OptionMasks:
    def __init__(self, table: OptionTable) -> None:
        self.table = table
        # Keyed by what they are made of, which groups often share (one mask each, not one per group)
        self._group_masks: dict[frozenset[int], BoolArray] = {}
        self._all_true: dict[tuple[str, int], bool] = {}
        self._tier_masks: dict[int, tuple[Mapping[int, int], BoolArray]] = {}  # id(tier) -> (tier, mask)
        self.rule_masks: list[BoolArray] = []
        self._rule_mask_ids: dict[int, int] = {}  # rule uid -> index into rule_masks
        self._mask_ids: dict[Hashable, int] = {}
        self._domain_masks: dict[int, BoolArray] = {}  # rule uid -> mask

    def group_mask(self, group_info: GroupInfo) -> BoolArray:
        """Rows of the options the group may use."""
        mask = self._group_masks.get(group_info.option_ids)
        if mask is None:
            if len(group_info.option_ids) == self.table.size:
                mask = np.ones(self.table.size, dtype=np.bool_)
            else:
                mask = np.zeros(self.table.size, dtype=np.bool_)
                mask[self.table.rows_of(group_info.option_ids)] = True
            self._group_masks[group_info.option_ids] = mask
        return mask

    def tier_mask(self, group_info: GroupInfo) -> BoolArray:
        """Rows outside the PreferNoSchedule tier."""
        tier = group_info.tier
        hit = self._tier_masks.get(id(tier))  # the entry keeps `tier` alive, so its id is not reused
        if hit is None:
            mask = np.ones(self.table.size, dtype=np.bool_)
            if max(tier.values(), default=0) >= PREFER_NO_SCHEDULE_TIER:
                last = [i for i, t in tier.items() if t >= PREFER_NO_SCHEDULE_TIER]
                mask[self.table.rows_of(last)] = False
            hit = self._tier_masks[id(tier)] = (tier, mask)
        return hit[1]

    def group_everywhere(self, group_info: GroupInfo) -> bool:
        """Is `group_mask` true on every option?"""
        key = ("group", group_info.index)
        hit = self._all_true.get(key)
        if hit is None:
            hit = self._all_true[key] = bool(self.group_mask(group_info).all())
        return hit

    def tier_everywhere(self, group_info: GroupInfo) -> bool:
        """Is `tier_mask` true on every option?"""
        key = ("tier", group_info.index)
        hit = self._all_true.get(key)
        if hit is None:
            hit = self._all_true[key] = bool(self.tier_mask(group_info).all())
        return hit

    def rule_mask_id(self, rule: SpreadRule) -> int:
        """Rules whose `option_counts` agree on every option share a mask id."""
        hit = self._rule_mask_ids.get(rule.uid)
        if hit is None:
            c = rule.constraint
            key = (rule.hostname, "" if rule.hostname else rule.key,
                   cache_key(rule.owner.tolerations) if c.honors_taints else None,
                   cache_key(rule.owner.affinity) if c.honors_affinity else None)
            hit = self._rule_mask_ids[rule.uid] = self._mask_ids.setdefault(key, len(self._mask_ids))
            if hit == len(self.rule_masks):
                table = self.table
                if rule.hostname:
                    mask = np.ones(table.size, dtype=np.bool_)
                else:
                    mask = table.present_mask(rule.key).copy()
                if c.honors_taints:
                    mask &= table.tolerated_mask(rule.owner.tolerations)
                if c.honors_affinity:
                    mask &= table.affinity_mask(rule.owner.affinity)
                self.rule_masks.append(mask)
        return hit

    def rule_mask(self, rule: SpreadRule) -> BoolArray:
        """`rule.option_counts` per row."""
        return self.rule_masks[self.rule_mask_id(rule)]

    def mask_everywhere(self, mask_id: int) -> bool:
        """Is the rule mask with this id true on every option?"""
        key = ("rule", mask_id)
        hit = self._all_true.get(key)
        if hit is None:
            hit = self._all_true[key] = bool(self.rule_masks[mask_id].all())
        return hit

    def domain_mask(self, rule: SpreadRule) -> BoolArray:
        """Rows that are an eligible domain of a (non-hostname) spread rule."""
        mask = self._domain_masks.get(rule.uid)
        if mask is None:
            codes, _, code_of = self.table.labels(rule.key)
            wanted = [code_of[v] for v in rule.static_domains() if v in code_of]
            mask = np.isin(codes, np.array(wanted, dtype=np.int32)) & self.rule_mask(rule)
            self._domain_masks[rule.uid] = mask
        return mask


def with_values(table: OptionTable, rows: IndexArray, key: str, values: Iterable[str], keep: bool) -> IndexArray:
    """The rows whose value of `key` is (keep) or is not (not keep) one of `values`."""
    codes, _, code_of = table.labels(key)
    wanted = np.array([code_of[v] for v in values if v in code_of], dtype=np.int32)
    inside = np.isin(codes[rows], wanted)
    return rows[inside if keep else ~inside]


def cheapest_with(table: OptionTable, rows: IndexArray, key: str, value: str) -> float:
    """The lowest price among these rows whose value of `key` is `value` (inf without one)."""
    codes, _, code_of = table.labels(key)
    code = code_of.get(value)
    if code is None:
        return float("inf")
    prices = table.prices[rows[codes[rows] == code]]
    return float(prices.min()) if len(prices) else float("inf")


def codes_in(codes: npt.NDArray[np.int32], rows: IndexArray) -> list[int]:
    """The distinct label codes (>= 0) among these rows, ascending."""
    if not len(rows):
        return []
    present = np.bincount(codes[rows] + 1)
    return [int(c) - 1 for c in np.flatnonzero(present).tolist() if c > 0]
