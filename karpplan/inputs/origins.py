"""Line-carrying containers for loaded YAML/JSON, so any field can be reported as `file:line`.

The loader builds every mapping as a `LineDict` (a `dict` that also knows the line of each key) and
every list as a `LineList` (a `list` that knows the line of each item). Code that only reads data treats
them as ordinary dicts and lists; code that reports a problem asks `line_of(node, key)`.
"""

from __future__ import annotations

from typing import Any, Protocol

from karpplan.errors import Origin


class Located(Protocol):
    """Anything read from a file that knows where it starts (a loader's `Document`)."""

    @property
    def origin(self) -> Origin: ...


class LineDict(dict[str, Any]):
    """A mapping that remembers the line it starts on and the line of each key (1-based; 0 unknown)."""

    __slots__ = ("line", "key_lines")

    def __init__(self, *args: Any, line: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line = line
        self.key_lines: dict[str, int] = {}


class LineList(list[Any]):
    """A list that remembers the line it starts on and the line of each item (1-based; 0 unknown)."""

    __slots__ = ("line", "item_lines")

    def __init__(self, *args: Any, line: int = 0) -> None:
        super().__init__(*args)
        self.line = line
        self.item_lines: list[int] = []


class SourceFloat(float):
    """A YAML float that keeps the text it was written as, so `0.10` stays `0.10` and not `0.1`.

    `repr()` returns that text, which is what `model.quantity.scalar_text` reads.
    """

    __slots__ = ("text",)
    text: str

    def __new__(cls, value: float, text: str) -> SourceFloat:
        made = super().__new__(cls, value)
        made.text = text
        return made

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def line_of(node: object, key: object = None) -> int | None:
    """The line of `node[key]` (of the key itself for mappings), or of `node` when key is None.

    None when the node carries no line information or the key is absent.
    """
    if key is None:
        line = getattr(node, "line", 0)
        return line or None
    if isinstance(node, LineDict) and isinstance(key, str):
        return node.key_lines.get(key) or None
    if isinstance(node, LineList) and isinstance(key, int) and 0 <= key < len(node.item_lines):
        return node.item_lines[key] or None
    return None


def origin_of(where: Located | Origin | str, node: object = None, key: object = None) -> Origin:
    """The most precise origin known for `node[key]`: its line, else the node's line, else `where`'s."""
    if isinstance(where, Origin):
        base = where
    elif isinstance(where, str):
        base = Origin(where, 0)
    else:
        base = where.origin
    line = line_of(node, key) if key is not None else None
    if line is None:
        line = line_of(node)
    return base.at(line)
