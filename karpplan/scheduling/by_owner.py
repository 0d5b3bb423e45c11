"""Maps keyed by `id()` of the object each entry is about (a pod template, a pod) that survive pickling.

`PodTemplate` compares and hashes by identity, and the problem's rules are looked up by `id(template)` in every
engine. An `id` is only an address: pickled and loaded (a process pool, a spawned worker), the template is a new
object at another address and a plain `{id: rule}` finds nothing, so an unpickled problem silently loses its
rules (its hostname anti-affinity caps, its spread). `ByOwner` keeps each entry's owner beside it and is pickled
as (owner, value) pairs, keyed again by the owners' own new identities when loaded: the owners are the very
objects the rest of the loaded problem holds (pickle keeps shared references shared).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

V = TypeVar("V")


class ByOwner(dict[int, V]):
    """`id(owner) -> value`, each entry's owner kept (`put`), so the map survives pickling."""

    __slots__ = ("_owners",)

    def __init__(self, pairs: Iterable[tuple[object, V]] = ()) -> None:
        super().__init__()
        self._owners: dict[int, object] = {}
        for owner, value in pairs:
            self.put(owner, value)

    def put(self, owner: object, value: V) -> None:
        """The entry of `owner` (looked up as `self[id(owner)]`)."""
        self[id(owner)] = value
        self._owners[id(owner)] = owner

    def pairs(self) -> list[tuple[object, V]]:
        """(owner, value) per entry, in order; every entry must have been made by `put`."""
        missing = [k for k in self if k not in self._owners]
        if missing:
            raise TypeError(f"{len(missing)} entries of a ByOwner were set by id alone (use put): they cannot be "
                            "keyed again when loaded")
        return [(self._owners[k], v) for k, v in self.items()]

    def __reduce__(self) -> tuple[type[ByOwner[V]], tuple[list[tuple[object, V]]]]:
        return (type(self), (self.pairs(),))


__all__ = ["ByOwner"]
