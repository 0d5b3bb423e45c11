"""A node-affinity mask over the launch options, asked once per distinct combination of label values.

`NodeAffinity.matches` reads only the labels its keys name (and the node name, which a launch option does
not have yet), so options that agree on those labels get the same answer: the ~60k options of 20 NodePools
share a handful of combinations, and a pool's selector is checked against each once instead of per option.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from karpplan.model.selectors import NodeAffinity


class _Labelled(Protocol):
    @property
    def labels(self) -> Mapping[str, str]: ...


class LabelColumns(Protocol):
    """What the mask reads of the option table (`candidates.OptionTable`): its rows and a label column."""

    @property
    def size(self) -> int: ...

    @property
    def options(self) -> Sequence[_Labelled]: ...

    def labels(self, key: str) -> tuple[npt.NDArray[np.int32], list[str], dict[str, int]]: ...


def by_label_values(table: LabelColumns, affinity: NodeAffinity) -> npt.NDArray[np.bool_]:
    """`affinity.matches(option.labels)` for every row of `table`."""
    keys = sorted(set(affinity.node_selector).union(*(t.requirements for t in affinity.required or ())))
    if not keys:
        return np.full(table.size, affinity.matches({}), dtype=np.bool_)
    columns = [table.labels(key) for key in keys]
    if math.prod(len(values) + 1 for _, values, _ in columns) > 2**62:  # more combinations than an int64 holds
        return np.array([affinity.matches(o.labels) for o in table.options], dtype=np.bool_)
    # One integer per row for its combination (code + 1 per key, 0 = absent, in mixed radix).
    combined: npt.NDArray[Any] = np.zeros(table.size, dtype=np.int64)
    stride = 1
    for codes, values, _ in columns:
        combined += (codes.astype(np.int64) + 1) * stride
        stride *= len(values) + 1
    distinct, inverse = np.unique(combined, return_inverse=True)
    answers = np.zeros(len(distinct), dtype=np.bool_)
    for i, number in enumerate(distinct.tolist()):
        labels: dict[str, str] = {}
        for key, (_, values, _) in zip(keys, columns, strict=True):
            number, code = divmod(number, len(values) + 1)
            if code:
                labels[key] = values[code - 1]
        answers[i] = affinity.matches(labels)
    return answers[inverse.reshape(-1)]
