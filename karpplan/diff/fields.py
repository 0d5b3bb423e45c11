"""What a changed workload or NodePool changed, field by field, for a reviewer: `spec.replicas: 10 -> 14`,
`spec.template.spec.requirements[kubernetes.io/arch].values: ["amd64","arm64"] -> ["arm64"]`.

The two definitions (as their authors wrote them: `definitions._written`) are compared recursively. Lists
whose items all carry an identity (`name`, `key`, `topologyKey`, `deviceName`) are matched by it, so a requirement or a
container is named rather than numbered and reordering changes nothing; other lists are compared whole.
A leaf shows both values when they are short, else only its path. At most `LIMIT` paths are given, the
rest counted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

LIMIT = 6
SHORT = 48  # longest value shown in full
EFFECT_SHORT = 120  # a pool's settings in effect (`effect.py`) are few and read whole: budgets, requirements
IDENTITIES = ("name", "key", "topologyKey", "deviceName")


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _identity(items: Sequence[Any]) -> str | None:
    """The key every item is a mapping with, unique across the list (None: compare the list whole)."""
    if not items or not all(isinstance(i, Mapping) for i in items):
        return None
    for key in IDENTITIES:
        values = [i.get(key) for i in items]
        if all(isinstance(v, (str, int)) for v in values) and len(set(values)) == len(values):
            return key
    return None


def _child(path: str, key: str) -> str:
    simple = key.replace("_", "").replace("-", "").isalnum()
    return (f"{path}.{key}" if path else key) if simple else f"{path}[{key}]"


def _walk(base: Any, head: Any, path: str, out: list[str], short: int = SHORT) -> None:
    if base == head:
        return
    if isinstance(base, Mapping) and isinstance(head, Mapping):
        for key in sorted(set(base) | set(head), key=str):
            here = _child(path, str(key))
            if key not in base:
                out.append(_leaf(here, None, head[key], short))
            elif key not in head:
                out.append(f"{here} removed")
            else:
                _walk(base[key], head[key], here, out, short)
        return
    if isinstance(base, list) and isinstance(head, list):
        identity = _identity(base) if base and head else None
        if identity is not None and identity == _identity(head):
            old = {str(i[identity]): i for i in base}
            new = {str(i[identity]): i for i in head}
            for name in sorted(set(old) | set(new)):
                here = f"{path}[{name}]"
                if name not in old:
                    out.append(f"{here} added")
                elif name not in new:
                    out.append(f"{here} removed")
                else:
                    _walk(old[name], new[name], here, out, short)
            return
    out.append(_leaf(path, base, head, short))


def _leaf(path: str, base: Any, head: Any, short: int = SHORT) -> str:
    old, new = ("" if base is None else _shown(base)), _shown(head)
    if base is None:
        return f"{path} added: {new}" if len(new) <= short else f"{path} added"
    if len(old) <= short and len(new) <= short:
        return f"{path}: {old} -> {new}"
    return f"{path} changed"


def changed_fields(base: Sequence[Mapping[str, Any]], head: Sequence[Mapping[str, Any]],
                   labels: Sequence[str] = (), short: int = SHORT) -> tuple[str, ...]:
    """The changed paths of each pair of documents (`labels[i]` prefixes the i-th pair's paths: a NodePool's
    EC2NodeClass), at most `LIMIT`, then `and N more`; values up to `short` characters are shown."""
    out: list[str] = []
    for i in range(max(len(base), len(head))):
        found: list[str] = []
        if i >= len(base) or i >= len(head):
            present = base if i < len(base) else head
            found.append(f"{_shown(present[i].get('kind', 'document'))} {'removed' if present is base else 'added'}")
        else:
            _walk(base[i], head[i], "", found, short)
        prefix = f"{labels[i]}: " if i < len(labels) and labels[i] else ""
        out.extend(prefix + f for f in found)
    if len(out) > LIMIT:
        return (*out[:LIMIT - 1], f"and {len(out) - LIMIT + 1} more")
    return tuple(out)
