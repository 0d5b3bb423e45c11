"""Text wrapped for a narrow column at word and separator boundaries, never in the middle of a name's word.

rich folds a word longer than its column wherever the column ends (`argocd-applicationse` / `t-controller`).
Here lines break at spaces (a no-break space, `GLUE`, holds two words together: `web x2`, `+3 more`); a word
longer than the column breaks after a `/` (namespace from name), and a part still too long after a `-`, `.`,
`_`, `:`, `[` or `=` too; only a run of letters longer than the whole column is cut, with `…` (`~` on ASCII consoles)
where it was cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

GLUE = "\u00a0"
_SLASH_PIECES = re.compile(r"[^/]+/*|/+")
_SEPARATOR_PIECES = re.compile(r"[^-/._:\[=]+[-/._:\[=]*|[-/._:\[=]+")


def _parts(word: str, width: int) -> list[list[str]]:
    """`word` cut after each `/`; a part longer than `width` cut further, after each separator."""
    return [[part] if len(part) <= width else _SEPARATOR_PIECES.findall(part) for part in _SLASH_PIECES.findall(word)]


def _elide(piece: str, width: int, mark: str) -> str:
    return piece if len(piece) <= width else piece[: max(1, width - len(mark))] + mark


def wrap_words(text: str, width: int, *, ascii_only: bool = False, cut: bool = False) -> list[str]:
    """`text` as lines of at most `width` characters (see the module docstring); with `cut`, nothing is
    elided: a run of letters longer than the column is cut where it ends, as rich folds it."""
    width = max(1, width)
    mark = "~" if ascii_only else "…"
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        if not word:
            continue
        joined = f"{current} {word}" if current else word
        if len(joined) <= width:
            current = joined
            continue
        if current:
            lines.append(current)
            current = ""
        if len(word) <= width:
            current = word
            continue
        for part in _parts(word, width):
            if current and len(current) + len("".join(part)) > width and current.endswith("/"):
                lines.append(current)  # the namespace on its line, the name whole on the next when it fits
                current = ""
            for whole in part:
                # a run of letters longer than the column: elided, or (`cut`) cut where the column ends
                chunks = [whole[i:i + width] for i in range(0, len(whole), width)] if cut else \
                    [_elide(whole, width, mark)]
                for piece in chunks:
                    if len(current) + len(piece) <= width:
                        current += piece
                    else:
                        lines.append(current)
                        current = piece
    if current:
        lines.append(current)
    return [line.replace(GLUE, " ") for line in lines]


TABLE_GAP = 2  # characters between two columns of a table with collapsed padding and no edge padding


def first_column_width(table: Table, rows: Sequence[Sequence[Text | str]], width: int, *, minimum: int = 16) -> int:
    """What a table's first (foldable) column can hold on a console `width` wide once every other column has the
    width its header and these rows' cells need (capped by its `max_width`). rich squeezes the foldable column
    to what is left; text wrapped to a wider guess is folded again mid-word (`opensearch-logs-dat` / `a`)."""
    widths = []
    for index, column in enumerate(table.columns[1:], start=1):
        cells = [row[index] for row in rows if index < len(row)]
        need = max([Text(str(column.header)).cell_len,
                    *(max((Text(line).cell_len for line in str(cell).split("\n")), default=0) for cell in cells)])
        widths.append(min(need, column.max_width) if column.max_width else need)
    return max(minimum, width - TABLE_GAP * (len(table.columns) - 1) - sum(widths))


def _rewrapped(cell: object, room: int, ascii_only: bool) -> object:
    """`cell` (a str without markup, or a Text) with its long lines wrapped by `wrap_words`, its styles kept;
    unchanged when nothing is too long."""
    if isinstance(cell, str):
        if "[" in cell:  # markup: rich renders it, its brackets are not text
            return cell
        text = Text(cell)
    elif isinstance(cell, Text):
        text = cell
    else:
        return cell
    plain = text.plain.replace(GLUE, " ")  # one character for one: offsets into the Text hold
    if all(len(line) <= room for line in plain.split("\n")):
        return cell
    pieces: list[Text] = []
    offset = 0
    for line in plain.split("\n"):
        cursor = offset
        for wrapped in wrap_words(line, room, ascii_only=ascii_only, cut=True) or [""]:
            start = plain.find(wrapped, cursor, offset + len(line))
            if start < 0:
                return cell
            pieces.append(text[start:start + len(wrapped)])
            cursor = start + len(wrapped)
        offset += len(line) + 1
    return Text("\n").join(pieces)


def fold_at_boundaries(table: Table, console: Console) -> Table:
    """`table` with the cells of its foldable columns wrapped as `wrap_words` wraps (at spaces, then after `/`,
    then after `-`, `.`, `_`, `:`) to the widths rich will give them on `console`, so rich never folds a name
    mid-word (`CronJob/settlement-r` / `eport`). Wrapping only narrows cells, so the widths hold."""
    try:  # rich's own width pass (private API, rich 13-15): another rich keeps its own folding, never a crash
        options = console.options.update_width((table.width or console.options.max_width) - table._extra_width)
        widths = table._calculate_column_widths(console, options)
        getattr(table, "_get_padding_width")  # noqa: B009
    except (AttributeError, TypeError):
        return table
    ascii_only = not console.options.encoding.lower().startswith("utf")
    for index, (column, width) in enumerate(zip(table.columns, widths, strict=True)):
        if column.overflow != "fold" or column.no_wrap:
            continue
        room = max(1, width - table._get_padding_width(index))
        column._cells = [_rewrapped(cell, room, ascii_only) for cell in column._cells]  # type: ignore[misc]
    return table
